"""Matching a dispatch region to the Triton matmul kernels (issue 25 item 3; docs/program.md,
"Triton candidates"): :func:`match_matmul` reads, and changes nothing in, a region that must be
exactly a contraction ``C = A @ B`` (``linalg.matmul``, ``linalg.batch_matmul``, or a
``linalg.generic`` whose body is ``mulf`` + ``addf`` with one M, N, K and at most one batch
loop; transposed operands become strides) on fp16 or bf16 of one type, into a zero
``linalg.fill``, reading whole operands and writing the whole result; anything else is not
matched, with the reason. :mod:`autotune_export.program.triton_candidates` turns a
:class:`MatmulMatch` into Triton candidates."""

from __future__ import annotations

from dataclasses import dataclass

from autotune_export.cuda.launch_arguments import dense_strides
from autotune_export.ir.walk import isa
from autotune_export.program.cuda import contraction_of
from iree.compiler import ir
from iree.compiler.dialects import arith, flow, iree_tensor_ext, linalg, tensor

__all__ = ["MatmulMatch", "match_matmul"]

_DTYPES = {"f16": "float16", "bf16": "bfloat16"}
#: The ops a matched dispatch's body may hold besides its root (constants, the zero fill of an
#: empty tensor, whole loads and the store).
_ALLOWED = (
    arith.ConstantOp,
    tensor.EmptyOp,
    linalg.FillOp,
    iree_tensor_ext.DispatchTensorLoadOp,
    iree_tensor_ext.DispatchTensorStoreOp,
    flow.ReturnOp,
)


@dataclass(frozen=True)
class MatmulMatch:
    """A dispatch computing ``C[z] = A[z] @ B[z]`` (``batch`` = 1 for a plain matmul):
    ``a`` / ``b``: the indices of the dispatch operands holding A and B as stored (shapes
    ``a_shape`` / ``b_shape``, dense row-major), ``c_shape`` the result's; ``dtype`` numpy's
    name of the element type (``float16``/``bfloat16``); ``m``, ``n``, ``k`` sizes; per
    operand its strides in elements for (batch, rows, columns) of the product's view: A
    (z, m, k), B (z, k, n), C (z, m, n), batch stride 0 without a batch loop."""

    a: int
    b: int
    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    c_shape: tuple[int, ...]
    dtype: str
    batch: int
    m: int
    n: int
    k: int
    a_strides: tuple[int, int, int]
    b_strides: tuple[int, int, int]
    c_strides: tuple[int, int, int]


def _loop_strides(amap, shape) -> dict[int, int]:
    """Loop -> stride in elements of that loop in a dense row-major tensor read through
    ``amap`` (a projection: each result a bare loop)."""
    dense = dense_strides(shape)
    return {ir.AffineDimExpr(e).position: s for e, s in zip(amap.results, dense)}


