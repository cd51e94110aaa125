"""The fake data of the benchmark and check entries (:mod:`autotune_export.passes.bench_entries`),
built as IR: the one home of the values every variant is tuned and cross-checked on.

The group's dispatch gets one fake buffer per tensor operand: seeded, position-dependent
values (:func:`fake_fill`: a hash of the argument's seed and the element's indices, so a
variant that reads an element from the wrong place sees another value and fails the
cross-check), the seed of argument ``j`` fixed (:func:`argument_seed`), so every variant and
every run sees identical inputs and no two arguments the same data. Arguments whose fake data
is zeros instead (:func:`fake_zero_arguments`): ``reset_to_zero`` outputs, and operands the
kernel updates atomically (a lock that holds ones is never released); the passes that know
them mark them (:func:`mark_fake_zeros`). The host's own arguments are replaced by fake values
of the tuning workload (:func:`fake_host_arguments`: ``tensor.empty`` of the static type, cast
to the host's type: only their sizes are read; scalars from ``tune_workload``). A tensor without
elements (:func:`has_no_elements`, an empty optional input) gets a plain ``tensor.empty``
(:func:`empty_tensor`): it holds no data (docs/limits.md, "Zero-element tensors").
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import _linalg_enum_gen as linalg_enums
from iree.compiler.dialects import _linalg_ops_gen as linalg
from iree.compiler.dialects import arith, flow, tensor

from autotune_export.ir import functions as fn
from autotune_export.ir.binding import DispatchOperands
from autotune_export.ir.markers import FAKE_ZEROS_ATTR, ZEROED_ATTR

__all__ = [
    "FAKE_DATA_SEED",
    "argument_seed",
    "fake_element_error",
    "fake_fill",
    "fake_zeros",
    "fake_zero_arguments",
    "mark_fake_zeros",
    "fake_host_arguments",
    "has_no_elements",
    "empty_tensor",
    "bits_type",
]


#: The seed of the fake data (:func:`fake_fill`); argument ``j`` of a dispatch hashes from
#: ``FAKE_DATA_SEED + j``, so no two arguments get the same data.
FAKE_DATA_SEED = 0x5EED1D5


#: Per float format ``(exponent bias, mantissa bits)`` (IEEE formats: bias 2^(e-1) - 1; the
#: FNUZ fp8 formats: 2^(e-1)): the fake values are built as bit patterns from these.
_FLOAT_FORMATS = {
    "f16": (15, 10),
    "bf16": (127, 7),
    "f32": (127, 23),
    "f64": (1023, 52),
    "f8E4M3FN": (7, 3),
    "f8E5M2": (15, 2),
    "f8E4M3FNUZ": (8, 3),
    "f8E5M2FNUZ": (16, 2),
    "f8E4M3B11FNUZ": (11, 3),
}

_MASK32 = 0xFFFFFFFF


def _fmix32(h: int) -> int:
    """MurmurHash3's 32-bit finalizer (Austin Appleby, public domain), on a Python int; the IR
    of :func:`fake_fill` computes the same steps on ``i32``."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    return h ^ (h >> 16)


def argument_seed(j: int) -> int:
    """The 32-bit seed of argument ``j``'s fake data (as a signed i32 value)."""
    h = _fmix32((FAKE_DATA_SEED + j) & _MASK32)
    return h - (1 << 32) if h >= 1 << 31 else h


def fake_element_error(t) -> str | None:
    """Why a fake buffer of tensor type ``t`` cannot be made (an element type that is neither
    an integer nor a float format of :data:`_FLOAT_FORMATS`), or None."""
    elem = t.element_type
    if isinstance(elem, ir.IntegerType) or isinstance(elem, ir.FloatType) and str(elem) in _FLOAT_FORMATS:
        return None
    return f"no fake data of element type {elem}"


