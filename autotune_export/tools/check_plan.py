"""``autotune-export check``, planning (this process): from a module's ``triton(...)`` groups to
the launches the interpreter runs (:class:`Launch`: the kernel, its parameters bound as IREE
binds the dispatch, the buffers, the grid per config). See :mod:`autotune_export.tools.check`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autotune_export.cuda import abi
from autotune_export.ir import binding
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import OPTION_DEFAULTS, variant_name
from autotune_export.ir.walk import enclosing_function, isa, sym_name
from autotune_export.passes.base import PassContext
from autotune_export.ir.binding import DispatchOperands
from autotune_export.cuda.launch_plan import UNKNOWN as _UNKNOWN
from autotune_export.cuda.launch_plan import as_parameter as _as_parameter
from autotune_export.passes.dispatch_values import evaluate as _evaluate
from autotune_export.passes.dispatch_values import tune_workloads as _tune_workloads
from autotune_export.passes.materialize_triton_variants import MaterializeTritonVariants
from autotune_export.passes.triton_dispatch_checks import dispatch_bindings as _dispatch_bindings
from autotune_export.passes.zero_outputs import is_zeroed
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, location_of


@dataclass
class Buffer:
    """One binding of a launch: ``shape`` (the dispatch's tensor type, sizes evaluated),
    ``dtype`` the torch dtype name of the kernel's pointer (the signature's pointee),
    ``fill`` ``"data"`` (seeded values), ``"zeros"`` (a ``reset_to_zero`` output) or
    ``"undefined"`` (new values in every run), ``role`` ``"input"`` (an operand IREE treats as
    immutable), ``"inplace"`` (an operand a result is tied to) or ``"output"`` (an untied
    result); ``param`` the signature's pointer."""

    shape: tuple
    dtype: str
    fill: str
    role: str
    param: str


@dataclass
class Variant:
    """One config as launched: its export ``name``, ``config`` text, ``constexprs`` (every
    constexpr the kernel gets; Triton dtypes as :class:`~autotune_export.ir.group.TritonDtype`)
    and ``grid`` (x, y, z programs)."""

    name: str
    config: str
    constexprs: dict
    grid: tuple
    entries: list = field(default_factory=list)  # the config as the group gives it: [(key, value)]


@dataclass
class Launch:
    """Everything the interpreter process needs for one dispatch on one workload:
    the kernel (``path``, ``kernel``, ``import_arch``), per kernel parameter in order
    ``("buffer", binding index)``, ``("scalar", value)`` or ``("none",)``, the ``buffers`` in
    binding order, ``results``: per dispatch result the binding it is read from, the
    ``variants`` (index ``default`` is the default variant), the ``seed``, the per-run
    ``timeout`` in seconds and an optional ``reference`` (``MODULE:FUNCTION``). Where the
    host function passes its own arguments straight to the dispatch and returns its results,
    ``host_args`` / ``host_results`` say which (what a differential test feeds and reads)."""

    path: str
    kernel: str
    import_arch: int
    params: list
    buffers: list[Buffer]
    results: list[int]
    variants: list[Variant]
    default: int
    seed: int
    timeout: float
    reference: str | None = None
    title: str = ""
    where: Any = None  # the dispatch's Location (diagnostics)
    dispatch_index: int = 0  # which dispatch of the group (in module order)
    workload_index: int = 0  # which tune_workload (0 without one)
    host_args: list = field(default_factory=list)  # per binding: the host function's argument number feeding it, or None
    host_results: list = field(default_factory=list)  # per dispatch result: the host result it is returned as, or None
    data: dict = field(default_factory=dict)  # binding index -> tensor given instead of seeded data (benchmarks/differential.py)


def _torch_dtype(pointee: str) -> str:
    from autotune_export.cuda.triton_compile import TORCH_DTYPE

    name = TORCH_DTYPE.get(pointee)
    if name is None:
        raise ValueError(f"no torch dtype for *{pointee}")
    return name


def _dims(values: list, types: list) -> list[list]:
    """Per shaped value (``types``), its dynamic sizes taken in order from ``values``."""
    out, i = [], 0
    for t in types:
        n = sum(1 for d in t.shape if d < 0) if hasattr(t, "shape") else 0
        out.append(list(values[i : i + n]))
        i += n
    return out


