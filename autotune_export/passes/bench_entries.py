"""Benchmark entries that dispatch a group on fake buffers of their own.

``@P.bench.K(%iters: index)`` runs variant ``K`` of a group ``iters * BENCH_UNROLL`` times. It does not call the host function: it clones, from the host, only the side-effect-free
ops that compute the dispatch's workload, scalar operands and dynamic sizes
(:func:`autotune_export.ir.slicing.clone_slice`), with the host's arguments replaced by fake
values of the tuning workload (``tensor.empty`` of the static type, cast to the host's type:
only their sizes are read; scalars from ``tune_workload``). So tuning never stores into the
user's globals, calls user functions or runs other kernels.

The group's dispatch gets one fake buffer per tensor operand: seeded, position-dependent
values (:func:`fake_fill`: a hash of the argument's seed and the element's indices, so a
variant that reads an element from the wrong place sees another value and fails the
cross-check), the seed of argument ``j`` fixed (:func:`argument_seed`), so every variant and
every run sees identical inputs and no two arguments the same data. Arguments whose fake data
is zeros instead (:func:`fake_zero_arguments`): ``reset_to_zero`` outputs, and operands the
kernel updates atomically (a lock that holds ones is never released). Each seed or zero is
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
(:func:`has_no_elements`, an empty optional input) gets a plain ``tensor.empty`` (no fill, no
barrier) and an empty result no slice: they hold no data (docs/limits.md, "Zero-element tensors").
"""

from __future__ import annotations


from iree.compiler import ir
from iree.compiler.dialects import _linalg_enum_gen as linalg_enums
from iree.compiler.dialects import _linalg_ops_gen as linalg
from iree.compiler.dialects import arith, flow, tensor
from iree.compiler.dialects import math as math_d

from autotune_export.contract import BENCH_UNROLL
from autotune_export.ir import functions as fn
from autotune_export.ir.binding import DispatchOperands  # IREE's binding rule; re-exported
from autotune_export.ir.markers import FAKE_ZEROS_ATTR, FIXED_CHOICE_ATTR, ZEROED_ATTR
from autotune_export.ir.slicing import SliceError, clone_slice

__all__ = [
    "DispatchOperands",
    "bench_entry",
    "workload_entry",
    "workload_of_entry",
    "fake_element_error",
    "fake_fill",
    "fake_zeros",
    "fake_zero_arguments",
    "mark_fake_zeros",
    "argument_seed",
    "FAKE_DATA_SEED",
    "one_element",
    "has_no_elements",
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
    empty = _empty(t, dims, bits_t)
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
        mapping = clone_slice(needed, _fake_mapping(host, host_fakes), ir.InsertionPoint.current)
        dims = _dims_of(parts.arguments, [mapping[d] for d in parts.argument_dims])

        zero_args = fake_zero_arguments(dispatch)
        i32 = ir.IntegerType.get_signless(32)

        def source(j: int) -> ir.Value:
            """The constant argument ``j``'s fake data is made from: its seed
            (:func:`argument_seed`, an ``i32``), or for an argument of
            :func:`fake_zero_arguments` a zero of its element's width."""
            if j in zero_args:
                return fn.constant(ir.IntegerAttr.get(_bits_type(parts.arguments[j].type.element_type), 0))
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
                return _empty(t, dims[j])
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
                args.update({j: _empty(parts.arguments[j].type, dims[j]) for j in written if j not in args})
                yields.extend(run(args, run_workload))
            return yields

        return fn.counted_loop(fn.index_constant(0), iters, c1, inits, loop)

    fn.util_func(name, [] if check else [index], out_types, body, ip=point)
    return out_types


def _empty(t, dims: list, element_type=None) -> ir.Value:
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


def _bits_type(elem) -> ir.Type:
    """The integer type a fake buffer of element type ``elem`` is made in: ``elem`` itself for
    integers, the signless integer of its width for floats (bit-cast after)."""
    return elem if isinstance(elem, ir.IntegerType) else ir.IntegerType.get_signless(elem.width)


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


__all__ += ["compare_entry", "compare_problem"]
