"""The arguments of a ``jax_triton.triton_call`` (or of a PyTorch-style launch): flattened,
matched to the kernel's non-constexpr parameters (:func:`parameter_names`), typed as Triton
types (:func:`typed_arguments`), checked against how the kernel uses them
(:func:`check_argument_order`) and against ``input_output_aliases`` (:func:`checked_aliases`),
and handed to the launch model as its heuristics, pruners and grid see them
(:func:`named_arguments`). Each step raises JaxTritonError with a one-line reason.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from autotune_export.cuda import launch_model
from autotune_export.interop.jax_triton_host import CallArg
from autotune_export.interop.jax_triton_kernel import TritonKernel
from autotune_export.interop.jax_triton_types import JaxTritonError, array_types, scalar_type
from autotune_export.interop.kernel_usage import call_mismatch
from autotune_export.ir.params import NONE_TYPE, descriptor_refusal

__all__ = [
    "flatten_arguments",
    "parameter_names",
    "typed_arguments",
    "check_argument_order",
    "checked_aliases",
    "named_arguments",
]


def _view_of(a: "CallArg") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and element strides of array argument ``a`` as the launch passed it: the view of a
    :class:`~autotune_export.cuda.launch_model.StorageSpan` (``a.value.span``, set by
    launch_to_mlir for a strided tensor), else ``a.shape`` dense in row-major order."""
    span = getattr(a.value, "span", None)
    if span is not None:
        return span.view_shape, span.strides
    return a.shape, launch_model.dense_strides(a.shape)


def flatten_arguments(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)) and not hasattr(item, "shape"):
            out.extend(flatten_arguments(item))
        else:
            out.append(item)
    return out


def _is_static_scalar(value: Any) -> bool:
    if isinstance(value, (bool, int, float)):
        return True
    return type(value).__name__ == "float32" and type(value).__module__ == "numpy"


def parameter_names(
    k: TritonKernel, n_args: int, outs: list, output_params: Sequence[str] | None, metaparams: Mapping[str, Any]
) -> tuple[list[str], list[str], list]:
    """Which of kernel ``k``'s non-constexpr parameters (:attr:`TritonKernel.runtime_names`, in
    declaration order) the call's ``n_args`` flattened arguments and its outputs ``outs`` are:
    ``(input parameter names in argument order, output parameter names, outs)``. Without
    ``output_params`` (jax-triton) the outputs are the last parameters; with it (a
    PyTorch-style launch) they are the named ones and the outputs come back reordered to
    kernel parameter order, the inputs filling the other parameters in order. Raises
    JaxTritonError for an ``output_params`` entry that is no such parameter, a repeated one or
    one count too many or few, a number of arguments and outputs other than the parameters',
    and a metaparameter (``metaparams``) that is not a constexpr of ``k``."""
    runtime = k.runtime_names
    if output_params is None:  # jax-triton: the outputs are the last parameters
        in_names, out_names = runtime[:n_args], runtime[n_args:]
    else:
        out_names = list(output_params)
        bad = [p for p in out_names if p not in runtime]
        if bad:
            raise JaxTritonError(
                f"output_params: '{bad[0]}' is not a non-constexpr parameter of '{k.name}' ({', '.join(runtime)})"
            )
        if len(set(out_names)) != len(out_names) or len(out_names) != len(outs):
            raise JaxTritonError(
                f"output_params names {len(out_names)} parameter(s) ({', '.join(out_names)}), but there are {len(outs)} output(s)"
            )
        order = sorted(range(len(outs)), key=lambda j: runtime.index(out_names[j]))  # kernel order
        outs, out_names = [outs[j] for j in order], [out_names[j] for j in order]
        in_names = [p for p in runtime if p not in out_names]
    if n_args + len(outs) != len(runtime):
        raise JaxTritonError(
            f"kernel '{k.name}' has {len(runtime)} non-constexpr parameters ({', '.join(runtime)}), but the call passes "
            f"{n_args} argument(s) and {len(outs)} output(s)"
        )
    unknown = [m for m in metaparams if m not in k.constexpr_names]
    if unknown:
        raise JaxTritonError(
            f"'{unknown[0]}' is not a constexpr parameter of '{k.name}' (constexprs: {', '.join(k.constexpr_names) or 'none'})"
        )
    return in_names, out_names, outs


