"""lower-autotuning-dispatch: groups become what IREE runs today, a condition/fallback chain.

IREE (3.5+) lets an export carry ``condition(%device, workload...) -> i1 {...}
fallback(@next)``; at a dispatch site it inlines the chain into host code and dispatches the
first export whose condition holds (notes/iree-hal-facts.md, "Choosing among exports"). A
condition cannot read a ``util.global``, so the choice travels as an extra workload value:

* every variant ``K`` of a group gets one more count argument ``%choice: index`` and
  ``condition(...) { hal.return (%choice == K) } fallback(@variant K+1)``; the last variant has
  no condition and ends the chain;
* ``flow.dispatch @E::@G[w...](...)`` becomes ``flow.dispatch @E::@V0[w..., %choice](...)``
  with ``%choice`` loaded from the group's choice global (emit-autotune-initializer);
  a dispatch naming variant ``K`` directly passes the constant ``K``;
* scalar operands of such dispatches become IREE's 32-bit push constants
  (:func:`autotune_export.ir.binding.to_constants`, IREE's binding rule): ``i32`` as is,
  ``f32`` bitcast to ``i32``, ``i1``/``i8``/``i16`` zero-extended, ``f16``/``bf16`` bitcast to
  ``i16`` and zero-extended, ``i64`` split into its low and high halves (``arith.trunci``,
  ``arith.shrui``), ``f64`` bitcast to ``i64`` and split;
* when a variant of the group needs Triton's global scratch (its export carries
  ``autotune.global_scratch = [bytes per program, align]``), the dispatch gets one more
  untied result, ``tensor<?xi8>``, which IREE allocates and binds last (the kernel writes it;
  nothing reads it after). Its size is the largest, over such variants, of
  ``grid_x * grid_y * grid_z * bytes + align`` (the kernel rounds the pointer up to ``align``),
  the grid being the variant's count region evaluated on the dispatch's workload at the
  dispatch site; the attribute is then removed;
* a group with ``specialized([...], divisible_by_16 = [...])`` passes a second extra workload
  value, ``%ok`` (1 when every listed dispatch constant is a multiple of 16, computed on the
  host at the dispatch site); the chain tries variant K's specialization (``%choice == K and
  %ok``) before variant K itself;
* a choice known when the module is built (a benchmark or check entry's fixed variant, a
  dispatch naming a variant) stays a constant and the dispatch's workload goes through a
  ``util.optimization_barrier`` (the choice does when there is no workload; a workload whose
  values all are results of barriers already, as a benchmark entry fences them, is kept):
  otherwise a dispatch with only constant operands (a kernel that writes its output from scalars: fill,
  iota, random numbers) is hoisted by iree-compile's const-eval into an initializer that it
  JIT-compiles for llvm-cpu, where the external CUDA executable has no code (iree-compile
  3.13 crashes in LLVMCPUAssignImportOrdinals);
* a dispatch carrying ``autotune.allowed = [@variant, ...]`` (materialize-triton-variants:
  its own ``prune_configs_by`` keeps fewer configs than the group, :data:`ALLOWED_ATTR`) runs
  only those: before the chain, ``%choice`` not among them becomes the first of them (an
  ``arith.select``; a known choice is replaced by it), the variant Triton's order for that
  launch's arguments puts first; the attribute is removed;
* the group ops are removed: the output is plain IREE input.
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune_export.ir.markers import SCRATCH_ATTR
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, location_of
from autotune_export.ir import binding
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.walk import (
    defining_op,
    dispatch_sites,
    entry_point_refs,
    executable_sources,
    exports_of,
    groups_of,
    isa,
    sym_name,
)
from autotune_export.passes.base import ModulePass, PassContext, register
from autotune_export.contract import names_for, slot_names
from autotune_export.ir.allowed import allowed_indices
from autotune_export.ir.markers import ALLOWED_ATTR, FIXED_CHOICE_ATTR
from iree.compiler import ir
from iree.compiler.dialects import arith, flow, hal, util

from autotune_export.ir import functions as fn

__all__ = ["LowerAutotuningDispatch"]


def _slots(exe: str, group: str, globals_present: set) -> list[dict]:
    """The slots of ``@exe::@group``'s run-time table that emit-autotune-initializer made
    (:func:`autotune_export.contract.slot_names`), in order; empty without them."""
    out = []
    while True:
        probe = slot_names(exe, group, len(out), 0)
        if probe["choice"] not in globals_present:
            return out
        arity = 0
        while f"{probe['choice'][: -len('.choice')]}.w{arity}" in globals_present:
            arity += 1
        out.append(slot_names(exe, group, len(out), arity))


@dataclass
class _WorkloadTable:
    """A group's choices per workload: ``frozen`` (workload values -> variant index, from the
    op's ``choices(...)``) and the run-time ``slots`` (globals filled by tuning). At a dispatch
    site the choice is the first of: a filled slot whose key equals the dispatch's workload
    values, a frozen entry equal to them, the group's choice global (the default)."""

    frozen: list
    slots: list
    group: AutotuneGroup

    @property
    def empty(self) -> bool:
        return not self.frozen and not self.slots

    def select(self, default, workload: list, dispatch):
        """The i32 choice for a dispatch with ``workload`` (index values), starting from
        ``default`` (i32), built at the current insertion point. Raises DiagnosticError when a
        frozen workload has another number of values than the dispatch."""
        if self.empty:
            return default
        i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
        values = [arith.IndexCastOp(i64, w).result for w in workload]
        choice = default
        for key, k in reversed(self.frozen):
            if len(key) != len(values):
                raise DiagnosticError.at(
                    self.group.location,
                    f"choices(...) of @{self.group.name} gives {len(key)} workload values, but its dispatch at "
                    f"{location_of(dispatch.location)} has {len(values)}",
                )
            hit = _all_equal(values, [arith.ConstantOp(i64, v).result for v in key])
            choice = arith.SelectOp(hit, arith.ConstantOp(i32, k).result, choice).result
        zero = arith.ConstantOp(i32, 0).result if self.slots else None
        for slot in reversed(self.slots):
            if len(slot["keys"]) != len(values):
                continue
            filled = util.GlobalLoadOp(i32, ir.FlatSymbolRefAttr.get(slot["choice"])).result
            keys = [util.GlobalLoadOp(i64, ir.FlatSymbolRefAttr.get(k)).result for k in slot["keys"]]
            hit = _all_equal(values, keys, arith.CmpIOp(arith.CmpIPredicate.sge, filled, zero).result)
            choice = arith.SelectOp(hit, filled, choice).result
        return choice


