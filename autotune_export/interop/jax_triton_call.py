"""``jax_triton.triton_call`` -> a module in the Triton form (the CLI's input): the call's
arguments typed, its configs from Triton's launch model (convention ``JAX_TRITON``), the
grid (:mod:`.jax_triton_grid`), and the host function that dispatches the group, built with
the bindings. This front end enters the stages at the launch model: materialize-triton-variants
compiles what it writes (``docs/architecture.md``).
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Mapping, Sequence

from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import NONE_TYPE, OPTION_NAMES, Param, TorchDtype, TritonDtype, descriptor_refusal
from autotune_export.cuda import launch_model
from autotune_export.cuda.targets import TargetError
from autotune_export.cuda.targets import parse_target
from autotune_export.interop.kernel_usage import call_mismatch
from autotune_export.support import files
from autotune_export.interop.jax_triton_grid import grid_expressions
from autotune_export.interop.jax_triton_host import CallArg, host_text
from autotune_export.interop.jax_triton_kernel import TritonKernel, captured_kernel, locate_kernel, unwrap_kernel
from autotune_export.interop.jax_triton_types import (
    JaxTritonError,
    KernelNotImportableError,
    array_types,
    scalar_type,
)


# --------------------------------------------------------------------------------------------
# triton_call -> module text


def _view_of(a: "CallArg") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and element strides of array argument ``a`` as the launch passed it: the view of a
    :class:`~autotune_export.cuda.launch_model.StorageSpan` (``a.value.span``, set by
    launch_to_mlir for a strided tensor), else ``a.shape`` dense in row-major order."""
    span = getattr(a.value, "span", None)
    if span is not None:
        return span.view_shape, span.strides
    return a.shape, launch_model.dense_strides(a.shape)


def _flatten(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)) and not hasattr(item, "shape"):
            out.extend(_flatten(item))
        else:
            out.append(item)
    return out


def _is_static_scalar(value: Any) -> bool:
    if isinstance(value, (bool, int, float)):
        return True
    return type(value).__name__ == "float32" and type(value).__module__ == "numpy"


def _variants(
    k: TritonKernel,
    metaparams: dict,
    named_args: dict,
    num_warps,
    num_stages,
    num_ctas,
    capability: int | None,
    convention,
    positional: Mapping[str, Any] | None = None,
    keywords: Sequence[str] = (),
) -> list:
    """The variants the call compiles (:func:`autotune_export.cuda.launch_model.launch_variants`,
    under ``convention``: jax-triton's or Triton's rules for metaparameters, heuristics and
    ``prune_configs_by``), with Triton's driver answering for ``capability`` while pruning."""
    kwargs = dict(metaparams)
    for key, value, default in (("num_warps", num_warps, None), ("num_stages", num_stages, None), ("num_ctas", num_ctas, 1)):
        if value is not None and value != default:
            kwargs[key] = value
    if convention is launch_model.JAX_TRITON and k.autotuner is not None:
        for key in ("num_warps", "num_stages", "num_ctas"):
            kwargs.pop(key, None)  # jax-triton takes them from the configs
    try:
        return list(
            launch_model.launch_variants(
                k.model,
                named_args,
                kwargs,
                convention=convention,
                capability=capability,
                positional=positional,
                keywords=keywords,
            ).variants
        )
    except launch_model.LaunchModelError as err:
        if err.stage == "prune":
            raise JaxTritonError(f"prune_configs_by of the triton.autotune kernel '{k.name}': {err}") from None
        raise JaxTritonError(str(err)) from None


def _config_value(v: Any, key: str) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    dtype = TritonDtype.of(v) or TorchDtype.of(v)  # OUT_DTYPE=tl.float16; torch.float16 stays a torch dtype
    if dtype is not None:
        return dtype
    inner = getattr(v, "value", None)  # tl.constexpr
    if inner is None and type(v).__name__ == "constexpr":
        return None
    if isinstance(inner, (bool, int, float, str)) or TritonDtype.of(inner) is not None:
        return _config_value(inner, key)
    if type(v).__module__.startswith("numpy") and hasattr(v, "item"):
        return v.item()
    raise JaxTritonError(
        f"constexpr '{key}' = {v!r}: a config value must be an int, float, bool, str, None, a Triton dtype or a torch dtype"
    )


