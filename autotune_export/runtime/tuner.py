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
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import sys
import time
import warnings
import weakref
from dataclasses import dataclass
from typing import Callable, Sequence

from autotune_export.contract import (
    AUTOTUNE_FUNCTION,
    FLUSH_L2_FUNCTION,
    RESULTS_FORMAT,
    GroupReflection,
    TuningWorkload,
    choose_result,
    per_workload_choices,
    workload_values_problem,
)
from autotune_export.runtime.checking import CHECK_TOLERANCES, disagreement, results_agree  # noqa: F401  (re-exported)
from autotune_export.runtime.device import device_identity, make_config, module_reflection  # noqa: F401  (re-exported)
from autotune_export.runtime.calls import (
    ML_DTYPES_ELEMENT_TYPES,
    argument_bucket,
    as_list,
    device_arguments,
    ml_dtypes_array_to_device,
    to_host,
    values_key,
    workload_key,
)
from autotune_export.runtime.cache import TuningCache, default_results_path  # noqa: F401  (re-exported)
from autotune_export.runtime.isolation import (
    ISOLATION_MODES,
    Isolation,
    VariantFailure,
    WorkerUnavailable,
    default_isolation,
    measure_variants,
)
from autotune_export.runtime.profile import TuningProfile, phase, profile_from_env
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

