"""verify-autotuning-groups: check that every group can be lowered to IREE's condition chain.

IREE dispatches a chain of exports only when all of them share one layout and one list of
count/condition arguments (notes/iree-hal-facts.md, "Choosing among exports"). This pass
checks, for every ``variants([...])`` group:

* every variant is a ``hal.executable.export`` of the same ``hal.executable.source``;
* all variants have identical ``#hal.pipeline.layout`` and the same workload arity;
* every variant's entry is present in the executable's object (PTX text or cubin bytes,
  embedded or at a path relative to the input file), or, for a source with an MLIR body that
  IREE compiles itself (a ``builtin.module`` of ``func.func``, e.g. for llvm-cpu), a function
  of the variant's name;
* ``default(@v)`` names one of the variants;
* every dispatch to the group passes as many workload values as the variants take, and as
  many bindings (tensor operands + untied results) and 32-bit constants as their layout has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, location_of
from autotune_export.cuda.abi import constant_slots
from autotune_export.ir.markers import SCRATCH_ATTR
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.hal_attrs import object_payloads, read_layout
from autotune_export.ir.walk import dispatch_sites, entry_point_refs, executable_sources, exports_of, groups_of, sym_name
from autotune_export.passes.base import ModulePass, PassContext, register
from iree.compiler import ir

__all__ = ["VerifyAutotuningGroups"]


def _inner_functions(source) -> set[str]:
    """Names of the func.func ops in a source's builtin.module body (IREE-compiled code)."""
    names = set()
    for op in source.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "builtin.module":
            for inner in op.regions[0].blocks[0].operations:
                inner = inner.operation
                if inner.name == "func.func" and "sym_name" in inner.attributes:
                    names.add(inner.attributes["sym_name"].value)
    return names


def _has_entry(payload: bytes, name: str) -> bool:
    """Whether an object (a cubin's symbol table, or PTX text) defines kernel ``name``."""
    if payload.startswith(b"\x7fELF"):
        return name.encode() + b"\0" in payload
    return re.search(rb"\.entry\s+" + re.escape(name.encode()) + rb"\s*\(", payload) is not None


@register
@dataclass
class VerifyAutotuningGroups(ModulePass):
    name = "verify-autotuning-groups"
    summary = "check variants, layouts, workload arity and object entries of every group"

    def _check_dispatches(self, ctx, exe, group, first, dispatches, scratch: bool = False) -> None:
        members = {group.name, *group.variants, *(group.specialized or [])}
        for d in dispatches:
            refs = entry_point_refs(d)
            if any(e == exe and n in members for e, n in refs):
                _check_dispatch(ctx, exe, group, first, d, scratch)

    def apply(self, ctx: PassContext, module) -> None:
        sources = executable_sources(module)
        dispatches = dispatch_sites(module)
        export_home = {}
        for source in sources:
            for name in exports_of(source):
                export_home.setdefault(name, sym_name(source))
        for source in sources:
            exports = exports_of(source)
            payloads = None
            for op in groups_of(source):
                group = AutotuneGroup.from_op(op, ctx.source.name)
                if group.variants is None:
                    raise DiagnosticError.at(group.location, f"@{group.name} still has the triton(...) form; run materialize-triton-variants first")
                loc = group.location
                first = None
                members = list(group.variants) + [v for v in group.specialized or [] if v not in group.variants]
                for v in members:
                    if v not in exports:
                        where = export_home.get(v)
                        hint = f"; it is an export of @{where}" if where else ""
                        raise DiagnosticError.at(loc, f"variant @{v} is not an export of @{sym_name(source)}{hint}")
                    export = exports[v]
                    layout = str(export.attributes["layout"])
                    if not len(export.regions[0].blocks):
                        raise DiagnosticError.at(
                            location_of(export.location, ctx.source.name),
                            f"variant @{v} of @{group.name} has no count(...) region; group members need one, "
                            "since the dispatch's workload decides their workgroup counts",
                        )
                    count_args = len(export.regions[0].blocks[0].arguments)
                    if first is None:
                        first = (v, layout, count_args, export)
                        continue
                    if layout != first[1]:
                        raise DiagnosticError.at(
                            location_of(export.location, ctx.source.name),
                            f"variant @{v} of @{group.name} has layout {layout}, but @{first[0]} has {first[1]}; variants need identical layouts",
                            [Diagnostic("note", f"@{first[0]} is defined here", location_of(first[3].location, ctx.source.name))],
                        )
                    if count_args != first[2]:
                        raise DiagnosticError.at(
                            location_of(export.location, ctx.source.name),
                            f"variant @{v} of @{group.name} takes {_workload(count_args)} workload values, but @{first[0]} takes {_workload(first[2])}",
                            [Diagnostic("note", f"@{first[0]} is defined here", location_of(first[3].location, ctx.source.name))],
                        )
                if group.specialized is not None:
                    constants = _constants(first[1])
                    bad = [i for i in (group.divisible or []) + (group.equal_one or []) if not 0 <= i < constants]
                    if bad:
                        raise DiagnosticError.at(
                            loc, f"specialized([...]) names constant {bad[0]}, but the layout of @{group.name} has {constants} constants"
                        )
                # A variant that needs Triton's global scratch gets it as one more binding,
                # allocated by lower-autotuning-dispatch (see autotune_export.cuda.abi).
                scratch = any(SCRATCH_ATTR in exports[v].attributes for v in members)
                self._check_dispatches(ctx, sym_name(source), group, first, dispatches, scratch)
                if group.default is not None and group.default not in group.variants:
                    raise DiagnosticError.at(loc, f"default(@{group.default}) is not one of the variants of @{group.name}")
                if payloads is None:
                    payloads = object_payloads(source, ctx.source.base_dir)
                    for label, _, error in payloads:
                        if error:
                            raise DiagnosticError.at(location_of(source.location, ctx.source.name), error)
                inner = _inner_functions(source)
                if not payloads and inner:
                    # An MLIR body (builtin.module of func.func per export) that IREE compiles
                    # itself, e.g. for llvm-cpu: each variant needs its function.
                    for v in members:
                        if v not in inner:
                            raise DiagnosticError.at(
                                location_of(exports[v].location, ctx.source.name),
                                f"variant @{v} has no function @{v} in the builtin.module of @{sym_name(source)}",
                            )
                    continue
                if not payloads:
                    raise DiagnosticError.at(loc, f"@{sym_name(source)} has no objects, so the variants of @{group.name} have no code")
                for v in members:
                    if not any(_has_entry(data, v) for _, data, _ in payloads):
                        raise DiagnosticError.at(
                            location_of(exports[v].location, ctx.source.name),
                            f"variant @{v} has no entry '{v}' in the objects of @{sym_name(source)} ({', '.join(l for l, _, _ in payloads)})",
                        )