def typed_arguments(
    flat: Sequence[Any], outs: Sequence[Any], in_names: Sequence[str], out_names: Sequence[str]
) -> tuple[list[CallArg], list[CallArg]]:
    """Each flattened argument (``flat``, parameter names ``in_names``) and output (``outs``,
    ``out_names``) as a :class:`CallArg` with its Triton type: None -> ``none`` (Triton's JIT
    makes it a constexpr None, not passed by the dispatch), a static bool/int/float/np.float32
    -> its scalar type (np.float32: ``fp32``, the value a Python float), an array (``.shape``
    and ``.dtype``) -> a pointer type with the static shape (ints) and element type of
    :func:`~autotune_export.interop.jax_triton_types.array_types`; outputs are numbered after
    the arguments. Raises JaxTritonError for a host-side TensorDescriptor (TMA descriptors
    are refused: :func:`autotune_export.ir.params.descriptor_refusal`), any other argument, an
    output without ``.shape``/``.dtype`` and an unsupported dtype."""
    call_args: list[CallArg] = []
    for i, a in enumerate(flat):
        pname = in_names[i]
        if a is None:
            # Triton's JIT makes a None argument a constexpr None: not a kernel parameter, and
            # not passed by the dispatch (signature type `none`).
            call_args.append(CallArg(i, pname, None, False, NONE_TYPE))
        elif _is_static_scalar(a):
            value = float(a) if not isinstance(a, (bool, int, float)) else a
            ttype = "fp32" if not isinstance(a, (bool, int, float)) else scalar_type(a)
            call_args.append(CallArg(i, pname, value, False, ttype))
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            tt, elem = array_types(a.dtype, f"argument {i} ('{pname}')")
            call_args.append(CallArg(i, pname, a, True, "*" + tt, tuple(int(d) for d in a.shape), elem))
        elif hasattr(a, "block_shape") and hasattr(a, "base"):
            # triton.tools.tensor_descriptor.TensorDescriptor: a host-side TMA descriptor.
            raise JaxTritonError(
                descriptor_refusal(
                    pname, f"tensordesc<{str(getattr(a.base, 'dtype', '?')).replace('torch.', '')}{list(a.block_shape)}>"
                )
            )
        else:
            raise JaxTritonError(
                f"argument {i} ('{pname}') is neither an array (.shape/.dtype), a static bool/int/float nor None: {type(a).__name__}"
            )
    out_args: list[CallArg] = []
    for j, o in enumerate(outs):
        pname = out_names[j]
        if not (hasattr(o, "shape") and hasattr(o, "dtype")):
            raise JaxTritonError(f"output {j} ('{pname}') has no .shape/.dtype")
        tt, elem = array_types(o.dtype, f"output {j} ('{pname}')")
        out_args.append(CallArg(len(flat) + j, pname, o, True, "*" + tt, tuple(int(d) for d in o.shape), elem))
    return call_args, out_args


def check_argument_order(k: TritonKernel, n_args: int, call_args: list[CallArg], out_args: list[CallArg]) -> None:
    """Arguments in an order kernel ``k`` does not have (an array where its code uses a scalar,
    or the other way round: :func:`~autotune_export.interop.kernel_usage.call_mismatch`) are
    named here, not found as a compile error later. ``n_args``: the number of flattened
    arguments (outputs are numbered after them). None arguments are not compared. Raises
    JaxTritonError."""
    wrong = call_mismatch(
        k.name,
        k.jit.fn,
        k.runtime_names,
        [
            (
                f"output {a.index - n_args}" if a in out_args else f"argument {a.index}",
                a.name,
                a.is_array,
                a.tensor_type if a.is_array else f"a static {a.triton_type} ({a.value!r})",
            )
            for a in call_args + out_args
            if a.triton_type != NONE_TYPE
        ],
    )
    if wrong is not None:
        raise JaxTritonError(wrong)


def checked_aliases(input_output_aliases: Mapping[int, int] | None, call_args: list[CallArg], out_args: list[CallArg]) -> dict:
    """``input_output_aliases`` (jax-triton 0.3.x: an index among the ARRAY arguments -> an
    output index) as a dict, checked: both indices exist, the input and the output have the
    same shape and element type, and no two inputs alias one output. Raises JaxTritonError."""
    arrays = [a for a in call_args if a.is_array]
    aliases = dict(input_output_aliases or {})
    for src, dst in aliases.items():
        if not 0 <= int(src) < len(arrays):
            raise JaxTritonError(f"input_output_aliases: input {src} is not an array argument (there are {len(arrays)})")
        if not 0 <= int(dst) < len(out_args):
            raise JaxTritonError(f"input_output_aliases: output {dst} does not exist (there are {len(out_args)})")
        a, o = arrays[int(src)], out_args[int(dst)]
        if (a.shape, a.elem) != (o.shape, o.elem):
            raise JaxTritonError(f"input_output_aliases: input {src} is {a.tensor_type} but output {dst} is {o.tensor_type}")
    if len(set(aliases.values())) != len(aliases):
        raise JaxTritonError("input_output_aliases: two inputs alias the same output")
    return aliases


def named_arguments(
    convention: launch_model.Convention,
    call_args: list[CallArg],
    out_args: list[CallArg],
    runtime: Sequence[str],
    positional_constexprs: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The kernel's arguments by parameter name, as the launch model's heuristics, pruners and
    grid see them. Under Triton's convention: in kernel parameter order (``runtime``), each
    tensor a :class:`~autotune_export.cuda.launch_model.TensorArgument` answering what a
    torch.Tensor of that dtype and shape answers (a strided view, ``a.value.span``, with the
    view's own shape and strides, :func:`_view_of`), the scalars as given, then the constexprs
    given by position. Under jax-triton's: each argument's value (the array spec itself)."""
    if convention is launch_model.TRITON:
        # What Triton's launch hands to heuristics, pruners and the grid: the tensors (here
        # stand-ins answering what a torch.Tensor of that dtype and shape answers), the
        # scalars, and the constexprs given by position.
        # A strided view (launch_to_mlir: ``a.value.span``) answers with the view's own shape
        # and strides, as the tensor the library passed does; the module's argument is its span.
        named_args = {
            a.name: (
                launch_model.TensorArgument(a.name, a.triton_type, *_view_of(a), getattr(a.value, "source_dtype", None))
                if a.is_array
                else a.value
            )
            for a in call_args + out_args
        }
        named_args = {p: named_args[p] for p in runtime if p in named_args}
        named_args.update(positional_constexprs or {})
    else:
        named_args = {a.name: a.value for a in call_args + out_args}
    return named_args