def _all_equal(a: list, b: list, start=None):
    """i1: ``start`` (if given) and every ``a[i] == b[i]`` (true for empty lists)."""
    out = start
    for x, y in zip(a, b):
        eq = arith.CmpIOp(arith.CmpIPredicate.eq, x, y).result
        out = eq if out is None else arith.AndIOp(out, eq).result
    return out if out is not None else arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result


@register
@dataclass
class LowerAutotuningDispatch(ModulePass):
    name = "lower-autotuning-dispatch"
    summary = "turn groups into IREE condition/fallback chains keyed on the choice global"

    def apply(self, ctx: PassContext, module) -> None:

        chains: dict[tuple[str, str], tuple[list[str], str | None]] = {}
        member_of: dict[tuple[str, str], tuple[str, int]] = {}
        group_ops = []
        scratch_of: dict[tuple[str, str], list] = {}
        tables: dict[tuple[str, str], _WorkloadTable] = {}
        entries: dict[tuple[str, str], dict[int, str]] = {}
        variants_of: dict[tuple[str, str], list[str]] = {}
        globals_present = {sym_name(op.operation) for op in module.body.operations if isa(op, util.GlobalOp)}
        for source in executable_sources(module):
            exe = sym_name(source)
            exports = exports_of(source)
            for op in groups_of(source):
                group = AutotuneGroup.from_op(op, ctx.source.name)
                if group.variants is None:
                    raise DiagnosticError.at(
                        group.location, f"@{group.name} still has the triton(...) form; run materialize-triton-variants first"
                    )
                choice = names_for(exe, group.name)["choice"]
                chain = []  # (export name, choice value, needs %ok)
                for k, v in enumerate(group.variants):
                    spec = group.specialized[k] if group.specialized else None
                    if spec is not None and spec != v:
                        chain.append((spec, k, True))
                    chain.append((v, k, False))
                guarded = group.specialized is not None
                # The first chain entry of each variant: a dispatch fixed to variant K names it,
                # so its chain starts where the constant choice K stops it.
                entry_of = {}
                for name, k, _ in chain:
                    entry_of.setdefault(k, name)
                chains[(exe, group.name)] = (
                    chain[0][0],
                    choice if choice in globals_present else None,
                    (group.divisible or [], group.equal_one or []) if guarded else None,
                    group.variants.index(group.default) if group.default else 0,
                )
                tables[(exe, group.name)] = _WorkloadTable(
                    frozen=[(key, group.variants.index(v)) for key, v in group.choices or []],
                    slots=_slots(exe, group.name, globals_present),
                    group=group,
                )
                entries[(exe, group.name)] = entry_of
                variants_of[(exe, group.name)] = list(group.variants)
                for k, v in enumerate(group.variants):
                    member_of[(exe, v)] = (entry_of[k], k, (group.divisible or [], group.equal_one or []) if guarded else None)
                needs = [exports[name] for name, _, _ in chain if SCRATCH_ATTR in exports[name].attributes]
                for name in [group.name] + list(group.variants):
                    scratch_of[(exe, name)] = needs
                for pos, (name, k, needs_ok) in enumerate(chain):
                    nxt = chain[pos + 1][0] if pos + 1 < len(chain) else None
                    self._add_condition(exports[name], k, needs_ok, guarded, nxt, group)
                group_ops.append(op)

        for dispatch in dispatch_sites(module):
            refs = entry_point_refs(dispatch)
            if len(refs) != 1:
                continue
            exe, name = refs[0]
            if (exe, name) in chains:
                head, choice_global, divisible, default = chains[(exe, name)]
                table = tables[(exe, name)]
                allowed = _allowed(dispatch, exe, name, variants_of[(exe, name)])
                if allowed is not None and FIXED_CHOICE_ATTR not in dispatch.attributes:
                    _warn_frozen(ctx, dispatch, table, allowed)
                if FIXED_CHOICE_ATTR in dispatch.attributes:
                    # A benchmark's copy of the host: the variant is fixed, not the global's.
                    choice_global, default, table = None, int(dispatch.attributes[FIXED_CHOICE_ATTR].value), None
                if allowed is not None and (choice_global is None and (table is None or table.empty)):
                    # A choice known here: one this dispatch may not run is its first allowed.
                    if default not in allowed:
                        default = allowed[0]
                    allowed = None
                if FIXED_CHOICE_ATTR in dispatch.attributes:
                    head = entries[(exe, name)].get(default, head)
                self._rewrite(dispatch, exe, head, choice_global, default, divisible, scratch_of.get((exe, name)), table, allowed)
            elif (exe, name) in member_of:
                head, k, divisible = member_of[(exe, name)]
                self._rewrite(dispatch, exe, head, None, k, divisible, scratch_of.get((exe, name)))
        for op in group_ops:
            op.erase()
        for source in executable_sources(module):
            for export in exports_of(source).values():
                if SCRATCH_ATTR in export.attributes:
                    del export.attributes[SCRATCH_ATTR]

    def _add_condition(
        self, export, k: int, needs_ok: bool, guarded: bool, next_export: str | None, group: AutotuneGroup
    ) -> None:
        """Append ``%choice`` (and ``%ok`` for guarded groups) to the count arguments and, unless
        ``export`` ends the chain, add ``condition(...) { choice == k [and ok] } fallback(next)``."""

        count = export.regions[0]
        if len(export.regions) > 1 and len(export.regions[1].blocks):
            raise DiagnosticError.at(
                location_of(export.location),
                f"variant @{sym_name(export)} of @{group.name} already has a condition; conditions of group members are made by autotune-export",
            )
        with export.context, export.location:
            index = ir.IndexType.get()
            block = count.blocks[0]
            block.add_argument(index, export.location)
            if guarded:
                block.add_argument(index, export.location)
            if next_export is None:
                return
            cond_block = export.regions[1].blocks.append(*[a.type for a in block.arguments])
            choice_arg = cond_block.arguments[-2] if guarded else cond_block.arguments[-1]
            with ir.InsertionPoint(cond_block):
                const = arith.ConstantOp(index, k)
                cond = arith.CmpIOp(arith.CmpIPredicate.eq, choice_arg, const.result).result
                if needs_ok:
                    zero = arith.ConstantOp(index, 0)
                    ok = arith.CmpIOp(arith.CmpIPredicate.ne, cond_block.arguments[-1], zero.result).result
                    cond = arith.AndIOp(cond, ok).result
                hal.ReturnOp([cond])
            export.attributes["condition_fallback"] = ir.FlatSymbolRefAttr.get(next_export)

    def _rewrite(
        self,
        dispatch,
        exe: str,
        first: str,
        choice_global: str | None,
        constant: int | None,
        divisible: list[int] | None = None,
        scratch: list | None = None,
        table: "_WorkloadTable | None" = None,
        allowed: list[int] | None = None,
    ) -> None:
        """Replace ``dispatch`` by one of export ``first`` (the chain's head) with the choice
        as an extra workload value: the i32 global ``choice_global`` (then the per-workload
        ``table``), else the constant ``constant``; with ``allowed`` (variant indices, the first
        the dispatch's own default) a choice not among them becomes ``allowed[0]``."""

        with dispatch.context, dispatch.location:
            point = ir.InsertionPoint(dispatch)
            index = ir.IndexType.get()
            i32 = ir.IntegerType.get_signless(32)
            with point:
                fixed_workload = None
                if choice_global is None and (table is None or table.empty):
                    # A choice known here stays a constant, so iree-compile folds the chain it
                    # inlines at this dispatch to the one variant (conditions on an opaque value
                    # would keep every comparison: chain length x fixed dispatches, quadratic in
                    # the group's size). The workload goes behind a barrier instead: a dispatch
                    # whose operands are all constants (a benchmark entry of a kernel that takes
                    # only scalars) is hoisted by iree-compile's const-eval, which JIT-compiles
                    # it for llvm-cpu and crashes on the CUDA-only executable
                    # (LLVMCPUAssignImportOrdinals). Without workload values the choice itself
                    # is the opaque one. A workload already behind barriers (a benchmark
                    # entry fences every dispatch's workload at the top of its loop iteration,
                    # bench_entries.bench_entry) is kept: a barrier here, between two dispatches,
                    # would split the stream region that should hold them all (one command
                    # buffer per iteration).
                    given = binding.DispatchOperands.of(dispatch).workload
                    if given and all(_behind_barrier(w) for w in given):
                        choice = arith.ConstantOp(index, constant or 0).result
                    elif given:
                        fixed_workload = fn.barrier(given)
                        choice = arith.ConstantOp(index, constant or 0).result
                    else:
                        choice = fn.barrier([arith.ConstantOp(index, constant or 0).result])[0]
                else:
                    if choice_global is not None:
                        loaded = util.GlobalLoadOp(i32, ir.FlatSymbolRefAttr.get(choice_global)).result
                    else:
                        loaded = arith.ConstantOp(i32, constant or 0).result
                    if table is not None:
                        loaded = table.select(loaded, binding.DispatchOperands.of(dispatch).workload, dispatch)
                    if allowed is not None:
                        # Triton prunes at every launch: a variant this dispatch's pruning
                        # rejected never runs here, whatever the group's choice.
                        ok = None
                        for k in allowed:
                            eq = arith.CmpIOp(arith.CmpIPredicate.eq, loaded, arith.ConstantOp(i32, k).result).result
                            ok = eq if ok is None else arith.OrIOp(ok, eq).result
                        loaded = arith.SelectOp(ok, loaded, arith.ConstantOp(i32, allowed[0]).result).result
                    choice = arith.IndexCastOp(index, loaded).result
            view = dispatch.opview  # flow.DispatchOp: its operand groups and attributes
            parts = binding.DispatchOperands.of(dispatch)  # IREE's binding rule reads them
            workload = parts.workload if fixed_workload is None else fixed_workload
            given_tied = view.tied_operands
            tied = parts.tied
            args = _distinct_tied(parts.arguments, tied)
            new_args, position = [], []
            for a in args:
                position.append(len(new_args))
                if isinstance(a.type, ir.ShapedType):
                    new_args.append(a)
                else:
                    new_args.extend(_constants(point, a, dispatch))
            # A scalar split into 32-bit constants moves the tensor operands after it: the tied
            # indices (into the arguments) follow them.
            tied = [position[t] if t >= 0 else -1 for t in tied]
            new_tied = tied if given_tied is not None else None
            extra = [choice]
            if divisible is not None:
                extra.append(self._divisible_flag(point, args, divisible, dispatch))
            result_types = [r.type for r in dispatch.results]
            result_dims = list(view.result_dims)
            if scratch:
                # Triton's global scratch: one more untied result, bound last.
                size = _scratch_bytes(point, scratch, workload + extra, dispatch)
                result_types.append(ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], ir.IntegerType.get_signless(8)))
                result_dims.append(size)
                new_tied = tied + [-1]
            new = flow.DispatchOp(
                result_types,
                workload + extra,
                ir.ArrayAttr.get([ir.SymbolRefAttr.get([exe, first])]),
                new_args,
                list(view.argument_dims),
                result_dims,
                tied_operands=ir.ArrayAttr.get([ir.IntegerAttr.get(index, t) for t in new_tied])
                if new_tied is not None
                else None,
                loc=dispatch.location,
                ip=point,
            ).operation
            # Discardable attributes stay on the dispatch; the fixed choice is consumed here.
            for k in range(len(dispatch.attributes)):
                named = dispatch.attributes[k]
                if named.name not in ("operandSegmentSizes", "entry_points", "tied_operands", FIXED_CHOICE_ATTR, ALLOWED_ATTR):
                    new.attributes[named.name] = named.attr
            for old, repl in zip(dispatch.results, new.results):
                old.replace_all_uses_with(repl)
            dispatch.erase()

    def _divisible_flag(self, point, args, guards: tuple[list[int], list[int]], dispatch):
        """``index`` 1 when every constant operand of ``guards[0]`` is a multiple of 16 and every
        one of ``guards[1]`` equals 1, else 0."""

        scalars = [a for a in args if not isinstance(a.type, ir.ShapedType)]
        index = ir.IndexType.get()
        with point:
            ok = None
            checks = [(i, 16) for i in guards[0]] + [(i, 1) for i in guards[1]]
            for i, kind in checks:
                if i >= len(scalars):
                    raise DiagnosticError.at(
                        location_of(dispatch.location),
                        f"the dispatch passes {len(scalars)} constants, but the specialization guard names constant {i}",
                    )
                x = scalars[i]
                if not isinstance(x.type, (ir.IntegerType, ir.IndexType)):
                    raise DiagnosticError.at(
                        location_of(dispatch.location),
                        f"the specialization guard tests constant {i} of this dispatch, a {x.type} operand; guards apply "
                        "to integer operands only (verify-autotuning-groups says which)",
                    )
                if kind == 16:
                    mask = arith.ConstantOp(x.type, 15).result
                    zero = arith.ConstantOp(x.type, 0).result
                    low = arith.AndIOp(x, mask).result
                    test = arith.CmpIOp(arith.CmpIPredicate.eq, low, zero).result
                else:
                    one_x = arith.ConstantOp(x.type, 1).result
                    test = arith.CmpIOp(arith.CmpIPredicate.eq, x, one_x).result
                ok = test if ok is None else arith.AndIOp(ok, test).result
            one = arith.ConstantOp(index, 1).result
            nil = arith.ConstantOp(index, 0).result
            return arith.SelectOp(ok, one, nil).result


