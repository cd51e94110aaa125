"""The plan stage of a Triton-form group: the group as plain data (:class:`PlanRequest`) and
its loaded kernel -> per config its entries, constexpr values and the
:class:`~autotune_export.cuda.triton_compile.VariantSpec` s to compile (:class:`Planned`).

The first kernel stage (``docs/architecture.md``): :func:`plan_launch` runs Triton's launch
model (:func:`autotune_export.cuda.launch_model.launch_variants`, convention ``TRITON``) on
what the group's dispatches pass (the pass reads that off the IR:
:func:`autotune_export.passes.dispatch_values.dispatch_scalars`), checks the grid's names
against each config, and makes the variant specs (Triton's JIT specialization of ``:16`` /
``:1`` hints). It takes no pass context and no IR (``pyproject.toml``'s contract
``kernel-stages-without-iree``) and never raises for the user's input: its remarks and the
error that stopped it are :class:`~autotune_export.support.diagnostics.Diagnostic` records with
locations (:attr:`Planned.diagnostics`), which the caller reports, as the link stage's
(:mod:`autotune_export.cuda.link`) are.
"""

from __future__ import annotations

import dataclasses
import re
import struct
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from autotune_export.cuda import launch_model as lm
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.params import OPTION_NAMES, Param
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location, did_you_mean

__all__ = [
    "UNKNOWN",
    "PlanRequest",
    "Planned",
    "as_parameter",
    "autotuner_outputs",
    "config_entries",
    "config_text",
    "plan_launch",
    "signed",
]

#: A value not known while compiling (a scalar the host computes at run time).
UNKNOWN = object()


def signed(value: int, width: int | None) -> int:
    """``value`` wrapped to a signed ``width``-bit integer (i1: 0 or 1); unchanged for None."""
    if width is None:
        return value
    if width == 1:
        return value & 1
    m = 1 << width
    value %= m
    return value - m if value >= m >> 1 else value


def as_parameter(triton_type: str, value):
    """``value`` as the kernel receives a scalar of ``triton_type``: a bool for ``u1``/``i1``,
    an int wrapped to the type's width (unsigned for ``uN``), a float (rounded to fp32/fp16);
    :data:`UNKNOWN` for a value the type cannot take (a float for an integer)."""
    if triton_type in ("u1", "i1"):
        return bool(value)
    if triton_type.startswith(("i", "u")):
        if isinstance(value, float):
            return UNKNOWN
        width = int(triton_type[1:])
        return int(value) % (1 << width) if triton_type.startswith("u") else signed(int(value), width)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return UNKNOWN
    if triton_type in ("fp32", "fp16"):
        fmt = "f" if triton_type == "fp32" else "e"
        try:
            return struct.unpack(fmt, struct.pack(fmt, float(value)))[0]
        except OverflowError:
            return float("inf") if value > 0 else float("-inf")
    return float(value)


def config_entries(cfg: dict) -> list[tuple[str, Any]]:
    """A config of :attr:`LoadedKernel.default_configs` as the group's entries: its constexpr
    values, then the options it sets (num_warps, num_stages, num_ctas, maxnreg)."""
    entries = list(cfg.get("kwargs", {}).items())
    for opt in OPTION_NAMES:
        if cfg.get(opt) is not None:
            entries.append((opt, cfg[opt]))
    return entries


def config_text(entries) -> str:
    """A config's entries as the op spells them, for messages: ``{BLOCK = 64, num_warps = 4}``."""
    return "{" + ", ".join(f"{k} = {v}" for k, v in entries) + "}"


