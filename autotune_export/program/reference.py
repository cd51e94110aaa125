"""The reference computation of a group's cross-check (docs/program.md, "The cross-check:
accuracy against a reference"): the group's dispatch with its root op accumulating in f32.

IREE's own code for a contraction follows linalg's semantics: the accumulator is the output
tensor, so an fp16 matmul into an fp16 result accumulates in fp16 (IREE 3.13 picks the
``NV_MMA_SYNC_F16_16x8x16_F16`` intrinsic for it on sm_89, and llvm-cpu adds in f16). The Triton
candidates, and any more careful code, accumulate in f32. Compared with the group's default
alone, every more precise variant would be dropped; compared with this reference (never a
variant, never selectable: only the check entries run it), the runtime measures how far the
default and each variant are from a more exact result on the same fake data and keeps a
variant that is no less accurate than the default (:mod:`autotune_export.runtime.checking`).

:func:`widened` makes the reference dispatch from the default's: a clone whose root op becomes
a ``linalg.generic`` over the same indexing maps and iterators, with its initial value extended
to f32 (``arith.extf``), every narrow float value of its body (block arguments, constants,
results) computed in f32, and its result truncated back to the root's element type
(``arith.truncf``, round to nearest even) before the rest of the dispatch (fused consumers) as
in the default. Built with the bindings' op classes and ``Operation.create``, nothing parsed.
A named op whose indexing maps are not attributes (``linalg.conv_2d_nhwc_hwcf`` and the other
named convolutions: their maps follow from ``strides`` and ``dilations``) gets them from
MLIR's own generalization (``linalg-generalize-named-ops`` on a copy of the op alone,
:func:`structure`), the one home of linalg's definition of those ops.

Which roots get a reference (:func:`reference_note` says it in one line, for the reflection and
``inspect``):

- one result of f16 or bf16 elements (:data:`NARROW_FLOATS`): a reference, the widened default;
- one result of f32 or f64 elements, or integers (:data:`SELF_REFERENCED`): none needed, the
  default **is** its own reference: it accumulates in its result's type, as precisely as any
  candidate (the Triton candidates accumulate in f32; on the fake data, whose products and sums
  are exact in f32, every correct order gives the same f32 result), so its variants are compared
  with it (:func:`own_reference`);
- anything else (several results, dynamic shapes, other element types such as fp8, a body that
  cannot be computed in f32): none, with the reason (:func:`reference_problem`); the variants
  are compared with the default.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import _linalg_enum_gen as linalg_enums
from iree.compiler.dialects import _linalg_ops_gen as linalg
from iree.compiler.dialects import arith, tensor
from iree.compiler.dialects import func as func_d
from iree.compiler.passmanager import PassManager

from autotune_export.ir.walk import isa
from autotune_export.program.dispatches import loops_of

__all__ = ["NARROW_FLOATS", "SELF_REFERENCED", "own_reference", "reference_note", "reference_problem", "structure", "widened"]

#: Result element types whose accumulation the reference widens to f32 (narrower than f32).
NARROW_FLOATS = ("f16", "bf16")
#: Float result element types the default accumulates in as precisely as any candidate: a root
#: with such a result (or an integer one) is its own reference (:func:`own_reference`).
SELF_REFERENCED = ("f32", "f64")


def _narrow(t) -> bool:
    return isinstance(t, ir.FloatType) and str(t) in NARROW_FLOATS


def own_reference(root) -> str | None:
    """Why root op ``root`` needs no reference computation, or None when it may: its one result
    has f32 or f64 elements (:data:`SELF_REFERENCED`) or integers, which linalg accumulates in
    (the result is the accumulator), so IREE's default is as precise as any candidate and is
    its own reference: the cross-check compares the variants with it (docs/program.md, "The
    cross-check")."""
    if len(root.results) != 1 or not isinstance(root.results[0].type, ir.ShapedType):
        return None
    e = ir.ShapedType(root.results[0].type).element_type
    if isinstance(e, ir.IntegerType):
        return f"{root.name} accumulates in {e}, exactly"
    if str(e) in SELF_REFERENCED:
        return f"{root.name} accumulates in {e}, as precisely as the candidates"
    return None


def reference_problem(root) -> str | None:
    """Why :func:`widened` makes no reference for root op ``root`` (a linalg op, see
    :func:`autotune_export.program.dispatches.root_op`), or None: it needs one result of a
    static shape whose element type is a narrow float (:data:`NARROW_FLOATS`; an f32, f64 or
    integer accumulator needs none, :func:`own_reference`), a body, and indexing maps to rebuild
    it from (its own, or those of MLIR's generalization of the named op, :func:`structure`)."""
    if len(root.results) != 1:
        return f"{root.name} has {len(root.results)} results"
    t = root.results[0].type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return f"{root.name}'s result is not a static tensor"
    if not _narrow(t.element_type):
        return f"{root.name} accumulates in {t.element_type}"
    if len(root.regions) != 1 or not len(root.regions[0].blocks):
        return f"{root.name} has no body"
    if structure(root) is None:
        return f"{root.name}'s indexing maps cannot be read (MLIR's linalg-generalize-named-ops does not generalize it)"
    return None


def reference_note(root, built: bool, variants: int) -> str:
    """One line saying what a group's reference computation is (``built``: its entry was made,
    :func:`widened`), or why it has none and what its variants are compared with instead: the
    reflection's ``reference_note`` (:class:`autotune_export.contract.GroupReflection`), which
    ``inspect`` shows. ``root``: the group's root op (None when unknown), ``variants``: how many
    the group has."""
    if variants < 2:
        return "none: one variant, nothing to cross-check"
    if root is None:
        return "none: no root op; variants are compared with the default"
    if built:
        t = ir.ShapedType(root.results[0].type).element_type
        return f"IREE's default with its {root.name} accumulating in f32, rounded to {t} (variants: no less accurate than the default against it)"
    own = own_reference(root)
    if own is not None:
        return f"the default: {own}, is its own reference (variants are compared with it)"
    why = reference_problem(root) or f"{root.name}'s body cannot be computed in f32"
    return f"none: {why}; variants are compared with the default"


def structure(root) -> tuple[ir.ArrayAttr, ir.ArrayAttr] | None:
    """The indexing maps and iterator types of root op ``root``: its own attributes (a
    ``linalg.generic``; a ``linalg.matmul`` prints its maps, its iterators are read off them,
    :func:`_iterators`), else those of MLIR's generalization of the named op
    (``linalg-generalize-named-ops`` run on a function holding a copy of ``root`` alone: the
    named convolutions, whose maps follow from their ``strides`` and ``dilations``; also a named
    op whose iterators cannot be read off its maps). None when neither gives them."""
    if "indexing_maps" in root.attributes:
        try:
            return ir.ArrayAttr(root.attributes["indexing_maps"]), _iterators(root)
        except ValueError:
            pass  # MLIR's generalization may still say
    holder = ir.Module.create(loc=ir.Location.unknown())
    with ir.InsertionPoint(holder.body), ir.Location.unknown():
        f = func_d.FuncOp("generalized", ([v.type for v in root.operands], [r.type for r in root.results]))
        block = f.add_entry_block()
    with ir.InsertionPoint(block), ir.Location.unknown():
        copy = root.clone()
        for i, arg in enumerate(block.arguments):
            copy.operands[i] = arg
        func_d.ReturnOp(list(copy.results))
    try:
        PassManager.parse("builtin.module(func.func(linalg-generalize-named-ops))").run(holder.operation)
    except ir.MLIRError:
        return None
    generic = next((op for op in block.operations if isa(op, linalg.GenericOp)), None)
    if generic is None:
        return None
    return ir.ArrayAttr(generic.attributes["indexing_maps"]), ir.ArrayAttr(generic.attributes["iterator_types"])


def _iterators(root) -> ir.ArrayAttr:
    """The root's iterator types: its own (linalg.generic), else those :func:`.dispatches.loops_of`
    reads off its indexing maps (the one home of linalg's rule: a loop the result's map does not
    use is a reduction). Raises ValueError when they cannot be read."""
    if "iterator_types" in root.attributes:
        return ir.ArrayAttr(root.attributes["iterator_types"])
    found = loops_of(root)
    if found is None:
        raise ValueError(f"{root.name}'s loops cannot be read")
    sizes, reductions = found
    build = ir.AttrBuilder.get("linalg.IteratorTypeEnum")
    kinds = [
        linalg_enums.IteratorType.reduction if d in reductions else linalg_enums.IteratorType.parallel for d in range(len(sizes))
    ]
    return ir.ArrayAttr.get([build(k, ir.Context.current) for k in kinds])


def _elementwise(value, element_type, convert) -> ir.Value:
    """``linalg.generic`` applying ``convert(x)`` to each element of static tensor ``value``,
    into a ``tensor.empty`` of ``element_type``."""
    t = ir.RankedTensorType(value.type)
    out_t = ir.RankedTensorType.get(t.shape, element_type)
    empty = tensor.EmptyOp(list(t.shape), element_type).result
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))
    parallel = ir.AttrBuilder.get("linalg.IteratorTypeEnum")(linalg_enums.IteratorType.parallel, ir.Context.current)
    op = linalg.GenericOp(
        [out_t], [value], [empty], ir.ArrayAttr.get([identity, identity]), ir.ArrayAttr.get([parallel] * t.rank)
    )
    block = op.regions[0].blocks.append(t.element_type, element_type)
    with ir.InsertionPoint(block):
        linalg.YieldOp([convert(block.arguments[0])])
    return op.results[0]