def _warn_frozen(ctx: PassContext, dispatch, table: _WorkloadTable, allowed: list[int]) -> None:
    """A warning at ``choices(...)`` (with a note at ``dispatch``) for each frozen choice that
    names a variant the dispatch may not run (its own ``prune_configs_by`` rejects it) and whose
    workload values the dispatch can have (its workload values are not all constants, or equal
    the frozen ones): the dispatch runs its first allowed variant instead, as the guard
    built by :meth:`LowerAutotuningDispatch._rewrite` does."""
    given = binding.DispatchOperands.of(dispatch).workload
    known = []
    for w in given:
        op = defining_op(w)
        known.append(
            int(ir.IntegerAttr(op.attributes["value"]).value)
            if op is not None and isa(op, arith.ConstantOp) and isinstance(op.attributes["value"], ir.IntegerAttr)
            else None
        )
    group = table.group
    for key, k in table.frozen:
        if k in allowed or (len(key) == len(known) and all(x is not None for x in known) and list(key) != known):
            continue
        ctx.emit_remark(
            Diagnostic(
                "warning",
                f"choices(...) of @{group.name} picks @{group.variants[k]} for workload [{', '.join(map(str, key))}], which "
                f"the prune_configs_by of a dispatch with that workload rejects: it runs @{group.variants[allowed[0]]} "
                "there, the first variant its own pruning keeps (Triton prunes at every launch)",
                group.at("choices"),
                [Diagnostic("note", "the dispatch is here", location_of(dispatch.location, ctx.source.name))],
            )
        )