@dataclass(frozen=True)
class PlanRequest:
    """A Triton-form group to plan, as plain data.

    ``name``/``kernel``: the group's and the kernel's names; ``location`` the group's and
    ``clause_locations`` its clauses' (:attr:`autotune_export.ir.group.AutotuneGroup.clause_locations`),
    where diagnostics go; ``signature`` the runtime parameters without the ``none`` ones,
    whose names are ``nones``; ``configs`` the op's ``configs([...])`` (entries as the op
    spells them), None to take the kernel's ``triton.autotune`` configs; ``grid`` expressions
    and ``workload`` names; ``archs`` ``(name, capability)`` per target (the first answers for
    the user's functions, as Triton's driver does while the file is imported); ``ptx_version``
    pinned in every variant; ``sites`` what each launch of the group passes, one
    ``(label, workload index or None, {parameter: value or UNKNOWN, pointer: shape}, names
    known only from the tuning workload)`` per dispatch and ``tune_workload``
    (:func:`autotune_export.passes.dispatch_values.dispatch_scalars`)."""

    name: str
    kernel: str
    location: Location | None
    clause_locations: Mapping[str, Location]
    signature: tuple[Param, ...]
    nones: tuple[str, ...]
    configs: tuple[tuple[tuple[str, Any], ...], ...] | None
    grid: tuple[str, ...]
    workload: tuple[str, ...]
    archs: tuple[tuple[str, int], ...]
    ptx_version: int | None
    sites: tuple = ()

    def at(self, *keys: str) -> Location | None:
        """The location of the first of ``keys`` (clause names, most specific first) the group
        has, else the group's (as :meth:`AutotuneGroup.at`)."""
        return next((self.clause_locations[k] for k in keys if k in self.clause_locations), self.location)

    def config_location(self, index: int | None, key: str | None = None) -> Location | None:
        """Where config ``index`` (its ``key``; None: the configs) was written: its entry in
        configs([...]), or the kernel's name in triton(...) when the configs are its
        triton.autotune's."""
        if self.configs is None:
            return self.at("triton.kernel", "triton")
        keys = ([f"configs.{index}.{key}"] if key is not None and index is not None else []) + (
            [f"configs.{index}"] if index is not None else []
        )
        return self.at(*keys, "configs")


@dataclass(frozen=True)
class Planned:
    """What :func:`plan_launch` returns: per config its entries as the op spells them
    (``configs``) and every constexpr's value (``constexprs``); ``specs`` the variants to
    compile, target-major (per target each config's variants: two when scalars carry
    ``:16``/``:1`` hints); ``diagnostics`` in order (remarks, then the error that stopped it,
    if any: then the rest is empty); ``allowed``: per dispatch whose own ``prune_configs_by``
    keeps fewer configs than the group, ``(dispatch, positions)``: its index among the group's
    dispatches (:attr:`~autotune_export.passes.dispatch_values.Site.dispatch`) and the positions
    in ``configs`` of the configs it may run, in Triton's order for its arguments (empty when
    every dispatch may run every config)."""

    configs: tuple[tuple[tuple[str, Any], ...], ...]
    constexprs: tuple[dict, ...]
    specs: tuple
    diagnostics: tuple[Diagnostic, ...]
    allowed: tuple[tuple[int, tuple[int, ...]], ...] = ()

    @property
    def error(self) -> DiagnosticError | None:
        """The error among the diagnostics (with its notes), or None."""
        errors = [d for d in self.diagnostics if d.severity == "error"]
        return DiagnosticError(errors) if errors else None


def plan_launch(request: PlanRequest, kernel, source) -> Planned:
    """Plan ``request`` for ``kernel`` (a :class:`~autotune_export.cuda.kernel_files.LoadedKernel`
    whose runtime parameters are the signature's and the ``nones``) loaded from ``source`` (its
    :class:`~autotune_export.cuda.kernel_files.KernelSource`): the launch model's configs and
    constexpr values (:func:`_launch_variants`), the grid's names checked against each, then
    one :class:`~autotune_export.cuda.triton_compile.VariantSpec` per config and hint
    specialization and target. Never raises for the user's input: errors are in
    :attr:`Planned.diagnostics`."""
    diagnostics: list[Diagnostic] = []
    allowed: list[tuple[int, tuple[int, ...]]] = []
    try:
        configs, constexprs = _launch_variants(request, kernel, diagnostics, allowed)
        _check_grid_names(request, constexprs)
        specs = _variant_specs(request, kernel, source, configs, constexprs)
    except DiagnosticError as err:
        return Planned((), (), (), (*diagnostics, *err.diagnostics))
    return Planned(tuple(tuple(cfg) for cfg in configs), tuple(constexprs), tuple(specs), tuple(diagnostics), tuple(allowed))