def _check_dispatch(ctx: PassContext, exe: str, group: AutotuneGroup, first, dispatch, scratch: bool = False) -> None:
    """A dispatch to the group passes the workload, bindings and constants its layout expects."""

    name, layout, count_args, export = first
    loc = location_of(dispatch.location, ctx.source.name)
    note = [Diagnostic("note", f"@{group.name} is defined here", group.location)]
    segments = list(dispatch.attributes["operandSegmentSizes"])
    workload = segments[0]
    if count_args is not None and workload != count_args - 1:
        raise DiagnosticError.at(
            loc, f"dispatch to @{exe}::@{group.name} passes {workload} workload values, but its variants take {count_args - 1}", note
        )
    operands = list(dispatch.operands)[workload : workload + segments[1]]
    tensors = [o for o in operands if isinstance(o.type, ir.RankedTensorType)]
    scalars = [o for o in operands if not isinstance(o.type, ir.RankedTensorType)]
    tied = [int(t.value) for t in dispatch.attributes["tied_operands"]] if "tied_operands" in dispatch.attributes else []
    untied = sum(1 for i in range(len(dispatch.results)) if i >= len(tied) or tied[i] < 0)
    if len(tensors) + untied + int(scratch) != _bindings(layout):
        plus = " + 1 for the global scratch" if scratch else ""
        raise DiagnosticError.at(
            loc,
            f"dispatch to @{exe}::@{group.name} has {len(tensors)} tensor operands and {untied} untied results "
            f"({len(tensors) + untied} bindings{plus}), but the layout of its variants has {_bindings(layout)} bindings",
            note,
        )
    # Scalars become 32-bit constants at the dispatch (lower-autotuning-dispatch): one each,
    # two (low, high) for i64/f64 (autotune_export.cuda.abi.constant_slots).
    slots = 0
    for s in scalars:
        n = constant_slots(str(s.type))
        if n is None:
            raise DiagnosticError.at(
                loc,
                f"dispatch to @{exe}::@{group.name} passes a {s.type} operand; IREE constants are 32-bit values "
                "(pass i1, i8, i16, i32, i64, f16, bf16, f32 or f64)",
                note,
            )
        slots += n
    if slots != _constants(layout):
        raise DiagnosticError.at(
            loc,
            f"dispatch to @{exe}::@{group.name} passes {len(scalars)} scalar operands, but the layout of its variants has "
            f"{_constants(layout)} constants" + (f" (the operands make {slots} 32-bit constants: i64/f64 take two)" if slots != len(scalars) else ""),
            note,
        )


def _bindings(layout: str) -> int:
    return len(read_layout(layout).bindings)


def _constants(layout: str) -> int:
    return read_layout(layout).constants


def _workload(count_args: int | None) -> str:
    return "no" if not count_args else str(count_args - 1)
