"""Regrouping a program between IREE's phases (docs/program.md, "How it works"): each tunable
dispatch replaced by nested ``scf.if`` on its group's choice global, one dispatch per variant
(or by the frozen variant's dispatch alone), the select entries, ``@__autotune`` with the
groups' reflection, and the benchmark, check and compare entries (built by
:mod:`autotune_export.passes.bench_entries`, the one home of the fake data) taken through IREE's
input and ABI phases and added to the program."""

from __future__ import annotations

import hashlib
from typing import Sequence

from autotune_export.contract import (
    AUTOTUNE_FUNCTION,
    BENCH_UNROLL,
    REFLECTION_KEY,
    GroupReflection,
    TuningWorkload,
    bench_name,
    encode_reflection,
    names_for,
)
from autotune_export.ir import functions as fn
from autotune_export.passes.bench_entries import DispatchOperands, SliceError, bench_entry, compare_entry
from autotune_export.program.dispatches import TunableDispatch, Variant, dispatch_ops, root_op
from autotune_export.program.phases import compile_bytes
from autotune_export.program.reference import reference_note, widened
from iree.compiler import ir
from iree.compiler.dialects import arith, scf

__all__ = ["regroup", "with_entries"]


def with_entries(program: str, entries: str, args: Sequence[str]) -> str:
    """The program with the entries module's functions added, after IREE's input and ABI
    phases made their public signatures (``!hal.buffer_view`` in and out, the reflection the
    runtime reads), as the entries of Triton groups get them. The result is compiled
    ``--compile-from=global-optimization``: IREE's dispatch creation runs once more, making
    dispatches of the entries' fake fills and comparisons, and leaves the program's dispatches
    (already formed) as they are."""
    abi = compile_bytes(entries, [*args, "--compile-to=abi"]).decode()
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(program)
        added = ir.Module.parse(abi)  # kept alive while its ops move
        for op in list(added.body.operations):
            module.body.append(op.detach_from_parent())
        module.operation.verify()
        return str(module)


def _fingerprint(args: Sequence[str], dispatch) -> str:
    """What decides a variant's timing, hashed (the tuning cache's per-variant key): the IREE
    compiler's version, the target flags and the variant's dispatch as printed (its body, the
    root op's compilation_info, its operand and result types). First 32 hex digits of SHA-256."""
    from importlib.metadata import version

    text = dispatch.get_asm(use_local_scope=True)
    data = "\n".join([version("iree-base-compiler"), *args, text])
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def regroup(
    dc_text: str, dispatches: list[TunableDispatch], args: Sequence[str], choices: dict[str, int], note
) -> tuple[str, str, list[GroupReflection]]:
    """Regroup the dispatch-creation text ``dc_text``: each dispatch of ``dispatches`` is
    replaced by its variants (nested scf.if on the group's choice), or, when ``choices`` fixes
    its group (key ``executable::group`` -> variant index), by that variant's dispatch alone
    (no group). Returns ``(program, entries, groups)``: the program with the choice globals,
    select entries and ``@__autotune``; the benchmark/check/compare entries as a module of
    their own (IREE's input level: fake fills are linalg ops, for IREE to make dispatches of);
    the groups' reflection."""
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(dc_text)
        entries = ir.Module.create()
        ops = {(h, i): op for h, i, op in dispatch_ops(module)}
        hosts = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in module.body.operations if "sym_name" in f.attributes}
        i32 = ir.IntegerType.get_signless(32)
        groups = []
        end = ir.InsertionPoint(module.body)
        at_entries = ir.InsertionPoint(entries.body)
        for d in dispatches:
            dispatch = ops[(d.host, d.index)]
            variants = d.variants()
            key = f"{d.executable}::{d.export}"
            if key in choices:
                _replace(dispatch, variants[choices[key]].make)
                continue
            names = names_for(d.executable, d.export)
            fn.global_(names["choice"], i32, mutable=True, initial_value=ir.IntegerAttr.get(i32, 0), ip=end)

            def select(a, names=names):
                fn.store_global(a[0], names["choice"])
                return []

            fn.util_func(names["select"], [i32], [], select, ip=end)
            branches = _branch(dispatch, variants, names["choice"]) if len(variants) > 1 else [dispatch]
            bench, check, compare, (reference, about) = _entries(d, branches, hosts[d.host], at_entries, note)
            tune_args = [str(a.type) for a in DispatchOperands.of(dispatch).arguments]
            groups.append(
                GroupReflection(
                    executable=d.executable,
                    group=d.export,
                    variants=[v.name for v in variants],
                    default=0,
                    select=names["select"],
                    bench=bench,
                    host=d.host,
                    choice=names["choice"],
                    unroll=BENCH_UNROLL,
                    tune_args=tune_args if bench else [],
                    configs=[v.config for v in variants],
                    workloads=[TuningWorkload(tune_args, bench)] if bench else [],
                    fingerprints=[_fingerprint(args, b) for b in branches],
                    check=check,
                    compare=compare,
                    reference=reference,
                    reference_note=about,
                )
            )
            if len(variants) > 1:
                dispatch.erase()
        # Always, an empty list too (every choice frozen): the runtime and inspect load the module.
        fn.util_func(
            AUTOTUNE_FUNCTION,
            [],
            [],
            lambda _args: [],
            attributes={"iree.reflection": fn.reflection({REFLECTION_KEY: encode_reflection(groups)})},
            ip=end,
        )
        module.operation.verify()
        entries.operation.verify()
        return str(module), str(entries), groups


