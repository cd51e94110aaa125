"""emit-autotune-initializer: the run-time state and entry points that tune the groups.

For each group ``@G`` of executable ``@E`` (prefix ``P = __autotune.E.G``, symbols from
:func:`autotune_export.contract.names_for`) it adds:

* ``util.global private mutable @P.choice = D : i32`` -- the variant in use (``D`` is the
  group's ``default``, else 0); lower-autotuning-dispatch feeds it to the condition chain;
* ``util.func public @P.select(%variant: i32)`` -- sets the choice;
* ``util.func public @P.bench.K(%iters: index)`` per variant ``K`` (except those the dispatch
  it runs may not run, :data:`~autotune_export.ir.markers.ALLOWED_ATTR`: ``""`` in the
  reflection, and no check entry either but the default's) -- runs the group's
  dispatch, fixed to variant ``K``, ``iters * BENCH_UNROLL`` times on fake buffers
  of its own (:mod:`autotune_export.passes.bench_entries`): the sizes and scalars come from
  the host function's pure computations on fake arguments of the tuning workload (the host's
  static argument types, or the group's ``tune_workload``); the host itself is not called, so
  tuning never changes the module's globals or runs user code with side effects. One call of
  many iterations amortizes the per-call overhead when timing;
* per further tuning workload ``T`` (``tune_workload([...], [...])``), ``@P.bench.wT.K``;
  per tuning workload ``@P.workload.T() -> (i64...)``, the dispatch's workload values on its
  fake arguments; ``@P.workload_of(<host args>) -> (i64...)``, the same for a live call (when
  they are pure size computations); ``@P.check.K() -> (results...)``, one run of variant ``K``
  on fresh fake buffers of the first workload with whole results (the runtime's cross-check);
  ``@P.compare(refs..., results..., rtol, atol, ...) -> (i64...)``, the elements of each result
  that differ from the reference's, counted on the device (:func:`bench_entries.compare_entry`;
  none for results of f64 or fp8 formats, which the runtime compares on the host);
* the run-time table of per-workload choices, ``workload_slots`` slots: globals
  ``@P.slot.S.choice`` (i32, -1 = empty) and ``@P.slot.S.wJ`` (i64 keys), and
  ``@P.slot.S.set(choice, w...)`` (:func:`autotune_export.contract.slot_names`);
  lower-autotuning-dispatch compares each dispatch's workload with them;
* ``util.func public @__autotune.flush_l2() -> tensor<1xi32>`` -- fills 256 MiB, for the
  runtime's ``flush_l2`` option;
* ``util.func public @__autotune()`` -- runs every variant of every group once on fake data
  and leaves the default choices in place. It carries reflection metadata
  (``iree.reflection = {autotune.groups = JSON}``, one
  :class:`autotune_export.contract.GroupReflection` per group; each variant's config is the
  one its export records, :data:`autotune_export.contract.VARIANT_CONFIG_ATTR`) that
  :mod:`autotune_export.runtime` reads to
  time the benchmark entries on the host and select the fastest variants: IREE's VM has no
  clock, and an imported clock would make the module unloadable without our runtime
  (notes/iree-hal-facts.md, "No clock in VM code").

Every op is built with the bindings (:mod:`autotune_export.ir.functions`), appended to the
module in this order: per group its choice global, select and bench entries; flush_l2;
``@__autotune``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autotune_export.contract import (
    AUTOTUNE_FUNCTION,
    BENCH_UNROLL,
    FLUSH_L2_FUNCTION,
    REFLECTION_KEY,
    GroupReflection,
    TuningWorkload,
    bench_name,
    encode_reflection,
    names_for,
    slot_names,
)
from autotune_export.ir import functions as fn
from autotune_export.ir.allowed import allowed_indices
from autotune_export.ir.binding import DispatchOperands
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.slicing import SliceError
from autotune_export.ir.variant_config import export_config
from autotune_export.ir.walk import (
    dispatch_sites,
    enclosing_function,
    entry_point_refs,
    executable_sources,
    exports_of,
    groups_of,
    module_functions,
    sym_name,
)
from autotune_export.passes.base import ModulePass, PassContext, register
from autotune_export.passes.bench_entries import bench_entry, compare_entry, one_element
from autotune_export.passes.fake_data import fake_element_error
from autotune_export.passes.workload_entries import workload_entry, workload_of_entry
from autotune_export.passes.dispatch_values import dispatch_label
from autotune_export.passes.fingerprints import variant_fingerprints
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, location_of
from iree.compiler import ir
from iree.compiler.dialects import flow

__all__ = ["EmitAutotuneInitializer"]

#: Elements of the L2 flush buffer: 64 Mi i32 = 256 MiB, more than any GPU's L2 (Triton's
#: do_bench zeroes a buffer of the same size).
_FLUSH_ELEMENTS = 64 * 1024 * 1024
#: Generic ``autotune.export`` attribute holding ``tune_workload`` (see ir/group.py):
#: ``TypeAttr`` of a static tensor type, or a typed scalar attribute, per host argument.
_TUNE_WORKLOAD_ATTR = "tune_workload"


@dataclass
class _Workload:
    """One tuning workload of a group: per host argument its fake value (``("tensor", static
    type)`` or ``("scalar", typed attribute)``) and its type as MLIR text; the bench entry per
    variant; the entry returning the dispatch's workload values on it."""

    fakes: list
    tune_args: list[str]
    benches: list[str]
    workload: str = ""


