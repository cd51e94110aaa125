"""What the host passes a Triton-form group's dispatches, read off the IR for the plan stage
(:mod:`autotune_export.cuda.launch_plan`): per dispatch and ``tune_workload`` the scalar
values (constants, tuning-workload scalars, static shapes, and arith's arithmetic on them,
folded in Python) and the static shapes of the tensors bound to its pointers; what
``prune_configs_by`` and the heuristics may read.
"""

from __future__ import annotations

from typing import NamedTuple

from autotune_export.cuda import abi
from autotune_export.cuda.launch_plan import UNKNOWN, as_parameter, signed
from autotune_export.ir import binding
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.walk import dispatch_sites, entry_point_refs, sym_name
from autotune_export.support.diagnostics import location_of
from iree.compiler import ir
from iree.compiler.dialects import arith, tensor

__all__ = ["UNKNOWN", "Site", "bound_shapes", "dispatch_label", "dispatch_scalars", "evaluate", "tune_workloads"]


def _width(t) -> int | None:
    if isinstance(t, ir.IndexType):
        return 64
    if isinstance(t, ir.IntegerType):
        return t.width
    return None


def _scalar_attr(a):
    if isinstance(a, ir.BoolAttr):
        return bool(a.value)
    if isinstance(a, (ir.IntegerAttr, ir.FloatAttr)):
        return a.value
    return UNKNOWN