def _allowed(dispatch, exe: str, group: str, variants: list[str]) -> list[int] | None:
    """The indices in ``variants`` (group ``@exe::@group``'s) of the variants ``dispatch`` may
    run (:func:`autotune_export.ir.allowed.allowed_indices`), None without the attribute.
    Raises DiagnosticError at the dispatch for a malformed attribute."""
    try:
        return allowed_indices(dispatch, variants)
    except ValueError as err:
        raise DiagnosticError.at(location_of(dispatch.location), f"this dispatch of @{exe}::@{group}: {err}") from None


def _same_op(a, b) -> bool:
    """Whether IREE's CSE could merge ops ``a`` and ``b``: same name, operands, attributes and
    result types, no regions (structural equality, as ``OperationEquivalence`` compares)."""
    if a.name != b.name or a.regions or b.regions:
        return False
    if list(a.operands) != list(b.operands) or [r.type for r in a.results] != [r.type for r in b.results]:
        return False
    attrs = lambda op: {op.attributes[i].name: str(op.attributes[i].attr) for i in range(len(op.attributes))}
    return attrs(a) == attrs(b)


def _behind_barrier(value) -> bool:
    """Whether ``value`` is a result of a ``util.optimization_barrier`` (opaque to
    iree-compile's const-eval, which never hoists what depends on it)."""
    op = defining_op(value)
    return op is not None and isa(op, util.OptimizationBarrierOp)