@dataclass
class _GroupPlan:
    """What the pass emits for one group (everything checked before anything is built)."""

    exe: str
    group: AutotuneGroup
    op: object  # the generic autotune.export op
    names: dict
    default: int
    host: object
    site: object  # the flow.dispatch of the group whose benchmark is built
    workloads: list[_Workload]  # empty when the group cannot be tuned on fake data
    configs: list = field(default_factory=list)  # per variant: its Triton config as [[key, value]] or None
    fingerprints: list[str] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)  # setter entries of the per-workload table
    workload_of: str = ""
    arity: int = 0
    checks: list[str] = field(default_factory=list)  # per variant, its check entry
    allowed: list = field(default_factory=list)  # the reflection's allowed entries (GroupReflection.allowed)
    compare: str = ""  # the device-side comparison of check results, or ""

    @property
    def benches(self) -> list[str]:
        return self.workloads[0].benches if self.workloads else []

    @property
    def tune_args(self) -> list[str]:
        return self.workloads[0].tune_args if self.workloads else []


@register
@dataclass
class EmitAutotuneInitializer(ModulePass):
    name = "emit-autotune-initializer"
    summary = "add the choice globals, select and benchmark entries, and @__autotune"

    #: Slots of each group's run-time table of per-workload choices (Triton keeps one choice
    #: per distinct ``key``; here per distinct workload of the dispatch, exact values). The
    #: tuning workloads fill the first slots, round-robin tuning the next ones (cyclically).
    workload_slots: int = 8

    def apply(self, ctx: PassContext, module) -> None:
        if AUTOTUNE_FUNCTION in module_functions(module):
            return  # already emitted (idempotent)
        with module.context:
            plans = self._plan(ctx, module)
            if not plans:
                return
            sources = {sym_name(src): src for src in executable_sources(module)}
            for plan in plans:  # the configs materialize-triton-variants recorded on the exports
                plan.configs = _configs(ctx, sources[plan.exe], plan.group.variants)
                plan.fingerprints = variant_fingerprints(sources[plan.exe], plan.group.variants, ctx.source.base_dir)
            point = ir.InsertionPoint(module.body)
            bench_calls: list[tuple[str, list]] = []  # (bench, result types)
            for plan in plans:
                with plan.op.location:
                    self._emit_group(plan, point, bench_calls)
            with module.operation.location:
                self._emit_flush_l2(point)
                self._emit_autotune(plans, bench_calls, point)

    # ----- checks --------------------------------------------------------------------------
    def _plan(self, ctx: PassContext, module) -> list[_GroupPlan]:
        """One plan per group, in module order. Raises DiagnosticError (before the module is
        changed) for a group still in the triton(...) form, never dispatched, or whose host
        cannot be called on fake data."""
        sites = dispatch_sites(module)
        plans = []
        for source in executable_sources(module):
            exe = sym_name(source)
            for op in groups_of(source):
                group = AutotuneGroup.from_op(op, ctx.source.name)
                if group.variants is None:
                    raise DiagnosticError.at(
                        group.location, f"@{group.name} still has the triton(...) form; run materialize-triton-variants first"
                    )
                names = names_for(exe, group.name)
                default = group.variants.index(group.default) if group.default else 0
                host, site, tunes = _host_call(group, op, exe, sites)
                inputs, _ = fn.function_type(host)
                untunable = _untunable(group, host, inputs) if tunes is None else None
                if untunable is not None:
                    # Builds without benchmark and check entries: strategies that need them
                    # skip the group, and round-robin leaves it on its default unless the user
                    # lets unchecked variants run on live data (allow_unchecked=True). A warning
                    # when there is a variant to check; a remark for a group of one.
                    severity = "warning" if len(group.variants) > 1 else "remark"
                    ctx.emit_remark(Diagnostic(severity, untunable, group.location))
                    tunes = []
                texts = group.tune_workload or [[None] * len(inputs)]
                workloads = [
                    _Workload(
                        fakes=[_fake_arg(group, t, given) for t, given in zip(inputs, tune)],
                        tune_args=[a if a is not None else str(t) for a, t in zip(text, inputs)],
                        benches=[bench_name(exe, group.name, w, k) for k in range(len(group.variants))],
                    )
                    for w, (tune, text) in enumerate(zip(tunes, texts))
                ]
                plans.append(
                    _GroupPlan(
                        exe=exe,
                        group=group,
                        op=op,
                        names=names,
                        default=default,
                        host=host,
                        site=site,
                        workloads=workloads,
                        allowed=_allowed_sites(ctx, exe, group, sites, site),
                    )
                )
        return plans

    # ----- per group -----------------------------------------------------------------------
    def _emit_group(self, plan: _GroupPlan, point, bench_calls: list) -> None:
        """The choice global, ``select`` and one ``bench.K`` per variant (at the current
        location); appends ``(bench, its result types, host result types)`` to
        ``bench_calls``."""

        i32 = ir.IntegerType.get_signless(32)
        names = plan.names
        fn.global_(names["choice"], i32, mutable=True, initial_value=ir.IntegerAttr.get(i32, plan.default), ip=point)

        def select(args):
            fn.store_global(args[0], names["choice"])
            return []

        fn.util_func(names["select"], [i32], [], select, ip=point)
        # The dispatch tuning measures runs only what its own prune_configs_by keeps: no
        # benchmark or check entry of another variant there (the default's check entry stays:
        # it runs what that dispatch runs for the default choice, the cross-check's reference).
        allowed = next((set(e["variants"]) for e in plan.allowed if e["tuned"]), None)
        for w, work in enumerate(plan.workloads):
            try:
                for k, bench in enumerate(work.benches):
                    if allowed is not None and k not in allowed:
                        work.benches[k] = ""
                        continue
                    out_types = bench_entry(bench, plan.site, plan.host, work.fakes, k, point)
                    bench_calls.append((bench, out_types))
                if w == 0:  # cross-checking runs on the first workload
                    for k in range(len(plan.group.variants)):
                        if allowed is not None and k not in allowed and k != plan.default:
                            plan.checks.append("")
                            continue
                        plan.checks.append(f"{names['check']}.{k}")
                        bench_entry(plan.checks[-1], plan.site, plan.host, work.fakes, k, point, check=True)
                    if compare_entry(names["compare"], plan.site, point):
                        plan.compare = names["compare"]
                work.workload = f"{names['workload']}.{w}"
                workload_entry(work.workload, plan.site, plan.host, work.fakes, point)
            except SliceError as err:
                raise DiagnosticError.at(
                    plan.group.location,
                    f"cannot tune @{plan.group.name} on fake data: the workload, scalars or sizes of its dispatch in "
                    f"@{sym_name(plan.host)} cannot be computed from the host's arguments alone ({err}); move the dispatch into a function "
                    "of its own that takes that value as an argument (docs/limits.md)",
                ) from None
        plan.arity = len(DispatchOperands.of(plan.site).workload)
        if workload_of_entry(names["workload_of"], plan.site, plan.host, point):
            plan.workload_of = names["workload_of"]
        if plan.arity and self.workload_slots > 0:
            self._emit_slots(plan, point)

    def _emit_slots(self, plan: _GroupPlan, point) -> None:
        """The run-time table of per-workload choices: per slot ``s`` an i32 global ``choice``
        (-1: empty), one i64 global per workload value and ``set(choice, w...)``.
        lower-autotuning-dispatch reads them at every dispatch site of the group."""
        i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
        for slot in range(self.workload_slots):
            names = slot_names(plan.exe, plan.group.name, slot, plan.arity)
            fn.global_(names["choice"], i32, mutable=True, initial_value=ir.IntegerAttr.get(i32, -1), ip=point)
            for key in names["keys"]:
                fn.global_(key, i64, mutable=True, initial_value=ir.IntegerAttr.get(i64, 0), ip=point)

            def setter(args, names=names):
                for value, key in zip(args[1:], names["keys"]):
                    fn.store_global(value, key)
                fn.store_global(args[0], names["choice"])
                return []

            fn.util_func(names["set"], [i32] + [i64] * plan.arity, [], setter, ip=point)
            plan.slots.append(names["set"])

    # ----- shared --------------------------------------------------------------------------
    def _emit_flush_l2(self, point) -> None:
        """``@__autotune.flush_l2() -> tensor<1xi32>``: splat a 256 MiB tensor, return one
        element. The fill value goes through a barrier so the fill happens at run time, not as
        a constant folded at compile time."""

        i32 = ir.IntegerType.get_signless(32)
        big = ir.RankedTensorType.get([_FLUSH_ELEMENTS], i32)

        def body(_args):
            (opaque,) = fn.barrier([fn.constant(ir.IntegerAttr.get(i32, 0))])
            fill = flow.TensorSplatOp(big, opaque, []).result
            return [one_element(fill)]

        fn.util_func(FLUSH_L2_FUNCTION, [], [ir.RankedTensorType.get([1], i32)], body, ip=point)

    def _emit_autotune(self, plans: list[_GroupPlan], bench_calls: list, point) -> None:
        """``@__autotune()``: call every benchmark entry once (``%iters = 1``), each host result
        through a barrier (keeps the dispatches alive after inlining); the reflection JSON."""
        meta = encode_reflection(
            [
                GroupReflection(
                    executable=p.exe,
                    group=p.group.name,
                    variants=p.group.variants,
                    default=p.default,
                    choice=p.names["choice"],
                    select=p.names["select"],
                    bench=p.benches,
                    host=sym_name(p.host),
                    unroll=BENCH_UNROLL,
                    tune_args=p.tune_args,
                    configs=p.configs or [None] * len(p.group.variants),
                    workloads=[TuningWorkload(w.tune_args, w.benches, w.workload) for w in p.workloads],
                    slots=p.slots,
                    workload_of=p.workload_of,
                    arity=p.arity,
                    fingerprints=p.fingerprints,
                    check=p.checks,
                    compare=p.compare,
                    frozen_choices=[
                        {"workload": list(values), "variant": p.group.variants.index(v)} for values, v in p.group.choices or []
                    ],
                    default_frozen=p.group.default is not None,
                    allowed=p.allowed,
                )
                for p in plans
            ]
        )

        def body(_args):
            one = fn.index_constant(1)
            for bench, out_types in bench_calls:
                outs = fn.call(bench, [one], out_types)
                if outs:
                    fn.barrier(outs)
            return []

        fn.util_func(
            AUTOTUNE_FUNCTION, [], [], body, attributes={"iree.reflection": fn.reflection({REFLECTION_KEY: meta})}, ip=point
        )


