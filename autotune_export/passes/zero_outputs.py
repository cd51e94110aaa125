"""zero-fill-outputs: outputs a group declares ``reset_to_zero`` are zero-filled at every dispatch.

A kernel that accumulates into an output (``tl.atomic_add``, ``out[i] += ...``) reads the
output's old contents. Triton's autotuner zeroes the ``reset_to_zero`` arguments before every
timed run (``triton/runtime/autotuner.py``, the default ``pre_hook``; and once more after
tuning), jax-triton zero-fills its ``zeroed_outputs`` before every launch. IREE allocates an
untied dispatch result per call with undefined contents, so the zeros have to be made at the
call site, on every real call, as jax-triton does. For every ``flow.dispatch`` of a group with
a non-empty ``reset_to_zero``:

* every untied result gets a new tensor operand and is tied to it (``-> %zeros``, IREE's
  tied-result rule then binds the result at that operand's binding): a zero fill for a zeroed
  output (``flow.tensor.splat``, of a zero behind a barrier of its own: IREE merges identical
  splats, and one value tied to two results puts both outputs in one buffer), a
  ``flow.tensor.alloca`` for the others (undefined contents, like an untied result's, and never
  merged), typed like the result, with its dynamic dims. Tying every result, not only the
  zeroed ones, keeps each pointer at its binding: IREE binds the tensor operands first, then
  the untied results (notes/iree-hal-facts.md), so a zeroed result made an operand alone
  would move ahead of the untied results before it;
* a zeroed output that the dispatch already passes in place (an operand with the result tied
  to it) keeps its operand: as in Triton, whose autotuner zeroes ``reset_to_zero`` arguments
  only in its benchmark pre-hook (``triton/runtime/autotuner.py``: the default ``pre_hook``
  runs in ``_bench``, and once after tuning, never on a cached call), the kernel accumulates
  into the caller's contents on every real call. The dispatch lists that operand in
  :data:`~autotune_export.ir.markers.FAKE_ZEROS_ATTR`, so the benchmark and check entries
  give it zeros, and a remark says so. (Triton's one zeroing after tuning, which makes the
  tuning call's result differ from the others', has no counterpart: tuning here runs on fake
  buffers and never touches the caller's.) A zero splat the host passes in place itself
  (jax-triton's ``zeroed_outputs``, which zeroes before every launch) is the caller's own
  zeroing: it is replaced by a marked zero fill of its own and erased, for the merging above;
* the zero fills (the op defining the operand: the splat, or for floats its bit-cast) carry
  :data:`~autotune_export.ir.markers.ZEROED_ATTR`, so the benchmark
  entries give that operand zeros (:func:`autotune_export.passes.fake_data.fake_zero_arguments`), not their usual fill, before every
  timed run.

Where the new operands go: in the RFC form (``reset_to_zero(0, 2)``: result indices) after
the dispatch's last tensor operand, in result order, so every binding keeps its place. In the
Triton form (``reset_to_zero(c_ptr)``: ``{output}`` names) at the output's place in the
signature (each after the tensor operand of the pointer before it), since the signature's
pointers are bound in order once every output is an operand (:func:`autotune_export.cuda.abi.plan`
with every output tied); materialize-triton-variants runs that rewrite itself
(:func:`zero_fill_triton`), where it knows the kernel's ``triton.autotune`` values (used when
the op omits the clauses) and which outputs a dispatch already passes in place. This pass
rewrites the RFC form's dispatches and leaves Triton-form groups to it.

``restore_value`` needs no rewrite: the benchmark entries already give every operand written
in place a fresh buffer before every run (Triton's ``restore_value``: clone before, copy back
after). A ``restore_value`` output that a dispatch does not pass in place is refused: its
buffer is allocated per call with undefined contents, so the kernel has nothing to read that
could be restored (an output that is also ``reset_to_zero`` is fine: Triton zeroes, then saves
the zeros). Dispatches carrying ``autotune.choice`` (the benchmark entries' copies) are left
alone, so the pass can run again on its own output and change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from iree.compiler import ir
from iree.compiler.dialects import arith, flow

from autotune_export.ir import binding
from autotune_export.ir import functions as fn
from autotune_export.ir.binding import DispatchOperands
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import Param
from autotune_export.ir.markers import FAKE_ZEROS_ATTR, FIXED_CHOICE_ATTR, ZEROED_ATTR
from autotune_export.ir.walk import defining_op, dispatch_sites, entry_point_refs, executable_sources, groups_of, isa, sym_name
from autotune_export.passes.base import ModulePass, PassContext, register
from autotune_export.passes.fake_data import mark_fake_zeros
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, location_of

__all__ = ["ZeroFillOutputs", "zero_fill_triton", "is_zeroed", "retie"]


# ----- IR helpers ------------------------------------------------------------------------------
def is_zeroed(value) -> bool:
    """Whether ``value`` is a zero fill this pass made (its defining op carries ZEROED_ATTR)."""
    op = defining_op(value)
    return op is not None and ZEROED_ATTR in op.attributes


def _zeros(t, dims: list):
    """A zero-filled tensor of type ``t`` (dynamic sizes ``dims``) at the current insertion
    point, marked with ZEROED_ATTR: ``flow.tensor.splat`` of an integer zero (of the element's
    width; bit-cast for floats: every bit zero is +0.0, what ``torch.zero_()`` writes). The zero
    is behind a ``util.optimization_barrier`` of its own, so that no two fills are merged:
    IREE's CSE would merge two identical splats (or two ``flow.tensor.empty``) into one value,
    and a dispatch with one value tied to two results binds both outputs to one buffer (seen
    on IREE 3.13, llvm-cpu). Raises ValueError for an element type that is neither integer nor
    float."""
    elem = t.element_type
    if isinstance(elem, ir.IntegerType):
        as_int = elem
    elif isinstance(elem, ir.FloatType):
        as_int = ir.IntegerType.get_signless(elem.width)
    else:
        raise ValueError(f"no zero of element type {elem}")
    zero = fn.barrier([fn.constant(ir.IntegerAttr.get(as_int, 0))])[0]
    if as_int == elem:
        op = flow.TensorSplatOp(t, zero, dims)
    else:
        splat = flow.TensorSplatOp(ir.RankedTensorType.get(t.shape, as_int), zero, dims)
        op = flow.TensorBitCastOp(t, splat.result, dims, dims)
    op.operation.attributes[ZEROED_ATTR] = ir.UnitAttr.get()
    return op.result


def _erase_if_dead(value) -> None:
    """Erase the op defining ``value`` (a tensor splat, empty or alloca the dispatch used to
    take) and its constant when nothing uses them any more."""
    op = defining_op(value)
    if op is None or not isa(op, flow.TensorSplatOp, flow.TensorEmptyOp, flow.TensorAllocaOp):
        return
    if any(True for _ in op.results[0].uses):
        return
    sources = [defining_op(v) for v in op.operands]
    op.erase()
    for src in sources:
        if src is not None and isa(src, arith.ConstantOp) and not any(True for _ in src.results[0].uses):
            src.erase()


def _dynamic(t) -> int:
    if not isinstance(t, ir.RankedTensorType):
        return 0
    return sum(1 for d in t.shape if d == ir.ShapedType.get_dynamic_size())


def _split_dims(values, dims) -> list[list]:
    """Per value (tensor or scalar), its dynamic sizes out of the flat list ``dims``."""
    out, i = [], 0
    for v in values:
        n = _dynamic(v.type)
        out.append(list(dims[i : i + n]))
        i += n
    return out


def _is_zero_splat(value) -> bool:
    """Whether ``value`` is a ``flow.tensor.splat`` of an ``arith.constant`` zero (integer 0 or
    float +-0.0): a zero fill the host makes itself (jax-triton's ``zeroed_outputs``)."""
    op = defining_op(value)
    if op is None or not isa(op, flow.TensorSplatOp):
        return False
    src = defining_op(op.operands[0])
    if src is None or not isa(src, arith.ConstantOp):
        return False
    attr = src.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value == 0
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value == 0.0
    return False


def in_place_zeroed(dispatch, zeroed: Iterable[int]) -> dict[int, int]:
    """Result ``j`` -> the operand index it is tied to, for the results ``zeroed`` of
    ``flow.dispatch`` ``dispatch`` that are written in place into an operand that is not a
    zero fill (neither one of this pass's nor a zero splat of the host's): the operands that
    are zeroed only in the benchmark and check entries, never on real calls."""
    parts = DispatchOperands.of(dispatch)
    args = list(parts.arguments)
    return {
        j: parts.tied[j]
        for j in sorted(set(zeroed))
        if 0 <= j < len(parts.tied)
        and parts.tied[j] >= 0
        and not is_zeroed(args[parts.tied[j]])
        and not _is_zero_splat(args[parts.tied[j]])
    }


def retie(dispatch, zeroed: Iterable[int], insert_at: dict[int, int]) -> bool:
    """Tie every untied result of ``flow.dispatch`` ``dispatch`` to a new operand and zero-fill
    the untied results ``zeroed`` (indices); the dispatch is replaced by a new one (same
    attributes) when anything changes. The new operands are zero fills (:func:`_zeros`) for
    zeroed results, ``flow.tensor.alloca`` (undefined contents, as an untied result's, and never
    merged with another) for the others. ``insert_at`` maps each untied result to the index, in
    the original argument list, before which its new operand goes (the end: ``len(arguments)``;
    several at one place go in result order). A zeroed result tied to a zero splat the host made
    gets a zero fill of its own instead (the splat is erased when unused); one tied to any other
    operand keeps it, and the operand is added to the dispatch's
    :data:`~autotune_export.ir.markers.FAKE_ZEROS_ATTR` (zeroed only in the benchmark and check
    entries, :func:`in_place_zeroed`). Returns whether the dispatch was replaced. Raises
    ValueError for a result whose element type has no zero."""
    parts = DispatchOperands.of(dispatch)
    zeroed = set(zeroed)
    args = list(parts.arguments)
    arg_dims = _split_dims(args, parts.argument_dims)
    res_dims = _split_dims(list(dispatch.results), parts.result_dims)
    untied = [j for j, t in enumerate(parts.tied) if t < 0]
    keep = set(in_place_zeroed(dispatch, zeroed).values())
    replace = {
        parts.tied[j]
        for j in zeroed
        if parts.tied[j] >= 0 and _is_zero_splat(args[parts.tied[j]]) and not is_zeroed(args[parts.tied[j]])
    }
    if not untied and not replace:
        mark_fake_zeros(dispatch, keep)
        return False
    marked = set()
    if FAKE_ZEROS_ATTR in dispatch.attributes:
        marked = {int(v) for v in ir.DenseI64ArrayAttr(dispatch.attributes[FAKE_ZEROS_ATTR])}
    with dispatch.location, ir.InsertionPoint(dispatch):
        new_args, new_dims, position, made = [], [], {}, {}

        def place_new(before: int):
            for j in untied:
                if insert_at[j] == before:
                    t = dispatch.results[j].type
                    value = _zeros(t, res_dims[j]) if j in zeroed else flow.TensorAllocaOp(t, res_dims[j]).result
                    made[j] = len(new_args)
                    new_args.append(value)
                    new_dims.extend(res_dims[j])

        for i, a in enumerate(args):
            place_new(i)
            position[i] = len(new_args)
            new_args.append(_zeros(a.type, arg_dims[i]) if i in replace else a)
            new_dims.extend(arg_dims[i])
        place_new(len(args))
        index = ir.IndexType.get()
        tied = [position[t] if t >= 0 else made[j] for j, t in enumerate(parts.tied)]
        new = flow.DispatchOp(
            [r.type for r in dispatch.results],
            parts.workload,
            dispatch.attributes["entry_points"],
            new_args,
            new_dims,
            parts.result_dims,
            tied_operands=ir.ArrayAttr.get([ir.IntegerAttr.get(index, t) for t in tied]),
        )
    for k in range(len(dispatch.attributes)):
        named = dispatch.attributes[k]
        if named.name not in ("operandSegmentSizes", "tied_operands", "entry_points", FAKE_ZEROS_ATTR):
            new.operation.attributes[named.name] = named.attr
    mark_fake_zeros(new.operation, {position[i] for i in (marked | keep) if i in position})
    for old, repl in zip(dispatch.results, new.operation.results):
        old.replace_all_uses_with(repl)
    dispatch.erase()
    for i in replace:
        _erase_if_dead(args[i])
    return True


def _group_dispatches(module, exe: str, group: str) -> list:
    """The host's ``flow.dispatch`` ops naming ``@exe::@group`` (not the benchmark entries'
    copies, which carry a fixed choice)."""
    return [d for d in dispatch_sites(module) if (exe, group) in entry_point_refs(d) and FIXED_CHOICE_ATTR not in d.attributes]


def _in_place_remark(what: str, output: str, operand: int) -> str:
    """The remark for a ``reset_to_zero`` output written in place (:func:`in_place_zeroed`)."""
    return (
        f"{what}, which this dispatch writes in place (operand {operand}): as in Triton, whose autotuner zeroes "
        f"reset_to_zero arguments only while benchmarking, {output} is zeroed only in the benchmark and check "
        "entries; on real calls the kernel reads the operand's contents"
    )


def _at(ctx: PassContext, op):
    return location_of(op.location, ctx.source.name)


# ----- the Triton form (called by materialize-triton-variants) -----------------------------
@dataclass
class _TritonSite:
    """How one dispatch binds a Triton-form group's pointers: ``operands`` the pointers of its
    tensor operands (in order) and ``results`` the output of each result."""

    operands: list[Param]
    results: list[Param]
    tensor_positions: list[int]


def _triton_site(group: AutotuneGroup, dispatch, tied: frozenset) -> _TritonSite | None:
    """The pointer of every tensor operand and result of ``dispatch`` under IREE's binding
    rule (:func:`autotune_export.ir.binding.result_pointers`, with the outputs ``tied`` written
    in place). None when the counts do not match (verify-autotuning-groups and
    materialize-triton-variants report that)."""
    results = binding.result_pointers(group.signature, tied, dispatch)
    if results is None:
        return None
    return _TritonSite(
        binding.pointer_order(group.signature, tied)[0], results, binding.DispatchOperands.of(dispatch).tensor_positions()
    )


def zero_fill_triton(ctx: PassContext, module, exe: str, group: AutotuneGroup, tied: frozenset) -> bool:
    """Apply ``group``'s (Triton form) ``reset_to_zero`` / ``restore_value`` (names of its
    ``{output}`` parameters, resolved by the caller) to its dispatches in ``module`` (see the
    module doc); ``tied``: the outputs the dispatches pass in place (materialize-triton-variants'
    ``_tied_outputs``). Returns whether a dispatch was rewritten (the caller then reads the
    dispatches and their tied outputs again: every output is in place afterwards). Raises
    DiagnosticError at the group, with a note at the dispatch, for a ``restore_value`` output
    that a dispatch does not pass in place."""
    zeroed = list(group.reset_to_zero or [])
    restored = list(group.restore_value or [])
    changed = False
    for d in _group_dispatches(module, exe, group.name):
        site = _triton_site(group, d, tied)
        if site is None:
            continue
        for name in restored:
            if name not in tied and name not in zeroed:
                raise DiagnosticError.at(
                    group.location,
                    f"restore_value names '{name}' of @{group.name}, but the dispatch does not pass it in place: IREE "
                    f"allocates an untied result per call with undefined contents, so there is nothing to restore; pass "
                    f"the tensor whose contents the kernel reads as an operand with the result tied to it (-> %operand), "
                    f"or declare it reset_to_zero",
                    [Diagnostic("note", f"'{name}' is an untied result of this dispatch", _at(ctx, d))],
                )
        if not zeroed:
            continue
        results = {j for j, p in enumerate(site.results) if p.name in zeroed}
        # A new operand goes after the tensor operand of the pointer before it in the signature.
        insert_at, cursor = {}, site.tensor_positions[0] if site.tensor_positions else len(DispatchOperands.of(d).arguments)
        by_output = {p.name: j for j, p in enumerate(site.results)}
        untied = set(j for j, t in enumerate(DispatchOperands.of(d).tied) if t < 0)
        for p in (p for p in group.signature if p.is_pointer):
            if p in site.operands:
                cursor = site.tensor_positions[site.operands.index(p)] + 1
            elif by_output.get(p.name) in untied:
                insert_at[by_output[p.name]] = cursor
        for j, i in in_place_zeroed(d, results).items():
            name = site.results[j].name
            ctx.emit_remark(
                Diagnostic(
                    "remark", _in_place_remark(f"reset_to_zero names '{name}' of @{group.name}", f"'{name}'", i), _at(ctx, d)
                )
            )
        try:
            changed |= retie(d, results, insert_at)
        except ValueError as err:
            raise DiagnosticError.at(_at(ctx, d), f"reset_to_zero of @{group.name}: {err}") from None
    return changed


# ----- the pass (the RFC form) --------------------------------------------------------------
def _zero_fill_rfc(ctx: PassContext, module, exe: str, group: AutotuneGroup) -> None:
    zeroed = list(group.reset_to_zero or [])
    restored = list(group.restore_value or [])
    for d in _group_dispatches(module, exe, group.name):
        parts = DispatchOperands.of(d)
        nres = len(d.results)
        for clause, items in (("reset_to_zero", zeroed), ("restore_value", restored)):
            for j in items:
                if not 0 <= j < nres:
                    raise DiagnosticError.at(
                        _at(ctx, d),
                        f"{clause}({j}) of @{exe}::@{group.name} names result {j}, but this dispatch has "
                        f"{nres} result{'s' if nres != 1 else ''}",
                        [Diagnostic("note", f"@{group.name} is defined here", group.location)],
                    )
        for j in restored:
            if parts.tied[j] < 0 and j not in zeroed:
                raise DiagnosticError.at(
                    _at(ctx, d),
                    f"restore_value({j}) of @{exe}::@{group.name}: result {j} of this dispatch is not written in place: "
                    "IREE allocates an untied result per call with undefined contents, so there is nothing to restore; "
                    "tie it to the operand whose contents the kernel reads (-> %operand), or declare it reset_to_zero",
                    [Diagnostic("note", f"@{group.name} is defined here", group.location)],
                )
        if not zeroed:
            continue
        tensors = parts.tensor_positions()
        end = tensors[-1] + 1 if tensors else len(parts.arguments)
        for j, i in in_place_zeroed(d, zeroed).items():
            ctx.emit_remark(
                Diagnostic(
                    "remark", _in_place_remark(f"reset_to_zero({j}) of @{exe}::@{group.name}", f"result {j}", i), _at(ctx, d)
                )
            )
        try:
            retie(d, zeroed, {j: end for j, t in enumerate(parts.tied) if t < 0})
        except ValueError as err:
            raise DiagnosticError.at(_at(ctx, d), f"reset_to_zero of @{group.name}: {err}") from None


@register
@dataclass
class ZeroFillOutputs(ModulePass):
    """No options. Rewrites the dispatches of every variants([...]) group with a
    ``reset_to_zero`` (and checks its ``restore_value``) as the module doc says;
    materialize-triton-variants does the same for the triton(...) form."""

    name = "zero-fill-outputs"
    summary = "zero-fill reset_to_zero outputs at every dispatch (a zero splat tied to the result)"

    def apply(self, ctx: PassContext, module) -> None:
        for source in executable_sources(module):
            for op in groups_of(source):
                group = AutotuneGroup.from_op(op, ctx.source.name)
                if group.variants is not None and (group.reset_to_zero or group.restore_value):
                    _zero_fill_rfc(ctx, module, sym_name(source), group)