def _shape(t, dims: list, entry, workload) -> tuple | None:
    """The static shape of tensor type ``t`` whose dynamic sizes are the host values ``dims``
    (evaluated on ``workload``); None when one is not known."""
    it = iter(dims)
    shape = []
    for d in t.shape:
        if d >= 0:
            shape.append(int(d))
            continue
        value = _evaluate(next(it), entry, workload)
        if value is _UNKNOWN or isinstance(value, float) or value < 0:
            return None
        shape.append(int(value))
    return tuple(shape)


def _host_wiring(d, host) -> tuple[list, list]:
    """``(per tensor binding of dispatch d in order: the host function's argument number when
    the operand is one (else None), per result of d: the index of the host function's result
    it is returned as (else None))``. Untied results come after the tensor operands, as
    :func:`_dispatch_bindings` orders them; their entries are None."""
    from iree.compiler import ir
    from iree.compiler.dialects import func, util

    entry = host.regions[0].blocks[0]
    ops = DispatchOperands.of(d)
    args = []
    for a in ops.arguments:
        if isinstance(a.type, ir.RankedTensorType):
            args.append(a.arg_number if isinstance(a, ir.BlockArgument) and a.owner == entry else None)
    args += [None] * sum(1 for j in range(len(d.results)) if j >= len(ops.tied) or ops.tied[j] < 0)
    returned = {}
    for block in host.regions[0].blocks:
        for o in block.operations:
            if isa(o, util.ReturnOp, func.ReturnOp):
                for i, v in enumerate(o.operands):
                    if isinstance(v, ir.OpResult) and v.owner.operation == getattr(d, "operation", d):
                        returned.setdefault(v.result_number, i)
    return args, [returned.get(j) for j in range(len(d.results))]


def _config_text(cfg) -> str:
    from autotune_export.ir.group_values import format_value

    return "{" + ", ".join(f"{k} = {format_value(v)}" for k, v in cfg) + "}"