# ----- host functions ------------------------------------------------------------------------
def _configs(ctx: PassContext, source, variants: list[str]) -> list:
    """Per variant of ``variants`` (exports of ``source``) the config its export records, as
    JSON (``[[key, value], ...]``), or None. Raises DiagnosticError (at the export) for a
    malformed :data:`~autotune_export.contract.VARIANT_CONFIG_ATTR`."""
    exports = exports_of(source)
    out = []
    for v in variants:
        try:
            out.append(export_config(exports[v]) if v in exports else None)
        except ValueError as err:
            raise DiagnosticError.at(location_of(exports[v].location, ctx.source.name), str(err)) from None
    return out


def _host_call(group: AutotuneGroup, op, exe: str, sites) -> tuple:
    """``(host, site, tunes)``: the host function holding the first dispatch of ``group``, that
    dispatch, and per tuning workload, per host argument its ``tune_workload`` attribute (a
    ``TypeAttr`` of a static tensor type or a typed scalar; one workload of None per argument
    of a static tensor type without tune_workload). ``tunes`` is None when the host's arguments cannot be made from fake data
    (see :func:`_untunable`). Raises DiagnosticError (at the group) when no host dispatches the
    group or ``tune_workload`` does not fit the host."""

    members = {group.name, *(group.variants or [])}
    site = next((d for d in sites if any(e == exe and n in members for e, n in entry_point_refs(d))), None)
    if site is None:
        raise DiagnosticError.at(
            group.location,
            f"@{group.name} is never dispatched: add a flow.dispatch @{exe}::@{group.name}[...] in a host function, "
            "whose call on fake data is what tuning measures",
        )
    host = enclosing_function(site)
    host_name = sym_name(host)
    inputs, _ = fn.function_type(host)
    if group.tune_workload is not None:
        attrs = list(ir.ArrayAttr(op.attributes[_TUNE_WORKLOAD_ATTR]))
        nested = [list(ir.ArrayAttr(a)) for a in attrs] if attrs and all(isinstance(a, ir.ArrayAttr) for a in attrs) else [attrs]
        return (
            host,
            site,
            [_tune_values(group, values, texts, inputs, host_name) for values, texts in zip(nested, group.tune_workload)],
        )
    if _untunable(group, host, inputs) is not None:
        return host, site, None
    return host, site, [[None] * len(inputs)]


