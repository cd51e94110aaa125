"""Benchmark and check entries that dispatch a group on fake buffers of their own, and the entry
that compares two variants' results on the device.

``@P.bench.K(%iters: index)`` runs variant ``K`` of a group ``iters * BENCH_UNROLL`` times
(:func:`bench_entry`; with ``check``, ``@P.check.K()`` runs it once and returns its whole
results). It does not call the host function: it clones, from the host, only the
side-effect-free ops that compute the dispatch's workload, scalar operands and dynamic sizes
(:func:`autotune_export.ir.slicing.clone_slice`), with the host's arguments replaced by fake
values of the tuning workload (:func:`autotune_export.passes.fake_data.fake_host_arguments`).
So tuning never stores into the user's globals, calls user functions or runs other kernels.

The group's dispatch gets one fake buffer per tensor operand (seeded, position-dependent
values, or zeros for the arguments that need them: :mod:`autotune_export.passes.fake_data`,
the one home of the fake data). Each seed or zero is
behind its own optimization barrier, so no two buffers are merged: they never alias. Operands
the dispatch writes in place (tied to a result) get a fresh buffer before every run, as
Triton's ``restore_value`` restores them, so the data never drifts (an in-place kernel
doubling its input would reach inf after a few dozen runs); the others are filled once per
call. Every loop iteration starts with ONE barrier that gives each of its BENCH_UNROLL runs its
own copy of every input, of the workload and of the seed (or zero) its in-place operands are
filled from, plus the loop variable: the runs are distinct, so they cannot be hoisted out of the
loop or merged, and no host op comes between two of them, so iree-compile records the whole
iteration (fills, dispatches, slices) in one ``stream.cmd.execute``, one command buffer the GPU
runs back to back (a host op between two dispatches splits the stream region there; on the
CUDA HAL each region is a submission the host issues when the previous one signals, issue 24).
A dispatch whose workload is behind a barrier gets no barrier of its own from
lower-autotuning-dispatch. A one-element slice of every result of the last iteration is
returned, keeping the work alive without making the host wait inside the loop. A tensor without elements
(:func:`~autotune_export.passes.fake_data.has_no_elements`, an empty optional input) gets a
plain ``tensor.empty`` (no fill, no barrier) and an empty result no slice: they hold no data
(docs/limits.md, "Zero-element tensors").

:func:`compare_entry` counts, on the device, the elements in which two runs' results differ
(the runtime's cross-check of the variants). The workload entries are
:mod:`autotune_export.passes.workload_entries`.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import _linalg_enum_gen as linalg_enums
from iree.compiler.dialects import _linalg_ops_gen as linalg
from iree.compiler.dialects import arith, flow, tensor
from iree.compiler.dialects import math as math_d

from autotune_export.contract import BENCH_UNROLL
from autotune_export.ir import functions as fn
from autotune_export.ir.binding import DispatchOperands
from autotune_export.ir.markers import FIXED_CHOICE_ATTR
from autotune_export.ir.slicing import SliceError, clone_slice
from autotune_export.passes.fake_data import (
    argument_seed,
    bits_type,
    empty_tensor,
    fake_fill,
    fake_host_arguments,
    fake_zero_arguments,
    fake_zeros,
    has_no_elements,
)

# DispatchOperands (IREE's binding rule, autotune_export.ir.binding) and SliceError (raised by
# bench_entry) are named here for autotune_export.program.regroup, which imports them with the
# entries.
__all__ = ["bench_entry", "one_element", "compare_entry", "compare_problem", "DispatchOperands", "SliceError"]


def one_element(value):
    """A one-element static slice of a ranked tensor (the value itself when it is not one, has
    no elements (:func:`has_no_elements`) or already has a single element of static shape)."""
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or t.has_static_shape and all(d == 1 for d in t.shape) or has_no_elements(t):
        return value
    small = ir.RankedTensorType.get([1] * t.rank, t.element_type)
    return tensor.ExtractSliceOp(small, value, [], [], [], [0] * t.rank, [1] * t.rank, [1] * t.rank).result


def _dims_of(arguments, argument_dims) -> list[list]:
    """Per argument, its dynamic sizes (empty for scalars and static tensors)."""
    out, i = [], 0
    for a in arguments:
        n = (
            sum(1 for d in a.type.shape if d == ir.ShapedType.get_dynamic_size())
            if isinstance(a.type, ir.RankedTensorType)
            else 0
        )
        out.append(list(argument_dims[i : i + n]))
        i += n
    return out


def bench_entry(
    name: str, dispatch, host, host_fakes: list, variant: int, point, *, check: bool = False, mark_choice: bool = True
) -> list:
    """Build ``util.func public @name(%iters: index) -> (one-element results...)`` at
    ``point`` (see the module doc) for the group dispatch ``dispatch`` inside function
    ``host``, fixed to ``variant`` (``autotune.choice``, read by lower-autotuning-dispatch).

    ``host_fakes``: per host argument, ``("tensor", static type)`` or ``("scalar", typed
    attribute)``. Returns the entry's result types. Raises SliceError when the dispatch's
    sizes or scalars depend on something other than pure computations on the host's
    arguments.

    With ``check``, the entry is ``@name() -> (results...)`` instead: one run of the variant
    on the same fresh fake buffers, returning its whole results, so the runtime can compare
    the variants' outputs before one wins (tuning must not pick a variant that computes
    something else).

    ``mark_choice=False`` leaves the ``autotune.choice`` marker off: for a dispatch that already
    is the variant (``autotune_export.program``'s variants are whole dispatches of their own,
    with no group op for lower-autotuning-dispatch to resolve).
    """
    index = ir.IndexType.get()
    parts = DispatchOperands.of(dispatch)
    tied_args = {t for t in parts.tied if t >= 0}
    # Results without elements are not returned: they hold nothing to keep alive, and IREE folds
    # them to constants that its barriers cannot take with the others (has_no_elements).
    kept = [i for i, r in enumerate(dispatch.results) if not has_no_elements(r.type)]
    result_types = [_one_element_type(dispatch.results[i].type) for i in kept]
    out_types = result_types * BENCH_UNROLL
    if check:
        out_types = [r.type for r in dispatch.results]
    fixed = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), variant)

    def body(args):
        iters = args[0] if args else None
        c1 = fn.index_constant(1)
        needed = parts.workload + parts.scalars() + parts.argument_dims + parts.result_dims
        mapping = clone_slice(needed, fake_host_arguments(host, host_fakes), ir.InsertionPoint.current)
        dims = _dims_of(parts.arguments, [mapping[d] for d in parts.argument_dims])

        zero_args = fake_zero_arguments(dispatch)
        i32 = ir.IntegerType.get_signless(32)

        def source(j: int) -> ir.Value:
            """The constant argument ``j``'s fake data is made from: its seed
            (:func:`argument_seed`, an ``i32``), or for an argument of
            :func:`fake_zero_arguments` a zero of its element's width."""
            if j in zero_args:
                return fn.constant(ir.IntegerAttr.get(bits_type(parts.arguments[j].type.element_type), 0))
            return fn.constant(ir.IntegerAttr.get(i32, argument_seed(j)))

        def make(j: int, opaque: ir.Value) -> ir.Value:
            """Argument ``j``'s fake buffer made from ``opaque`` (its :func:`source` behind a
            barrier): :func:`fake_zeros` or :func:`fake_fill`."""
            t = parts.arguments[j].type
            if j in zero_args:
                return fake_zeros(t, dims[j], lambda _ty: opaque)
            return fake_fill(t, dims[j], opaque)

        def fresh(j: int) -> ir.Value:
            """A new fake buffer for argument ``j``, its source behind a barrier of its own (so
            no two buffers are merged); a plain ``tensor.empty`` for a tensor without
            elements (no data to fill or to keep apart; the kernel never reads it)."""
            t = parts.arguments[j].type
            if has_no_elements(t):
                return empty_tensor(t, dims[j])
            return make(j, fn.barrier([source(j)])[0])

        tensors = [j for j, a in enumerate(parts.arguments) if isinstance(a.type, ir.ShapedType)]
        # Inputs the dispatch only reads: one buffer each per call.
        filled = {j: fresh(j) for j in tensors if j not in tied_args}

        def run(inputs: dict, workload: list | None = None, whole: bool = False) -> list:
            """Clone the dispatch at the insertion point on ``inputs`` (tensor argument index ->
            value: every tensor argument) and ``workload`` (default: the cloned workload);
            its results (``whole``) or their one-element slices."""
            operands = [inputs[j] if j in inputs else mapping[a] for j, a in enumerate(parts.arguments)]
            clone = dispatch.clone(ip=ir.InsertionPoint.current)
            new_operands = (
                (workload if workload is not None else [mapping[w] for w in parts.workload])
                + operands
                + [mapping[d] for d in parts.argument_dims]
                + [mapping[d] for d in parts.result_dims]
            )
            for i, v in enumerate(new_operands):
                clone.operands[i] = v
            if mark_choice:
                clone.attributes[FIXED_CHOICE_ATTR] = fixed
            return list(clone.results) if whole else [one_element(clone.results[i]) for i in kept]

        if check:
            # Operands written in place get their fresh buffer too (one run: no loop to fence).
            return run({**filled, **{j: fresh(j) for j in tensors if j in tied_args}}, whole=True)
        # The loop carries the one-element results of its last iteration; it always runs (the
        # runtime never calls an entry with fewer than 1 iteration). Its initial values are
        # zero constants, never returned: IREE 3.13 on CUDA fails to return values that come
        # from outside such a loop when the dispatch writes in place (``ref is null`` in
        # hal.buffer_view.create, seen on the H200), so no result is computed outside it.
        inits = [fn.constant(_zeros(t)) for t in result_types] * BENCH_UNROLL
        workload = [mapping[w] for w in parts.workload]

        def loop(i, _carried):
            # Every host op of the iteration comes before its first dispatch: ONE barrier takes,
            # per run u, a copy of each input, of the workload and of the source of each
            # operand written in place (plus the loop variable, so nothing is loop-invariant).
            # Its results are distinct opaque values, so no two runs are merged or hoisted, and
            # lower-autotuning-dispatch adds no barrier of its own before a dispatch whose
            # workload is fenced already. iree-compile's stream partitioning cannot put a
            # dispatch into a region that starts before a host op its operands depend on:
            # with nothing on the host between them, the BENCH_UNROLL runs (their fills of
            # operands written in place and their one-element slices included) form one
            # stream.cmd.execute, one command buffer the GPU runs back to back.
            inputs = sorted(j for j in filled if not has_no_elements(filled[j].type))
            written = [j for j in tensors if j in tied_args]
            opaque = [j for j in written if not has_no_elements(parts.arguments[j].type)]
            per_run = [filled[j] for j in inputs] + workload + [source(j) for j in opaque]
            fenced = fn.barrier(per_run * BENCH_UNROLL + [i])
            yields = []
            for u in range(BENCH_UNROLL):
                mine = iter(fenced[u * len(per_run) : (u + 1) * len(per_run)])
                args = {j: next(mine) for j in inputs}
                run_workload = [next(mine) for _ in workload]
                args.update({j: make(j, next(mine)) for j in opaque})
                args.update({j: v for j, v in filled.items() if j not in args})  # no elements
                args.update({j: empty_tensor(parts.arguments[j].type, dims[j]) for j in written if j not in args})
                yields.extend(run(args, run_workload))
            return yields

        return fn.counted_loop(fn.index_constant(0), iters, c1, inits, loop)

    fn.util_func(name, [] if check else [index], out_types, body, ip=point)
    return out_types