def _wide_init(init, f32) -> ir.Value:
    """The f32 initial value of the widened root: a ``linalg.fill`` of the extended scalar when
    ``init`` is a fill (IREE's codegen fuses a fill into a contraction, as for any f32
    matmul), else ``init`` extended element by element."""
    owner = init.owner
    if isinstance(owner, (ir.Operation, ir.OpView)) and isa(owner, linalg.FillOp) and _narrow(owner.operands[0].type):
        from iree.compiler.dialects import linalg as linalg_dsl  # the op DSL builds the fill's region

        t = ir.RankedTensorType(init.type)
        scalar = arith.ExtFOp(f32, owner.operands[0]).result
        return linalg_dsl.fill(scalar, outs=[tensor.EmptyOp(list(t.shape), f32).result])
    return _elementwise(init, f32, lambda x: arith.ExtFOp(f32, x).result)


def _widen_body(old_block, new_block, f32) -> None:
    """Fill ``new_block`` (arguments: the root's input elements, then its f32 accumulator) with
    ``old_block``'s ops, every narrow float value computed in f32: narrow inputs and
    constants are extended, an op whose result was narrow now yields f32, and an ``extf`` or
    ``truncf`` that the widening makes an identity is dropped. Raises ValueError for an op
    whose operands it cannot retype (then no reference is made)."""
    mapping = {}
    with ir.InsertionPoint(new_block):
        *ins, acc = old_block.arguments
        for old, new in zip(ins, list(new_block.arguments)[:-1]):
            mapping[old] = arith.ExtFOp(f32, new).result if _narrow(old.type) else new
        mapping[acc] = new_block.arguments[-1]
        for op in old_block.operations:
            if isa(op, linalg.YieldOp):
                linalg.YieldOp([mapping[v] for v in op.operands])
                return
            operands = [mapping[v] for v in op.operands]
            if (
                isa(op, arith.ExtFOp, arith.TruncFOp)
                and operands[0].type == f32
                and (op.results[0].type == f32 or _narrow(op.results[0].type))
            ):
                mapping[op.results[0]] = operands[0]
                continue
            if len(op.regions):
                raise ValueError(f"{op.name} has regions")
            if not operands:  # a constant: as it is, extended if narrow
                made = op.operation.clone()
                mapping.update(
                    {r: arith.ExtFOp(f32, m).result if _narrow(r.type) else m for r, m in zip(op.results, made.results)}
                )
                continue
            types = [f32 if _narrow(r.type) else r.type for r in op.results]
            attrs = {name: op.attributes[name] for name in op.attributes}
            made = ir.Operation.create(op.name, results=types, operands=operands, attributes=attrs)
            mapping.update(zip(op.results, made.results))
    raise ValueError("the body has no linalg.yield")


