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
* every ``choices(...)`` entry gives as many workload values as the variants take (reported at
  the entry: one of another arity could never match a dispatch);
* every dispatch to the group passes as many workload values as the variants take, and as
  many bindings (tensor operands + untied results) and 32-bit constants as their layout has;
* what IREE 3.13's CUDA HAL refuses when the module loads is refused here, at the group: more
  than :data:`~autotune_export.cuda.targets.MAX_BINDINGS` bindings or
  :data:`~autotune_export.cuda.targets.MAX_CONSTANTS` constants, a block of more than
  :data:`~autotune_export.cuda.targets.MAX_THREADS_PER_BLOCK` threads;
* with the ``target`` option (the CLI's ``--target``): every variant's dynamic shared memory
  fits the target's limit, and every PTX or cubin object of the executable can run on every
  target architecture (PTX for ``sm_XY`` on X.Y and later, ``sm_XYa`` PTX only on X.Y, a cubin
  on X.Y to X.9; :func:`autotune_export.passes.split_architectures.compute_capability_range`);
  an object keyed for one architecture (``target_arch``) holds code that runs there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, location_of
from autotune_export.cuda.ptx import object_architecture
from autotune_export.cuda.targets import (
    MAX_BINDINGS,
    MAX_CONSTANTS,
    MAX_THREADS_PER_BLOCK,
    CudaTarget,
    TargetError,
    parse_target,
    parse_targets,
)
from autotune_export.ir.markers import SCRATCH_ATTR
from autotune_export.ir import binding
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.hal_attrs import object_payloads, read_layout, read_objects, target_backend
from autotune_export.ir.markers import TARGETS_ATTR
from autotune_export.passes.split_architectures import compute_capability_range
from autotune_export.ir.walk import dispatch_sites, entry_point_refs, executable_sources, exports_of, groups_of, isa, sym_name
from autotune_export.passes.base import ModulePass, PassContext, register
from iree.compiler import ir
from iree.compiler.dialects import builtin, func

__all__ = ["VerifyAutotuningGroups"]


def _inner_functions(source) -> set[str]:
    """Names of the func.func ops in a source's builtin.module body (IREE-compiled code)."""
    names = set()
    for op in source.regions[0].blocks[0].operations:
        op = op.operation
        if isa(op, builtin.ModuleOp):
            for inner in op.regions[0].blocks[0].operations:
                inner = inner.operation
                if isa(inner, func.FuncOp) and "sym_name" in inner.attributes:
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
    """Options: ``target`` the CUDA architecture(s) the module is built for (``sm_80``, or
    ``sm_80,sm_90``; the CLI passes ``--target``); None skips the checks that need it
    (shared memory per block, the architecture of the objects)."""

    name = "verify-autotuning-groups"
    summary = "check variants, layouts, workload arity and object entries of every group"

    target: str | None = None

    def _check_dispatches(self, ctx, exe, group, first, dispatches, scratch: bool = False) -> None:
        members = {group.name, *group.variants, *(group.specialized or [])}
        for d in dispatches:
            refs = entry_point_refs(d)
            if any(e == exe and n in members for e, n in refs):
                _check_dispatch(ctx, exe, group, first, d, scratch)

    def _targets(self) -> list[CudaTarget]:
        if self.target is None:
            return []
        try:
            return parse_targets(self.target)
        except TargetError as err:
            raise DiagnosticError.at(None, str(err)) from None

    def apply(self, ctx: PassContext, module) -> None:
        targets = self._targets()
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
                    raise DiagnosticError.at(
                        group.location, f"@{group.name} still has the triton(...) form; run materialize-triton-variants first"
                    )
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
                for i, (key, v) in enumerate(group.choices or []):
                    if len(key) != first[2] - 1:  # a dispatch's workload never matches it
                        raise DiagnosticError.at(
                            group.at(f"choices.{i}", "choices"),
                            f"choices(...) entry [{', '.join(map(str, key))}] = @{v} gives {len(key)} workload values, "
                            f"but the variants of @{group.name} take {_workload(first[2])} (the arity of every "
                            "dispatch's workload): it could never match a dispatch",
                        )
                if group.specialized is not None:
                    constants = _constants(first[1])
                    bad = [i for i in (group.divisible or []) + (group.equal_one or []) if not 0 <= i < constants]
                    if bad:
                        raise DiagnosticError.at(
                            loc,
                            f"specialized([...]) names constant {bad[0]}, but the layout of @{group.name} has {constants} constants",
                        )
                # A variant that needs Triton's global scratch gets it as one more binding,
                # allocated by lower-autotuning-dispatch (see autotune_export.cuda.abi).
                scratch = any(SCRATCH_ATTR in exports[v].attributes for v in members)
                _check_limits(ctx, group, first[1], scratch)
                for v in members:
                    _check_block(ctx, group, v, exports[v], targets)
                self._check_dispatches(ctx, sym_name(source), group, first, dispatches, scratch)
                if group.default is not None and group.default not in group.variants:
                    raise DiagnosticError.at(loc, f"default(@{group.default}) is not one of the variants of @{group.name}")
                if payloads is None:
                    try:
                        payloads = object_payloads(source, ctx.source.base_dir)
                    except ValueError as err:
                        raise DiagnosticError.at(
                            location_of(source.location, ctx.source.name),
                            f"cannot read the objects of {sym_name(source) and '@' + sym_name(source)}: {err}",
                        ) from None
                    for label, _, error in payloads:
                        if error:
                            raise DiagnosticError.at(location_of(source.location, ctx.source.name), error)
                    if targets:
                        _check_object_targets(ctx, source, group, payloads, targets)
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
                    raise DiagnosticError.at(
                        loc, f"@{sym_name(source)} has no objects, so the variants of @{group.name} have no code"
                    )
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
    parts = binding.DispatchOperands.of(dispatch)
    workload = len(parts.workload)
    if count_args is not None and workload != count_args - 1:
        raise DiagnosticError.at(
            loc,
            f"dispatch to @{exe}::@{group.name} passes {workload} workload values, but its variants take {count_args - 1}",
            note,
        )
    operands = parts.arguments
    tensors = [operands[i] for i in parts.tensor_positions()]
    scalars = parts.scalars()
    untied = len(parts.untied_results())
    ties = [t for t in parts.tied if t >= 0]
    for t in sorted(set(ties)):
        if ties.count(t) > 1 or any(operands[t] == operands[u] for u in set(ties) if u != t):
            shared = [u for u in sorted(set(ties)) if operands[u] == operands[t]]
            raise DiagnosticError.at(
                loc,
                f"dispatch to @{exe}::@{group.name} ties {sum(ties.count(u) for u in shared)} results to one tensor "
                f"(operand {', '.join(str(u) for u in shared)}): IREE would bind those outputs to one buffer; "
                "give each tied result a tensor of its own",
                note,
            )
    if len(tensors) + untied + int(scratch) != _bindings(layout):
        plus = " + 1 for the global scratch" if scratch else ""
        raise DiagnosticError.at(
            loc,
            f"dispatch to @{exe}::@{group.name} has {len(tensors)} tensor operands and {untied} untied results "
            f"({len(tensors) + untied} bindings{plus}), but the layout of its variants has {_bindings(layout)} bindings",
            note,
        )
    # Scalars become 32-bit constants at the dispatch (lower-autotuning-dispatch): one each,
    # two (low, high) for i64/f64 (autotune_export.ir.binding.constant_slots).
    slots = 0
    for s in scalars:
        n = binding.constant_slots(s.type)
        if n is None:
            raise DiagnosticError.at(
                loc,
                f"dispatch to @{exe}::@{group.name} passes a {s.type} operand; IREE constants are 32-bit values "
                "(pass i1, i8, i16, i32, i64, f16, bf16, f32 or f64)",
                note,
            )
        slots += n
    # A specialization guard (lower-autotuning-dispatch) tests its constants with integer ops:
    # Triton specializes integers (and pointers) only, and `x & 15` of a float is no IR.
    for i in (group.divisible or []) + (group.equal_one or []) if group.specialized is not None else []:
        if i < len(scalars) and not isinstance(scalars[i].type, (ir.IntegerType, ir.IndexType)):
            which = "divisible_by_16" if i in (group.divisible or []) else "equal_to_1"
            raise DiagnosticError.at(
                loc,
                f"specialized(..., {which} = [...]) of @{exe}::@{group.name} guards constant {i} of this dispatch, a "
                f"{scalars[i].type} operand: the guard (divisible by 16, equal to 1) applies to integer operands only, as "
                "Triton's specialization does; pass an integer, or drop the guard (a ':16' or ':1' hint on a float)",
                note,
            )
    if slots != _constants(layout):
        raise DiagnosticError.at(
            loc,
            f"dispatch to @{exe}::@{group.name} passes {len(scalars)} scalar operands, but the layout of its variants has "
            f"{_constants(layout)} constants"
            + (f" (the operands make {slots} 32-bit constants: i64/f64 take two)" if slots != len(scalars) else ""),
            note,
        )


def _bindings(layout: str) -> int:
    return len(read_layout(layout).bindings)


def _constants(layout: str) -> int:
    return read_layout(layout).constants


def _workload(count_args: int | None) -> str:
    return "no" if not count_args else str(count_args - 1)


# ----- what the CUDA HAL and the target allow ---------------------------------------------
def _check_limits(ctx: PassContext, group: AutotuneGroup, layout: str, scratch: bool) -> None:
    """The group's layout fits IREE 3.13's CUDA HAL: at most MAX_BINDINGS bindings (the
    global scratch binding counted) and MAX_CONSTANTS 32-bit constants per export. The HAL
    checks both only when the module loads ("binding_flags count N exceeds maximum of 16")."""
    bindings, constants = _bindings(layout) + int(scratch), _constants(layout)
    if bindings > MAX_BINDINGS:
        plus = " (with the global scratch binding)" if scratch else ""
        raise DiagnosticError.at(
            group.location,
            f"@{group.name} has {bindings} bindings{plus}, more than the {MAX_BINDINGS} that IREE's CUDA HAL allows per "
            "export (it would fail when the module loads); pass fewer buffers, e.g. slices of one tensor",
        )
    if constants > MAX_CONSTANTS:
        raise DiagnosticError.at(
            group.location,
            f"@{group.name} has {constants} 32-bit constants, more than the {MAX_CONSTANTS} that IREE's CUDA HAL allows per "
            "export (it would fail when the module loads); pass fewer scalars (i64/f64 take two constants each), "
            "or pass them in a buffer",
        )


def _index_list(attr) -> list[int]:
    return [ir.IntegerAttr(v).value for v in ir.ArrayAttr(attr)]


#: Block dimensions CUDA allows (x, y, z).
_MAX_BLOCK_DIMS = (1024, 1024, 64)


def _check_block(ctx: PassContext, group: AutotuneGroup, name: str, export, targets: list[CudaTarget]) -> None:
    """The variant's block (``workgroup_size``) has at most MAX_THREADS_PER_BLOCK threads and
    CUDA's per-dimension limits; with ``targets``, its dynamic shared memory
    (``workgroup_local_memory``, or per architecture ``autotune.targets``) fits each target."""
    loc = location_of(export.location, ctx.source.name)
    if "workgroup_size" in export.attributes:
        size = _index_list(export.attributes["workgroup_size"])
        threads = 1
        for v in size:
            threads *= v
        if threads > MAX_THREADS_PER_BLOCK:
            raise DiagnosticError.at(
                loc,
                f"variant @{name} of @{group.name} has a block of {' x '.join(map(str, size))} = {threads} threads; "
                f"CUDA allows at most {MAX_THREADS_PER_BLOCK} per block",
            )
        for axis, v, limit in zip("xyz", size, _MAX_BLOCK_DIMS):
            if v > limit:
                raise DiagnosticError.at(
                    loc, f"variant @{name} of @{group.name} has workgroup_size {axis} = {v}; CUDA allows at most {limit}"
                )
    if not targets:
        return
    per_arch: dict[str, int] = {}
    if TARGETS_ATTR in export.attributes:
        per = ir.DictAttr(export.attributes[TARGETS_ATTR])
        for t in targets:
            for key in (t.name, f"sm_{t.capability}a", f"sm_{t.capability}"):
                if key in per:
                    per_arch[t.name] = _index_list(per[key])[1]
                    break
    shared = (
        int(ir.IntegerAttr(export.attributes["workgroup_local_memory"]).value)
        if "workgroup_local_memory" in export.attributes
        else 0
    )
    for t in targets:
        need = per_arch.get(t.name, shared)
        if need > t.max_shared_memory:
            raise DiagnosticError.at(
                loc,
                f"variant @{name} of @{group.name} needs {need} bytes of shared memory per block; {t.name} allows at most "
                f"{t.max_shared_memory}",
            )


def _runs_on(arch: CudaTarget, binary: bool) -> str:
    low, high = compute_capability_range(arch.name, binary)
    if high is None:
        return f"sm_{low} and later"
    if high == low:
        return f"sm_{low} only"
    return f"sm_{low} to sm_{high}"


def _check_object_targets(ctx: PassContext, source, group: AutotuneGroup, payloads, targets: list[CudaTarget]) -> None:
    """Every PTX/cubin object of ``source`` can run where it is used: an object keyed for an
    architecture (``target_arch``) on that architecture, an object keyed for every CUDA target
    on each of ``targets``; and each of ``targets`` has an object. Raises DiagnosticError at the
    source (whose ``objects`` hold the object) with a note at the group."""
    if "objects" not in source.attributes:
        return
    loc = location_of(source.location, ctx.source.name)
    note = [Diagnostic("note", f"the variants of @{group.name} are in this object", group.location)]
    datas = iter(payloads)
    served: set[str] = set()
    keyed = []
    wanted = ",".join(t.name for t in targets)
    for entry in read_objects(source.attributes["objects"]):
        try:
            backend = target_backend(entry.target) if entry.target is not None else "cuda"
        except (ValueError, IndexError):
            backend = "cuda"
        for ref in entry.objects:
            label, data, _ = next(datas)
            if backend != "cuda" or data is None:
                continue
            arch = object_architecture(data)
            if arch is None:
                continue
            binary = data.startswith(b"\x7fELF")
            kind = "a cubin" if binary else "PTX"
            low, high = compute_capability_range(arch.name, binary)
            fits = lambda cc: low <= cc and (high is None or cc <= high)  # noqa: E731
            if entry.arch is not None:
                try:
                    key = parse_target(entry.arch, supported_only=False)
                except TargetError:
                    continue
                keyed.append(key)
                if not fits(key.capability):
                    raise DiagnosticError.at(
                        loc,
                        f"object '{label}' of @{sym_name(source)} is keyed for {entry.arch} but is {kind} for {arch.name}, "
                        f"which runs on {_runs_on(arch, binary)}",
                        note,
                    )
                continue
            for t in targets:
                if not fits(t.capability):
                    hint = (
                        f"; build it for {t.name}, or key one object per architecture "
                        f'(#hal.executable.target<"cuda", "cuda-nvptx-fb", {{target_arch = "{t.name}"}}>)'
                        if t.capability != arch.capability
                        else ""
                    )
                    raise DiagnosticError.at(
                        loc,
                        f"object '{label}' of @{sym_name(source)} is {kind} for {arch.name}, which runs on "
                        f"{_runs_on(arch, binary)}; it cannot run on {t.name} (--target {wanted}){hint}",
                        note,
                    )
                served.add(t.name)
    if keyed and not served:
        for t in targets:
            ranges = [compute_capability_range(k.name, False) for k in keyed]
            if not any(r is not None and r[0] <= t.capability and (r[1] is None or t.capability <= r[1]) for r in ranges):
                raise DiagnosticError.at(
                    loc,
                    f"@{sym_name(source)} has no object for {t.name} (--target {wanted}): its objects are keyed for "
                    f"{', '.join(k.name for k in keyed)}",
                    note,
                )