def _distinct_tied(args: list, tied: list[int]) -> list:
    """``args`` (the dispatch's arguments) with every operand that a result is tied to made a
    value of its own that iree-compile cannot merge with another one of this dispatch.

    IREE binds a tied result at its operand's buffer; when two operands of one dispatch are one
    value, both results get one buffer: the kernel writes both outputs into it and the host
    reads the second output from past its end (IREE 3.13 binds ``rw %r[0 for n]`` twice and
    exports subviews at 0 and n). Its CSE makes one value of two ``flow.tensor.empty`` of a
    type, or of two splats of one scalar, so: a ``flow.tensor.empty`` becomes a
    ``flow.tensor.alloca`` (undefined contents too, but an allocation, never merged); a
    producer identical to one of an earlier tied operand (a splat of the same scalar, a clone
    of the same tensor) takes its operands through a ``util.optimization_barrier`` of its own.
    (One SSA value tied to two results is refused before, by verify-autotuning-groups.)"""
    args = list(args)
    seen_ops = []
    for t in tied:
        if t < 0:
            continue
        value = args[t]
        op = defining_op(value)
        if op is not None and isa(op, flow.TensorEmptyOp):
            with op.location, ir.InsertionPoint(op):
                alloca = flow.TensorAllocaOp(value.type, list(op.operands)).result
            value.replace_all_uses_with(alloca)
            op.erase()
            value = args[t] = alloca
            op = None
        elif op is not None and op.operands and any(_same_op(op, o) for o in seen_ops):
            with op.location, ir.InsertionPoint(op):
                fresh = fn.barrier(list(op.operands))
            for i, v in enumerate(fresh):
                op.operands[i] = v
        if op is not None:
            seen_ops.append(op)
    return args