def _launch_variants(
    request: PlanRequest, kernel, diagnostics: list[Diagnostic], allowed: list | None = None
) -> tuple[list[list[tuple[str, Any]]], list[dict[str, Any]]]:
    """``(configs, constexprs)``: the group's configs (entries as the op spells them) and
    per config every constexpr's value, from Triton's launch model
    (:func:`autotune_export.cuda.launch_model.launch_variants`, convention ``TRITON``): the
    op's ``configs([...])``, else the kernel's (outermost) ``triton.autotune`` configs after
    its ``prune_configs_by``; ``triton.heuristics`` in Triton's wrapper order (a value the
    op's config gives is kept); the ``def``'s defaults.

    What the user's functions see, answering for the first target (Triton's driver and
    torch, as while the file is imported): per runtime parameter a
    :class:`~autotune_export.cuda.launch_model.TensorArgument` for a pointer (``.dtype``,
    ``.element_size()`` from the signature), None for a ``none`` parameter, and a scalar's
    value where the host determines it, else an
    :class:`~autotune_export.cuda.launch_model.UnknownScalar`. Heuristics see a scalar only
    when every dispatch of the group passes the same value without the tuning workload
    (their values are compiled in). ``prune_configs_by`` runs once per dispatch of the
    group and per ``tune_workload`` (``request.sites``), as Triton prunes at each launch with
    its own arguments: a dispatch may run the configs its pruning keeps on every one of its
    tuning workloads; the group keeps the configs some dispatch may run (a config no dispatch
    may run is not compiled), and appends ``(dispatch, positions in the configs)`` to
    ``allowed`` for each dispatch that may run fewer than the group. Remarks (appended to
    ``diagnostics``) say what the pruning saw and what each dispatch may run. Triton prunes
    only when there is more than one config (``Autotuner.run``).

    Raises DiagnosticError at the group when a function reads what is not known, raises,
    or keeps no config (for one dispatch and tuning workload, or for every tuning workload
    of one dispatch)."""
    from autotune_export.cuda import triton_compile as tc

    model = lm.KernelModel.from_loaded(kernel)
    tuner = model.autotune
    by_name = {p.name: p for p in request.signature}
    sites = list(request.sites)
    scalars = [p.name for p in request.signature if not p.is_pointer]
    # Heuristics: scalars that every dispatch passes, the same without any tuning workload,
    # and the shapes of the tensors every dispatch binds, the same static shape.
    static = {}
    for name in scalars + [p.name for p in request.signature if p.is_pointer]:
        values = [site.values.get(name, UNKNOWN) for site in sites]
        if (
            values
            and all(x is not UNKNOWN and x == values[0] for x in values)
            and all(name not in site.from_workload for site in sites)
        ):
            static[name] = values[0]

    def named(values: dict) -> dict:
        out: dict[str, Any] = {}
        for name in (a for a in kernel.arg_names if a not in kernel.constexpr_names):
            p = by_name.get(name)
            if name in request.nones or p is None:
                out[name] = None
            elif p.is_pointer:
                shape = values.get(name)
                out[name] = lm.TensorArgument(name, p.type) if shape is None else lm.TensorArgument.dense(name, p.type, shape)
            else:
                value = values.get(name, UNKNOWN)
                out[name] = lm.UnknownScalar(name) if value is UNKNOWN else value
        return out

    explicit = request.configs
    override = None
    if explicit is not None:
        override = [
            lm.Config.of(
                {"kwargs": {k: v for k, v in cfg if k not in OPTION_NAMES}, **{k: v for k, v in cfg if k in OPTION_NAMES}}
            )
            for cfg in explicit
        ]
    prune = tuner is not None and explicit is None and len(tuner.triton_configs) == len(kernel.default_configs)
    try:
        plan = lm.launch_variants(
            model,
            named(static),
            {},
            convention=lm.TRITON,
            configs=override if override is not None else None,
            sites=[named(site.values) for site in sites] or None,
            capability=request.archs[0][1],
            prune=prune,
            launches=[site.dispatch for site in sites] or None,
        )
    except lm.LaunchModelError as err:
        raise _launch_model_error(request, err) from None

    constexprs = [{c: tc.plain_value(v) for c, v in variant.constexprs} for variant in plan.variants]
    if explicit is not None:
        return [list(cfg) for cfg in explicit], constexprs
    defaults = kernel.default_configs
    configs = [config_entries(tc.config_dict(v.config)) for v in plan.variants]
    if plan.pruning is None:
        return configs, constexprs
    diagnostics.extend(_pruning_remarks(request, tuner, defaults, plan.pruning, sites))
    if allowed is not None and sites:
        dispatches = sorted({site.dispatch for site in sites})
        for d, mine in zip(dispatches, plan.pruning.allowed):
            if len(mine) < len(configs):
                allowed.append((d, tuple(mine)))
    return configs, constexprs


