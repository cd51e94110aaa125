"""Builders of host-side IREE ops: globals, functions, calls, barriers and counted loops, with
the bindings' op classes (``iree.compiler.dialects.util``/``func``/``scf``/``arith``).

Like :mod:`.builders`, every builder creates its op at ``ip`` (else the current
``ir.InsertionPoint``) and at ``loc`` (else the current ``ir.Location``), inside an
``ir.Context`` that has IREE's dialects. Bodies are filled by callbacks that run with the
insertion point inside the new block and return the values its terminator gets, so a caller
never formats op text.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from iree.compiler import ir
from iree.compiler.dialects import arith, scf, util
from iree.compiler.dialects import func as func_d

from autotune_export.ir.walk import isa

__all__ = [
    "function_type",
    "call_dialect",
    "global_",
    "load_global",
    "store_global",
    "util_func",
    "initializer",
    "call",
    "barrier",
    "constant",
    "index_constant",
    "counted_loop",
    "reflection",
]

Body = Callable[[list[ir.Value]], Sequence[ir.Value]]


def function_type(op) -> tuple[list[ir.Type], list[ir.Type]]:
    """``(argument types, result types)`` of a ``util.func``/``func.func`` (read from its
    ``function_type`` attribute). Raises KeyError if ``op`` has none."""
    ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    return list(ftype.inputs), list(ftype.results)


def call_dialect(op) -> str:
    """``"func"`` when ``op`` is a ``func.func`` (only ``func.call`` may call it: jax.export
    writes such hosts), else ``"util"``."""
    return "func" if isa(op, func_d.FuncOp) else "util"


def global_(
    name: str,
    type_: ir.Type,
    *,
    mutable: bool = False,
    initial_value: ir.Attribute | None = None,
    visibility: str = "private",
    ip: ir.InsertionPoint | None = None,
    loc: ir.Location | None = None,
) -> util.GlobalOp:
    """``util.global <visibility> [mutable] @name [= initial_value] : type_``."""
    return util.GlobalOp(
        name,
        ir.TypeAttr.get(type_),
        sym_visibility=visibility,
        is_mutable=True if mutable else None,
        initial_value=initial_value,
        ip=ip,
        loc=loc,
    )


def load_global(name: str, type_: ir.Type, *, loc: ir.Location | None = None) -> ir.Value:
    """``util.global.load @name : type_`` at the current insertion point; its result."""
    return util.GlobalLoadOp(type_, ir.FlatSymbolRefAttr.get(name), loc=loc).result


def store_global(value: ir.Value, name: str, *, loc: ir.Location | None = None) -> None:
    """``util.global.store value, @name`` at the current insertion point."""
    util.GlobalStoreOp(value, ir.FlatSymbolRefAttr.get(name), loc=loc)


def util_func(
    name: str,
    inputs: Sequence[ir.Type],
    results: Sequence[ir.Type],
    body: Body,
    *,
    visibility: str = "public",
    attributes: Mapping[str, ir.Attribute] | None = None,
    ip: ir.InsertionPoint | None = None,
    loc: ir.Location | None = None,
) -> util.FuncOp:
    """``util.func <visibility> @name(inputs) -> (results) attributes {attributes} {...}``.

    ``body(arguments)`` builds the entry block (the insertion point is inside it) and returns
    the values ``util.return`` gets; their number and types must match ``results`` (the
    verifier of the module reports a mismatch, this builder does not check).
    """
    loc = loc or ir.Location.current
    ftype = ir.FunctionType.get(list(inputs), list(results))
    op = util.FuncOp(name, ir.TypeAttr.get(ftype), sym_visibility=visibility, ip=ip, loc=loc)
    for key, value in (attributes or {}).items():
        op.operation.attributes[key] = value
    block = op.regions[0].blocks.append(*inputs, arg_locs=[loc] * len(inputs))
    with ir.InsertionPoint(block), loc:
        util.ReturnOp(list(body(list(block.arguments))))
    return op


def initializer(
    body: Callable[[], None], *, ip: ir.InsertionPoint | None = None, loc: ir.Location | None = None
) -> util.InitializerOp:
    """``util.initializer {...}``: ``body()`` builds its block (it runs once, at module load),
    which ends with ``util.return``."""
    loc = loc or ir.Location.current
    op = util.InitializerOp(ir.TypeAttr.get(ir.FunctionType.get([], [])), ip=ip, loc=loc)
    block = op.regions[0].blocks.append()
    with ir.InsertionPoint(block), loc:
        body()
        util.ReturnOp([])
    return op


def call(
    callee: str,
    operands: Sequence[ir.Value],
    results: Sequence[ir.Type],
    *,
    dialect: str = "util",
    loc: ir.Location | None = None,
) -> list[ir.Value]:
    """``util.call @callee(operands) : (...) -> (results)`` (``dialect="func"``:
    ``func.call``, for a ``func.func`` callee; see :func:`call_dialect`) at the current
    insertion point; its results. Raises ValueError for another dialect."""
    ref = ir.FlatSymbolRefAttr.get(callee)
    if dialect == "util":
        op = util.CallOp(list(results), ref, list(operands), loc=loc)
    elif dialect == "func":
        op = func_d.CallOp(list(results), ref, list(operands), loc=loc)
    else:
        raise ValueError(f"no call op in dialect {dialect!r}")
    return list(op.operation.results)


def barrier(values: Sequence[ir.Value], *, loc: ir.Location | None = None) -> list[ir.Value]:
    """One ``util.optimization_barrier`` of all ``values`` (a value may repeat: each result is
    a distinct, opaque copy); its results, in order."""
    values = list(values)
    op = util.OptimizationBarrierOp([v.type for v in values], values, loc=loc)
    return list(op.operation.results)


def constant(value: ir.Attribute, *, loc: ir.Location | None = None) -> ir.Value:
    """``arith.constant value`` of a typed attribute (``IntegerAttr``/``FloatAttr``/dense
    elements); its result."""
    return arith.ConstantOp(value.type, value, loc=loc).result


def index_constant(value: int, *, loc: ir.Location | None = None) -> ir.Value:
    """``arith.constant value : index``; its result."""
    return constant(ir.IntegerAttr.get(ir.IndexType.get(), int(value)), loc=loc)


def counted_loop(
    lower: ir.Value,
    upper: ir.Value,
    step: ir.Value,
    inits: Sequence[ir.Value],
    body: Callable[[ir.Value, list[ir.Value]], Sequence[ir.Value]],
    *,
    loc: ir.Location | None = None,
) -> list[ir.Value]:
    """``scf.for %i = lower to upper step step iter_args(inits)`` (index bounds).

    ``body(i, carried)`` builds the loop body (insertion point inside it) and returns the
    values ``scf.yield`` carries to the next iteration (as many as ``inits``, same types).
    Returns the loop's results (the values of the last iteration).
    """
    loc = loc or ir.Location.current
    loop = scf.ForOp(lower, upper, step, list(inits), loc=loc)
    with ir.InsertionPoint(loop.body), loc:
        scf.YieldOp(list(body(loop.induction_variable, list(loop.inner_iter_args))))
    return list(loop.results)


def reflection(entries: Mapping[str, str]) -> ir.DictAttr:
    """The value of a function's ``iree.reflection`` attribute: a dictionary of strings (IREE
    exposes it to the runtime as the function's reflection metadata)."""
    return ir.DictAttr.get({key: ir.StringAttr.get(value) for key, value in entries.items()})