def triton_call_to_mlir(
    *args: Any,
    kernel: Any,
    out_shape: Any,
    grid: Any,
    num_warps: int | None = None,
    num_stages: int | None = None,
    num_ctas: int = 1,
    input_output_aliases: Mapping[int, int] | None = None,
    zeroed_outputs: Sequence[int] | Callable[[dict], Sequence[int]] = (),
    name: str = "",
    target: str = "sm_80",
    kernel_source: tuple[str, str] | None = None,
    relative_to: str | None = None,
    output: str | os.PathLike | None = None,
    output_params: Sequence[str] | None = None,
    custom_call_target_name: str | None = None,
    compute_capability: int | None = None,
    enable_fp_fusion: bool = True,
    debug: bool = False,
    serialized_metadata: bytes = b"",
    **metaparams: Any,
) -> str:
    """The module that ``jax_triton.triton_call(*args, kernel=..., ...)`` amounts to, as text.

    Arguments follow ``jax_triton.triton_call`` (0.3.x): ``args`` are arrays (anything with
    ``.shape`` and ``.dtype``), static Python scalars (``bool``/``int``/``float``/
    ``np.float32``) and ``None`` (an optional tensor or scalar left out: Triton makes it a
    constexpr None, so the dispatch does not pass it; signature type ``none``), flattened if
    nested in lists or tuples; ``out_shape`` one such array spec
    or a list/tuple of them; ``grid`` an int, a tuple of up to three ints, or a callable of the
    metaparameter dict; ``input_output_aliases`` maps an index among the ARRAY arguments to an
    output index (0.3.x counts arrays only); ``zeroed_outputs`` output indices (or a callable
    of the metaparameters giving them, its union over the configs) zero-filled before the
    launch: the group's ``reset_to_zero``, also before every timed run; ``**metaparams`` the
    constexpr values (ints, floats, bools, strings, None, Triton dtypes such as ``tl.float16``). A ``triton.autotune`` kernel contributes every config that agrees with
    the explicit metaparameters (then its ``prune_configs_by`` pruning), ``triton.heuristics``
    are applied per config; a plain kernel gets one config from the metaparameters,
    ``num_warps`` (default 4) and ``num_stages`` (default 3).

    Returned text (sugared, the autotune-export CLI's input)::

        hal.executable.source private @KERNEL_ex {
          hal.executable.autotuning.export @KERNEL triton("/abs/kernel.py", "KERNEL")
              signature(...) configs([...]) workload() grid(...)
        }
        util.func public @main(%arg0: tensor<...>, ...) -> (tensor<...>, ...) { ... flow.dispatch ... }

    ``name`` names the host function (default ``main``). ``target`` only goes into the header
    comment (the CLI's ``--target`` chooses what variants are compiled for); a
    ``compute_capability`` (jax-triton's argument, e.g. 90) overrides it. ``kernel_source``
    gives ``(path, attribute)`` when the kernel cannot be located from its Python function
    (see :func:`locate_kernel`). The kernel's path in ``triton("...")``: relative to the
    directory of ``output`` when given (the .mlir file the text is for, which is then written,
    atomically: the module and its kernel move together), else relative to ``relative_to``,
    else absolute (text that is not yet anywhere can only name the kernel absolutely).
    ``output_params`` names the kernel parameters the outputs are, wherever they are in its
    parameter list (a PyTorch-style launch ``kernel[grid](x, y, out, n)`` passes ``out`` before
    ``n``; see :func:`autotune_export.interop.launch.launch_to_mlir`); the arguments then fill
    the other parameters in order, and the results come in kernel parameter order. Default:
    jax-triton's convention, the outputs are the last parameters.
    ``custom_call_target_name``,
    ``enable_fp_fusion``, ``debug`` and ``serialized_metadata`` are accepted for signature
    compatibility and ignored.

    The grid clause: one expression evaluated per config by materialize-triton-variants. When
    every config has the same grid it is that constant; otherwise the callable is re-run on
    symbols (``lambda m: (triton.cdiv(4096, m["BLOCK"]),)`` gives ``(4096 + BLOCK - 1) // BLOCK``)
    and, if it uses operations a grid expression lacks, a per-config selection over the config
    constants is written (see :func:`~autotune_export.interop.jax_triton_grid.grid_expressions`); every form is checked against the callable's
    value for every config. The workload is empty: shapes and scalars are static.

    Raises JaxTritonError (KernelNotImportableError) with a one-line reason, OSError when
    ``output`` cannot be written.
    """
    del custom_call_target_name, enable_fp_fusion, debug, serialized_metadata
    return call_to_mlir(
        args,
        kernel=kernel,
        out_shape=out_shape,
        grid=grid,
        num_warps=num_warps,
        num_stages=num_stages,
        num_ctas=num_ctas,
        input_output_aliases=input_output_aliases,
        zeroed_outputs=zeroed_outputs,
        name=name,
        target=target,
        kernel_source=kernel_source,
        relative_to=relative_to,
        output=output,
        output_params=output_params,
        compute_capability=compute_capability,
        metaparams=metaparams,
        convention=launch_model.JAX_TRITON,
        origin="autotune_export.interop.jax_triton.triton_call_to_mlir",
    )


