"""Run and tune autotune-export modules with ``iree.runtime``.

A module built by autotune-export carries, on its ``@__autotune`` function, reflection
metadata (``autotune.groups``, JSON) naming every group, its variants, the ``select`` entry that
sets a group's choice and one ``bench`` entry per variant (see
:mod:`autotune_export.passes.emit_autotune_initializer`). :class:`AutotunedModule` loads such a
module on an IREE driver (``cuda``, ``local-task``, ``local-sync``), lists the groups, selects
variants, calls functions with numpy arrays, and tunes with one of four strategies:

``"load"``
    tune every group when the module is loaded (``@__autotune``'s job, on fake data);
``"request"``
    tune when asked: :meth:`AutotunedModule.autotune` or :meth:`AutotunedModule.tune_group`;
``"round-robin"``
    live calls of a group's host function rotate through its variants, timing each call, and
    lock on the fastest once every variant has ``min_rounds`` timings and the winner's lead is
    stable;
``"fixed"``
    no tuning: the choices of a tuning-results file (``results=``), else the module's defaults
    (the IR's ``default(@v)``, written by ``autotune-export --tuning-results``).

Timing is on the host (IREE's VM has no clock): a benchmark entry ``bench(n)`` replays the
group's host function many times in one synchronous call, and the per-run time is the
difference of call sizes divided by the extra runs (:func:`loop_bench`, the default
``do_bench`` of every driver). ``warmup_ms``/``rep_ms`` are Triton's ``do_bench`` budgets.

Results go to a JSON tuning cache (format ``autotune-export.tuning-results/1``, the file that
``autotune-export --tuning-results`` reads): decisions keyed by device name, driver version,
module content hash, group and workload (so a second load of the same module on the same
device does not retune) and per-variant timings keyed by the variant's fingerprint (so adding a
config times only the new variant), written atomically.

A group keeps one choice per workload (the dispatch's workload values, as Triton keeps one per
``key``): each tuning workload, and each live workload under round-robin, fills a slot of the
group's run-time table (slots reused in turn; a workload that lost its slot gets it back on its
call); other workloads use the group's choice, the variant most workloads chose
(:func:`autotune_export.contract.choose_result`, the rule of ``--tuning-results`` too). Before a
variant wins, its results on the fake data are checked against the default variant's
(:func:`results_agree`). Measurements go through a :class:`Benchmarker` (:mod:`.timing`).

This module holds :class:`AutotunedModule`'s loading, looking up and selecting; the rest is
split by concern into mixins: :mod:`.live` (calls, round-robin rotation, the per-workload
slots), :mod:`.tuning` (tuning and the cross-check), :mod:`.failures` (the tuning worker and
dropped variants) and :mod:`.records` (tuning-cache keys and records).
"""

from __future__ import annotations

import hashlib
import math
import os
import pathlib
import warnings
import weakref
from typing import Callable, Sequence

from autotune_export.contract import (
    FLUSH_L2_FUNCTION,
    RESULTS_FORMAT,
    GroupReflection,
    choose_result,
    per_workload_choices,
    results_mismatch,
    workload_values_problem,
)
from autotune_export.runtime.checking import CHECK_TOLERANCES, disagreement, results_agree  # noqa: F401  (re-exported)
from autotune_export.runtime.device import allocator_specs, device_identity, make_config, module_reflection, runtime_flag_problem  # noqa: F401  (re-exported)
from autotune_export.runtime.calls import ML_DTYPES_ELEMENT_TYPES, ml_dtypes_array_to_device
from autotune_export.runtime.cache import TuningCache, default_results_path  # noqa: F401  (re-exported)
from autotune_export.runtime.failures import Failures, close_isolation
from autotune_export.runtime.isolation import ISOLATION_MODES, Isolation, default_isolation
from autotune_export.runtime.live import LiveCalls
from autotune_export.runtime.profile import TuningProfile, profile_from_env
from autotune_export.runtime.records import CacheRecords
from autotune_export.runtime.timing import (
    TIE_TOLERANCE,
    Benchmarker,
    GivenTimings,
    LoopTimer,
    VariantTiming,
    WallClock,
    loop_bench,
    pick,
    race,
)
from autotune_export.runtime.tuning import Tuning