def _zeros(t) -> ir.Attribute:
    """A zero splat of static tensor type ``t`` (integer or float elements)."""
    elem = t.element_type
    zero = ir.IntegerAttr.get(elem, 0) if isinstance(elem, ir.IntegerType) else ir.FloatAttr.get(elem, 0.0)
    return ir.DenseElementsAttr.get_splat(t, zero)


def _one_element_type(t):
    if not isinstance(t, ir.RankedTensorType) or t.has_static_shape and all(d == 1 for d in t.shape):
        return t
    return ir.RankedTensorType.get([1] * t.rank, t.element_type)


#: Float element types the device-side cross-check compares, in f32 (:func:`compare_entry`):
#: the others (f64, which IREE's input conversion demotes to f32 in public signatures, and
#: the fp8 formats) are compared on the host by the runtime.
_COMPARED_FLOATS = ("f16", "bf16", "f32")


def compare_problem(dispatch) -> str | None:
    """Why :func:`compare_entry` cannot compare the results of ``dispatch`` on the device (a
    result that is not a ranked tensor of integers or of a float of :data:`_COMPARED_FLOATS`),
    or None."""
    for i, r in enumerate(dispatch.results):
        t = r.type
        if not isinstance(t, ir.RankedTensorType):
            return f"result {i} is not a ranked tensor"
        elem = t.element_type
        if not (isinstance(elem, ir.IntegerType) or isinstance(elem, ir.FloatType) and str(elem) in _COMPARED_FLOATS):
            return f"result {i} has element type {elem}"
    return None