def widened(dispatch, root_of):
    """A clone of ``flow.dispatch.workgroups`` ``dispatch`` (at the current insertion point)
    whose root op (``root_of(clone)``, :func:`autotune_export.program.dispatches.root_op`)
    accumulates in f32 (see the module doc), or None when :func:`reference_problem` finds a
    reason or the root's body cannot be widened (nothing is left behind then). Same operands
    and result types as ``dispatch``."""
    root = root_of(dispatch.operation)
    if root is None or reference_problem(root) is not None:
        return None
    clone = dispatch.clone()
    root = root_of(clone.operation)
    f32 = ir.F32Type.get()
    t = ir.RankedTensorType(root.results[0].type)
    n_in = len(root.operands) - 1
    inputs, init = list(root.operands)[:n_in], root.operands[n_in]
    try:
        with ir.InsertionPoint(root), root.location:
            acc = _wide_init(init, f32)
            wide_t = ir.RankedTensorType.get(t.shape, f32)
            maps, iterators = structure(root)
            wide = linalg.GenericOp([wide_t], inputs, [acc], maps, iterators)
            block = wide.regions[0].blocks.append(*[ir.ShapedType(v.type).element_type for v in inputs], f32)
            _widen_body(root.regions[0].blocks[0], block, f32)
            narrow = _elementwise(wide.results[0], t.element_type, lambda x: arith.TruncFOp(t.element_type, x).result)
        root.results[0].replace_all_uses_with(narrow)
        root.erase()
        clone.operation.verify()
    except (ValueError, ir.MLIRError):
        clone.operation.erase()
        return None
    return clone