__all__ = [
    "GroupInfo",
    "module_reflection",
    "VariantTiming",
    "AutotunedModule",
    "positive_amount",
    "TuningCache",
    "loop_bench",
    "race",
    "pick",
    "LoopTimer",
    "TIE_TOLERANCE",
    "Benchmarker",
    "WallClock",
    "GivenTimings",
    "device_identity",
    "RESULTS_FORMAT",
    "STRATEGIES",
]

STRATEGIES = ("load", "request", "round-robin", "fixed")


#: One group as the module's reflection metadata describes it: the contract's schema, which
#: the compiler writes (:class:`autotune_export.contract.GroupReflection`).
GroupInfo = GroupReflection


def positive_amount(name: str, value: object, unit: str, alternative: str = "") -> float:
    """``value`` as a float when it is a finite number > 0 (a time limit, a time budget), else
    ValueError naming ``name`` and the allowed range (``alternative``: what else it may be). The
    one check behind :class:`AutotunedModule`'s ``variant_timeout_s``/``budget_ms`` and the
    ``tune`` command's ``--variant-timeout``/``--budget``: a limit of 0 or less would stop every
    variant, the default too, and NaN compares false with everything."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok:
        other = f", {alternative}" if alternative else ""
        raise ValueError(f"{name} = {value!r}: expected a finite number of {unit} > 0{other}")
    return float(value)


class AutotunedModule(LiveCalls, Tuning, Failures, CacheRecords):
    """A loaded autotune-export module.

    ``module``: path of a .vmfb or its bytes. ``driver``: IREE HAL driver (``cuda``,
    ``local-task``, ``local-sync``). ``strategy``: one of :data:`STRATEGIES`. ``cache``: a
    :class:`TuningCache`, a path, ``True`` (the default file, see :func:`default_results_path`)
    or ``None``/``False`` (no cache). ``results``: a tuning-results file for ``"fixed"``.
    ``do_bench``: ``f(run, *, unroll, warmup_ms, rep_ms) -> samples in ms`` (default
    :func:`loop_bench`). ``flush_l2``: run the module's L2-flush entry before each timed run
    (then one run per sample). ``search``: how :meth:`tune_group` times the variants:
    ``"race"`` (the default: :func:`race`, successive elimination on calls sized from each
    kernel's own time, with an early stop once the leader is separated beyond noise; see
    docs/runtime.md, "Search and timing") or ``"exhaustive"`` (every variant with the full
    ``warmup_ms``/``rep_ms`` budgets, as Triton's autotuner does; also used with a custom
    ``do_bench`` or ``flush_l2``). ``budget_ms``: the time budget of the race of one group on
    one workload (ms of wall clock, warm-up included; None: 20 ms per variant,
    :data:`autotune_export.runtime.timing.AUTO_BUDGET_MS_PER_VARIANT`, a sixth of what
    Triton's ``do_bench`` spends, raised after round 0 to
    :data:`~autotune_export.runtime.timing.ROUND0_BUDGET_FACTOR` times what warm-up and round 0
    took; ``math.inf``: none, the race ends by its own rule only): round 0 gives every variant a
    sample, and a later round that would overrun it takes only the leaders whose calls fit (see
    :func:`autotune_export.runtime.timing.race`). ``profile``: keep a
    :class:`autotune_export.runtime.profile.TuningProfile` (:attr:`profile`) of every tuning
    and print its phases to stderr after each tuned group (default: the environment variable
    ``AUTOTUNE_EXPORT_PROFILE``). These options configure the default benchmarker,
    :class:`WallClock`; ``benchmarker``: another :class:`Benchmarker` to measure with instead
    (e.g. :class:`GivenTimings`, which decides on given timings: tests, replays), used for
    benchmarks and for round-robin's live calls alike. Ties within
    :data:`TIE_TOLERANCE` go to the lower variant index (:func:`pick`). ``device_results``:
    calls return ``iree.runtime.DeviceArray`` results (no copy to the host) unless told
    otherwise per call. ``allow_unchecked``: let round-robin run, on live calls, variants that
    have no check entry (a group built without ``tune_workload`` for a host of dynamic shapes
    has none): their results are returned unchecked. By default such a group is not rotated:
    it stays on its default variant, with a note (:attr:`notes`) and a ``RuntimeWarning``, so a
    variant never runs on live data before it agreed with the default on the fake data.

    ``isolation`` (None: :func:`~autotune_export.runtime.isolation.default_isolation`,
    ``$AUTOTUNE_EXPORT_ISOLATION`` or ``"auto"``): where tuning runs the variants' benchmark and check entries
    (:mod:`autotune_export.runtime.isolation`): ``"process"``, in a worker process, so that a
    variant that faults (a CUDA illegal address, a segmentation fault), runs past
    ``variant_timeout_s`` seconds (per variant and step: its first run, its measurement, its
    check) or that the runtime refuses is dropped with its reason (:attr:`drop_reasons`,
    recorded in the tuning cache so it is not run again) instead of taking this process down
    or hanging it; a group's tuning stops after ``group_timeout_s`` seconds. ``"none"``: in
    this process (a faulting variant ends it, a hanging one hangs it). ``"auto"`` (the
    default): in a worker when a variant to run has not yet run to completion on this device
    and workload (no timing of it in the tuning cache, none in this object), else in this
    process, which saves starting a worker (seconds: a process, ``iree.runtime``, the
    module; on CUDA a context and the driver's PTX compilation). ``iree_flags``:
    ``iree.runtime`` flags (``iree.runtime.flags.parse_flags``, process-wide) parsed before the
    device is created here and in the worker, so both devices are configured alike;
    ``device_allocators``: the device's allocator specs (IREE's ``--device_allocator``, e.g.
    ``["caching"]``; None: none; :func:`~autotune_export.runtime.device.make_config`), here and in the
    worker: with ``iree_flags=["--cuda_async_allocations=false"]`` a CUDA program's per-call
    allocations reuse freed memory (docs/runtime.md, "Per-call allocations"). Raises
    ``RuntimeError`` (iree.runtime) when the driver or module cannot be loaded, ``ValueError``
    for a module without autotune metadata, a bad strategy or isolation, or a ``budget_ms``
    or ``variant_timeout_s`` that is not a finite number > 0 (:func:`positive_amount`; before
    anything loads: a variant limit of 0 dropped every variant, the default too), and
    ``TypeError`` for ``device_allocators`` that are a str or hold a non-str
    (:func:`~autotune_export.runtime.device.allocator_specs`, before anything loads).
    """

    def __init__(
        self,
        module: str | bytes | os.PathLike,
        driver: str = "cuda",
        *,
        strategy: str = "request",
        cache: TuningCache | str | os.PathLike | bool | None = True,
        results: str | os.PathLike | None = None,
        warmup_ms: float = 25.0,
        rep_ms: float = 100.0,
        do_bench: Callable | None = None,
        flush_l2: bool = False,
        min_rounds: int = 3,
        max_rounds: int = 20,
        search: str = "race",
        budget_ms: float | None = None,
        device_results: bool = False,
        benchmarker: Benchmarker | None = None,
        allow_unchecked: bool = False,
        isolation: str | None = None,
        variant_timeout_s: float = 60.0,
        group_timeout_s: float = 600.0,
        iree_flags: Sequence[str] = (),
        device_allocators: Sequence[str] | None = (),
        profile: bool | None = None,
    ):
        positive_amount("variant_timeout_s", variant_timeout_s, "seconds")
        allocators = allocator_specs(device_allocators)
        if budget_ms is not None:
            positive_amount("budget_ms", budget_ms, "milliseconds", "or None: the default budget")
        import iree.runtime as rt

        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy '{strategy}'; expected one of {', '.join(STRATEGIES)}")
        isolation = default_isolation() if isolation is None else isolation
        if isolation not in ISOLATION_MODES:
            raise ValueError(f"unknown isolation '{isolation}'; expected one of {', '.join(ISOLATION_MODES)}")
        self.isolation, self.variant_timeout_s, self.group_timeout_s = isolation, variant_timeout_s, group_timeout_s
        self.iree_flags = list(iree_flags)
        for flag in self.iree_flags:
            problem = runtime_flag_problem(flag)
            if problem:
                raise ValueError(problem)
        if self.iree_flags:
            rt.flags.parse_flags(*self.iree_flags)
        self._rt = rt
        self.driver = driver
        self.strategy = strategy
        self.warmup_ms, self.rep_ms = warmup_ms, rep_ms
        self.do_bench = do_bench or loop_bench
        self.flush_l2 = flush_l2
        self.min_rounds, self.max_rounds = min_rounds, max_rounds
        self.device_results = device_results
        self._invokers: dict = {}
        if search not in ("race", "exhaustive"):
            raise ValueError(f"unknown search '{search}'; expected race or exhaustive")
        self.search, self.budget_ms = search, budget_ms
        #: The phase timers of tunings (``profile=True``), else None.
        self.profile: TuningProfile | None = TuningProfile() if (profile_from_env() if profile is None else profile) else None
        data = bytes(module) if isinstance(module, (bytes, bytearray)) else pathlib.Path(module).read_bytes()
        self.module_sha256 = hashlib.sha256(data).hexdigest()
        self._module_source = data if isinstance(module, (bytes, bytearray)) else os.fspath(module)
        self.device_allocators = allocators
        self.config = make_config(rt, driver, self.device_allocators)
        self.context = rt.SystemContext(config=self.config)
        self.vm_module = rt.VmModule.copy_buffer(self.context.instance, data)
        self.context.add_vm_module(self.vm_module)
        self.functions = self.context.modules[self.vm_module.name]
        groups = module_reflection(self.vm_module)
        self.benchmarker: Benchmarker = benchmarker or WallClock(
            do_bench=self.do_bench,
            warmup_ms=warmup_ms,
            rep_ms=rep_ms,
            search=search,
            race_budget_ms=budget_ms,
            flush=self.functions[FLUSH_L2_FUNCTION] if flush_l2 else None,
            profile=self.profile,
        )
        self.groups = {g.key: g for g in groups}
        if cache is True:
            cache = TuningCache()
        elif isinstance(cache, (str, os.PathLike)):
            cache = TuningCache(cache)
        self.cache: TuningCache | None = cache or None
        self.identity = device_identity(driver)
        self.chosen: dict[str, str] = {g.key: g.variants[g.default] for g in self.groups.values()}
        self.sources: dict[str, str] = {g.key: "default" for g in self.groups.values()}
        #: Per group, why a strategy left it alone (e.g. no benchmark entries to time).
        self.notes: dict[str, str] = {}
        #: Round-robin state: group -> live workload key -> per variant its timings (_LOCKED once locked).
        self._rounds: dict[str, dict[str, dict | None]] = {}
        #: Group -> {workload values: variant} of the per-workload table (as filled by this object).
        self.per_workload: dict[str, dict[tuple, str]] = {}
        #: Group -> tuning workload index -> the timings the last tuning decided on (measured or cached).
        self.timings: dict[str, dict[int, list[VariantTiming]]] = {}
        #: Group -> indices of variants dropped: by the cross-check (results differ from the
        #: default's) or because they faulted, hung or were refused (``isolation``).
        self.dropped: dict[str, set[int]] = {}
        #: Group -> variant name -> why it was dropped (``"fault: ..."``, ``"hang: ..."``,
        #: ``"error: ..."``, ``"differs: ..."``); never chosen.
        self.drop_reasons: dict[str, dict[str, str]] = {}
        #: The tuning worker (``isolation``), started when first needed; its holder lets the
        #: finalizer end it without keeping this object alive.
        self._isolation_box: list[Isolation | None] = [None]
        weakref.finalize(self, close_isolation, self._isolation_box)
        #: (fingerprint, workload) of variants that ran to completion in a worker.
        self._proven: set[tuple[str, str]] = set()
        #: time.monotonic() at which the group being tuned runs out of time (group_timeout_s).
        self._deadline: float | None = None
        #: Groups whose tuning the group limit cut short: their decisions are not stored.
        self._cut_short: set[str] = set()
        self._slot_of: dict[str, dict[tuple, int]] = {}
        #: Round-robin: host function -> the group whose live calls it tunes (the last group of
        #: a host wins, as before).
        self.allow_unchecked = allow_unchecked
        self._rotating_hosts: dict[str, GroupInfo] = (
            {g.host: g for g in reversed(list(self.groups.values())) if self._may_rotate(g)} if strategy == "round-robin" else {}
        )
        #: Group -> the decisions (tuning-results entries) made or read from the cache by this
        #: object; the group's choice is chosen from them by contract.choose_result.
        self.decisions: dict[str, list[dict]] = {}
        #: Round-robin: group -> argument bucket -> its workload values (groups with a table).
        self._bucket_values: dict[str, dict] = {}
        #: Round-robin: group -> live workload -> its key in the tuning cache.
        self._live_keys: dict[str, dict] = {}
        #: Group -> the slot reused next once all are taken (in turn, oldest first).
        self._next_slot: dict[str, int] = {}
        #: Host function -> groups whose table holds more workloads than slots (see __call__).
        self._spilled: dict[str, list[GroupInfo]] = {}
        self._agreeing: dict[str, set[int]] = {}
        self._unwritable_warned = False
        self._references: dict[str, list] = {}
        #: Per group, what its last cross-check compared with: (checking.Baseline's against, why).
        self._against: dict[str, tuple[str, str]] = {}
        if strategy == "fixed" and results is not None:
            self.apply_results(results)
        elif strategy == "load":
            self.autotune()

    # --- looking up and selecting -------------------------------------------------------
    def group(self, name: str) -> GroupInfo:
        """Look a group up by ``executable::group`` or by its bare name (if unique)."""
        if name in self.groups:
            return self.groups[name]
        matches = [g for g in self.groups.values() if g.group == name]
        if len(matches) != 1:
            raise KeyError(f"no unique group named '{name}' (groups: {', '.join(self.groups)})")
        return matches[0]

    def select(self, group: str, variant: int | str) -> None:
        """Use ``variant`` (index or export name) for every later dispatch of ``group``."""
        info = self.group(group)
        index = info.variants.index(variant) if isinstance(variant, str) else int(variant)
        if not 0 <= index < len(info.variants):
            raise IndexError(f"group {info.key} has {len(info.variants)} variants, not {index}")
        self.functions[info.select](index)
        self.chosen[info.key] = info.variants[index]

    def apply_results(self, results: str | os.PathLike) -> dict[str, str]:
        """Select the variants a tuning-results file picks for this module's groups, by the rule
        ``--tuning-results`` follows too (:func:`autotune_export.contract.choose_result`: per
        workload its last entry, then the variant most workloads chose, ties to the lower
        variant index), and fill the per-workload table from its entries with
        ``workload_values`` (:func:`autotune_export.contract.per_workload_choices`; all of them,
        also beyond the module's slots, see :meth:`__call__`). Returns group -> variant. A file
        none of whose entries matches a group of this module (another module's) is said so: a
        ``RuntimeWarning`` and a note (:attr:`notes`) per group, naming the file and what it holds
        (:func:`autotune_export.contract.results_mismatch`)."""
        entries = TuningCache(results).entries()
        for i, entry in enumerate(entries):
            problem = workload_values_problem(entry)
            if problem is not None and any(
                entry.get("executable") == g.executable and entry.get("group") == g.group for g in self.groups.values()
            ):
                raise ValueError(
                    f"tuning results {results}: result {i} ({entry.get('executable')}::{entry.get('group')}): {problem}"
                )
        picked = {}
        for info in self.groups.values():
            chosen = choose_result(entries, info.executable, info.group, info.variants)
            if chosen is not None:
                self.select(info.key, chosen["variant"])
                self.sources[info.key] = "results"
                picked[info.key] = chosen["variant"]
            for values, variant in per_workload_choices(entries, info.executable, info.group, info.variants):
                self._set_slot(info, list(values), info.variants.index(variant))
        mismatch = results_mismatch(os.fspath(results), entries, [(g.executable, g.group) for g in self.groups.values()])
        if mismatch is not None and mismatch[0] == "warning":  # nothing matched: said, never silent
            for info in self.groups.values():
                self.notes[info.key] = f"stays on its default: {mismatch[1]}"
            warnings.warn(mismatch[1], RuntimeWarning, stacklevel=2)
        return picked

    def _invoker(self, function: str):
        """The (cached) iree.runtime function of ``function``."""
        fn = self._invokers.get(function)
        if fn is None:
            fn = self._invokers[function] = self.functions[function]
        return fn

    def device_array(self, array) -> object:
        """``array`` (numpy, ml_dtypes' bf16 and fp8 included) copied once to the module's
        device, for calls without copies."""
        if getattr(array.dtype, "name", None) in ML_DTYPES_ELEMENT_TYPES:
            return ml_dtypes_array_to_device(self._rt, self.config.device, array)
        return self._rt.asdevicearray(self.config.device, array)