def fake_fill(t, dims: list, seed) -> ir.Value:
    """A tensor of type ``t`` (dynamic sizes ``dims``) of seeded, position-dependent fake
    values, at the current insertion point: a ``linalg.generic`` over ``linalg.index`` (IREE
    makes it a dispatch of its own, on every backend) that hashes ``seed`` (an ``i32`` value)
    with the element's indices (per dimension ``h = (h ^ i) * 0x9E3779B1``, then MurmurHash3's
    finalizer, all on ``i32``) and makes the element from the hash's top bits:

    * integers: 0 or 1, as XLA's autotuner fills integer buffers ("less overflows especially
      for int8"; ``xla/service/gpu/stream_executor_util.cc``, ``InitializeTypedBuffer``):
      small, non-negative and in range as an index or a mask;
    * floats: ``±(1 + f/8) * 2^(e-1)`` with 3 random mantissa bits ``f`` (2 for ``f8E5M2``),
      ``e`` in {0, 1} and a random sign: magnitudes in [0.5, 2), made as the format's bit
      pattern (exponent bias and mantissa width from :data:`_FLOAT_FORMATS`) and bit-cast, so
      every format, fp8 included, needs only integer ops. Every value is exact in every format
      of the table, and a product of two is a multiple of 2^-8 with at most 8 significant
      bits, so an f32 accumulation of such products is exact whatever its order (below
      2^16): variants that only reorder a reduction (tiles, split-K) agree bit for bit, while
      one that reads an element from the wrong place (reversed, transposed, a wrong stride)
      sees other values.

    XLA's autotuner uses seeded random data for the same reason (a constant fill makes
    variants that read the wrong elements agree). Raises ValueError for an element type
    without fake data (:func:`fake_element_error`)."""
    problem = fake_element_error(t)
    if problem is not None:
        raise ValueError(problem)
    elem = t.element_type
    width = elem.width
    bits_t = elem if isinstance(elem, ir.IntegerType) else ir.IntegerType.get_signless(width)
    i32 = ir.IntegerType.get_signless(32)
    empty = empty_tensor(t, dims, bits_t)
    rank = t.rank
    identity = ir.AffineMap.get_identity(rank) if rank else ir.AffineMap.get(0, 0, [])
    # The iterator types through the enum's registered attribute builder: the linalg package's
    # own array builder would import its op DSL (a third of every command's start).
    parallel = ir.AttrBuilder.get("linalg.IteratorTypeEnum")(linalg_enums.IteratorType.parallel, ir.Context.current)
    generic = linalg.GenericOp(
        [empty.type], [], [empty], ir.ArrayAttr.get([ir.AffineMapAttr.get(identity)]), ir.ArrayAttr.get([parallel] * rank)
    )
    block = generic.regions[0].blocks.append(bits_t)
    with ir.InsertionPoint(block):
        made: dict = {}

        def c(value: int, ty=i32):
            """An integer constant of type ``ty`` (the low bits of ``value``, made once)."""
            w = ty.width
            value &= (1 << w) - 1
            key = (value, w)
            if key not in made:
                made[key] = fn.constant(ir.IntegerAttr.get(ty, value - (1 << w) if value >= 1 << (w - 1) else value))
            return made[key]

        h = seed
        for d in range(rank):
            i = arith.IndexCastOp(i32, linalg.IndexOp(d).result).result
            h = arith.MulIOp(arith.XOrIOp(h, i).result, c(0x9E3779B1)).result
        for shift, mul in ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, None)):
            h = arith.XOrIOp(h, arith.ShRUIOp(h, c(shift)).result).result
            if mul is not None:
                h = arith.MulIOp(h, c(mul)).result

        def top(bits: int, below: int):
            """Bits ``[32 - below - bits, 32 - below)`` of the hash, as ``bits_t``."""
            v = arith.AndIOp(arith.ShRUIOp(h, c(32 - below - bits)).result, c((1 << bits) - 1)).result
            if width < 32:
                return arith.TruncIOp(bits_t, v).result
            return arith.ExtUIOp(bits_t, v).result if width > 32 else v

        if isinstance(elem, ir.IntegerType):
            value = top(1, 0)
        else:
            bias, mantissa = _FLOAT_FORMATS[str(elem)]
            used = min(3, mantissa)
            sign = arith.ShLIOp(top(1, 0), c(width - 1, bits_t)).result
            exponent = arith.ShLIOp(arith.AddIOp(top(1, 1), c(bias - 1, bits_t)).result, c(mantissa, bits_t)).result
            fraction = arith.ShLIOp(top(used, 2), c(mantissa - used, bits_t)).result
            value = arith.OrIOp(arith.OrIOp(sign, exponent).result, fraction).result
        linalg.YieldOp([value])
    out = generic.results[0]
    if bits_t == elem:
        return out
    return flow.TensorBitCastOp(t, out, dims, dims).result