def _launch_model_error(request: PlanRequest, err: lm.LaunchModelError) -> DiagnosticError:
    """The launch model's error as the user's diagnostic: where it comes from (the pruning,
    a heuristic, a constexpr without value: at the group, the configs, config N) and how to
    avoid it."""
    loc, kernel_name = request.location, request.kernel
    if err.stage == "prune":
        if err.unknown is None:
            fix = "give the configs to export explicitly with configs([...])"
        elif "." in err.unknown:
            fix = (
                "of a tensor .dtype and .element_size() are known from the signature, .shape, .numel() and "
                ".stride() where every dispatch binds a tensor of static shape (dense, as IREE's buffers are); "
                "give the configs to export explicitly with configs([...])"
            )
        else:
            fix = (
                "a scalar is known when each dispatch of the group passes a value computed from constants, "
                "tune_workload(...) or static argument shapes; otherwise give the configs to export "
                "explicitly with configs([...])"
            )
        return DiagnosticError.at(
            loc, f"@{request.name}: prune_configs_by of the triton.autotune of '{kernel_name}': {err}; {fix}"
        )
    if err.stage and err.stage.startswith("heuristic ") and err.unknown is not None:
        hname = err.stage[len("heuristic ") :]
        known = (
            (
                " (a tensor's .shape, .numel() and .stride() are known where every dispatch binds it a tensor "
                "of the same static shape)"
            )
            if "." in err.unknown
            else ""
        )
        return DiagnosticError.at(
            request.config_location(None),
            f"triton.heuristics for '{hname}' needs run-time argument '{err.unknown}'{known}; give '{hname}' in every config",
        )
    if err.stage == "constexpr":
        # "config N gives no value for ...": at config N (its "{" in configs([...]), or
        # the kernel's name when the configs are its triton.autotune's).
        m = re.match(r"config (\d+) ", str(err))
        message = str(err).replace(" gives no value for", " does not give")
        if m and request.configs is None:
            message = message.replace(m.group(0), f"{m.group(0)}(a config of the triton.autotune of '{kernel_name}') ", 1)
        return DiagnosticError.at(request.config_location(int(m.group(1)) if m else None), message)
    return DiagnosticError.at(loc, f"@{request.name}: {err}")


def _pruning_remarks(request: PlanRequest, tuner, defaults, pruning, sites) -> list[Diagnostic]:
    """One remark per config pruned (per dispatch and workload when there are several),
    one saying what the pruning saw, one naming the configs the group keeps (none of these
    when the pruning kept every config unchanged), and one per dispatch that may run fewer
    configs than the group, naming them (its own pruning's, in its own order)."""
    from autotune_export.cuda import triton_compile as tc

    remarks: list[Diagnostic] = []
    loc = request.location
    several = len(pruning.outcomes) > 1
    for outcome, site in zip(pruning.outcomes, sites or [None]):
        where = f" for {site.label}" if several and site is not None else ""
        for p in outcome.pruned:
            remarks.append(
                Diagnostic(
                    "remark",
                    f"@{request.name}: triton.autotune config {p.index} "
                    f"{config_text(config_entries(defaults[p.index]))} pruned{where}: "
                    f"{p.reason} (prune_configs_by)",
                    loc,
                )
            )
    functions = ", ".join(
        f"{f} '{lm.function_name(fn)}'"
        for f, fn in (("early_config_prune", tuner.early_config_prune), ("perf_model", tuner.perf_model))
        if fn is not None
    )
    if sites:
        seen = "; ".join(
            f"{site.label}: "
            + (
                ", ".join(
                    f"{k} = {v!r}" + (" (tune_workload)" if k in site.from_workload else "")
                    for k, v in site.values.items()
                    if v is not UNKNOWN and not isinstance(v, tuple)
                )
                or "no scalar value"
            )
            for site in sites
        )
        dynamic = sorted({k for site in sites for k in site.from_workload})
        tail = (
            (
                f"; a run-time value of {', '.join(dynamic)} outside tune_workload is not pruned for (Triton would "
                "prune at that launch)"
            )
            if dynamic
            else ""
        )
        remarks.append(Diagnostic("remark", f"@{request.name}: prune_configs_by ({functions}) saw {seen}{tail}", loc))
    kept = [tc.config_dict(c) for c in pruning.kept]
    changed = [i for i, c in zip(pruning.kept_indices, kept) if i is not None and c != defaults[i]]
    launches = sorted({site.dispatch for site in sites}) if sites else [0]
    if list(pruning.kept_indices) != list(range(len(defaults))) or changed:
        sources = ", ".join("new" if i is None else str(i) for i in pruning.kept_indices)  # new: made by the pruner
        edited = f"; the pruner changed configs {', '.join(map(str, changed))}" if changed else ""
        every = f" (those one of its {len(launches)} dispatches may run)" if len(launches) > 1 else ""
        remarks.append(
            Diagnostic(
                "remark",
                f"@{request.name}: prune_configs_by ({functions}) keeps {len(pruning.kept)} of {len(defaults)} "
                f"triton.autotune configs{every}: the group's configs 0..{len(pruning.kept) - 1} are its configs "
                f"{sources}{edited}",
                loc,
            )
        )
    if sites and len(launches) > 1:
        for d, mine in zip(launches, pruning.allowed):
            if len(mine) < len(pruning.kept):
                label = next(site.label for site in sites if site.dispatch == d).split(", tune_workload ")[0]
                remarks.append(
                    Diagnostic(
                        "remark",
                        f"@{request.name}: {label} may run only the group's configs {', '.join(map(str, mine))} "
                        "(those its own prune_configs_by keeps, in Triton's order; another choice runs config "
                        f"{mine[0]} there)",
                        loc,
                    )
                )
    return remarks