def _entries(d: TunableDispatch, branches: list, host, point, note) -> tuple[list[str], list[str], str, tuple[str, str]]:
    """The benchmark, check and compare entries of one group (built at ``point``, by
    :func:`autotune_export.passes.bench_entries.bench_entry`, the one home of the fake data:
    seeded position-dependent fills per argument, fresh buffers for operands written in place,
    a loop of BENCH_UNROLL runs per iteration): per variant ``k`` (its dispatch
    ``branches[k]``) ``P.bench.K(n)`` and ``P.check.K()``, and ``P.compare`` counting on the
    device the elements that differ from variant 0's; and, for a group of several variants
    whose root op accumulates in a float narrower than f32, ``P.reference``: the check entry
    of the reference computation (:func:`.reference.widened`: variant 0 accumulating in f32, a
    dispatch made only for this entry, never a variant), whose results the runtime measures
    every variant's accuracy against (docs/program.md, "The cross-check"), with the one line
    saying what the reference is or why there is none (:func:`_reference_entry`). The host's arguments are
    ``!hal.buffer_view``s at this phase, so nothing of them is mapped: a dispatch whose sizes
    depend on them (dynamic shapes, never tunable here) raises SliceError, caught: the group
    then has no entries (a remark) and stays on IREE's default under ``autotune()``."""
    names = names_for(d.executable, d.export)
    bench = [bench_name(d.executable, d.export, 0, k) for k in range(len(branches))]
    check = [f"{names['check']}.{k}" for k in range(len(branches))]
    before = len(list(point.block.operations))
    try:
        for k, op in enumerate(branches):
            bench_entry(bench[k], op, host, [], k, point, mark_choice=False)
            bench_entry(check[k], op, host, [], k, point, check=True, mark_choice=False)
    except SliceError as err:
        note(f"@{d.executable}: no benchmark entries ({err}); autotune() leaves it on IREE's default")
        for op in list(point.block.operations)[before:]:
            op.erase()  # this group's entries made so far
        return [], [], "", ("", "none: no benchmark or check entries")
    compare = names["compare"] if compare_entry(names["compare"], branches[0], point) else ""
    return bench, check, compare, _reference_entry(names["reference"], branches, host, point)


def _reference_entry(name: str, branches: list, host, point) -> tuple[str, str]:
    """Build the check entry ``name`` of the reference computation of a group whose variant 0
    is ``branches[0]`` (:func:`.reference.widened`: built next to it in ``host`` for the entry
    to clone, then erased). Returns ``(name, note)``, or ``("", note)`` when nothing is built,
    ``note`` being :func:`.reference.reference_note`'s line (the reflection's
    ``reference_note``): a group of one variant (nothing to check); a root that is its own
    reference (an f32, f64 or integer result, :func:`.reference.own_reference`: the variants
    are compared with variant 0, as Triton groups' are); a root the reference does not widen
    (:func:`.reference.reference_problem`, the same comparison, the reason said)."""
    root = root_op(branches[0].operation)
    if len(branches) < 2 or root is None:
        return "", reference_note(root, False, len(branches))
    with ir.InsertionPoint(branches[0]):
        wide = widened(branches[0], root_op)
    if wide is None:
        return "", reference_note(root, False, len(branches))
    try:
        bench_entry(name, wide, host, [], 0, point, check=True, mark_choice=False)
    finally:
        wide.erase()
    return name, reference_note(root, True, len(branches))


def _replace(dispatch, make) -> None:
    """Replace ``dispatch`` by ``make(dispatch)`` (built just before it): a frozen choice."""
    with ir.InsertionPoint(dispatch):
        new = make(dispatch)
    for old, value in zip(dispatch.results, new.results):
        old.replace_all_uses_with(value)
    dispatch.erase()


def _branch(dispatch, variants: list[Variant], choice: str) -> list:
    """Build ``if choice == 1 {variant 1} else if ... else {variant 0}`` before ``dispatch`` and
    route its uses to the chain's results; returns each variant's dispatch op, in variant order
    (the caller erases ``dispatch`` once the entries are built from them)."""
    i32 = ir.IntegerType.get_signless(32)
    types = [r.type for r in dispatch.results]
    with ir.InsertionPoint(dispatch):
        chosen = fn.load_global(choice, i32)
    made = []
    outer_results = None
    point = ir.InsertionPoint(dispatch)
    for k, variant in enumerate(variants[1:], start=1):
        with point:
            cond = arith.CmpIOp(arith.CmpIPredicate.eq, chosen, fn.constant(ir.IntegerAttr.get(i32, k))).result
            branch = scf.IfOp(cond, types, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            op = variant.make(dispatch)
            scf.YieldOp(list(op.results))
        made.append(op)
        if outer_results is None:
            outer_results = list(branch.results)
        else:
            with point:
                scf.YieldOp(list(branch.results))
        point = ir.InsertionPoint(branch.else_block)
    with point:
        default = variants[0].make(dispatch)
        scf.YieldOp(list(default.results))
    for old, new in zip(dispatch.results, outer_results):
        old.replace_all_uses_with(new)
    return [default, *made]
