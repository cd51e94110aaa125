"""Builders of the IREE ops the toolkit creates, with the bindings' op classes.

Each builder takes an ``ir.InsertionPoint`` (or builds at the current one) and the current
``ir.Location``; all run inside an ``ir.Context`` that has IREE's dialects (any
``iree.compiler.ir`` context). Attribute text appears only in :mod:`.hal_attrs`.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from iree.compiler import ir
from iree.compiler.dialects import arith, hal

from autotune_export.ir import grid
from autotune_export.ir.hal_attrs import device_type

__all__ = [
    "index_attr",
    "i64_attr",
    "executable_source",
    "source_block",
    "export",
    "count_region",
    "constant_count",
]


def index_attr(value: int) -> ir.IntegerAttr:
    """``N : index``."""
    return ir.IntegerAttr.get(ir.IndexType.get(), int(value))


def i64_attr(value: int) -> ir.IntegerAttr:
    """``N : i64``."""
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def executable_source(
    name: str, objects: ir.Attribute | None = None, *, ip: ir.InsertionPoint | None = None, loc: ir.Location | None = None
) -> hal.ExecutableSourceOp:
    """``hal.executable.source private @name <{objects = ...}> {}`` with its body block and
    terminator (add ops with :func:`source_block`)."""
    op = hal.ExecutableSourceOp(name, sym_visibility="private", objects=objects, ip=ip, loc=loc)
    block = op.regions[0].blocks.append()
    with ir.InsertionPoint(block):
        hal.ExecutableSourceEndOp(loc=loc)
    return op


def source_block(source) -> ir.InsertionPoint:
    """Insertion point before the terminator of a ``hal.executable.source`` (or variant)."""
    return ir.InsertionPoint.at_block_terminator(source.regions[0].blocks[0])


def export(
    name: str,
    ordinal: int,
    layout: ir.Attribute,
    workload: Sequence[str],
    count: Callable[[ir.Value, list[ir.Value]], Sequence[ir.Value]],
    *,
    workgroup_size: Sequence[int] | None = None,
    workgroup_local_memory: int | None = None,
    attributes: dict[str, ir.Attribute] | None = None,
    ip: ir.InsertionPoint | None = None,
    loc: ir.Location | None = None,
) -> hal.ExecutableExportOp:
    """``hal.executable.export public @name ordinal(N) layout(L) count(%device, %w...) {...}``.

    ``workload``: names of the count region's index arguments (kept as their locations' names
    are not printed; only their number matters to IREE). ``count(device, workload_values)``
    builds the region's body at the current insertion point and returns the (x, y, z) index
    values that ``hal.return`` gets. ``workgroup_size``: threads per block (x, y, z; IREE's
    CUDA HAL launches ``workgroup_size`` threads); ``workgroup_local_memory``: bytes of
    dynamic shared memory (omitted when 0/None). ``attributes``: discardable attributes
    (:mod:`.markers`).
    """
    op = hal.ExecutableExportOp(
        name,
        layout,
        sym_visibility="public",
        ordinal=index_attr(ordinal),
        workgroup_size=ir.ArrayAttr.get([index_attr(v) for v in workgroup_size]) if workgroup_size else None,
        workgroup_local_memory=index_attr(workgroup_local_memory) if workgroup_local_memory else None,
        ip=ip,
        loc=loc,
    )
    for key, value in (attributes or {}).items():
        op.operation.attributes[key] = value
    count_region(op, len(workload), count, loc=loc)
    return op


def count_region(
    export_op,
    num_workload: int,
    count: Callable[[ir.Value, list[ir.Value]], Sequence[ir.Value]],
    *,
    loc: ir.Location | None = None,
) -> None:
    """Fill the (empty) count region of ``export_op``: block arguments ``(!hal.device,
    index x num_workload)``, body from ``count``, ``hal.return x, y, z``."""
    loc = loc or ir.Location.current
    index = ir.IndexType.get()
    block = export_op.regions[0].blocks.append(device_type(), *([index] * num_workload), arg_locs=[loc] * (1 + num_workload))
    with ir.InsertionPoint(block):
        xyz = list(count(block.arguments[0], list(block.arguments)[1:]))
        hal.ReturnOp(xyz)


def constant_count(grid: Sequence[int]) -> Callable[[ir.Value, list[ir.Value]], list[ir.Value]]:
    """A ``count`` builder returning a fixed grid (x, y, z) as index constants."""

    def build(device, workload):
        index = ir.IndexType.get()
        made: dict[int, ir.Value] = {}
        out = []
        for g in grid:
            if g not in made:
                made[g] = arith.ConstantOp(index, int(g)).result
            out.append(made[g])
        return out

    return build


class CountBuilder:
    """Build grid expressions as ``arith`` ops on ``index`` values, at the current
    ``ir.InsertionPoint`` and ``ir.Location`` (inside a workgroup-count region).

    ``values`` maps each name in scope to an int (a config constant, folded in Python) or to
    an ``ir.Value`` of type ``index`` (a workload argument of the count region). Constant
    subtrees are folded, so a grid of constants builds constants only; each constant value
    is built once per builder. The ops: ``+`` ``arith.addi``, ``-`` ``arith.subi``, ``*``
    ``arith.muli``, ``//`` ``arith.floordivsi``, ``cdiv`` ``arith.ceildivsi``, ``min``/``max``
    ``arith.minsi``/``arith.maxsi``; ``a % b`` (Python's, the sign of the divisor) is
    ``a - floordivsi(a, b) * b``, since ``arith.remsi`` takes the dividend's sign; ``-a`` is
    ``0 - a``. Raises GridError for unknown names and for division by a constant zero.
    """

    def __init__(self, values: Mapping[str, object]):
        self.values = dict(values)
        self._constants: dict[int, object] = {}

    def constant(self, value: int):
        """An ``index`` ``arith.constant`` of ``value`` (built once per value)."""
        if value not in self._constants:
            self._constants[value] = arith.ConstantOp(ir.IndexType.get(), int(value)).result
        return self._constants[value]

    def _binary(self, op: str, lhs, rhs):
        a = self.constant(lhs) if isinstance(lhs, int) else lhs
        b = self.constant(rhs) if isinstance(rhs, int) else rhs
        if op == "%":
            quotient = arith.FloorDivSIOp(a, b).result
            return arith.SubIOp(a, arith.MulIOp(quotient, b).result).result
        cls = {
            "+": arith.AddIOp,
            "-": arith.SubIOp,
            "*": arith.MulIOp,
            "//": arith.FloorDivSIOp,
            "cdiv": arith.CeilDivSIOp,
            "min": arith.MinSIOp,
            "max": arith.MaxSIOp,
        }[op]
        return cls(a, b).result

    def build(self, expr: grid.Expr):
        """Build ``expr``; return its ``index`` value (an ``ir.Value``)."""
        value = grid.fold_with(expr, self.values, self._binary)
        return self.constant(value) if isinstance(value, int) else value

    def build_grid(self, dims_exprs: Sequence[grid.Expr]) -> tuple:
        """Build up to three grid dimensions, missing ones 1 (Triton's convention): the
        ``(x, y, z)`` ``index`` values of a workgroup count. Raises GridError for 0 or more
        than 3 dimensions (before building anything)."""
        grid.check_dims(dims_exprs)
        dims = [self.build(e) for e in dims_exprs]
        while len(dims) < 3:
            dims.append(self.constant(1))
        return tuple(dims)


def count_builder(exprs: Sequence[grid.Expr], constants: Mapping[str, int], workload: Sequence[str]):
    """A ``count(device, workload_values)`` callback for
    :func:`autotune_export.ir.builders.export`: builds ``exprs`` (a grid) with ``constants`` (config
    constants, folded) and the count region's workload arguments bound to the names in
    ``workload`` (in order; they shadow constants of the same name), and returns the
    ``[x, y, z]`` index values. Call :func:`autotune_export.ir.grid.check_grid` first (with the workload names bound
    to anything but an int): a GridError raised while the region is being built leaves a
    half-built export behind."""

    def build(device, workload_values):
        values: dict[str, object] = dict(constants)
        values.update(zip(workload, workload_values))
        return list(CountBuilder(values).build_grid(exprs))

    return build