__all__ = [
    "GroupInfo",
    "module_reflection",
    "VariantTiming",
    "AutotunedModule",
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


class AutotunedModule:
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
    took; ``math.inf``: none, the race ends by its own rule only); checked between rounds, so
    every variant gets at least one sample and the race overruns it by one round at most. ``profile``: keep a
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
    device is created here and in the worker, so both devices are configured alike. Raises
    ``RuntimeError`` (iree.runtime) when the driver or module cannot be loaded, ``ValueError``
    for a module without autotune metadata or a bad strategy or isolation.
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
        profile: bool | None = None,
    ):
        import iree.runtime as rt

        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy '{strategy}'; expected one of {', '.join(STRATEGIES)}")
        isolation = default_isolation() if isolation is None else isolation
        if isolation not in ISOLATION_MODES:
            raise ValueError(f"unknown isolation '{isolation}'; expected one of {', '.join(ISOLATION_MODES)}")
        self.isolation, self.variant_timeout_s, self.group_timeout_s = isolation, variant_timeout_s, group_timeout_s
        self.iree_flags = list(iree_flags)
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
        self.config = make_config(rt, driver)
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
        weakref.finalize(self, _close_isolation, self._isolation_box)
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
        also beyond the module's slots, see :meth:`__call__`). Returns group -> variant."""
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
        return picked

    # --- calling --------------------------------------------------------------------------
    def __call__(self, function: str, *args, device: bool | None = None):
        """Call exported ``function``; returns its results.

        Arguments: numpy arrays and scalars, or ``iree.runtime.DeviceArray`` values already on
        the module's device (no copy: :meth:`device_array` makes one). Results are numpy arrays,
        or DeviceArrays with ``device=True`` (default: the module's ``device_results``). DLPack
        arrays (torch, jax, cupy) are not taken as they are: iree.runtime 3.13 has no DLPack
        import; pass ``numpy`` views of host memory or DeviceArrays.

        With the ``"round-robin"`` strategy, a call of a group's host function with a workload
        not seen before runs on the next variant in rotation and is timed, until that workload
        locks on its fastest variant (variants whose live timing the tuning cache holds for this
        workload are not run again; a workload the table already decides, by tuning or
        :meth:`apply_results`, is not timed at all). A workload is what the module can tell apart: for a group
        with a per-workload table, the dispatch's workload values (two argument shapes with equal
        values share one workload, its timings and its choice); otherwise the shapes, dtypes and
        scalar values of the arguments (as Triton's ``key``). While a workload rotates, its
        variant is set through a slot of the table, which the dispatch reads before anything
        else, so each timing belongs to the variant that ran. Each locked workload fills a slot.

        A group whose table holds more workloads than the module has slots (tuned, locked or
        from ``results=``) keeps them all: a call whose workload lost its slot gets it back
        before it runs (slots are reused in turn, oldest first), so every strategy chooses for
        every workload what the frozen module (``--tuning-results``) does.
        """
        args = device_arguments(self._rt, self.config.device, args)  # bf16/fp8 numpy arrays (ml_dtypes)
        if not self._rotating_hosts and not self._spilled:  # the common path: no tuning on live calls
            fn = self._invokers.get(function)
            if fn is not None:
                result = fn(*args)
                return result if (self.device_results if device is None else device) else to_host(result)
        device = self.device_results if device is None else device
        for spilled in self._spilled.get(function, ()):
            self._refill_slot(spilled, args)
        info = self._rotating_hosts.get(function)
        if info is not None and not self._per_workload(info) and info.key in self._locked():
            del self._rotating_hosts[function]  # tuned, cached or pinned meanwhile: nothing to rotate
            info = None
        if info is None:
            if function == AUTOTUNE_FUNCTION:
                # The module's own @__autotune runs each variant once (no clock in the VM);
                # through this runtime the same entry point tunes for real.
                self.autotune()
                return None
            result = self._invoker(function)(*args)
            return result if device else to_host(result)
        bucket = argument_bucket(args)
        values = None
        if self._per_workload(info):  # the module tells workloads apart by their workload values only
            known = self._bucket_values.setdefault(info.key, {})
            values = known.get(bucket)
            if values is None:
                values = known[bucket] = tuple(self._live_workload_values(info, args))
            bucket = values
        buckets = self._rounds.setdefault(info.key, {})
        rounds = buckets.get(bucket)
        if rounds is None and values is not None and values in self.per_workload.get(info.key, {}):
            rounds = buckets[bucket] = _LOCKED  # decided already (tuned, from the cache or results): not timed again
        if rounds is None:  # a workload not seen before
            key = values_key(values) if values is not None else workload_key(args)
            self._live_keys.setdefault(info.key, {})[bucket] = key
            rounds = buckets[bucket] = self._cached_rounds(info, key)
            if self._maybe_lock(info, rounds, key, values):
                rounds = buckets[bucket] = _LOCKED
        if rounds is _LOCKED:
            result = self._invoker(function)(*args)
            return result if device else to_host(result)
        key = self._live_keys[info.key][bucket]
        variant = min((v for v, r in rounds.items() if not r.cached), key=lambda v: len(rounds[v].times))
        index = info.variants.index(variant)
        if values is not None:
            self._set_slot(info, list(values), index, decided=False)
        else:
            self.select(info.key, index)
        result, ms = self.benchmarker.time_call(info, key, index, lambda: self._invoker(function)(*args))
        rounds[variant].times.append(ms)
        if self._maybe_lock(info, rounds, key, values):
            buckets[bucket] = _LOCKED
        return result if device else to_host(result)

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

    def _locked(self) -> set[str]:
        return {k for k, s in self.sources.items() if s in ("round-robin", "tuned", "cache", "results")}

    def _per_workload(self, info: GroupInfo) -> bool:
        """Whether ``info`` has a run-time table of per-workload choices that live calls can fill."""
        return bool(info.slots and info.workload_of and info.arity)

    def _unchecked(self, info: GroupInfo) -> set[int]:
        """The variants of ``info`` that no check entry can compare with the default (none
        with ``allow_unchecked``): round-robin never runs them on live data."""
        if self.allow_unchecked:
            return set()
        return {k for k in range(len(info.variants)) if k != info.default and not (k < len(info.check) and info.check[k])}

    def _may_rotate(self, info: GroupInfo) -> bool:
        """Whether round-robin may rotate ``info``'s live calls: False (with a note and a
        RuntimeWarning) when a variant other than the default cannot be checked."""
        unchecked = self._unchecked(info)
        if not unchecked:
            return True
        self.notes[info.key] = (
            f"{info.key} is not tuned on live calls: variant{'s' if len(unchecked) > 1 else ''} "
            f"{', '.join(info.variants[k] for k in sorted(unchecked))} cannot be checked against the default variant "
            f"{info.variants[info.default]} (the module has no check entries for the group: it was built without "
            "tune_workload for its host's dynamic arguments), so round-robin leaves it on the default; give the group "
            "tune_workload(...), or pass allow_unchecked=True to run unchecked variants on live data"
        )
        warnings.warn(self.notes[info.key], RuntimeWarning, stacklevel=3)
        return False

    def _cached_rounds(self, info: GroupInfo, key: str) -> dict:
        """The round-robin state of a new live workload ``key``: per variant its timings, taken
        from the tuning cache (ruler ``"live"``) where the cache has them. Variants that the
        cross-check dropped or cannot check (:meth:`_unchecked`) are left out."""
        self._check_all(info)  # live calls return their results: a wrong variant must never run on them
        self._references.pop(info.key, None)
        dropped = self.dropped.get(info.key, set()) | self._unchecked(info)
        if len(dropped) == len(info.variants):  # even the default failed on the fake data: the program's own choice runs
            dropped = dropped - {info.default}
        rounds = {v: _Rounds([]) for k, v in enumerate(info.variants) if k not in dropped}
        for k, v in enumerate(info.variants):
            if k in dropped:
                continue
            hit = self._cached_timing(info, k, key, "live")
            if hit is not None:
                rounds[v] = _Rounds(
                    [float(hit["median_ms"])] * 3, cached=(float(hit["median_ms"]), *map(float, hit["spread_ms"]))
                )
        return rounds

    def _maybe_lock(self, info: GroupInfo, rounds: dict, key: str, values: tuple | None) -> bool:
        """Lock live workload ``key`` (workload ``values`` for a group with a table, else None)
        on its fastest variant when every variant has ``min_rounds`` timings (or a cached one)
        and the winner's lead is stable (or after ``max_rounds``). Returns whether it locked."""
        fresh = [len(r.times) for r in rounds.values() if not r.cached]
        if fresh and min(fresh) < self.min_rounds:
            return False
        # The first timed call of a variant may include its load: drop it when we can.
        timings = [r.timing(v) for v, r in rounds.items()]
        ranked = sorted(timings, key=lambda t: t.median_ms)
        best, second = ranked[0], ranked[1] if len(ranked) > 1 else None
        stable = second is None or best.quantile(0.8) < second.quantile(0.2)
        if not (stable or not fresh or min(fresh) >= self.max_rounds):
            return False
        winner = pick(timings)
        index = info.variants.index(winner.variant)
        measured = [t for t, r in zip(timings, rounds.values()) if not r.cached]
        values = list(values) if values is not None else None
        entry = self._record(info, timings, key, "round-robin", values, winner, measured=measured, ruler="live")
        self._decide(info, values, index, entry, "round-robin")
        if values is None:  # no per-workload table: the group's one choice is made
            self._rotating_hosts.pop(info.host, None)
        return True

    def _decide(self, info: GroupInfo, values: list[int] | None, index: int, entry: dict, source: str | None) -> None:
        """Make variant ``index`` the choice of workload ``values`` (a slot of the table; None:
        a group without one) and re-choose the group's own choice, used for every workload the
        table does not hold, from all decisions so far (``entry`` the new one) by the rule the
        frozen module follows too (:func:`autotune_export.contract.choose_result`)."""
        if values is not None:
            self._set_slot(info, values, index)
        made = self.decisions.setdefault(info.key, [])
        made.append({**entry, "variant": info.variants[index]})
        chosen = choose_result(made, info.executable, info.group, info.variants)
        self.select(info.key, chosen["variant"])
        if source is not None:
            self.sources[info.key] = source

    def _live_workload_values(self, info: GroupInfo, args) -> list[int] | None:
        """The dispatch's workload values for a live call (the module's ``workload_of`` entry),
        or None when the group has no per-workload table."""
        if not self._per_workload(info):
            return None
        out = self._invoker(info.workload_of)(*args)
        return [int(v) for v in (out if isinstance(out, (list, tuple)) else [out])]

    def _set_slot(self, info: GroupInfo, values: list[int], index: int, *, decided: bool = True) -> bool:
        """Make ``index`` the choice of the dispatches whose workload values are ``values``: the
        slot already holding ``values``, else the first free slot, else the slots are reused in
        turn (the one filled longest ago first). ``decided``: ``index`` is the workload's
        decision, kept in :attr:`per_workload` (False: a round-robin trial). A group whose
        decisions outnumber its slots is refilled on demand (:meth:`__call__`). False when the
        group has no table (or another arity)."""
        if not info.slots or len(values) != info.arity:
            return False
        table = self._slot_of.setdefault(info.key, {})
        slot = table.get(tuple(values))
        if slot is None:
            taken = set(table.values())
            free = [s for s in range(len(info.slots)) if s not in taken]
            if free:
                slot = free[0]
            else:
                slot = self._next_slot.get(info.key, 0)
                self._next_slot[info.key] = (slot + 1) % len(info.slots)
                for other, s in list(table.items()):
                    if s == slot:
                        del table[other]
                        if other in self.per_workload.get(info.key, {}) and info.workload_of:
                            hosts = self._spilled.setdefault(info.host, [])  # a decision lost its slot: refill on demand
                            if info not in hosts:
                                hosts.append(info)
            table[tuple(values)] = slot
        self._invoker(info.slots[slot])(index, *values)
        if decided:
            self.per_workload.setdefault(info.key, {})[tuple(values)] = info.variants[index]
        return True

    def _refill_slot(self, info: GroupInfo, args) -> None:
        """Before a call of ``info``'s host with ``args``: give its workload back the slot it
        lost (a table with more decisions than slots)."""
        values = tuple(self._live_workload_values(info, args) or ())
        if values in self._slot_of.get(info.key, {}):
            return
        variant = self.per_workload.get(info.key, {}).get(values)
        if variant is not None:
            self._set_slot(info, list(values), info.variants.index(variant))

    # --- tuning ---------------------------------------------------------------------------
    def cache_entry(self, group: str) -> dict | None:
        """The tuning-cache entry that answers ``group`` (``executable::group`` or its bare
        name) on this device, module and first tuning workload: a dict with ``variant``,
        ``median_ms`` and ``spread_ms`` per variant (ms), ``strategy``, ``time`` (see
        :class:`TuningCache`). None without a cache, without an entry, or when the entry's
        variant is not one of the group's."""
        info = self.group(group)
        if self.cache is None:
            return None
        hit = self.cache.lookup(**self._key(info, _tune_workload(info)))
        return hit if hit is not None and hit.get("variant") in info.variants else None

    def tune_group(self, group: str) -> list[VariantTiming]:
        """Tune one group on each of its tuning workloads (``tune_workload``) and select the
        winners: each workload's fills a slot of the per-workload table, and the group's choice
        (used for every workload the table does not hold) is the variant most workloads chose,
        ties to the lower variant index (:func:`autotune_export.contract.choose_result`, the
        rule of ``strategy="fixed"`` and of the frozen module too). The timings each workload
        was decided on are in :attr:`timings`.

        Per variant and workload the tuning cache is asked first (timings are keyed by the
        variant's fingerprint, so adding a config times only the new variant); the others are
        timed (``search``). Before a variant wins it is cross-checked: its results on the fake
        data must equal the default variant's (tolerances by dtype, :func:`results_agree`);
        a variant that disagrees is dropped with a note (:attr:`notes`). Returns the timings
        measured now on the first workload (empty when the cache answered).
        """
        info = self.group(group)
        works = info.tuning_workloads()
        if not works:
            # Built without benchmark entries (its host takes dynamic shapes and no
            # tune_workload says which to measure): only live calls can tune it.
            self.notes[info.key] = (
                f"{info.key} has no benchmark entries (no tune_workload for its host's dynamic "
                "arguments): left at its default; strategy='round-robin' tunes it on live calls "
                "only with allow_unchecked=True (its variants cannot be checked)"
            )
            return []
        self._deadline = time.monotonic() + self.group_timeout_s
        self._cut_short.discard(info.key)
        try:
            with phase(self.profile, "tune_group (the rest)"):
                measured = [self._tune_workload(info, w, work) for w, work in enumerate(works)]
        finally:
            self._deadline = None
        self._references.pop(info.key, None)  # the default's check results: device memory, made again when needed
        self.sources[info.key] = "tuned" if any(measured) else "cache"
        if self.profile is not None and any(measured):
            print(
                self.profile.report(
                    f"autotune-export profile of {info.key} ({len(info.variants)} variants, search {self.search})"
                ),
                file=sys.stderr,
                flush=True,
            )
            self.profile.reset()
        return measured[0]

    def _tune_workload(self, info: GroupInfo, w: int, work: TuningWorkload) -> list[VariantTiming]:
        key = "x".join(work.tune_args)
        values = None
        if work.workload and info.slots:
            with phase(self.profile, "workload entry"):
                out = self._invoker(work.workload)()
                values = [int(v) for v in (out if isinstance(out, (list, tuple)) else [out])]
        self._recorded_failures(info, key)
        with phase(self.profile, "tuning cache (read)"):
            hit = self.cache.lookup(**self._key(info, key)) if self.cache is not None else None
            if hit is None or hit.get("variant") not in info.variants:
                cached = {k: self._cached_timing(info, k, key, "bench") for k in range(len(info.variants))}
        if hit is not None and hit.get("variant") in info.variants:
            self._decide(info, values, info.variants.index(hit["variant"]), hit, None)
            return []
        failed = self._failed(info)  # never run again (a variant dropped by the cross-check is still timed)
        missing = [k for k, t in cached.items() if t is None and k not in failed]
        try:
            with phase(self.profile, "search (host side)"):
                timed = self._measure(info, key, work.bench, missing)
        except WorkerUnavailable as err:
            self._unavailable(info, err)
            return []
        timings = [
            timed[k]
            if k in timed
            else VariantTiming(info.variants[k], [])
            if cached[k] is None
            else VariantTiming(
                info.variants[k], [float(cached[k]["median_ms"])], recorded=tuple(map(float, cached[k]["spread_ms"]))
            )
            for k in range(len(info.variants))
        ]
        self.timings.setdefault(info.key, {})[w] = timings
        try:
            winner = self._checked_pick(info, timings)
        except WorkerUnavailable as err:
            self._unavailable(info, err)
            return []
        index = info.variants.index(winner.variant)
        with phase(self.profile, "tuning cache (write)"):
            entry = self._record(
                info,
                timings,
                key,
                self.strategy,
                values,
                winner,
                measured=[timed[k] for k in sorted(timed)],
                ruler="bench",
                final=info.key not in self._cut_short,
            )
        with phase(self.profile, "select"):
            self._decide(info, values, index, entry, None)
        return [timed[k] for k in sorted(timed)]

    def _measure(self, info: GroupInfo, workload: str, benches: list[str], ks: list[int]) -> dict[int, VariantTiming]:
        """Time variants ``ks`` with their benchmark entries ``benches`` on tuning workload
        ``workload`` (its cache key), by :attr:`benchmarker`; in the tuning worker where
        ``isolation`` asks for it, where a variant that fails is dropped (:meth:`_fail`) and
        left out of the result. Raises WorkerUnavailable."""
        if not ks:
            return {}
        if self._isolated(info, workload, ks):
            samples, failed = measure_variants(
                self._worker(), self.benchmarker, info, workload, ks, benches, deadline=self._deadline
            )
            for k, err in failed.items():
                self._fail(info, k, err, workload)
            self._proven.update((self._fingerprint(info, k), workload) for k in samples)
            return {k: VariantTiming(info.variants[k], list(samples[k])) for k in ks if k in samples}
        fns = [self.functions[benches[k]] for k in ks]
        samples = self.benchmarker.measure(info, workload, ks, [lambda n, f=f: f(n) for f in fns])
        return {k: VariantTiming(info.variants[k], list(ts)) for k, ts in zip(ks, samples)}

    def _checked_pick(self, info: GroupInfo, timings: list[VariantTiming]) -> VariantTiming:
        """:func:`pick` among the variants that agree with the default variant on the fake data
        (checked lazily: only a variant about to win is run). Disagreeing variants are dropped
        for this module (:attr:`dropped`) with a note."""
        dropped = self.dropped.setdefault(info.key, set())
        while True:
            if info.default in self._failed(info):
                return timings[info.default]  # it failed: nothing can be checked against it (a note says so)
            candidates = [t for k, t in enumerate(timings) if k not in dropped and t.times_ms] or [timings[info.default]]
            best = pick(candidates)
            k = info.variants.index(best.variant)
            if not info.check or k == info.default or not info.check[k] or k in self._agreeing.setdefault(info.key, set()):
                return best
            if self._checks_out(info, k):
                return best

    def _check_all(self, info: GroupInfo) -> None:
        """Cross-check every variant against the default one (once per group), dropping those
        that disagree (round-robin runs variants on live calls, whose results are returned)."""
        done = self._agreeing.setdefault(info.key, set())
        dropped = self.dropped.setdefault(info.key, set())
        self._recorded_failures(info, _tune_workload(info))
        own = self._deadline is None
        if own:
            self._deadline = time.monotonic() + self.group_timeout_s
        try:
            for k in range(len(info.variants)):
                if info.default in self._failed(info):  # no variant can be checked against it
                    dropped.update(range(len(info.variants)))
                    break
                if k == info.default or k in done or k in dropped or k >= len(info.check) or not info.check[k]:
                    continue
                self._checks_out(info, k)
        except WorkerUnavailable as err:  # nothing can be checked: nothing but the default runs live
            self._unavailable(info, err)
            dropped.update(k for k in range(len(info.variants)) if k != info.default)
        finally:
            if own:
                self._deadline = None

    def _checks_out(self, info: GroupInfo, k: int) -> bool:
        """Cross-check variant ``k`` against the default: remember an agreeing one, drop (with a
        note) one that differs. Returns whether it agrees."""
        try:
            problem = self._disagreement(info, k)
        except VariantFailure as err:
            self._fail(info, info.default if getattr(err, "reference", False) else k, err, _tune_workload(info))
            return False
        if problem is None:
            self._agreeing.setdefault(info.key, set()).add(k)
            return True
        self.dropped.setdefault(info.key, set()).add(k)
        self.drop_reasons.setdefault(info.key, {})[info.variants[k]] = (
            f"differs: on the fake data its results differ from the default variant {info.variants[info.default]}'s ({problem})"
        )
        self.notes[info.key] = (
            f"{info.key}: variant {info.variants[k]} was dropped: on the fake data its results "
            f"differ from the default variant {info.variants[info.default]}'s ({problem})"
        )
        return False

    def _disagreement(self, info: GroupInfo, k: int) -> str | None:
        """Why variant ``k``'s check results differ from the default variant's, or None; in the
        tuning worker where ``isolation`` asks for it (raises VariantFailure, with
        ``.reference`` True when the default variant's run failed, or WorkerUnavailable).

        With the group's ``compare`` entry (modules of this release), the results stay on the
        device: the entry counts, per result, the elements that differ beyond
        :data:`CHECK_TOLERANCES` (:func:`results_agree`'s rule), and only those counts come to
        the host; the full results are copied and compared on the host only to describe a
        difference that was found. Without it (fp8 results, modules of earlier releases) both
        results are copied and compared on the host."""
        workload = _tune_workload(info)
        if self._isolated(info, workload, [info.default, k]):
            with phase(self.profile, "cross-check (worker)"):
                return self._worker().check(
                    info.check[info.default],
                    info.check[k],
                    self._deadline,
                    what="its check run",
                    reference_what="the default variant's check run",
                    compare=info.compare,
                )
        ref = self._references.get(info.key)
        if ref is None:
            with phase(self.profile, "cross-check: device runs"):
                ref = self._references[info.key] = as_list(self._invoker(info.check[info.default])())
        with phase(self.profile, "cross-check: device runs"):
            out = as_list(self._invoker(info.check[k])())
        return disagreement(ref, out, self._invoker(info.compare) if info.compare else None, self.profile)

    def autotune(self) -> dict[str, list[VariantTiming]]:
        """Tune every group (``@__autotune``'s job; the cache answers when it can). A tuning
        worker started meanwhile is ended when all are tuned."""
        try:
            return {key: self.tune_group(key) for key in self.groups}
        finally:
            self.close_worker()

    # --- isolation ----------------------------------------------------------------------------
    @property
    def worker_starts(self) -> list[float]:
        """Seconds each tuning worker took to start and load the module, one per start (empty:
        none was needed)."""
        iso = self._isolation_box[0]
        return list(self._starts) + (list(iso.starts) if iso is not None else [])

    _starts: list[float] = []

    def close_worker(self) -> None:
        """End the tuning worker, if one runs (it holds a device context and the module; the
        next tuning that needs one starts another)."""
        iso = self._isolation_box[0]
        if iso is not None:
            self._starts = self._starts + iso.starts
            iso.close()
            self._isolation_box[0] = None

    def _worker(self) -> Isolation:
        if self._isolation_box[0] is None:
            self._isolation_box[0] = Isolation(
                self._module_source,
                self.driver,
                self.module_sha256,
                flush=FLUSH_L2_FUNCTION if self.flush_l2 else None,
                variant_timeout_s=self.variant_timeout_s,
                flags=self.iree_flags,
            )
        return self._isolation_box[0]

    def _isolated(self, info: GroupInfo, workload: str, ks: Sequence[int]) -> bool:
        """Whether variants ``ks`` run in the tuning worker (``isolation``): always with
        ``"process"``, never with ``"none"``; with ``"auto"`` unless each of them already ran to
        completion on this device and workload (a timing in the tuning cache, or a run in a
        worker of this object)."""
        if self.isolation != "auto":
            return self.isolation == "process"
        return not all(
            (self._fingerprint(info, k), workload) in self._proven or self._cached_timing(info, k, workload, "bench") is not None
            for k in ks
        )

    def _fail(self, info: GroupInfo, k: int, err: VariantFailure, workload: str) -> None:
        """Drop variant ``k``, which failed (``err``) on tuning workload ``workload``: never
        chosen, its reason in :attr:`drop_reasons` and :attr:`notes`, and in the tuning cache, so
        it is not run again; unless the group's time limit cut it short (``err.cut_short``): then
        nothing is stored about it, nor the group's decision."""
        name = info.variants[k]
        self.dropped.setdefault(info.key, set()).add(k)
        self.drop_reasons.setdefault(info.key, {})[name] = f"{err.kind}: {err.reason}"
        self._note(
            info,
            f"variant {name} was dropped ({err.kind}): {err.reason}"
            + (
                " (the default variant: no variant can be checked against it, so the group stays on it)"
                if k == info.default
                else ""
            ),
        )
        if err.cut_short:  # no verdict on the variant: the group ran out of time
            self._cut_short.add(info.key)
            self._note(
                info,
                f"{info.key}: tuning stopped at the group's time limit ({self.group_timeout_s:g} s); "
                "its decision holds for this process only, the next tuning resumes (timings so far are cached)",
            )
            return
        if self.cache is None:
            return
        row = {
            **self._failure_key(info, k, workload),
            "kind": err.kind,
            "reason": err.reason,
            "limit_s": err.limit_s,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        try:
            self.cache.store(None, (), [row])
        except OSError:
            pass  # as for timings: the drop holds for this process

    def _failed(self, info: GroupInfo) -> set[int]:
        """The variants of ``info`` dropped because they faulted, hung or were refused (not
        those whose results differ)."""
        reasons = self.drop_reasons.get(info.key, {})
        return {k for k, v in enumerate(info.variants) if v in reasons and not reasons[v].startswith("differs: ")}

    def _failure_key(self, info: GroupInfo, k: int, workload: str) -> dict:
        return {
            "fingerprint": self._fingerprint(info, k),
            "device": self.identity["device"],
            "driver_version": self.identity["driver_version"],
            "workload": workload,
        }

    def _recorded_failures(self, info: GroupInfo, workload: str) -> None:
        """Drop the variants the tuning cache records as failed on ``workload``: a fault or an
        error for good; a hang unless this object's ``variant_timeout_s`` is longer than the
        limit it ran past (then it gets another chance)."""
        if self.cache is None:
            return
        for k, name in enumerate(info.variants):
            if name in self.drop_reasons.get(info.key, {}):
                continue
            hit = self.cache.failure(**self._failure_key(info, k, workload))
            if hit is None or (
                hit.get("kind") == "hang"
                and isinstance(hit.get("limit_s"), (int, float))
                and self.variant_timeout_s > hit["limit_s"]
            ):
                continue
            self.dropped.setdefault(info.key, set()).add(k)
            self.drop_reasons.setdefault(info.key, {})[name] = (
                f"{hit.get('kind')}: {hit.get('reason')} (tuning cache, {hit.get('time', '?')})"
            )

    def _unavailable(self, info: GroupInfo, err: WorkerUnavailable) -> None:
        """No worker: the group is not tuned (it stays on its choice so far) and says why."""
        self._note(
            info,
            f"{info.key} was not tuned: {err.reason} (isolation={self.isolation!r}; "
            "isolation='none' tunes in this process, unprotected)",
        )
        warnings.warn(self.notes[info.key], RuntimeWarning, stacklevel=3)

    def _note(self, info: GroupInfo, text: str) -> None:
        old = self.notes.get(info.key)
        self.notes[info.key] = f"{old}; {text}" if old and text not in old else text

    def bench(
        self, group: str, variant: int, warmup_ms: float | None = None, rep_ms: float | None = None, workload: int = 0
    ) -> VariantTiming:
        """Time variant ``variant`` of ``group`` on its tuning workload ``workload`` (ms per run)."""
        info = self.group(group)
        works = info.tuning_workloads()
        if not works:
            raise ValueError(
                f"{info.key} has no benchmark entries (built without tune_workload for its host's dynamic "
                "arguments); give it tune_workload(...), or time it on live calls (strategy='round-robin' "
                "with allow_unchecked=True: its variants cannot be checked)"
            )
        fn = self.functions[works[workload].bench[variant]]
        (samples,) = self.benchmarker.measure(
            info, "x".join(works[workload].tune_args), [variant], [lambda n: fn(n)], warmup_ms=warmup_ms, rep_ms=rep_ms
        )
        return VariantTiming(info.variants[variant], list(samples))

    def _key(self, info: GroupInfo, workload: str) -> dict:
        return {
            "device": self.identity["device"],
            "driver_version": self.identity["driver_version"],
            "module_sha256": self.module_sha256,
            "executable": info.executable,
            "group": info.group,
            "workload": workload,
        }

    def _fingerprint(self, info: GroupInfo, k: int) -> str:
        """Variant ``k``'s fingerprint (a module of an earlier release has none: then the
        module's hash and the variant's name stand in)."""
        if k < len(info.fingerprints) and info.fingerprints[k]:
            return info.fingerprints[k]
        return f"{self.module_sha256}:{info.variants[k]}"

    def _timing_key(self, info: GroupInfo, k: int, workload: str, ruler: str) -> dict:
        return {
            "fingerprint": self._fingerprint(info, k),
            "device": self.identity["device"],
            "driver_version": self.identity["driver_version"],
            "workload": workload,
            "ruler": ruler,
        }

    def _cached_timing(self, info: GroupInfo, k: int, workload: str, ruler: str) -> dict | None:
        if self.cache is None:
            return None
        hit = self.cache.timing(**self._timing_key(info, k, workload, ruler))
        ok = (
            hit is not None
            and isinstance(hit.get("median_ms"), (int, float))
            and isinstance(hit.get("spread_ms"), list)
            and len(hit["spread_ms"]) == 2
        )
        return hit if ok else None

    def _record(
        self,
        info: GroupInfo,
        timings: Sequence[VariantTiming],
        workload: str,
        strategy: str,
        values: list[int] | None = None,
        winner: VariantTiming | None = None,
        *,
        measured: Sequence[VariantTiming] = (),
        ruler: str = "bench",
        final: bool = True,
    ) -> dict:
        """Store the decision for ``workload`` (and the per-variant timings ``measured`` now) in
        the cache; returns the decision entry. ``final`` False: only the timings (a tuning the
        group's time limit cut short decides for this process; the next one resumes)."""
        timings = [t for t in timings if t.times_ms]  # a variant that failed has none
        best = winner or pick(timings)
        entry = {
            **self._key(info, workload),
            "driver": self.driver,
            "variant": best.variant,
            "median_ms": {t.variant: t.median_ms for t in timings},
            "spread_ms": {t.variant: list(t.spread_ms) for t in timings},
            "strategy": strategy,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        if values is not None:
            entry["workload_values"] = list(values)
        stamp = entry["time"]
        rows = [
            {
                **self._timing_key(info, info.variants.index(t.variant), workload, ruler),
                "median_ms": t.median_ms,
                "spread_ms": list(t.spread_ms),
                "samples": len(t.times_ms),
                "time": stamp,
            }
            for t in measured
        ]
        if self.cache is not None:
            try:
                self.cache.store(entry if final else None, rows)
            except OSError as err:  # tuning goes on: the decision holds for this process
                if not self._unwritable_warned:
                    self._unwritable_warned = True
                    warnings.warn(
                        f"autotune-export: cannot write the tuning cache {self.cache.path} "
                        f"({err.strerror or err}); tuning results are kept in this process only",
                        RuntimeWarning,
                        stacklevel=2,
                    )
        return entry


#: Round-robin state of a live workload that has locked on its variant.
_LOCKED = object()


@dataclass
class _Rounds:
    """Round-robin timings of one variant on one live workload (ms per call); ``cached``:
    (median, p20, p80) from the tuning cache instead."""

    times: list[float]
    cached: tuple | None = None

    def timing(self, variant: str) -> VariantTiming:
        if self.cached is not None:
            return VariantTiming(variant, [self.cached[0]], recorded=self.cached[1:])
        ts = self.times
        return VariantTiming(variant, ts[1:] if len(ts) > 2 else ts)


def _tune_workload(info: GroupInfo) -> str:
    """The cache key of a group's tuning workload: its fake arguments' types, ``x``-joined."""
    return "x".join(info.tune_args) if info.tune_args else ""


def _close_isolation(box: list) -> None:
    """End the tuning worker in ``box`` (the finalizer of an :class:`AutotunedModule`)."""
    if box and box[0] is not None:
        box[0].close()
        box[0] = None