def compare_entry(name: str, dispatch, point) -> bool:
    """Build ``util.func public @name(%ref_0, ..., %out_0, ..., %rtol_0: f32, %atol_0: f32, ...)
    -> (i64, ...)`` at ``point``: per result of ``dispatch`` (argument types: its result types),
    the number of elements of ``%out_i`` that differ from ``%ref_i``, computed on the device, so
    the runtime's cross-check copies no result to the host (a wrong variant is still found:
    every element is compared). The rule is numpy's ``isclose(out, ref, rtol, atol,
    equal_nan=True)``, the runtime's :func:`autotune_export.runtime.checking.results_agree`
    (the runtime passes its tolerances, so they keep one home): floats, in f32 (exact for f16
    and bf16), agree when both are finite and ``|out - ref| <= atol + rtol * |ref|``, when
    they are equal (an infinity only equals itself) or when both are NaN;
    integers when they are not equal (the tolerances are unused). A result without elements
    counts 0. The count of a rank-2+ result is made in two reductions (over the last dimension,
    then over the rest) so that no single workgroup walks the whole tensor, in i32 (IREE 3.13
    cannot distribute an i64 reduction on CUDA), returned as i64. Builds nothing and
    returns False when :func:`compare_problem` finds a result it cannot compare."""
    if compare_problem(dispatch) is not None:
        return False
    types = [r.type for r in dispatch.results]
    f32 = ir.F32Type.get()
    i64 = ir.IntegerType.get_signless(64)

    def body(args):
        n = len(types)
        refs, outs, tols = args[:n], args[n : 2 * n], args[2 * n :]
        return [_mismatches(refs[i], outs[i], tols[2 * i], tols[2 * i + 1]) for i in range(n)]

    fn.util_func(name, types + types + [f32, f32] * len(types), [i64] * len(types), body, ip=point)
    return True