def _allowed_sites(ctx: PassContext, exe: str, group: AutotuneGroup, sites, tuned) -> list[dict]:
    """The reflection's ``allowed`` entries of ``group`` (:attr:`GroupReflection.allowed`): per
    dispatch of the group (among ``sites``, in the module's order) that carries
    :data:`~autotune_export.ir.markers.ALLOWED_ATTR`, its label, host, whether it is ``tuned``
    (the dispatch the benchmark and check entries run) and the variant indices it may run, in
    its order. Raises DiagnosticError at a dispatch whose attribute is malformed."""
    out = []
    mine = [d for d in sites if (exe, group.name) in entry_point_refs(d)]
    for k, d in enumerate(mine):
        try:
            indices = allowed_indices(d, list(group.variants))
        except ValueError as err:
            raise DiagnosticError.at(
                location_of(d.location, ctx.source.name), f"this dispatch of @{exe}::@{group.name}: {err}"
            ) from None
        if indices is not None:
            host = enclosing_function(d)
            out.append(
                {
                    "site": dispatch_label(d, k, line=False),
                    "host": sym_name(host) if host is not None else "",
                    "tuned": d == tuned,
                    "variants": indices,
                }
            )
    return out


def _tune_values(group: AutotuneGroup, attrs: list, given_texts: list[str], inputs, host_name: str) -> list:
    """The attributes of one ``tune_workload`` workload, checked against the host's argument
    types. Raises DiagnosticError (at the group) when they do not fit."""
    if len(given_texts) != len(inputs):
        raise DiagnosticError.at(
            group.location,
            f"tune_workload gives {_count(len(given_texts), 'value')}, but host function @{host_name} takes {_count(len(inputs), 'argument')}",
        )
    tune = []
    for i, (given, attr, t) in enumerate(zip(given_texts, attrs, inputs)):
        if isinstance(attr, ir.TypeAttr):
            gt = ir.TypeAttr(attr).value
            if not isinstance(t, ir.RankedTensorType) or not isinstance(gt, ir.RankedTensorType) or not _compatible(gt, t):
                raise DiagnosticError.at(
                    group.location, f"tune_workload value {i} is {given}, which does not fit argument {i} of @{host_name} ({t})"
                )
            if not gt.has_static_shape:
                raise DiagnosticError.at(group.location, f"tune_workload value {i} ({given}) must have a static shape")
            empty = [d for d, (a, b) in enumerate(zip(gt.shape, t.shape)) if a == 0 and b < 0]
            if empty:
                # A static 0 (an empty optional input, tensor<0xf16>) builds; a 0 given for a
                # dynamic size does not: IREE folds it into the benchmark entries' dispatch and
                # refuses their one-element slice of an empty result ('stream.async.slice' ...
                # length > resource size), and a kernel timed on no data times nothing.
                raise DiagnosticError.at(
                    group.location,
                    f"tune_workload value {i} ({given}) has no elements, but argument {i} of @{host_name} ({t}) has a "
                    f"dynamic size there (dimension {empty[0]}): benchmark entries cannot be built on an empty workload; give a size above 0 "
                    "(docs/limits.md)",
                )
        elif attr.type != t:
            raise DiagnosticError.at(
                group.location, f"tune_workload value {i} is {given}, but argument {i} of @{host_name} is {t}"
            )
        tune.append(attr)
    return tune


