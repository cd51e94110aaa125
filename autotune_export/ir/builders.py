"""Builders of the IREE ops the toolkit creates, with the bindings' op classes.

Each builder takes an ``ir.InsertionPoint`` (or builds at the current one) and the current
``ir.Location``; all run inside an ``ir.Context`` that has IREE's dialects (any
``iree.compiler.ir`` context). Attribute text appears only in :mod:`.hal_attrs`.
"""

from __future__ import annotations

from typing import Callable, Sequence

from iree.compiler import ir
from iree.compiler.dialects import arith, hal

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


def executable_source(name: str, objects: ir.Attribute | None = None, *, ip: ir.InsertionPoint | None = None,
                      loc: ir.Location | None = None) -> hal.ExecutableSourceOp:
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


def count_region(export_op, num_workload: int, count: Callable[[ir.Value, list[ir.Value]], Sequence[ir.Value]],
                 *, loc: ir.Location | None = None) -> None:
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