def _check_grid_names(request: PlanRequest, constexpr_values) -> None:
    """The grid's names against what each config gives (workload values, constexprs,
    launch options): known only now when the configs are the kernel's triton.autotune's
    (the front end checked those of configs([...])). Before anything compiles; a
    DiagnosticError at the unknown name in grid(...)."""
    kernel_name = request.kernel
    for index, values in enumerate(constexpr_values):
        known = {*values, *OPTION_NAMES, *(request.workload or [])}
        for text in request.grid:
            for nm in grid_mod.names(grid_mod.parse(text)):
                if nm.name not in known:
                    raise DiagnosticError.at(
                        request.at(f"grid.{nm.name}", "grid"),
                        f"grid uses unknown name '{nm.name}'; names in a grid are workload values "
                        f"({', '.join(request.workload or []) or 'none'}), the configs' constexprs "
                        f"({', '.join(k for k in values if k not in OPTION_NAMES) or 'none'}"
                        + (f"; from the triton.autotune of '{kernel_name}'" if request.configs is None else "")
                        + f") and {', '.join(OPTION_NAMES)}"
                        + did_you_mean(nm.name, sorted(known)),
                    )


def _variant_specs(request: PlanRequest, kernel, source, configs, constexpr_values) -> list:
    """The :class:`~autotune_export.cuda.triton_compile.VariantSpec` s of the configs, target-major
    (one copy of every spec per target). Triton's JIT specialization (``tt.divisibility`` 16):
    pointers marked ``:16`` are assumed aligned in every variant (IREE bindings are;
    jax-triton assumes the same); scalars marked ``:16`` only in a second, specialized variant
    that the dispatch takes when the run-time values are multiples of 16. Integers marked
    ``:1`` become constexprs equal to 1 in the specialized variant, as Triton's JIT does; they
    leave its PTX parameter list (:mod:`autotune_export.cuda.link`). Raises DiagnosticError at
    a config whose values a spec cannot hold (a tuple)."""
    from autotune_export.cuda import triton_compile as tc

    archs = request.archs
    nones = {n: None for n in request.nones}
    config_specs = []
    for index, cfg in enumerate(configs):
        values = constexpr_values[index]
        options = {k: v for k, v in cfg if k in OPTION_NAMES}
        pointer_hints = tuple(i for i, p in enumerate(request.signature) if p.divisible and p.is_pointer)
        ones = {p.name for p in request.signature if p.hint == 1}
        kept = [p for p in request.signature if p.name not in ones]
        all_hints = tuple(i for i, p in enumerate(kept) if p.divisible)
        variants = [(request.signature, pointer_hints, {})]
        if all_hints != pointer_hints or ones:
            variants.append((kept, all_hints, {n: 1 for n in ones}))
        for signature, hints, fixed in variants:
            consts = {**nones, **values, **fixed}
            try:
                spec = tc.VariantSpec(
                    kernel=dataclasses.replace(source, import_arch=archs[0][1]),
                    signature=tuple((p.name, p.type) for p in signature),
                    constexprs=tuple((c, consts[c]) for c in kernel.arg_names if c in consts),
                    num_warps=options.get("num_warps", 4),
                    num_stages=options.get("num_stages", 3),
                    num_ctas=options.get("num_ctas", 1),
                    maxnreg=options.get("maxnreg"),
                    arch=archs[0][1],
                    ptx_version=request.ptx_version,
                    divisibility=hints,
                )
            except ValueError as err:  # e.g. a value the op cannot hold (a tuple)
                raise DiagnosticError.at(request.config_location(index), f"config {index}: {err}") from None
            config_specs.append(spec)
    return [dataclasses.replace(sp, arch=arch) for _, arch in archs for sp in config_specs]