def _constants(point, value, dispatch) -> list:
    """The 32-bit constants a scalar dispatch operand becomes (:func:`autotune_export.ir.binding.to_constants`).
    Raises DiagnosticError at the dispatch for a type IREE's constants cannot carry."""
    with point:
        out = binding.to_constants(value)
    if out is None:
        raise DiagnosticError.at(
            location_of(dispatch.location),
            f"cannot pass a {value.type} operand as IREE constants (pass i1, i8, i16, i32, i64, f16, bf16, f32 or f64)",
        )
    return out


def _scratch_bytes(point, exports, workload, dispatch):
    """``index`` bytes of global scratch for a dispatch: the largest over ``exports`` of
    ``x * y * z * size + align``, each export's count region evaluated at the dispatch site on
    ``workload`` (the dispatch's workload values, then the extra chain values)."""

    index = ir.IndexType.get()
    total = None
    for export in exports:
        size, align = (int(a.value) for a in export.attributes[SCRATCH_ATTR])
        block = export.regions[0].blocks[0]
        args = list(block.arguments)
        mapping = {arg: value for arg, value in zip(args[1:], workload)}
        returned = None
        with point:
            for op in block.operations:
                op = op.operation
                if isa(op, hal.ReturnOp):
                    returned = [mapping.get(v, v) for v in op.operands]
                    break
                for v in op.operands:
                    if v == args[0]:
                        raise DiagnosticError.at(
                            location_of(export.location),
                            f"the count region of @{export.attributes['sym_name'].value} uses the device; "
                            "its global scratch cannot be sized at the dispatch",
                        )
                if op.regions and any(len(r.blocks) for r in op.regions):
                    raise DiagnosticError.at(
                        location_of(export.location),
                        f"the count region of @{export.attributes['sym_name'].value} has nested regions; "
                        "its global scratch cannot be sized at the dispatch",
                    )
                clone = op.clone(ip=point)
                for i, v in enumerate(op.operands):
                    if v in mapping:
                        clone.operands[i] = mapping[v]
                for old, new in zip(op.results, clone.results):
                    mapping[old] = new
            x, y, z = returned
            grid = arith.MulIOp(arith.MulIOp(x, y).result, z).result
            bytes_ = arith.AddIOp(
                arith.MulIOp(grid, arith.ConstantOp(index, size).result).result, arith.ConstantOp(index, align).result
            ).result
            total = bytes_ if total is None else arith.MaxUIOp(total, bytes_).result
    return total
