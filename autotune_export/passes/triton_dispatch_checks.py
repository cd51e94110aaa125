"""The dispatches to a Triton-form group checked against its signature and against what its
variants do (materialize-triton-variants runs these; module doc there): IREE's binding rule
(:mod:`autotune_export.ir.binding`) gives each pointer its tensor; the element types, the
scalar operand types, ``{output}`` pointers bound to results, pointers the kernel writes
(from its TTIR) bound to results, and warnings for atomics and loads from buffers of
undefined contents. ``item`` below is the pass's planned group (its ``group``, its
``dispatches`` and their ``tied`` pointers). Errors are raised as DiagnosticError at the
dispatch or the group; warnings and remarks go to ``ctx``.
"""

from __future__ import annotations

from autotune_export.cuda import abi
from autotune_export.ir import binding
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.walk import dispatch_sites, entry_point_refs, sym_name
from autotune_export.passes import zero_outputs
from autotune_export.passes.base import PassContext
from autotune_export.passes.fake_data import mark_fake_zeros
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, location_of
from iree.compiler import ir

__all__ = [
    "POINTER_ELEMENT_TYPES",
    "check_dispatches",
    "check_read_first",
    "check_updated",
    "check_written",
    "dispatch_bindings",
    "tied_outputs",
]


#: Pointee of a Triton pointer type -> the MLIR element types a tensor bound to it may have.
#: Triton loads and stores ``*i1`` (``*u1``, a bool tensor) as one byte per element
#: (``pointer_type<int1>`` is treated as ``pointer_type<int8>`` in triton/language/semantic.py),
#: and IREE keeps ``i1`` tensors one byte per element: both ``i1`` and ``i8`` tensors fit.
POINTER_ELEMENT_TYPES: dict[str, tuple[str, ...]] = {
    "i1": ("i1", "i8"),
    "u1": ("i1", "i8"),
    "i8": ("i8",),
    "u8": ("i8",),
    "i16": ("i16",),
    "u16": ("i16",),
    "i32": ("i32",),
    "u32": ("i32",),
    "i64": ("i64",),
    "u64": ("i64",),
    "fp16": ("f16",),
    "bf16": ("bf16",),
    "fp32": ("f32",),
    "fp64": ("f64",),
    "fp8e4nv": ("f8E4M3FN",),
    "fp8e5": ("f8E5M2",),
}


def dispatch_bindings(d) -> list[binding.Binding]:
    """The bindings of ``flow.dispatch`` ``d`` in IREE's order (:mod:`autotune_export.ir.binding`)."""
    return binding.DispatchOperands.of(d).bindings()


def tied_outputs(ctx: PassContext, group: AutotuneGroup, dispatches) -> tuple[str, ...]:
    """The pointers bound to the tensor operands of the dispatches, in operand order: the input
    pointers and the ``{output}`` pointers written in place
    (:func:`autotune_export.ir.binding.tied_outputs`). Every dispatch must agree (one layout).
    Raises DiagnosticError at a dispatch that binds them otherwise than an earlier one."""
    found: tuple | None = None
    for d in dispatches:
        choice = binding.tied_outputs(group.signature, d)
        if found is not None and choice != found:
            mine, theirs = binding.in_place(group.signature, choice), binding.in_place(group.signature, found)
            what = (
                f"writes {', '.join(mine) or 'no output'} in place, an earlier one {', '.join(theirs) or 'none'}"
                if set(mine) != set(theirs)
                else f"passes its tensors for ({', '.join(choice)}), an earlier one for ({', '.join(found)})"
            )
            raise DiagnosticError.at(
                location_of(d.location, ctx.source.name),
                f"this dispatch to @{group.name} {what}: all dispatches of a group share one layout",
            )
        found = choice
    return found if found is not None else tuple(p.name for p in group.signature if p.is_pointer and not p.output)


def _conversion(have: str, want: str) -> str:
    """The arith op that converts a scalar of MLIR type ``have`` to ``want`` (for hints)."""
    fa, fb = have.startswith(("f", "bf")), want.startswith(("f", "bf"))
    wa, wb = int(have.lstrip("bfi") or 0), int(want.lstrip("bfi") or 0)
    if fa and fb:
        return "extf" if wb > wa else "truncf"
    if fa:
        return "fptosi"
    if fb:
        return "sitofp"
    return "extsi" if wb > wa else "trunci"