def _untunable(group: AutotuneGroup, host, inputs) -> str | None:
    """Why ``group`` cannot be tuned on fake data without ``tune_workload`` (an argument of
    its host that is not a tensor of static shape: the RFC's own example takes ``tensor<?x?xf32>``),
    as a diagnostic's text; None when it can. Such a group has no check entries either, so its
    variants cannot be checked before they run on live data
    (:class:`autotune_export.runtime.AutotunedModule`'s ``allow_unchecked``)."""
    for i, t in enumerate(inputs):
        if not (isinstance(t, ir.RankedTensorType) and t.has_static_shape):
            return (
                f"@{group.name} cannot be tuned on fake data: argument {i} of host function @{sym_name(host)} is {t} "
                "and no tune_workload(...) gives a static type or value per argument; it is built without benchmark "
                "entries and without check entries, so no variant can be checked against the default before it runs: "
                'strategy "round-robin" leaves it on its default variant unless the runtime is told '
                "allow_unchecked=True (unchecked variants then run on live data); give tune_workload(...) to tune and "
                "check it"
            )
    return None


def _fake_arg(group: AutotuneGroup, arg_type, given) -> tuple:
    """The fake value of a host argument of type ``arg_type``: ``("scalar", attribute)`` for a
    scalar of ``tune_workload``, else ``("tensor", static type)`` (``given``'s type, or the
    argument's own static type). Raises DiagnosticError (at the group) for a tensor of an
    element type without fake data."""
    if given is not None and not isinstance(given, ir.TypeAttr):
        return ("scalar", given)
    static = ir.TypeAttr(given).value if given is not None else arg_type
    problem = fake_element_error(static)
    if problem is not None:
        raise DiagnosticError.at(group.location, f"cannot make fake data for @{group.name}: {problem} ({static})")
    return ("tensor", static)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _compatible(given, declared) -> bool:
    if given.rank != declared.rank or given.element_type != declared.element_type:
        return False
    for a, b in zip(given.shape, declared.shape):
        if b >= 0 and a != b:
            return False
    return True
