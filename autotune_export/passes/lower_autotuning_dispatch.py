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
* ``f32`` operands of such dispatches are bitcast to ``i32`` (IREE constants are 32-bit
  integers);
* the group ops are removed: the output is plain IREE input.
"""

from __future__ import annotations

from ..diagnostics import DiagnosticError, location_of
from ..group import AutotuneGroup
from ..ir_utils import dispatch_sites, entry_point_refs, executable_sources, exports_of, groups_of, sym_name
from . import Pass, PassContext, register
from .emit_autotune_initializer import names_for

__all__ = ["LowerAutotuningDispatch"]


@register
class LowerAutotuningDispatch(Pass):
    name = "lower-autotuning-dispatch"
    summary = "turn groups into IREE condition/fallback chains keyed on the choice global"

    def apply(self, ctx: PassContext, module) -> None:
        from iree.compiler import ir

        chains: dict[tuple[str, str], tuple[list[str], str | None]] = {}
        member_of: dict[tuple[str, str], tuple[str, int]] = {}
        group_ops = []
        globals_present = {sym_name(op.operation) for op in module.body.operations if op.operation.name == "util.global"}
        for source in executable_sources(module):
            exe = sym_name(source)
            exports = exports_of(source)
            for op in groups_of(source):
                group = AutotuneGroup.from_op(op, ctx.source.name)
                if group.variants is None:
                    raise DiagnosticError.at(group.location, f"@{group.name} still has the triton(...) form; run materialize-triton-variants first")
                choice = names_for(exe, group.name)["choice"]
                chains[(exe, group.name)] = (group.variants, choice if choice in globals_present else None)
                for k, v in enumerate(group.variants):
                    member_of[(exe, v)] = (group.name, k)
                    self._add_condition(exports[v], k, group.variants[k + 1] if k + 1 < len(group.variants) else None, group)
                group_ops.append(op)

        for dispatch in dispatch_sites(module):
            refs = entry_point_refs(dispatch)
            if len(refs) != 1:
                continue
            exe, name = refs[0]
            if (exe, name) in chains:
                variants, choice_global = chains[(exe, name)]
                self._rewrite(dispatch, exe, variants[0], choice_global, None)
            elif (exe, name) in member_of:
                _, k = member_of[(exe, name)]
                self._rewrite(dispatch, exe, name, None, k)
        for op in group_ops:
            op.erase()

    def _add_condition(self, export, k: int, next_variant: str | None, group: AutotuneGroup) -> None:
        from iree.compiler import ir
        from iree.compiler.dialects import arith, hal

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
            if next_variant is None:
                return
            cond_block = export.regions[1].blocks.append(*[a.type for a in block.arguments])
            with ir.InsertionPoint(cond_block):
                const = arith.ConstantOp(index, k)
                eq = arith.CmpIOp(arith.CmpIPredicate.eq, cond_block.arguments[-1], const.result)
                hal.ReturnOp([eq.result])
            export.attributes["condition_fallback"] = ir.FlatSymbolRefAttr.get(next_variant)

    def _rewrite(self, dispatch, exe: str, first: str, choice_global: str | None, constant: int | None) -> None:
        from iree.compiler import ir
        from iree.compiler.dialects import arith, util

        with dispatch.context, dispatch.location:
            point = ir.InsertionPoint(dispatch)
            index = ir.IndexType.get()
            i32 = ir.IntegerType.get_signless(32)
            with point:
                if choice_global is not None:
                    loaded = util.GlobalLoadOp(i32, ir.FlatSymbolRefAttr.get(choice_global)).result
                    choice = arith.IndexCastOp(index, loaded).result
                else:
                    choice = arith.ConstantOp(index, constant or 0).result
            segments = list(dispatch.attributes["operandSegmentSizes"])
            operands = list(dispatch.operands)
            nwork = segments[0]
            args = operands[nwork : nwork + segments[1]]
            new_args = []
            f32 = ir.F32Type.get()
            for a in args:
                if a.type == f32:
                    with point:
                        a = arith.BitcastOp(i32, a).result
                new_args.append(a)
            new_operands = operands[:nwork] + [choice] + new_args + operands[nwork + segments[1] :]
            segments[0] += 1
            attrs = {dispatch.attributes[i].name: dispatch.attributes[i].attr for i in range(len(dispatch.attributes))}
            attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(segments)
            attrs["entry_points"] = ir.ArrayAttr.get([ir.SymbolRefAttr.get([exe, first])])
            new = ir.Operation.create(
                "flow.dispatch",
                results=[r.type for r in dispatch.results],
                operands=new_operands,
                attributes=attrs,
                loc=dispatch.location,
                ip=point,
            )
            for old, repl in zip(dispatch.results, new.results):
                old.replace_all_uses_with(repl)
            dispatch.erase()
