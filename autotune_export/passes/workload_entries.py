"""The workload entries of a tuned group: the workload values of its dispatch, computed from the
tuning workload's fake arguments (:func:`workload_entry`, which bucket a tuning workload fills)
or from a live call's arguments (:func:`workload_of_entry`, which bucket a live call falls in,
for round-robin tuning). Only the side-effect-free host ops that compute them are cloned
(:func:`autotune_export.ir.slicing.clone_slice`).
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith

from autotune_export.ir import functions as fn
from autotune_export.ir.binding import DispatchOperands
from autotune_export.ir.slicing import SliceError, clone_slice
from autotune_export.passes.fake_data import fake_host_arguments

__all__ = ["workload_entry", "workload_of_entry"]


def _as_i64(values: list) -> list:
    i64 = ir.IntegerType.get_signless(64)
    return [arith.IndexCastOp(i64, v).result if isinstance(v.type, ir.IndexType) else v for v in values]


def workload_entry(name: str, dispatch, host, host_fakes: list, point) -> int:
    """``util.func public @name() -> (i64, ...)``: the workload values of ``dispatch`` (inside
    ``host``) on the fake arguments ``host_fakes`` (as for
    :func:`autotune_export.passes.bench_entries.bench_entry`), so the runtime knows which bucket
    a tuning workload fills. Returns the number of values. Raises SliceError as :func:`~autotune_export.passes.bench_entries.bench_entry` does."""
    parts = DispatchOperands.of(dispatch)
    i64 = ir.IntegerType.get_signless(64)

    def body(_args):
        mapping = clone_slice(parts.workload, fake_host_arguments(host, host_fakes), ir.InsertionPoint.current)
        return _as_i64([mapping[w] for w in parts.workload])

    fn.util_func(name, [], [i64] * len(parts.workload), body, ip=point)
    return len(parts.workload)


def workload_of_entry(name: str, dispatch, host, point) -> bool:
    """``util.func public @name(<host's arguments>) -> (i64, ...)``: the workload values of
    ``dispatch`` for a live call of ``host`` with those arguments (only the pure ops that compute
    them are cloned: :func:`autotune_export.ir.slicing.clone_slice`), so round-robin tuning
    learns the bucket of a live call. Builds nothing and returns False when the workload depends
    on anything else (a loop variable, an op with effects)."""
    parts = DispatchOperands.of(dispatch)
    inputs = [a.type for a in host.regions[0].blocks[0].arguments]
    i64 = ir.IntegerType.get_signless(64)
    entry_args = list(host.regions[0].blocks[0].arguments)
    # Check the slice first, on a scratch function that is erased again.
    scratch = ir.Module.create(loc=ir.Location.unknown())
    try:
        fn.util_func(
            name,
            inputs,
            [i64] * len(parts.workload),
            lambda args: _as_i64(
                [clone_slice(parts.workload, dict(zip(entry_args, args)), ir.InsertionPoint.current)[w] for w in parts.workload]
            ),
            ip=ir.InsertionPoint(scratch.body),
        )
    except SliceError:
        return False
    for op in list(scratch.body.operations):
        point.insert(op.detach_from_parent())
    return True