def fake_zeros(t, dims: list, opaque_zero_of) -> ir.Value:
    """A zero-filled tensor of type ``t`` (dynamic sizes ``dims``): a ``flow.tensor.splat`` of
    ``opaque_zero_of(integer type)`` (a zero of the element's width behind a barrier, so no two
    fills are merged), bit-cast for floats (every bit zero is +0.0)."""
    elem = t.element_type
    bits_t = elem if isinstance(elem, ir.IntegerType) else ir.IntegerType.get_signless(elem.width)
    splat = flow.TensorSplatOp(ir.RankedTensorType.get(t.shape, bits_t), opaque_zero_of(bits_t), dims).result
    return splat if bits_t == elem else flow.TensorBitCastOp(t, splat, dims, dims).result


def fake_zero_arguments(dispatch) -> set[int]:
    """Indices (in the dispatch's argument list) of the arguments whose fake data is zeros: a
    zero fill the host makes for a ``reset_to_zero`` output (its defining op carries
    :data:`~autotune_export.ir.markers.ZEROED_ATTR`), and those the dispatch lists in
    :data:`~autotune_export.ir.markers.FAKE_ZEROS_ATTR` (in-place ``reset_to_zero`` operands,
    operands the kernel updates atomically: :func:`mark_fake_zeros`)."""
    parts = DispatchOperands.of(dispatch)
    out = set()
    for j, a in enumerate(parts.arguments):
        owner = a.owner
        owner = owner.operation if isinstance(owner, ir.OpView) else owner
        if isinstance(owner, ir.Operation) and ZEROED_ATTR in owner.attributes:
            out.add(j)
    if FAKE_ZEROS_ATTR in dispatch.attributes:
        out |= {int(v) for v in ir.DenseI64ArrayAttr(dispatch.attributes[FAKE_ZEROS_ATTR])}
    return {j for j in out if 0 <= j < len(parts.arguments)}


def mark_fake_zeros(dispatch, arguments) -> None:
    """Add ``arguments`` (indices in the dispatch's argument list) to the dispatch's
    :data:`~autotune_export.ir.markers.FAKE_ZEROS_ATTR` (kept sorted, without repeats)."""
    have = set()
    if FAKE_ZEROS_ATTR in dispatch.attributes:
        have = {int(v) for v in ir.DenseI64ArrayAttr(dispatch.attributes[FAKE_ZEROS_ATTR])}
    merged = sorted(have | {int(j) for j in arguments})
    if merged:
        dispatch.attributes[FAKE_ZEROS_ATTR] = ir.DenseI64ArrayAttr.get(merged, context=dispatch.context)


def has_no_elements(t) -> bool:
    """Whether ``t`` is a ranked tensor type with a static size 0 (``tensor<0xf32>``,
    ``tensor<?x0xf16>``): it holds no data, so it gets no fake fill, no barrier and no
    one-element slice (IREE's verifier refuses ``tensor.extract_slice %r[0] [1] [1]`` of a
    ``tensor<0xf32>``: "offset 0 is out-of-bounds", and a barrier over a zero-size fill folded to
    a constant fails ``iree-stream-refine-usage``)."""
    return isinstance(t, ir.RankedTensorType) and any(d == 0 for d in t.shape)


def empty_tensor(t, dims: list, element_type=None) -> ir.Value:
    """``tensor.empty`` of ``t``'s shape (dynamic sizes ``dims``, in order) and element type
    ``element_type`` (default ``t``'s): the fake value of a tensor without elements, and the
    destination of a fake fill."""
    sizes, k = [], 0
    for d in t.shape:
        if d == ir.ShapedType.get_dynamic_size():
            sizes.append(dims[k])
            k += 1
        else:
            sizes.append(d)
    return tensor.EmptyOp(sizes, element_type or t.element_type).result


def bits_type(elem) -> ir.Type:
    """The integer type a fake buffer of element type ``elem`` is made in: ``elem`` itself for
    integers, the signless integer of its width for floats (bit-cast after)."""
    return elem if isinstance(elem, ir.IntegerType) else ir.IntegerType.get_signless(elem.width)


def fake_host_arguments(host, host_fakes: list) -> dict:
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