def _div_trunc(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


#: Integer ops of the arith dialect (their generated classes), on Python ints.
_INT_OPS = {
    arith.AddIOp: lambda a, b: a + b,
    arith.SubIOp: lambda a, b: a - b,
    arith.MulIOp: lambda a, b: a * b,
    arith.DivSIOp: _div_trunc,
    arith.DivUIOp: lambda a, b: a // b,
    arith.FloorDivSIOp: lambda a, b: a // b,
    arith.CeilDivSIOp: lambda a, b: -((-a) // b),
    arith.CeilDivUIOp: lambda a, b: -((-a) // b),
    arith.RemSIOp: lambda a, b: a - b * _div_trunc(a, b),
    arith.RemUIOp: lambda a, b: a % b,
    arith.MaxSIOp: max,
    arith.MinSIOp: min,
    arith.MaxUIOp: max,
    arith.MinUIOp: min,
    arith.AndIOp: lambda a, b: a & b,
    arith.OrIOp: lambda a, b: a | b,
    arith.XOrIOp: lambda a, b: a ^ b,
    arith.ShLIOp: lambda a, b: a << b,
    arith.ShRSIOp: lambda a, b: a >> b,
    arith.ShRUIOp: lambda a, b: a >> b,
}
#: The integer ops whose operands read unsigned (arith's ``...ui`` ops).
_UNSIGNED_OPS = (arith.DivUIOp, arith.CeilDivUIOp, arith.RemUIOp, arith.MaxUIOp, arith.MinUIOp, arith.ShRUIOp)
_FLOAT_OPS = {
    arith.AddFOp: lambda a, b: a + b,
    arith.SubFOp: lambda a, b: a - b,
    arith.MulFOp: lambda a, b: a * b,
    arith.DivFOp: lambda a, b: a / b,
    arith.MaximumFOp: max,
    arith.MinimumFOp: min,
    arith.MaxNumFOp: max,
    arith.MinNumFOp: min,
}


def evaluate(value, entry, workload, depth: int = 0):
    """The Python value of the host's SSA ``value`` on the tuning workload: ``entry`` is the
    host function's entry block, ``workload`` one tune_workload (a list of attributes, one per
    host argument) or None. Follows constants, host arguments with a tune_workload scalar,
    ``tensor.dim`` of a static shape (the value's type, or the argument's tune_workload type),
    and arith's integer/float arithmetic, comparisons of integers, casts and select; anything else
    is ``UNKNOWN``."""
    if depth > 64:
        return UNKNOWN
    if isinstance(value, ir.BlockArgument):
        if value.owner != entry or workload is None or value.arg_number >= len(workload):
            return UNKNOWN
        return _scalar_attr(workload[value.arg_number])
    op = value.owner.operation.opview  # the op's generated class (arith.AddIOp, tensor.DimOp, ...)
    operands = list(op.operands)
    if isinstance(op, arith.ConstantOp):
        return _scalar_attr(op.attributes["value"])
    if isinstance(op, tensor.DimOp):
        index = evaluate(operands[1], entry, workload, depth + 1)
        if not isinstance(index, int) or isinstance(index, bool):
            return UNKNOWN
        src = operands[0]
        shaped = src.type
        if isinstance(src, ir.BlockArgument) and src.owner == entry and workload is not None and src.arg_number < len(workload):
            given = workload[src.arg_number]
            if isinstance(given, ir.TypeAttr):
                shaped = given.value
        if not isinstance(shaped, ir.RankedTensorType) or not 0 <= index < shaped.rank or shaped.is_dynamic_dim(index):
            return UNKNOWN
        return shaped.shape[index]
    args = [evaluate(o, entry, workload, depth + 1) for o in operands]
    if any(a is UNKNOWN for a in args):
        return UNKNOWN
    out_width = _width(value.type)
    in_width = _width(operands[0].type) if operands else None
    kind = type(op)
    try:
        if kind in _INT_OPS:
            a, b = args
            if isinstance(op, _UNSIGNED_OPS) and in_width is not None:
                a, b = a % (1 << in_width), b % (1 << in_width)
            return signed(_INT_OPS[kind](int(a), int(b)), out_width)
        if kind in _FLOAT_OPS:
            return _FLOAT_OPS[kind](float(args[0]), float(args[1]))
        if isinstance(op, arith.NegFOp):
            return -float(args[0])
        if isinstance(op, arith.SelectOp):
            return args[1] if args[0] else args[2]
        if isinstance(op, arith.CmpIOp):
            a, b = int(args[0]), int(args[1])
            predicate = int(op.attributes["predicate"].value)  # arith::CmpIPredicate: eq ne slt sle sgt sge ult ule ugt uge
            if predicate >= 6 and in_width is not None:
                a, b = a % (1 << in_width), b % (1 << in_width)
            return [a == b, a != b, a < b, a <= b, a > b, a >= b, a < b, a <= b, a > b, a >= b][predicate]
        if isinstance(op, (arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp)):
            return signed(int(args[0]), out_width)
        if isinstance(op, (arith.IndexCastUIOp, arith.ExtUIOp)):
            return signed(int(args[0]) % (1 << in_width), out_width) if in_width else UNKNOWN
        if isinstance(op, arith.SIToFPOp):
            return float(args[0])
        if isinstance(op, arith.UIToFPOp):
            return float(int(args[0]) % (1 << in_width)) if in_width else UNKNOWN
        if isinstance(op, (arith.FPToSIOp, arith.FPToUIOp)):
            return int(args[0])
        if isinstance(op, (arith.ExtFOp, arith.TruncFOp)):
            return float(args[0])
    except (ArithmeticError, ValueError, TypeError):
        return UNKNOWN
    return UNKNOWN


def tune_workloads(op) -> list:
    """The group's tune_workload attribute as one list of attributes per workload (one or
    several); ``[None]`` without one."""
    if "tune_workload" not in op.attributes:
        return [None]
    items = list(op.attributes["tune_workload"])
    if items and all(isinstance(a, ir.ArrayAttr) for a in items):
        return [list(a) for a in items]
    return [items]


def dispatch_label(site, k: int, line: bool = True) -> str:
    """How remarks, the reflection and ``inspect`` name dispatch ``site``, the ``k``-th of its
    group in the module's order: ``dispatch 1 in @f (line 12)``; no line where its location
    has none or ``line`` is False (what goes into the module: a module printed and read again
    has other lines, and ``-p a,b`` must give the bytes ``-p a | -p b`` gives)."""
    from autotune_export.ir.walk import enclosing_function

    host = enclosing_function(site)
    where = location_of(site.location, None) if line else None
    line = f" (line {where.line})" if where is not None and getattr(where, "line", None) else ""
    return f"dispatch {k} in @{sym_name(host) if host is not None else '?'}{line}"


class Site(NamedTuple):
    """One launch of a group on one tuning workload, as :func:`dispatch_scalars` reads it:
    ``label`` (``dispatch 1 in @f (line 12), tune_workload 0``), ``workload`` (the
    ``tune_workload`` index, None without), ``values`` ({parameter: value or UNKNOWN, pointer:
    shape}), ``from_workload`` (names known only from the tuning workload), ``dispatch`` (the
    dispatch's index among the group's dispatches, in the module's order)."""

    label: str
    workload: int | None
    values: dict
    from_workload: set
    dispatch: int


def dispatch_scalars(source, op, group: AutotuneGroup) -> list[Site]:
    """What each launch of the group passes its scalar parameters: one entry per dispatch to
    the group (in the module's order) and per ``tune_workload`` (or one, without), a
    :class:`Site`; the pointer parameters whose tensor's shape is known have it there
    too, a tuple (:func:`_bound_shapes`). A value is :func:`_evaluate` of the dispatch's operand on the
    workload, as the kernel receives it (:func:`~autotune_export.cuda.launch_plan.as_parameter`); a name is "from the tuning
    workload" when it is known with the workload and not without (a dynamic shape). The label
    names the dispatch by its host function and line (``dispatch 1 in @f (line 12)``) and the
    workload (``tune_workload 0``) when there are several."""
    from autotune_export.ir.walk import enclosing_function

    exe = sym_name(source)
    module = source.parent
    scalars = [p for p in group.signature if not p.is_pointer and not p.is_none]
    workloads = tune_workloads(op)
    out = []
    dispatches = [d for d in dispatch_sites(module) if (exe, group.name) in entry_point_refs(d)]
    for k, site in enumerate(dispatches):
        host = enclosing_function(site)
        given = [a for a in site.opview.arguments if not isinstance(a.type, ir.RankedTensorType)]
        if host is None or len(given) != len(scalars):
            continue  # check_dispatches reports a dispatch that does not fit the signature
        entry = host.regions[0].blocks[0]
        label = dispatch_label(site, k)
        static = {p.name: evaluate(v, entry, None) for p, v in zip(scalars, given)}
        shapes = bound_shapes(group, site, entry, None)
        for w, workload in enumerate(workloads):
            values, from_workload = bound_shapes(group, site, entry, workload), set()
            from_workload.update(name for name in values if name not in shapes)
            for p, v in zip(scalars, given):
                x = evaluate(v, entry, workload)
                values[p.name] = UNKNOWN if x is UNKNOWN else as_parameter(p.type, x)
                if values[p.name] is not UNKNOWN and static[p.name] is UNKNOWN:
                    from_workload.add(p.name)
            tag = f", tune_workload {w}" if len(workloads) > 1 else ""
            out.append(Site(label + tag, w if workload is not None else None, values, from_workload, k))
    return out


def bound_shapes(group: AutotuneGroup, site, entry, workload) -> dict[str, tuple[int, ...]]:
    """The shape of the tensor dispatch ``site`` binds to each pointer parameter of the group,
    by IREE's binding rule (:mod:`autotune_export.ir.binding`: tensor operands, then untied
    results): static dimensions from its type (``tensor<64x128xf16>``: ``(64, 128)``), dynamic
    ones from the dispatch's dimension operands, :func:`_evaluate`-d on ``workload`` (a
    ``tune_workload``, or None) in the host function whose entry block is ``entry``; a pointer
    whose shape is not known so is left out. What the heuristics and pruners then see of that
    tensor (``.shape``, ``.numel()``, dense ``.stride()``) is
    :class:`~autotune_export.cuda.launch_model.TensorArgument`'s."""
    try:
        pointers = abi.plan(group.signature, tied=binding.tied_outputs(group.signature, site)).binding_params()
    except abi.AbiError:
        return {}  # the plan reports it
    operands = binding.DispatchOperands.of(site)
    bindings = operands.bindings()
    if len(bindings) != len(pointers):
        return {}  # check_dispatches reports it

    def dims(types, dynamic) -> list:
        """Per type, its dimensions (dynamic ones taken in order from ``dynamic``), or None."""
        dynamic, out = list(dynamic), []
        for t in types:
            if not isinstance(t, ir.RankedTensorType):
                out.append(None)
                continue
            shape = []
            for k in range(t.rank):
                if not t.is_dynamic_dim(k):
                    shape.append(int(t.shape[k]))
                elif dynamic:
                    x = evaluate(dynamic.pop(0), entry, workload)
                    shape.append(x if isinstance(x, int) and not isinstance(x, bool) else None)
                else:
                    shape.append(None)
            out.append(shape)
        return out

    args = dims([a.type for a in operands.arguments], operands.argument_dims)
    results = dims(operands.result_types, operands.result_dims)
    out = {}
    for p, b in zip(pointers, bindings):
        shape = args[b.operand] if b.operand is not None else results[b.result]
        if shape is not None and all(d is not None for d in shape):
            out[p.name] = tuple(shape)
    return out