def _full(op, shape) -> bool:
    """Whether a dispatch.tensor load/store covers its whole tensor (offsets 0, unit strides)."""
    try:
        offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
        sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
        strides = list(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
    except (KeyError, ValueError):
        return False
    return all(o == 0 for o in offsets) and sizes == list(shape) and all(s == 1 for s in strides)


def defining_op(value):
    owner = value.owner
    return owner if isinstance(owner, ir.Operation) else getattr(owner, "operation", None)


def _is_zero(value) -> bool:
    op = defining_op(value)
    if op is None or not isa(op, arith.ConstantOp):
        return False
    attr = op.attributes["value"]
    return isinstance(attr, ir.FloatAttr) and attr.value == 0.0


def _same_values(operands, values) -> bool:
    """Whether ``operands`` are ``values`` in some order (an add or multiply commutes)."""
    ops = list(operands)
    return len(ops) == len(values) and all(any(o == v for o in ops) for v in values)


def match_matmul(dispatch, root) -> MatmulMatch | str:
    """``dispatch`` (a ``flow.dispatch.workgroups``) as a :class:`MatmulMatch`, or why it is
    not one (a one-line reason for the remark). ``root``: its root op
    (:func:`autotune_export.program.build.root_op`)."""
    c = contraction_of(root)
    if c is None:
        return "the root op is not a contraction with one M, N and K loop and static sizes"
    if len(c.batch) > 1:
        return f"{len(c.batch)} batch loops (the kernel has one)"
    if isa(root, linalg.GenericOp):
        body = list(root.regions[0].blocks[0].operations)
        shape = [type(o.operation.opview) for o in body]
        if shape != [arith.MulFOp, arith.AddFOp, linalg.YieldOp]:
            return f"its body is {', '.join(o.operation.name for o in body)}, not a multiply-add"
        a, b, acc = list(root.regions[0].blocks[0].arguments)
        mul, add, yld = (o.operation for o in body)
        if not (
            _same_values(mul.operands, [a, b])
            and _same_values(add.operands, [acc, mul.results[0]])
            and list(yld.operands) == [add.results[0]]
        ):
            return "its body is not out + a * b of its two inputs' and its output's elements"
    elif not isa(root, linalg.MatmulOp, linalg.BatchMatmulOp):
        return f"{root.name} is not a matmul"
    types = [str(ir.ShapedType(v.type).element_type) for v in root.operands]
    if len(set(types)) != 1 or types[0] not in _DTYPES:
        return f"element types {' x '.join(types[:2])} -> {types[2]} (the kernel takes fp16 or bf16 of one type)"
    # The body's top-level ops (the ops of linalg regions are the root's and fill's own).
    body = [getattr(o, "operation", o) for o in dispatch.regions[0].blocks[0].operations]
    extra = [o.name for o in body if not isa(o, *_ALLOWED) and o != root]
    if extra:
        return f"the dispatch fuses {', '.join(sorted(set(extra)))} with the matmul; the kernel computes the product alone"
    init = defining_op(root.operands[2])
    if init is None or not isa(init, linalg.FillOp) or not _is_zero(init.operands[0]):
        return "its accumulator is not a zero fill"
    region_args = list(dispatch.regions[0].blocks[0].arguments)
    n_in = len(dispatch.operands)
    if any(not isinstance(v.type, ir.RankedTensorType) for v in dispatch.operands) or len(dispatch.results) != 1:
        return "dynamic dims or scalar operands in the dispatch"

    def source_of(value) -> int | None:
        load = defining_op(value)
        if load is None or not isa(load, iree_tensor_ext.DispatchTensorLoadOp):
            return None
        shape = ir.ShapedType(value.type).shape
        if not _full(load, shape):
            return None
        for i, arg in enumerate(region_args[:n_in]):
            if load.operands[0] == arg:
                return i
        return None

    a, b = source_of(root.operands[0]), source_of(root.operands[1])
    if a is None or b is None:
        return "an operand is not a whole dispatch operand"
    stores = [o for o in body if isa(o, iree_tensor_ext.DispatchTensorStoreOp)]
    if (
        len(stores) != 1
        or stores[0].operands[0] != root.results[0]
        or not _full(stores[0], ir.ShapedType(root.results[0].type).shape)
    ):
        return "the result is not stored whole"
    maps = [ir.AffineMapAttr(x).value for x in ir.ArrayAttr(root.attributes["indexing_maps"])]
    shapes = [tuple(ir.ShapedType(v.type).shape) for v in root.operands]
    strides = [_loop_strides(m, s) for m, s in zip(maps, shapes)]
    z = c.batch[0] if c.batch else None

    def view(st, rows, cols):
        return (st.get(z, 0) if z is not None else 0, st[rows], st[cols])

    return MatmulMatch(
        a=a,
        b=b,
        a_shape=shapes[0],
        b_shape=shapes[1],
        c_shape=shapes[2],
        dtype=_DTYPES[types[0]],
        batch=c.sizes[z] if z is not None else 1,
        m=c.sizes[c.m],
        n=c.sizes[c.n],
        k=c.sizes[c.k],
        a_strides=view(strides[0], c.m, c.k),
        b_strides=view(strides[1], c.k, c.n),
        c_strides=view(strides[2], c.m, c.n),
    )


# ----- the registry ---------------------------------------------------------------------------
