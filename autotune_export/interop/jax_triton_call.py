"""``jax_triton.triton_call`` -> a module in the Triton form (the CLI's input): the call's
arguments typed, its configs from Triton's launch model (convention ``JAX_TRITON``), the
grid (:mod:`.jax_triton_grid`), and the host function that dispatches the group, built with
the bindings. This front end enters the stages at the launch model: materialize-triton-variants
compiles what it writes (``docs/architecture.md``).
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from autotune_export import contract
from autotune_export.ir.group import NONE_TYPE, OPTION_NAMES, AutotuneGroup, Param, TorchDtype, TritonDtype, descriptor_refusal
from iree.compiler import ir
from autotune_export.cuda import launch_model
from autotune_export.cuda.targets import TargetError
from autotune_export.ir import builders
from autotune_export.cuda.targets import parse_target
from iree.compiler.dialects import arith
from autotune_export.frontend.reader import new_context, print_module
from autotune_export.interop.kernel_usage import call_mismatch
from autotune_export.support import files
from autotune_export.interop.jax_triton_grid import grid_expressions
from autotune_export.interop.jax_triton_kernel import TritonKernel, captured_kernel, locate_kernel, unwrap_kernel
from autotune_export.interop.jax_triton_types import (
    ELEMENT_TYPES,
    JaxTritonError,
    KernelNotImportableError,
    array_types,
    as_i32,
    scalar_type,
    tensor_type,
)


# --------------------------------------------------------------------------------------------
# triton_call -> module text


@dataclass
class _CallArg:
    index: int  # position among the kernel's runtime parameters
    name: str
    value: Any
    is_array: bool
    triton_type: str
    shape: tuple[int, ...] = ()
    elem: str = ""

    @property
    def tensor_type(self) -> str:
        return tensor_type(self.shape, self.elem)


def _view_of(a: "_CallArg") -> tuple[tuple[int, ...], tuple[int, ...]]:
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
    size) and the grid callable every kernel argument by name. Raises JaxTritonError."""
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
    if output_params is None:  # jax-triton: the outputs are the last parameters
        in_names, out_names = runtime[: len(flat)], runtime[len(flat) :]
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
    if len(flat) + len(outs) != len(runtime):
        raise JaxTritonError(
            f"kernel '{k.name}' has {len(runtime)} non-constexpr parameters ({', '.join(runtime)}), but the call passes "
            f"{len(flat)} argument(s) and {len(outs)} output(s)"
        )
    unknown = [m for m in metaparams if m not in k.constexpr_names]
    if unknown:
        raise JaxTritonError(
            f"'{unknown[0]}' is not a constexpr parameter of '{k.name}' (constexprs: {', '.join(k.constexpr_names) or 'none'})"
        )

    call_args: list[_CallArg] = []
    for i, a in enumerate(flat):
        pname = in_names[i]
        if a is None:
            # Triton's JIT makes a None argument a constexpr None: not a kernel parameter, and
            # not passed by the dispatch (signature type `none`).
            call_args.append(_CallArg(i, pname, None, False, NONE_TYPE))
        elif _is_static_scalar(a):
            value = float(a) if not isinstance(a, (bool, int, float)) else a
            ttype = "fp32" if not isinstance(a, (bool, int, float)) else scalar_type(a)
            call_args.append(_CallArg(i, pname, value, False, ttype))
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            tt, elem = array_types(a.dtype, f"argument {i} ('{pname}')")
            call_args.append(_CallArg(i, pname, a, True, "*" + tt, tuple(int(d) for d in a.shape), elem))
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
    out_args: list[_CallArg] = []
    for j, o in enumerate(outs):
        pname = out_names[j]
        if not (hasattr(o, "shape") and hasattr(o, "dtype")):
            raise JaxTritonError(f"output {j} ('{pname}') has no .shape/.dtype")
        tt, elem = array_types(o.dtype, f"output {j} ('{pname}')")
        out_args.append(_CallArg(len(flat) + j, pname, o, True, "*" + tt, tuple(int(d) for d in o.shape), elem))
    # Arguments in an order the kernel does not have: say which one (not a compile error later).
    wrong = call_mismatch(
        k.name,
        k.jit.fn,
        runtime,
        [
            (
                f"output {a.index - len(flat)}" if a in out_args else f"argument {a.index}",
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

    arrays = [a for a in call_args if a.is_array]
    aliases = dict(input_output_aliases or {})
    for src, dst in aliases.items():
        if not 0 <= int(src) < len(arrays):
            raise JaxTritonError(f"input_output_aliases: input {src} is not an array argument (there are {len(arrays)})")
        if not 0 <= int(dst) < len(outs):
            raise JaxTritonError(f"input_output_aliases: output {dst} does not exist (there are {len(outs)})")
        a, o = arrays[int(src)], out_args[int(dst)]
        if (a.shape, a.elem) != (o.shape, o.elem):
            raise JaxTritonError(f"input_output_aliases: input {src} is {a.tensor_type} but output {dst} is {o.tensor_type}")
    if len(set(aliases.values())) != len(aliases):
        raise JaxTritonError("input_output_aliases: two inputs alias the same output")

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
    grid_exprs, _how = grid_expressions(grid, metas, envs)

    zeroed: set[int] = set()
    for meta in metas:
        z = zeroed_outputs(dict(meta)) if callable(zeroed_outputs) else zeroed_outputs
        for j in z or ():
            if not 0 <= int(j) < len(outs):
                raise JaxTritonError(f"zeroed_outputs: output {j} does not exist (there are {len(outs)})")
            zeroed.add(int(j))

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

    kname = re.sub(r"[^A-Za-z0-9_]", "_", k.name)
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
    exe = f"{kname}_ex"
    func = name or "main"
    text = _host_text(
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


def _strided_tensors(takes, out_args, host_outs) -> list:
    """The :class:`~autotune_export.contract.StridedTensor` of each array argument that is a
    strided view (``a.value.span``, set by launch_to_mlir), with the host function's argument
    (its place in ``takes``) and result (its place among ``out_args``) that carry it."""
    out = []
    for a in list(takes) + [o for o in out_args if o not in takes]:
        span = getattr(a.value, "span", None)
        if span is None or not span.strided:
            continue
        argument = takes.index(a) if a in takes else None
        result = out_args.index(a) if a in out_args else None
        out.append(
            contract.StridedTensor(a.name, argument, result, list(span.view_shape), list(span.strides), span.kind, a.tensor_type)
        )
    return out


def _ranked_tensor_type(a: _CallArg) -> ir.RankedTensorType:
    """``a``'s tensor type (static shape, element type of :data:`DTYPES`), made with the
    bindings in the current context."""
    return ir.RankedTensorType.get(list(a.shape), ELEMENT_TYPES[a.elem]())


def _scalar_constant(a: _CallArg) -> ir.Value:
    """``arith.constant`` of static scalar ``a`` at the current insertion point: ``i1``, a
    32-bit integer as signless ``i32`` (a ``u32`` by its bits), a 64-bit one as ``i64``, ``fp32``
    (the value rounded to f32, as the launch passes it) or ``fp64``. Raises JaxTritonError for
    another type."""
    t = a.triton_type
    if t == "i1":
        return arith.ConstantOp(
            ir.IntegerType.get_signless(1), ir.IntegerAttr.get(ir.IntegerType.get_signless(1), int(bool(a.value)))
        ).result
    if t in ("i32", "u32"):
        i32 = ir.IntegerType.get_signless(32)
        return arith.ConstantOp(i32, ir.IntegerAttr.get(i32, as_i32(int(a.value)))).result
    if t in ("i64", "u64"):
        i64 = ir.IntegerType.get_signless(64)
        v = int(a.value) & (2**64 - 1)
        return arith.ConstantOp(i64, ir.IntegerAttr.get(i64, v - 2**64 if v >= 2**63 else v)).result
    if t == "fp32":
        f32 = ir.F32Type.get()
        return arith.ConstantOp(f32, ir.FloatAttr.get(f32, struct.unpack("<f", struct.pack("<f", float(a.value)))[0])).result
    if t == "fp64":
        f64 = ir.F64Type.get()
        return arith.ConstantOp(f64, ir.FloatAttr.get(f64, float(a.value))).result
    raise JaxTritonError(f"cannot pass static {t} argument '{a.name}'")


def _zero_splat(rtype: ir.RankedTensorType) -> ir.Value:
    """``flow.tensor.splat`` of a zero of ``rtype``'s element type, at the current insertion point."""
    elem = rtype.element_type
    if isinstance(elem, ir.IntegerType):
        zero = arith.ConstantOp(elem, ir.IntegerAttr.get(elem, 0)).result
    else:
        zero = arith.ConstantOp(elem, ir.FloatAttr.get(elem, 0.0)).result
    return ir.Operation.create("flow.tensor.splat", results=[rtype], operands=[zero]).result


def _host_text(
    group: AutotuneGroup,
    exe: str,
    func: str,
    call_args,
    out_args,
    aliases,
    zeroed,
    target,
    how,
    origin: str,
    host_outs: Sequence[str] = (),
) -> str:
    """The module of one call, built with the bindings and printed (the group in its sugared
    form): ``hal.executable.source @exe`` holding ``group``, and ``util.func public @func``
    that dispatches it. The host function takes the array arguments (in call order; with
    ``host_outs``, those outputs too, every tensor in kernel parameter order) and returns the
    outputs in kernel order. Dispatch operands: the arguments in kernel order (static scalars
    as constants, None left out), then, when any output is tied (``zeroed``, ``aliases``,
    ``host_outs``), one operand per output that its result is tied to: a zero splat (zeroed),
    a clone of the aliased input, the host's own argument (``host_outs``), else an empty
    tensor."""
    from autotune_export.ir import functions

    arrays = [a for a in call_args if a.is_array]
    alias_of = {dst: src for src, dst in aliases.items()}
    takes = arrays + [o for o in out_args if o.name in host_outs]
    if host_outs:
        order = [p.name for p in group.signature]
        takes.sort(key=lambda a: order.index(a.name))  # kernel parameter order
    tie_all = bool(zeroed) or bool(aliases) or bool(host_outs)
    header = [
        f"// Generated by {origin} from kernel '{group.triton[1]}'.",
        f"// Compile: autotune-export THIS.mlir --emit vmfb --target {target} -o OUT.vmfb",
        f"// Grid: {how} ({len(group.configs)} config{'s' if len(group.configs) != 1 else ''}).",
    ]
    for a in call_args + out_args:
        span = getattr(a.value, "span", None) if a.is_array else None
        if span is not None and span.strided:
            header.append(
                f"// Strided: '{a.name}' is a {span.describe()} ({span.kind}); the module's "
                f"{'result' if a in out_args and a.name not in host_outs else 'argument'} is its storage "
                f"span from its first element, {a.tensor_type}; the strides are passed as given "
                '(docs/call-sites.md, "Strided tensors").'
            )
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        top = ir.InsertionPoint(module.body)
        source = builders.executable_source(exe, ip=top)
        group.build(ip=builders.source_block(source))
        in_types = [_ranked_tensor_type(a) for a in takes]
        res_types = [_ranked_tensor_type(o) for o in out_args]

        def body(params: list) -> list:
            value_of = {id(a): v for a, v in zip(takes, params)}
            operands = []
            for a in call_args:
                if a.triton_type == NONE_TYPE:
                    continue  # a constexpr None: not passed
                operands.append(value_of[id(a)] if a.is_array else _scalar_constant(a))
            tied = []
            for j, o in enumerate(out_args):
                if not tie_all:
                    tied.append(-1)
                    continue
                rtype = res_types[j]
                if o.name in host_outs:
                    operands.append(value_of[id(o)])
                elif j in zeroed:
                    operands.append(_zero_splat(rtype))
                elif j in alias_of:
                    src = value_of[id(arrays[alias_of[j]])]
                    operands.append(ir.Operation.create("flow.tensor.clone", results=[rtype], operands=[src]).result)
                else:
                    operands.append(ir.Operation.create("flow.tensor.empty", results=[rtype], operands=[]).result)
                tied.append(len(operands) - 1)
            attrs = {
                "entry_points": ir.ArrayAttr.get([ir.SymbolRefAttr.get([exe, group.name])]),
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(operands), 0, 0]),
            }
            if tie_all:
                attrs["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), t) for t in tied])
            dispatch = ir.Operation.create("flow.dispatch", results=res_types, operands=operands, attributes=attrs)
            return list(dispatch.results)

        strided = _strided_tensors(takes, out_args, host_outs)
        attributes = None
        if strided:
            attributes = {
                "iree.reflection": ir.DictAttr.get({contract.STRIDED_KEY: ir.StringAttr.get(contract.encode_strided(strided))})
            }
        functions.util_func(func, in_types, res_types, body, attributes=attributes, ip=top)
        module.operation.verify()
        lines = print_module(module).rstrip("\n").split("\n")
        if lines[0] == "module {" and lines[-1] == "}":  # the top-level ops without the implicit module
            lines = [line[2:] if line.startswith("  ") else line for line in lines[1:-1]]
            lines = [x for i, line in enumerate(lines) for x in ([line, ""] if line == "}" and i + 1 < len(lines) else [line])]
        return "\n".join(header) + "\n\n" + "\n".join(lines) + "\n"
