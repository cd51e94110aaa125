"""Benchmark entries that dispatch a group on fake buffers of their own.

``@P.bench.K(%iters: index)`` runs variant ``K`` of a group ``iters * BENCH_UNROLL`` times. It does not call the host function: it clones, from the host, only the side-effect-free
ops that compute the dispatch's workload, scalar operands and dynamic sizes
(:func:`autotune_export.ir.slicing.clone_slice`), with the host's arguments replaced by fake
values of the tuning workload (``tensor.empty`` of the static type, cast to the host's type:
only their sizes are read; scalars from ``tune_workload``). So tuning never stores into the
user's globals, calls user functions or runs other kernels.

The group's dispatch gets one fake buffer per tensor operand (``flow.tensor.splat`` of 1 for
integers, 0.5 for floats, each value behind its own optimization barrier so that no two
buffers are merged: they never alias). Operands the dispatch writes in place (tied to a
result) get a fresh buffer before every run, as Triton's ``restore_value`` restores them, so
the data never drifts (an in-place kernel doubling its input would reach inf after a few
dozen runs); the others are filled once per call and fenced per loop iteration (so the
dispatches cannot be hoisted out of the loop or merged). A one-element slice of every result
of the last iteration is returned, keeping the work alive without making the host wait inside
the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir
from iree.compiler.dialects import flow, tensor

from autotune_export.contract import BENCH_UNROLL
from autotune_export.ir import functions as fn
from autotune_export.ir.markers import FIXED_CHOICE_ATTR, ZEROED_ATTR
from autotune_export.ir.slicing import SliceError, clone_slice

__all__ = ["DispatchOperands", "bench_entry", "workload_entry", "workload_of_entry", "splat_attr", "fake_element_error", "one_element"]


@dataclass
class DispatchOperands:
    """The operand groups of a ``flow.dispatch`` (``flow.DispatchOp``'s accessors): workload,
    arguments, argument dims (dynamic sizes of the tensor arguments, in order), result dims;
    ``tied``: per result, the index of the argument it is tied to, or -1."""

    workload: list
    arguments: list
    argument_dims: list
    result_dims: list
    tied: list[int]

    @classmethod
    def of(cls, dispatch) -> "DispatchOperands":
        view = dispatch.operation.opview  # flow.DispatchOp
        tied = [-1] * len(dispatch.results)
        if "tied_operands" in dispatch.attributes:
            tied = [int(ir.IntegerAttr(a).value) for a in ir.ArrayAttr(dispatch.attributes["tied_operands"])]
        return cls(list(view.workload), list(view.arguments), list(view.argument_dims), list(view.result_dims), tied)

    def scalars(self) -> list:
        return [a for a in self.arguments if not isinstance(a.type, ir.ShapedType)]


def splat_attr(elem):
    """The fill value of fake tensors of element type ``elem``: 1 for integers, 0.5 for
    floats. Raises ValueError for other element types."""
    if isinstance(elem, ir.IntegerType):
        return ir.IntegerAttr.get(elem, 1)
    if isinstance(elem, ir.FloatType):
        return ir.FloatAttr.get(elem, 0.5)
    raise ValueError(f"no fake data of element type {elem}")


#: Bits of 0.5 per float format: sign 0, exponent ``bias - 1``, mantissa 0, as
#: ``(exponent bias, mantissa bits)`` (IEEE formats: bias 2^(e-1) - 1; the FNUZ fp8 formats: 2^(e-1)).
_FLOAT_FORMATS = {
    "f16": (15, 10), "bf16": (127, 7), "f32": (127, 23), "f64": (1023, 52),
    "f8E4M3FN": (7, 3), "f8E5M2": (15, 2), "f8E4M3FNUZ": (8, 3), "f8E5M2FNUZ": (16, 2), "f8E4M3B11FNUZ": (11, 3),
}


def _fill_bits(elem) -> tuple[ir.Type, int] | None:
    """``(integer type of the same width, bit pattern)`` of 0.5 in float type ``elem``, or
    None for a format this table does not know."""
    fmt = _FLOAT_FORMATS.get(str(elem))
    if fmt is None:
        return None
    bias, mantissa = fmt
    return ir.IntegerType.get_signless(elem.width), (bias - 1) << mantissa


def fake_element_error(t) -> str | None:
    """Why a fake buffer of tensor type ``t`` cannot be made, or None."""
    if isinstance(t.element_type, (ir.IntegerType, ir.FloatType)):
        return None
    return f"no fake data of element type {t.element_type}"


def one_element(value):
    """A one-element static slice of a ranked tensor (the value itself when it is not one or
    already has a single element of static shape)."""
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or t.has_static_shape and all(d == 1 for d in t.shape):
        return value
    small = ir.RankedTensorType.get([1] * t.rank, t.element_type)
    return tensor.ExtractSliceOp(small, value, [], [], [], [0] * t.rank, [1] * t.rank, [1] * t.rank).result


def _dims_of(arguments, argument_dims) -> list[list]:
    """Per argument, its dynamic sizes (empty for scalars and static tensors)."""
    out, i = [], 0
    for a in arguments:
        n = sum(1 for d in a.type.shape if d == ir.ShapedType.get_dynamic_size()) if isinstance(a.type, ir.RankedTensorType) else 0
        out.append(list(argument_dims[i:i + n]))
        i += n
    return out


def bench_entry(name: str, dispatch, host, host_fakes: list, variant: int, point, *, check: bool = False) -> list:
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
    """
    index = ir.IndexType.get()
    parts = DispatchOperands.of(dispatch)
    tied_args = {t for t in parts.tied if t >= 0}
    result_types = [_one_element_type(r.type) for r in dispatch.results]
    out_types = result_types * BENCH_UNROLL
    if check:
        out_types = [r.type for r in dispatch.results]
    fixed = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), variant)

    def body(args):
        iters = args[0] if args else None
        c1 = fn.index_constant(1)
        needed = parts.workload + parts.scalars() + parts.argument_dims + parts.result_dims
        mapping = clone_slice(needed, _fake_mapping(host, host_fakes), ir.InsertionPoint.current)
        dims = _dims_of(parts.arguments, [mapping[d] for d in parts.argument_dims])

        def fresh(j: int, tie=None):
            """A new fake buffer for argument ``j``: a splat of an opaque fill value (behind a
            barrier, with ``tie``, the loop variable, so it cannot be hoisted out of the loop or
            merged with another buffer's). Float buffers are splat as integers of the same width
            and bit-cast (host code has no f16/bf16/fp8 scalars). The fill is zero for an
            operand the host zero-fills (a ``reset_to_zero`` output: a fill marked
            ``autotune.zeroed`` by zero-fill-outputs), as Triton's autotuner zeroes it before
            every timed run; 1 or 0.5 otherwise."""
            t = parts.arguments[j].type
            elem = t.element_type
            bits = _fill_bits(elem) if isinstance(elem, ir.FloatType) else None
            owner = parts.arguments[j].owner
            owner = owner.operation if isinstance(owner, ir.OpView) else owner
            if isinstance(owner, ir.Operation) and ZEROED_ATTR in owner.attributes:
                attr = ir.IntegerAttr.get(bits[0], 0) if bits else (
                    ir.FloatAttr.get(elem, 0.0) if isinstance(elem, ir.FloatType) else ir.IntegerAttr.get(elem, 0))
            else:
                attr = ir.IntegerAttr.get(bits[0], bits[1]) if bits else splat_attr(elem)
            fill = fn.constant(attr)
            value = fn.barrier([fill] + ([tie] if tie is not None else []))[0]
            if bits is None:
                return flow.TensorSplatOp(t, value, dims[j]).result
            as_int = ir.RankedTensorType.get(t.shape, bits[0])
            splat = flow.TensorSplatOp(as_int, value, dims[j]).result
            return flow.TensorBitCastOp(t, splat, dims[j], dims[j]).result

        # Inputs the dispatch only reads: one buffer each per call.
        filled = {j: fresh(j) for j, a in enumerate(parts.arguments)
                  if isinstance(a.type, ir.ShapedType) and j not in tied_args}

        def run(inputs: dict, tie=None, whole: bool = False) -> list:
            operands = []
            for j, a in enumerate(parts.arguments):
                if not isinstance(a.type, ir.ShapedType):
                    operands.append(mapping[a])
                elif j in tied_args:
                    operands.append(fresh(j, tie))  # written in place: restored before every run
                else:
                    operands.append(inputs[j])
            clone = dispatch.clone(ip=ir.InsertionPoint.current)
            new_operands = ([mapping[w] for w in parts.workload] + operands
                            + [mapping[d] for d in parts.argument_dims] + [mapping[d] for d in parts.result_dims])
            for i, v in enumerate(new_operands):
                clone.operands[i] = v
            clone.attributes[FIXED_CHOICE_ATTR] = fixed
            return list(clone.results) if whole else [one_element(r) for r in clone.results]

        if check:
            return run(filled, whole=True)
        # The loop carries the one-element results of its last iteration; it always runs (the
        # runtime never calls an entry with fewer than 1 iteration). Its initial values are
        # zero constants, never returned: IREE 3.13 on CUDA fails to return values that come
        # from outside such a loop when the dispatch writes in place (``ref is null`` in
        # hal.buffer_view.create, seen on the H200), so no result is computed outside it.
        inits = [fn.constant(_zeros(t)) for t in result_types] * BENCH_UNROLL

        def loop(i, _carried):
            # One barrier per input and iteration gives BENCH_UNROLL distinct copies of it.
            keys = sorted(filled)
            fenced = fn.barrier([filled[j] for j in keys for _ in range(BENCH_UNROLL)]) if keys else []
            yields = []
            for u in range(BENCH_UNROLL):
                inputs = {j: fenced[n * BENCH_UNROLL + u] for n, j in enumerate(keys)}
                yields.extend(run(inputs, i))
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


