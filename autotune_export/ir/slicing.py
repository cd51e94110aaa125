"""Backward slices: the side-effect-free ops that compute some values, cloned elsewhere.

A benchmark entry dispatches a group on fake data without replaying the host function (whose
other ops may store into globals, call functions or dispatch other kernels): it clones only
the ops that compute the dispatch's workload, scalar operands and dynamic sizes from the
host's arguments (:func:`clone_slice`). An op may be cloned when it has no regions and is pure
by the list below (value arithmetic, shape queries, loads of globals: reading a global does not
change it); anything else in the slice is an error that names the op.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from iree.compiler import ir

__all__ = ["SliceError", "PURE_OP_PREFIXES", "clone_slice"]

#: Ops (by name or dialect prefix) that compute values without side effects, and may be cloned.
PURE_OP_PREFIXES = (
    "arith.",
    "math.",
    "index.",
    "affine.apply",
    "affine.min",
    "affine.max",
    "tensor.dim",
    "util.global.load",
    "util.assume.int",
    "util.optimization_barrier",
)


class SliceError(Exception):
    """A needed value comes from an op that may not be cloned (``op``: the offending
    ``ir.Operation``, or None for a block argument with no mapping)."""

    def __init__(self, message: str, op=None):
        super().__init__(message)
        self.op = op


def _pure(op) -> bool:
    name = op.name
    return not any(len(r.blocks) for r in op.regions) and any(
        name == p or (p.endswith(".") and name.startswith(p)) for p in PURE_OP_PREFIXES
    )


def clone_slice(values: Iterable[ir.Value], mapping: Mapping[ir.Value, ir.Value], ip: ir.InsertionPoint) -> dict:
    """Clone, at ``ip``, the ops that compute ``values`` from the values ``mapping`` gives
    (e.g. the host function's arguments -> fake values), in dependency order; each op once.

    Returns the extended mapping (old value -> new value) covering ``values``. Raises
    SliceError when a value depends on a block argument ``mapping`` lacks (a loop variable,
    say) or on an op that is not pure (:data:`PURE_OP_PREFIXES`) or has regions.
    """
    done: dict = dict(mapping)

    def need(value: ir.Value) -> ir.Value:
        if value in done:
            return done[value]
        if isinstance(value.owner, ir.Block):
            raise SliceError(
                f"it depends on argument {ir.BlockArgument(value).arg_number} of a block other than the host's entry block"
            )
        op = value.owner.operation if hasattr(value.owner, "operation") else value.owner
        if not _pure(op):
            raise SliceError(f"it depends on '{op.name}', which is not a side-effect-free value computation", op)
        operands = [need(v) for v in op.operands]
        clone = op.clone(ip=ip)
        for i, v in enumerate(operands):
            clone.operands[i] = v
        for old, new in zip(op.results, clone.results):
            done[old] = new
        return done[value]

    for v in values:
        need(v)
    return done