def call_to_mlir(
    args: Sequence[Any],
    *,
    kernel: Any,
    out_shape: Any,
    grid: Any,
    num_warps: int | None,
    num_stages: int | None,
    num_ctas: int,
    input_output_aliases: Mapping[int, int] | None,
    zeroed_outputs: Sequence[int] | Callable[[dict], Sequence[int]],
    name: str,
    target: str,
    kernel_source: tuple[str, str] | None,
    relative_to: str | None,
    output: str | os.PathLike | None,
    output_params: Sequence[str] | None,
    compute_capability: int | None,
    metaparams: dict,
    convention: launch_model.Convention,
    origin: str,
    host_outputs: Sequence[str] = (),
    positional_constexprs: Mapping[str, Any] | None = None,
    origin_note: str = "",
    keyword_arguments: Sequence[str] = (),
) -> str:
    """:func:`triton_call_to_mlir`'s work, shared with the PyTorch-style launch
    (:func:`autotune_export.interop.launch.launch_to_mlir`): ``convention`` is the launch
    semantics (:mod:`autotune_export.cuda.launch_model`: jax-triton's or Triton's), ``origin``
    the function the header comment names (``origin_note`` follows it). ``host_outputs``:
    outputs (parameter names) the host function takes as arguments and returns, written in
    place (the dispatch's result tied to the argument itself); the host function's arguments
    are then every tensor it takes in kernel parameter order. ``positional_constexprs``:
    constexprs the launch gave by position (the pruners see them among the named arguments,
    as Triton's ``Autotuner.nargs``). ``keyword_arguments``: non-constexpr parameters the
    launch gave by keyword: the pruners see them among their keyword arguments, not the named
    ones (Triton's ``Autotuner.run``). Under Triton's convention the heuristics, pruners and
    grid callable see each tensor as a
    :class:`~autotune_export.cuda.launch_model.TensorArgument` (dtype, shape, strides, element
    size) and the grid callable every kernel argument by name. Raises JaxTritonError.

    The steps, in order (each raises JaxTritonError for what it checks, so the first problem
    of a call is the one reported): :func:`_parameter_names` (which parameters the arguments
    and outputs are), :func:`_typed_arguments` and :func:`_check_argument_order` (each
    argument typed; an order the kernel does not have), :func:`_checked_aliases`,
    :func:`_named_arguments` (what heuristics, pruners and the grid see), :func:`_variants`
    (Triton's launch model), :func:`_config_rows` (the group's configs and each config's grid
    arguments), :func:`~autotune_export.interop.jax_triton_grid.grid_expressions`,
    :func:`_zeroed_output_indices`, :func:`_kernel_file` and :func:`_call_group` (the group),
    :func:`~autotune_export.interop.jax_triton_host.host_text` (the module)."""
    if output is not None:
        relative_to = os.path.dirname(os.path.abspath(os.fspath(output)))
    if compute_capability is not None:
        target = f"sm_{int(compute_capability)}"
    k = unwrap_kernel(kernel)
    flat = _flatten(args)
    outs = list(out_shape) if isinstance(out_shape, (list, tuple)) else [out_shape]
    if not outs:
        raise JaxTritonError("`out_shape` lists no output")
    runtime = k.runtime_names
    in_names, out_names, outs = _parameter_names(k, len(flat), outs, output_params, metaparams)
    call_args, out_args = _typed_arguments(flat, outs, in_names, out_names)
    _check_argument_order(k, len(flat), call_args, out_args)
    aliases = _checked_aliases(input_output_aliases, call_args, out_args)
    named_args = _named_arguments(convention, call_args, out_args, runtime, positional_constexprs)
    try:
        capability = parse_target(target).capability
    except TargetError:
        capability = None  # the header comment names it; the CLI's --target decides
    variants = _variants(
        k,
        metaparams,
        named_args,
        num_warps,
        num_stages,
        num_ctas,
        capability,
        convention,
        positional_constexprs,
        keyword_arguments,
    )
    rows, metas, envs = _config_rows(k, variants, metaparams, named_args, convention, positional_constexprs)
    grid_exprs, _how = grid_expressions(grid, metas, envs)
    zeroed = _zeroed_output_indices(zeroed_outputs, metas, len(outs))
    path, attr, embedded = _kernel_file(kernel, k, kernel_source, relative_to)
    group = _call_group(k, path, attr, embedded, call_args, out_args, rows, grid_exprs, convention, zeroed, aliases)
    exe = f"{group.name}_ex"
    func = name or "main"
    text = host_text(
        group,
        exe,
        func,
        call_args,
        out_args,
        aliases,
        zeroed,
        target,
        _how,
        origin + origin_note,
        [p for p in runtime if p in host_outputs],
    )
    if output is not None:
        files.atomic_write(os.fspath(output), text)
    return text