def check_dispatches(ctx: PassContext, module, source, group: AutotuneGroup, tied=frozenset()) -> None:
    """Scalar operands of dispatches to ``group`` have the bit widths of its parameters."""

    exe = sym_name(source)
    scalars = [p for p in group.signature if not p.is_pointer]
    pointers = abi.plan(group.signature, tied=tied).binding_params()
    for d in dispatch_sites(module):
        if (exe, group.name) not in entry_point_refs(d):
            continue
        where = location_of(d.location, ctx.source.name)
        note = [Diagnostic("note", f"@{group.name} is defined here", group.location)]
        bindings = dispatch_bindings(d)
        if len(bindings) == len(pointers):  # else verify-autotuning-groups reports the count
            for p, b in zip(pointers, bindings):
                allowed = POINTER_ELEMENT_TYPES.get(p.type[1:])
                elem = str(b.type.element_type) if isinstance(b.type, ir.ShapedType) else str(b.type)
                if allowed is not None and elem not in allowed:
                    raise DiagnosticError.at(
                        where,
                        f"dispatch to @{exe}::@{group.name} binds {b.what} to pointer '{p.name}' ({p.type}); "
                        f"expected a tensor of {' or '.join(allowed)}",
                        note,
                    )
                if p.output and not b.is_result:
                    raise DiagnosticError.at(
                        where,
                        f"dispatch to @{exe}::@{group.name} binds {b.what} to {{output}} pointer '{p.name}', but no "
                        "result is tied to it: IREE treats dispatch operands as immutable; tie a result to the operand "
                        "(-> %operand) or make the output a result (bindings are the tensor operands, then the untied "
                        "results, in the order of the signature's input pointers, then its {output} pointers)",
                        note,
                    )
        given = binding.DispatchOperands.of(d).scalars()
        if len(given) != len(scalars):
            continue  # verify-autotuning-groups reports the count
        for p, a in zip(scalars, given):
            if not abi.operand_matches(p, str(a.type)):
                want = binding.SCALAR_OPERAND_TYPES[p.type]
                raise DiagnosticError.at(
                    location_of(d.location, ctx.source.name),
                    f"dispatch to @{exe}::@{group.name} passes a {a.type} for parameter '{p.name}' ({p.type}); "
                    f"expected an {want} operand: the kernel would read the {a.type}'s bits as {p.type} "
                    f"(convert it at the call site, e.g. with arith.{_conversion(str(a.type), want)})",
                    note,
                )


def check_written(ctx: PassContext, item, plan, written: set[int]) -> None:
    """Every pointer the kernel stores or atomically updates through (``written``:
    signature indices, from the variants' TTIR) is bound, at every dispatch to the group,
    to a result: an ``{output}`` pointer, or an input pointer whose operand a result is
    tied to (in place, ``-> %x``). IREE treats the other operands as immutable (their
    bindings are ReadOnly, and IREE may share or reuse their buffers). Raises
    DiagnosticError at the group, with a note at the dispatch."""
    group = item.group
    pointers = plan.binding_params()
    position = {p.name: i for i, p in enumerate(group.signature)}
    for d in item.dispatches:
        bindings = dispatch_bindings(d)
        if len(bindings) != len(pointers):
            continue
        for p, b in zip(pointers, bindings):
            if position[p.name] in written and not p.output and not b.is_result:
                raise DiagnosticError.at(
                    group.location,
                    f"kernel '{group.triton[1]}' of @{group.name} writes through '{p.name}' (a store or atomic), which is "
                    f"not {{output}}: IREE treats dispatch operands as immutable; mark it '{p.name}: {p.type} {{output}}' "
                    "and return it as a result, or tie a result to its operand at the dispatch (-> %operand, in place)",
                    [
                        Diagnostic(
                            "note",
                            f"the dispatch binds {b.what} to '{p.name}' here",
                            location_of(d.location, ctx.source.name),
                        )
                    ],
                )