def launches_of_group(ctx: PassContext, module, source, op, args) -> tuple[list[Launch], list[Diagnostic]]:
    """The launches of one group op (one per dispatch and tuning workload), and remarks for
    what cannot be run. Raises DiagnosticError for what the build refuses too."""
    from iree.compiler import ir

    original = AutotuneGroup.from_op(op, ctx.source.name)
    if not original.is_triton:
        return [], [
            Diagnostic(
                "remark",
                f"@{original.name} is in the variants([...]) form (compiled code): not checked; "
                "check the triton(...) group it was made from",
                original.location,
            )
        ]
    workloads = _tune_workloads(op)  # before plan_group: read off the op as written
    item = MaterializeTritonVariants(target=args.target).plan_group(ctx, module, source, op)
    group = item.group
    from autotune_export.cuda import triton_compile as tc

    _, full, _ = tc.group_kernel_source(original, ctx.source.base_dir)
    layout = abi.plan(group.signature, tied=item.tied)
    pointers = layout.binding_params()
    scalars = [group.signature[i] for i in layout.scalars]
    default = 0
    names = [variant_name(group.name, i, cfg) for i, cfg in enumerate(item.configs)]
    if group.default is not None and group.default in names:
        default = names.index(group.default)
    launches, remarks = [], []
    exe = sym_name(source)
    allowed = dict(item.allowed)  # per dispatch, the configs its own prune_configs_by keeps (the others never run there)
    for d_index, d in enumerate(item.dispatches):
        where = location_of(d.location, ctx.source.name)
        mine = allowed.get(d_index)
        indices = list(range(len(item.configs))) if mine is None else sorted(mine)
        # What the dispatch runs for the default choice: the default, else its own first.
        site_default = indices.index(default if mine is None or default in mine else mine[0])
        host = enclosing_function(d)
        entry = host.regions[0].blocks[0]
        host_args, host_results = _host_wiring(d, host)
        ops = DispatchOperands.of(d)
        bindings = _dispatch_bindings(d)
        if len(bindings) != len(pointers):
            raise DiagnosticError.at(
                where,
                f"dispatch to @{exe}::@{group.name} has {len(bindings)} tensor bindings; the "
                f"signature binds {len(pointers)} pointers ({', '.join(p.name for p in pointers)})",
            )
        tensor_args = [a for a in ops.arguments if isinstance(a.type, ir.RankedTensorType)]
        arg_dims = _dims(ops.argument_dims, [a.type for a in tensor_args])
        result_dims = _dims(ops.result_dims, [r.type for r in d.results])
        untied = ops.untied_results()
        for w_index, workload in enumerate(workloads):
            label = f"workload {w_index}" if workload is not None else "the host's static types"
            buffers, unknown = [], None
            for k, (p, b) in enumerate(zip(pointers, bindings)):
                if k < len(tensor_args):
                    value, dims = tensor_args[k], arg_dims[k]
                else:
                    j = untied[k - len(tensor_args)]
                    value, dims = d.results[j], result_dims[j]
                shape = _shape(value.type, dims, entry, workload)
                if shape is None:
                    unknown = unknown or f"the size of {b.what}"
                    continue
                fill = "zeros" if k < len(tensor_args) and is_zeroed(value) else ("undefined" if b.undefined else "data")
                role = "output" if k >= len(tensor_args) else ("inplace" if b.is_result else "input")
                buffers.append(Buffer(shape, _torch_dtype(p.type[1:]), fill, role, p.name))
            given = ops.scalars()
            values: dict[str, Any] = {}
            for p, v in zip(scalars, given):
                x = _evaluate(v, entry, workload)
                x = _UNKNOWN if x is _UNKNOWN else _as_parameter(p.type, x)
                if x is _UNKNOWN:
                    unknown = unknown or f"scalar '{p.name}'"
                values[p.name] = x
            work_values = [_evaluate(v, entry, workload) for v in ops.workload]
            if any(v is _UNKNOWN or isinstance(v, float) for v in work_values):
                unknown = unknown or "the workload"
            if unknown:
                remarks.append(
                    Diagnostic(
                        "warning",
                        f"@{group.name}: not checked on {label}: {unknown} is not known from "
                        "constants, static shapes or tune_workload(...)",
                        where,
                    )
                )
                continue
            env_work = dict(zip(group.workload or [], work_values))
            variants = []
            for index in indices:
                cfg, consts = item.configs[index], item.constexprs[index]
                opts = dict(cfg)
                env = {k: v for k, v in consts.items() if isinstance(v, int) and not isinstance(v, bool)}
                env.update({o: opts.get(o, OPTION_DEFAULTS[o]) for o in ("num_warps", "num_stages")}, num_ctas=1)
                env.update(env_work)
                try:
                    grid = tuple(grid_mod.evaluate(grid_mod.parse(g), env) for g in group.grid)
                except grid_mod.GridError as err:
                    raise DiagnosticError.at(group.location, f"{err} for config {index} {_config_text(cfg)}") from None
                grid = grid + (1,) * (3 - len(grid))
                # A `none` parameter is passed None positionally, as the call does (params below).
                variants.append(Variant(names[index], _config_text(cfg), dict(consts), grid, list(cfg)))
            by_name = {b.param: i for i, b in enumerate(buffers)}
            params = []
            for p in original.signature:
                if p.is_none:
                    params.append(("none",))
                elif p.is_pointer:
                    params.append(("buffer", by_name[p.name]))
                else:
                    params.append(("scalar", values[p.name]))
            # Result j of the dispatch: the binding of the operand it is tied to, else the next
            # untied binding (IREE's binding rule, autotune_export.ir.binding).
            results = binding.result_bindings(ops.tied, ops.tensor_positions())
            work_text = ", ".join(f"{n} = {v}" for n, v in env_work.items())
            title = f"@{exe}::@{group.name} on {label}" + (f" ({work_text})" if work_text else "")
            launches.append(
                Launch(
                    full,
                    original.triton[1],
                    item.archs[0][1] if item.archs else 80,
                    params,
                    buffers,
                    results,
                    variants,
                    site_default,
                    args.seed,
                    args.timeout,
                    args.reference,
                    title,
                    where,
                    d_index,
                    w_index,
                    host_args,
                    host_results,
                )
            )
    if not item.dispatches:
        remarks.append(Diagnostic("warning", f"@{group.name}: no dispatch calls it: nothing to check", group.location))
    return launches, remarks