def _parameter_names(
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


def _typed_arguments(
    flat: Sequence[Any], outs: Sequence[Any], in_names: Sequence[str], out_names: Sequence[str]
) -> tuple[list[CallArg], list[CallArg]]:
    """Each flattened argument (``flat``, parameter names ``in_names``) and output (``outs``,
    ``out_names``) as a :class:`CallArg` with its Triton type: None -> ``none`` (Triton's JIT
    makes it a constexpr None, not passed by the dispatch), a static bool/int/float/np.float32
    -> its scalar type (np.float32: ``fp32``, the value a Python float), an array (``.shape``
    and ``.dtype``) -> a pointer type with the static shape (ints) and element type of
    :func:`~autotune_export.interop.jax_triton_types.array_types`; outputs are numbered after
    the arguments. Raises JaxTritonError for a host-side TensorDescriptor (TMA descriptors
    are refused: :func:`autotune_export.ir.group.descriptor_refusal`), any other argument, an
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


def _check_argument_order(k: TritonKernel, n_args: int, call_args: list[CallArg], out_args: list[CallArg]) -> None:
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


def _checked_aliases(input_output_aliases: Mapping[int, int] | None, call_args: list[CallArg], out_args: list[CallArg]) -> dict:
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


def _named_arguments(
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


def _config_rows(
    k: TritonKernel,
    variants: list,
    metaparams: Mapping[str, Any],
    named_args: Mapping[str, Any],
    convention: launch_model.Convention,
    positional_constexprs: Mapping[str, Any] | None,
) -> tuple[list[list[tuple[str, Any]]], list[dict[str, Any]], list[dict[str, int]]]:
    """Per variant (:func:`_variants`): ``(rows, metas, envs)``. ``rows``: the group's config,
    every constexpr the kernel needs in declaration order (values through
    :func:`_config_value`), then ``num_warps``, ``num_stages`` and, when set, ``num_ctas``
    (other than 1) and ``maxnreg``; a constexpr named like a launch option is left to the
    option (Triton binds the launch's num_warps to both; the config holds it once).
    ``metas``: what the grid callable gets: under Triton's convention every kernel argument
    by name and the variant's constexprs (Triton's launcher calls ``grid(bound_args)``); under
    jax-triton's the metaparameters and the constexprs the call, the config or a heuristic
    gave. ``envs``: the config's integer constexprs (not bools, not options), the names a
    grid expression may use. Raises JaxTritonError for a config value of another type."""
    # Config entries: every constexpr the kernel needs, in declaration order, then options.
    # A constexpr named like a launch option has the option's value (Triton binds the
    # launch's num_warps to both); the group's config holds it once, as the option.
    rows: list[list[tuple[str, Any]]] = []
    metas: list[dict[str, Any]] = []
    envs: list[dict[str, int]] = []
    for v in variants:
        cfg = v.config
        row = [(c, _config_value(value, c)) for c, value in v.constexprs if c not in OPTION_NAMES]
        row.append(("num_warps", int(cfg.num_warps)))
        row.append(("num_stages", int(cfg.num_stages)))
        if cfg.num_ctas not in (None, 1):
            row.append(("num_ctas", int(cfg.num_ctas)))
        if cfg.maxnreg is not None:
            row.append(("maxnreg", int(cfg.maxnreg)))
        rows.append(row)
        given = {
            c: value
            for c, value in v.constexprs
            if c in metaparams or c in dict(cfg.kwargs) or c in dict(k.model.heuristics()) or c in (positional_constexprs or {})
        }
        if convention is launch_model.TRITON:
            # Triton's launcher calls grid(bound_args): every argument of the kernel by name.
            metas.append({**named_args, **dict(v.constexprs)})
        else:
            metas.append({**metaparams, **given})
        envs.append(
            {key: val for key, val in row if key not in OPTION_NAMES and isinstance(val, int) and not isinstance(val, bool)}
        )
    return rows, metas, envs


def _zeroed_output_indices(
    zeroed_outputs: Sequence[int] | Callable[[dict], Sequence[int]], metas: list[dict[str, Any]], n_outs: int
) -> set[int]:
    """The output indices zero-filled before the launch: ``zeroed_outputs`` itself, or, when it
    is a callable of the metaparameters, the union of its answers over the configs (``metas``:
    each config's metaparameter dict, a copy passed). Raises JaxTritonError for an index that
    is not one of the ``n_outs`` outputs."""
    zeroed: set[int] = set()
    for meta in metas:
        z = zeroed_outputs(dict(meta)) if callable(zeroed_outputs) else zeroed_outputs
        for j in z or ():
            if not 0 <= int(j) < n_outs:
                raise JaxTritonError(f"zeroed_outputs: output {j} does not exist (there are {n_outs})")
            zeroed.add(int(j))
    return zeroed


def _kernel_file(
    kernel: Any, k: TritonKernel, kernel_source: tuple[str, str] | None, relative_to: str | None
) -> tuple[str, str, Any]:
    """``(path, attribute, embedded)`` of the ``triton("path", "attribute")`` clause: the kernel
    located from its Python function (:func:`~autotune_export.interop.jax_triton_kernel.locate_kernel`),
    else, for a kernel that cannot be imported from a file, its captured source embedded in the
    group (``embedded``, :func:`~autotune_export.interop.jax_triton_kernel.captured_kernel`);
    ``kernel_source`` as given instead (the path made absolute). The path is made relative to
    ``relative_to`` when given. Raises JaxTritonError (KernelNotImportableError) when the kernel
    can be neither located nor captured."""
    embedded = None
    if kernel_source is None:
        try:
            path, attr = locate_kernel(kernel)
        except KernelNotImportableError as err:
            path, attr, embedded = captured_kernel(k, err)
    else:
        path, attr = kernel_source
        path = os.path.abspath(path)
    if relative_to is not None and os.path.isabs(path):
        path = os.path.relpath(path, relative_to)
    return path, attr, embedded


def _call_group(
    k: TritonKernel,
    path: str,
    attr: str,
    embedded: Any,
    call_args: list[CallArg],
    out_args: list[CallArg],
    rows: list[list[tuple[str, Any]]],
    grid_exprs: list,
    convention: launch_model.Convention,
    zeroed: set[int],
    aliases: Mapping[int, int],
) -> AutotuneGroup:
    """The group of the call: named after the kernel (characters other than ``[A-Za-z0-9_]``
    made ``_``), its signature in kernel parameter order (outputs marked), the configs
    ``rows``, an empty workload (shapes and scalars are static) and the grid ``grid_exprs``.
    Under jax-triton's convention ``zeroed`` outputs are its ``reset_to_zero`` and the
    aliased outputs not zeroed its ``restore_value``, written whenever the kernel has the
    corresponding autotuner lists; under Triton's both clauses are left out (see below)."""
    kname = re.sub(r"[^A-Za-z0-9_]", "_", k.name)
    runtime = k.runtime_names
    group = AutotuneGroup(
        name=kname,
        triton=(path, attr),
        signature=sorted(
            [Param(a.name, a.triton_type) for a in call_args] + [Param(o.name, o.triton_type, True) for o in out_args],
            key=lambda p: runtime.index(p.name),
        ),  # the kernel's parameter order
        configs=rows,
        workload=[],
        grid=grid_exprs,
        kernel_source=embedded,
    )
    # zeroed_outputs as the group's reset_to_zero (zero-fill-outputs zero-fills them at every
    # call, as jax-triton before every launch, and before every timed run). jax-triton ignores a
    # triton.autotune's own reset_to_zero / restore_value, so the clauses are explicit whenever
    # the kernel has them: restored are the aliased outputs (jax-triton's tuner saves and
    # restores the aliased buffers), which are written in place.
    # A PyTorch-style launch (convention TRITON) leaves both clauses out, so that the kernel's
    # own triton.autotune(reset_to_zero=..., restore_value=...) apply as in Triton: materialize
    # reads them from the kernel, their one home (an empty clause here would override them and
    # leave an atomic accumulator an undefined buffer).
    tuner = k.autotuner
    if convention is not launch_model.TRITON and (zeroed or getattr(tuner, "reset_to_zero", None)):
        group.reset_to_zero = [out_args[j].name for j in sorted(zeroed)]
    if convention is not launch_model.TRITON and getattr(tuner, "restore_value", None):
        group.restore_value = [out_args[j].name for j in sorted({int(v) for v in aliases.values()} - zeroed)]
    return group