def autotuner_outputs(
    name: str, kernel_name: str, location: Location | None, signature: Sequence[Param], reset_to_zero, restore_value, kernel
) -> tuple[dict[str, list[str]], tuple[Diagnostic, ...]]:
    """The ``reset_to_zero`` / ``restore_value`` of group ``name`` (at ``location``, its
    parameters ``signature``, ``none`` ones included) that the op omits (``reset_to_zero`` /
    ``restore_value`` None), from the outermost ``triton.autotune`` (``AutotuneWrapper``) of
    ``kernel`` (a :class:`~autotune_export.cuda.kernel_files.LoadedKernel`): the op's clause
    wins, as a call's explicit argument does. As in Triton's autotuner, a name the call passes
    None for is skipped, and a user ``pre_hook`` replaces both (a remark says so:
    autotune-export cannot run the hook). A ``restore_value`` name of a pointer the dispatch
    only reads (not ``{output}``) is left out with a remark: Triton copies it back unchanged
    (gemlite's GEMV kernels name their inputs there). Any other name that is not an
    ``{output}`` pointer of the signature is an error at the group (only what a dispatch
    returns can be zero-filled or restored).

    Returns ``({clause: names}, diagnostics)``: the clauses to set (those with names kept) and
    the remarks, then the error that stopped it (then no clause to set)."""
    from autotune_export.cuda import triton_compile as tc

    tuner = next((w for w in kernel.wrappers if isinstance(w, tc.AutotuneWrapper)), None)
    if tuner is None or (reset_to_zero is not None and restore_value is not None):
        return {}, ()
    omitted = {"reset_to_zero": reset_to_zero is None, "restore_value": restore_value is None}
    given = {c: list(getattr(tuner, c)) for c in ("reset_to_zero", "restore_value") if omitted[c]}
    diagnostics: list[Diagnostic] = []
    if tuner.pre_hook is not None:
        if any(given.values()):
            diagnostics.append(
                Diagnostic(
                    "remark",
                    f"@{name}: the triton.autotune of '{kernel_name}' has a pre_hook, which replaces its "
                    f"{' and '.join(c for c, v in given.items() if v)} (as in Triton); autotune-export cannot run "
                    "the hook: give reset_to_zero(...) / restore_value(...) on the op",
                    location,
                )
            )
        return {}, tuple(diagnostics)
    by_name = {p.name: p for p in signature}
    chosen: dict[str, list[str]] = {}
    for clause, names in given.items():
        kept = []
        for pname in names:
            p = by_name.get(pname)
            if p is not None and p.is_none:
                continue  # Triton's default hooks skip an argument passed as None
            if clause == "restore_value" and p is not None and p.is_pointer and not p.output:
                # Triton's restore_value copies the argument back after each timed run: for one
                # the dispatch only reads (an immutable operand) there is nothing to restore.
                diagnostics.append(
                    Diagnostic(
                        "remark",
                        f"@{name}: the triton.autotune of '{kernel_name}' names '{pname}' in restore_value, "
                        "which the dispatch only reads (not an {output} pointer): restoring it changes "
                        "nothing, left out",
                        location,
                    )
                )
                continue
            if p is None or not (p.is_pointer and p.output):
                what = "not a parameter of the signature" if p is None else "not an {output} pointer"
                diagnostics.extend(
                    DiagnosticError.at(
                        location,
                        f"the triton.autotune of '{kernel_name}' names '{pname}' in {clause}, which is {what} of @{name}: "
                        "IREE treats dispatch operands as immutable, so only what the dispatch returns can be "
                        f"{'zero-filled' if clause == 'reset_to_zero' else 'restored'}; mark it {{output}}, or give "
                        f"{clause}(...) on the op to override the kernel's",
                    ).diagnostics
                )
                return {}, tuple(diagnostics)
            kept.append(pname)
        if kept:
            chosen[clause] = kept
    return chosen, tuple(diagnostics)