def _mismatches(ref, out, rtol, atol) -> ir.Value:
    """The number (i64) of elements of ``out`` that differ from ``ref`` (see :func:`compare_entry`)."""
    t = ref.type
    i64 = ir.IntegerType.get_signless(64)
    # Counted in i32: IREE 3.13's CUDA code generation fails to distribute an i64 reduction
    # ("failed to distribute"); a result would need 2^32 differing elements to wrap to 0.
    i32 = ir.IntegerType.get_signless(32)
    zero = fn.constant(ir.IntegerAttr.get(i32, 0))
    if has_no_elements(t):
        return fn.constant(ir.IntegerAttr.get(i64, 0))
    rank = t.rank
    dims = [tensor.DimOp(ref, fn.index_constant(d)).result for d in range(rank) if t.shape[d] == ir.ShapedType.get_dynamic_size()]
    dyn = {d: v for d, v in zip([d for d in range(rank) if t.shape[d] == ir.ShapedType.get_dynamic_size()], dims)}
    kept = list(range(rank - 1)) if rank >= 2 else []  # the dimensions the first reduction keeps
    partial_t = ir.RankedTensorType.get([t.shape[d] for d in kept], i32)
    partial = flow.TensorSplatOp(partial_t, zero, [dyn[d] for d in kept if d in dyn]).result
    parallel = ir.AttrBuilder.get("linalg.IteratorTypeEnum")(linalg_enums.IteratorType.parallel, ir.Context.current)
    reduction = ir.AttrBuilder.get("linalg.IteratorTypeEnum")(linalg_enums.IteratorType.reduction, ir.Context.current)
    identity = ir.AffineMap.get_identity(rank) if rank else ir.AffineMap.get(0, 0, [])
    keep_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in kept])
    iterators = [parallel] * len(kept) + [reduction] * (rank - len(kept))
    first = linalg.GenericOp(
        [partial_t],
        [ref, out],
        [partial],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in (identity, identity, keep_map)]),
        ir.ArrayAttr.get(iterators),
    )
    elem = t.element_type
    block = first.regions[0].blocks.append(elem, elem, i32)
    with ir.InsertionPoint(block):
        r, x, acc = block.arguments
        if isinstance(elem, ir.IntegerType):
            bad = arith.CmpIOp(arith.CmpIPredicate.ne, x, r).result
        else:
            f32 = ir.F32Type.get()
            if elem != f32:
                r, x = arith.ExtFOp(f32, r).result, arith.ExtFOp(f32, x).result
            diff = math_d.AbsFOp(arith.SubFOp(x, r).result).result
            bound = arith.AddFOp(atol, arith.MulFOp(rtol, math_d.AbsFOp(r).result).result).result
            inf = fn.constant(ir.FloatAttr.get(f32, float("inf")))
            finite = arith.AndIOp(
                arith.CmpFOp(arith.CmpFPredicate.ONE, math_d.AbsFOp(r).result, inf).result,
                arith.CmpFOp(arith.CmpFPredicate.ONE, math_d.AbsFOp(x).result, inf).result,
            ).result
            close = arith.AndIOp(finite, arith.CmpFOp(arith.CmpFPredicate.OLE, diff, bound).result).result
            equal = arith.CmpFOp(arith.CmpFPredicate.OEQ, x, r).result
            nans = arith.AndIOp(
                arith.CmpFOp(arith.CmpFPredicate.UNO, r, r).result, arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result
            ).result
            ok = arith.OrIOp(close, arith.OrIOp(equal, nans).result).result
            bad = arith.XOrIOp(ok, fn.constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(1), 1))).result
        linalg.YieldOp([arith.AddIOp(acc, arith.ExtUIOp(i32, bad).result).result])
    counts = first.results[0]
    if kept:
        scalar_t = ir.RankedTensorType.get([], i32)
        init = flow.TensorSplatOp(scalar_t, zero, []).result
        m = len(kept)
        second = linalg.GenericOp(
            [scalar_t],
            [counts],
            [init],
            ir.ArrayAttr.get(
                [ir.AffineMapAttr.get(ir.AffineMap.get_identity(m)), ir.AffineMapAttr.get(ir.AffineMap.get(m, 0, []))]
            ),
            ir.ArrayAttr.get([reduction] * m),
        )
        block = second.regions[0].blocks.append(i32, i32)
        with ir.InsertionPoint(block):
            linalg.YieldOp([arith.AddIOp(block.arguments[1], block.arguments[0]).result])
        counts = second.results[0]
    return arith.ExtSIOp(i64, tensor.ExtractOp(counts, []).result).result