__all__ += ["SliceError"]


def _fake_mapping(host, host_fakes: list) -> dict:
    """Host entry-block argument -> its fake value (at the current insertion point):
    ``tensor.empty`` of the static type (cast to the host's type) or the scalar constant."""
    mapping = {}
    for arg, (kind, fake) in zip(host.regions[0].blocks[0].arguments, host_fakes):
        if kind == "scalar":
            mapping[arg] = fn.constant(fake)
        else:
            value = tensor.EmptyOp(list(fake.shape), fake.element_type).result
            mapping[arg] = tensor.CastOp(arg.type, value).result if fake != arg.type else value
    return mapping


def _as_i64(values: list) -> list:
    from iree.compiler.dialects import arith

    i64 = ir.IntegerType.get_signless(64)
    return [arith.IndexCastOp(i64, v).result if isinstance(v.type, ir.IndexType) else v for v in values]


def workload_entry(name: str, dispatch, host, host_fakes: list, point) -> int:
    """``util.func public @name() -> (i64, ...)``: the workload values of ``dispatch`` (inside
    ``host``) on the fake arguments ``host_fakes`` (as for :func:`bench_entry`), so the runtime
    knows which bucket a tuning workload fills. Returns the number of values. Raises
    SliceError as :func:`bench_entry` does."""
    parts = DispatchOperands.of(dispatch)
    i64 = ir.IntegerType.get_signless(64)

    def body(_args):
        mapping = clone_slice(parts.workload, _fake_mapping(host, host_fakes), ir.InsertionPoint.current)
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
        fn.util_func(name, inputs, [i64] * len(parts.workload),
                     lambda args: _as_i64([clone_slice(parts.workload, dict(zip(entry_args, args)), ir.InsertionPoint.current)[w]
                                           for w in parts.workload]),
                     ip=ir.InsertionPoint(scratch.body))
    except SliceError:
        return False
    for op in list(scratch.body.operations):
        point.insert(op.detach_from_parent())
    return True
