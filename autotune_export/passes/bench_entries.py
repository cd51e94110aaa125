"""Benchmark entries that dispatch a group on fake buffers of their own.

``@P.bench.K(%iters: index)`` runs variant ``K`` of a group ``1 + (iters - 1) * BENCH_UNROLL``
times. It does not call the host function: it clones, from the host, only the side-effect-free
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
from autotune_export.ir.markers import FIXED_CHOICE_ATTR
from autotune_export.ir.slicing import SliceError, clone_slice

__all__ = ["DispatchOperands", "bench_entry", "splat_attr", "fake_element_error", "one_element"]


@dataclass
class DispatchOperands:
    """The operand groups of a ``flow.dispatch`` (its ``operandSegmentSizes``): workload,
    arguments, argument dims (dynamic sizes of the tensor arguments, in order), result dims;
    ``tied``: per result, the index of the argument it is tied to, or -1."""

    workload: list
    arguments: list
    argument_dims: list
    result_dims: list
    tied: list[int]

    @classmethod
    def of(cls, dispatch) -> "DispatchOperands":
        segments = list(dispatch.attributes["operandSegmentSizes"])
        ops = list(dispatch.operands)
        bounds = [0]
        for n in segments:
            bounds.append(bounds[-1] + n)
        parts = [ops[bounds[i]:bounds[i + 1]] for i in range(len(segments))]
        tied = [-1] * len(dispatch.results)
        if "tied_operands" in dispatch.attributes:
            tied = [int(ir.IntegerAttr(a).value) for a in ir.ArrayAttr(dispatch.attributes["tied_operands"])]
        return cls(parts[0], parts[1], parts[2], parts[3], tied)

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


def bench_entry(name: str, dispatch, host, host_fakes: list, variant: int, point) -> list:
    """Build ``util.func public @name(%iters: index) -> (one-element results...)`` at
    ``point`` (see the module doc) for the group dispatch ``dispatch`` inside function
    ``host``, fixed to ``variant`` (``autotune.choice``, read by lower-autotuning-dispatch).

    ``host_fakes``: per host argument, ``("tensor", static type)`` or ``("scalar", typed
    attribute)``. Returns the entry's result types. Raises SliceError when the dispatch's
    sizes or scalars depend on something other than pure computations on the host's
    arguments.
    """
    index = ir.IndexType.get()
    parts = DispatchOperands.of(dispatch)
    tied_args = {t for t in parts.tied if t >= 0}
    result_types = [_one_element_type(r.type) for r in dispatch.results]
    out_types = result_types * BENCH_UNROLL
    entry_args = list(host.regions[0].blocks[0].arguments)
    host_types = [a.type for a in entry_args]
    fixed = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), variant)

    def body(args):
        (iters,) = args
        c1 = fn.index_constant(1)
        mapping = {}
        for arg, t, (kind, fake) in zip(entry_args, host_types, host_fakes):
            if kind == "scalar":
                mapping[arg] = fn.constant(fake)
            else:
                value = tensor.EmptyOp(list(fake.shape), fake.element_type).result
                mapping[arg] = tensor.CastOp(t, value).result if fake != t else value
        needed = parts.workload + parts.scalars() + parts.argument_dims + parts.result_dims
        mapping = clone_slice(needed, mapping, ir.InsertionPoint.current)
        dims = _dims_of(parts.arguments, [mapping[d] for d in parts.argument_dims])

        def fresh(j: int, tie=None):
            """A new fake buffer for argument ``j``: a splat of an opaque fill value (behind a
            barrier, with ``tie``, the loop variable, so it cannot be hoisted out of the loop or
            merged with another buffer's). Float buffers are splat as integers of the same width
            and bit-cast (host code has no f16/bf16/fp8 scalars)."""
            t = parts.arguments[j].type
            elem = t.element_type
            bits = _fill_bits(elem) if isinstance(elem, ir.FloatType) else None
            fill = fn.constant(ir.IntegerAttr.get(bits[0], bits[1]) if bits else splat_attr(elem))
            value = fn.barrier([fill] + ([tie] if tie is not None else []))[0]
            if bits is None:
                return flow.TensorSplatOp(t, value, dims[j]).result
            as_int = ir.RankedTensorType.get(t.shape, bits[0])
            splat = flow.TensorSplatOp(as_int, value, dims[j]).result
            return flow.TensorBitCastOp(t, splat, dims[j], dims[j]).result

        # Inputs the dispatch only reads: one buffer each per call.
        filled = {j: fresh(j) for j, a in enumerate(parts.arguments)
                  if isinstance(a.type, ir.ShapedType) and j not in tied_args}

        def run(inputs: dict, tie=None) -> list:
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
            return [one_element(r) for r in clone.results]

        first = run(filled)

        def loop(i, _carried):
            # One barrier per input and iteration gives BENCH_UNROLL distinct copies of it.
            keys = sorted(filled)
            fenced = fn.barrier([filled[j] for j in keys for _ in range(BENCH_UNROLL)]) if keys else []
            yields = []
            for u in range(BENCH_UNROLL):
                inputs = {j: fenced[n * BENCH_UNROLL + u] for n, j in enumerate(keys)}
                yields.extend(run(inputs, i))
            return yields

        return fn.counted_loop(c1, iters, c1, first * BENCH_UNROLL, loop)

    fn.util_func(name, [index], out_types, body, ip=point)
    return out_types


def _one_element_type(t):
    if not isinstance(t, ir.RankedTensorType) or t.has_static_shape and all(d == 1 for d in t.shape):
        return t
    return ir.RankedTensorType.get([1] * t.rank, t.element_type)


__all__ += ["SliceError"]