def check_updated(ctx: PassContext, item, plan, updated: set[int]) -> None:
    """A warning, once per pointer, at the first dispatch that binds a pointer the kernel
    updates atomically (``tl.atomic_add`` and the like, ``updated``: signature indices) to a
    buffer of undefined contents: an untied result, or an operand made by
    ``flow.tensor.empty`` / ``flow.tensor.alloca`` that a result is tied to. What such a
    kernel leaves depends on what the buffer held (a PyTorch caller passes
    ``torch.zeros(...)``), so the result would be garbage.

    Every tensor operand bound to such a pointer (written in place: a lock, a counter, an
    accumulator) is listed in the dispatch's
    :data:`~autotune_export.ir.markers.FAKE_ZEROS_ATTR` (one remark at the group names
    them), so the benchmark and check entries give it zeros instead of seeded fake data: a
    spin lock that holds anything but 0 is never released, and the tuning would never
    return."""
    group = item.group
    pointers = plan.binding_params()
    position = {p.name: i for i, p in enumerate(group.signature)}
    warned: set[str] = set()
    zeroed: list[str] = []
    for d in item.dispatches:
        bindings = dispatch_bindings(d)
        if len(bindings) != len(pointers):
            continue
        args = list(d.opview.arguments)
        tensors = [i for i, a in enumerate(args) if isinstance(a.type, ir.RankedTensorType)]
        in_place = [
            (n, p)
            for n, p in enumerate(pointers[: len(tensors)])
            if position[p.name] in updated and bindings[n].is_result and not zero_outputs.is_zeroed(args[tensors[n]])
        ]
        mark_fake_zeros(d, [tensors[n] for n, _ in in_place])
        zeroed.extend(p.name for _, p in in_place if p.name not in zeroed)
        for p, b in zip(pointers, bindings):
            if b.undefined and position[p.name] in updated and p.name not in warned:
                warned.add(p.name)
                ctx.emit_remark(
                    Diagnostic(
                        "warning",
                        f"kernel '{group.triton[1]}' of @{group.name} updates '{p.name}' atomically (what it leaves depends "
                        f"on what the buffer held), but this dispatch binds it to a new buffer of undefined contents: zero it "
                        f"with reset_to_zero({p.name}), or pass its contents in place (a result tied to the operand holding "
                        "them, -> %x)",
                        location_of(d.location, ctx.source.name),
                    )
                )
    if zeroed:
        names = ", ".join(f"'{n}'" for n in zeroed)
        ctx.emit_remark(
            Diagnostic(
                "remark",
                f"@{group.name}: kernel '{group.triton[1]}' updates {names} atomically (tt.atomic_rmw / tt.atomic_cas in "
                f"its TTIR): the benchmark and check entries give {'it' if len(zeroed) == 1 else 'them'} zeros, not seeded "
                "fake data (a lock or counter holding other values may never be released)",
                group.location,
            )
        )


def check_read_first(ctx: PassContext, item, plan, read_first: set[int]) -> None:
    """A warning, once per pointer, at the first dispatch that binds an ``{output}`` pointer
    the kernel loads from before storing through it (``read_first``: signature indices,
    from the variants' TTIR, :func:`autotune_export.cuda.ttir.read_before_written`) to a
    buffer of undefined contents (an untied result, or an operand made by
    ``flow.tensor.empty`` / ``flow.tensor.alloca``): IREE allocates it per call, so what
    the kernel reads is garbage. (A PyTorch caller passes the tensor whose contents the
    kernel reads, e.g. a gradient it accumulates into.)"""
    group = item.group
    pointers = plan.binding_params()
    position = {p.name: i for i, p in enumerate(group.signature)}
    warned: set[str] = set()
    for d in item.dispatches:
        bindings = dispatch_bindings(d)
        if len(bindings) != len(pointers):
            continue
        for p, b in zip(pointers, bindings):
            if p.output and b.undefined and position[p.name] in read_first and p.name not in warned:
                warned.add(p.name)
                ctx.emit_remark(
                    Diagnostic(
                        "warning",
                        f"kernel '{group.triton[1]}' of @{group.name} loads from {{output}} '{p.name}' before it stores "
                        f"through it, but this dispatch binds {b.what} to it, a new buffer of undefined contents in IREE: "
                        "pass the tensor whose contents the kernel reads in place (as an operand with the result tied to "
                        f"it, -> %x), or zero it with reset_to_zero({p.name}) if it accumulates from zero",
                        location_of(d.location, ctx.source.name),
                    )
                )
