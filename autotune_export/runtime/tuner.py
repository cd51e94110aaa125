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
``autotune-export --tuning-results`` reads) keyed by device name, driver version, module
content hash, group and workload, written atomically, so a second load of the same module on
the same device does not retune.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import platform
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from autotune_export.contract import AUTOTUNE_FUNCTION, FLUSH_L2_FUNCTION, REFLECTION_KEY, RESULTS_FORMAT, choose_result
from autotune_export.support import files
from autotune_export.support.stats import quantile as _quantile
from autotune_export.support.paths import default_cache_dir

__all__ = [
    "GroupInfo",
    "VariantTiming",
    "AutotunedModule",
    "TuningCache",
    "loop_bench",
    "race",
    "pick",
    "LoopTimer",
    "TIE_TOLERANCE",
    "device_identity",
    "RESULTS_FORMAT",
    "STRATEGIES",
]

STRATEGIES = ("load", "request", "round-robin", "fixed")


@dataclass
class GroupInfo:
    """One group as the module's reflection metadata describes it."""

    executable: str
    group: str
    variants: list[str]
    default: int
    select: str
    bench: list[str]
    host: str
    tune_args: list[str] = field(default_factory=list)
    unroll: int = 1
    choice: str = ""

    @property
    def key(self) -> str:
        return f"{self.executable}::{self.group}"


@dataclass
class VariantTiming:
    """Timings of one variant: ``times_ms`` holds one sample per timed run, in milliseconds."""

    variant: str
    times_ms: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms) if self.times_ms else float("inf")

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (0..1) of the samples in ms, by linear interpolation
        (:func:`autotune_export.support.stats.quantile`); infinite without samples."""
        return _quantile(self.times_ms, q) if self.times_ms else float("inf")

    @property
    def spread_ms(self) -> tuple[float, float]:
        """(20th, 80th) percentiles, Triton's ``do_bench`` quantiles."""
        return self.quantile(0.2), self.quantile(0.8)


def loop_bench(run: Callable[[int], object], *, unroll: int, warmup_ms: float = 25.0, rep_ms: float = 100.0,
               target_ms: float = 10.0) -> list[float]:
    """Time a benchmark entry; returns per-run samples in ms.

    ``run(n)`` makes one synchronous call that runs the group's dispatch ``1 + (n - 1) *
    unroll`` times (autotune-export's ``bench`` entries). ``n`` is chosen so a call lasts about
    ``target_ms``; after ``warmup_ms`` of untimed calls, calls are timed for ``rep_ms`` (at least
    5). A sample is (call time - time of ``run(1)``) / extra runs: the per-call cost (fake data,
    the first run, the host round trip) cancels. This is the default ``do_bench`` of every IREE
    driver here (Triton's autotuner takes ``do_bench`` from the active driver the same way).
    """
    timer = LoopTimer(run, unroll)
    timer.calibrate(warmup_ms, target_ms)
    timer.sample(rep_ms, at_least=5)
    return timer.samples


class LoopTimer:
    """The sampling of :func:`loop_bench`, in steps: :meth:`calibrate` once (chooses the
    iterations per call so that a call lasts about ``target_ms``, measures the cost of
    ``run(1)``), then :meth:`sample` as often as wanted. ``run`` and ``unroll`` as for
    :func:`loop_bench`. Samples are in ms per run."""

    def __init__(self, run: Callable[[int], object], unroll: int):
        self.run, self.unroll = run, unroll
        self.iters, self.base = 2, 0.0
        self.samples: list[float] = []

    def calibrate(self, warmup_ms: float, target_ms: float) -> None:
        self.run(2)  # first call: executable load, allocations
        per_run = max(1e-3, min(_timed(self.run, 2) for _ in range(2)) / (1 + self.unroll))
        self.iters = max(2, min(100_000, 1 + round(target_ms / per_run / self.unroll)))
        start = time.perf_counter()
        while (time.perf_counter() - start) * 1e3 < warmup_ms:
            self.run(self.iters)
        self.base = min(_timed(self.run, 1) for _ in range(2))

    def sample(self, rep_ms: float, at_least: int = 3) -> None:
        extra = (self.iters - 1) * self.unroll
        start, n = time.perf_counter(), 0
        while n < at_least or (time.perf_counter() - start) * 1e3 < rep_ms:
            self.samples.append(max(0.0, _timed(self.run, self.iters) - self.base) / extra)
            n += 1


#: Timings closer than this (relative, of the medians) are a tie: the lower variant index wins,
#: so processes and ranks tuning the same module pick the same variant.
TIE_TOLERANCE = 0.01


def pick(timings: Sequence["VariantTiming"]) -> "VariantTiming":
    """The winner of ``timings`` (in variant order): the lowest median, except that a variant
    whose median is within :data:`TIE_TOLERANCE` of the lowest and that comes earlier wins
    (a documented, deterministic tie rule)."""
    best = min(t.median_ms for t in timings)
    return next(t for t in timings if t.median_ms <= best * (1 + TIE_TOLERANCE))


def race(runs: Sequence[Callable[[int], object]], *, unroll: int, budget_ms: float = 30.0,
         target_ms: float = 2.0, max_rounds: int = 4) -> list[list[float]]:
    """Time benchmark entries by racing, returns per-run samples (ms) per entry, in order.

    Round 0 calibrates every entry (a short warmup: the first entry also warms the device
    up) and takes a few samples of each; each later round doubles the sampling time of the
    entries still in contention, those whose 20th-percentile time is below the leader's
    80th percentile times ``1 + TIE_TOLERANCE``: an entry that is clearly slower stops being
    timed. The race ends when one entry is left, or after ``max_rounds``. ``budget_ms`` is the
    sampling time per entry in round 0. Successive halving in spirit (Jamieson & Talwalkar,
    2016); Triton's autotuner times every config with its full do_bench budget instead.
    """
    timers = [LoopTimer(run, unroll) for run in runs]
    for k, timer in enumerate(timers):
        timer.calibrate(warmup_ms=20.0 if k == 0 else 2.0, target_ms=target_ms)
        timer.sample(budget_ms / 3)
    alive = list(range(len(timers)))
    rep = budget_ms / 3
    for _ in range(max_rounds):
        stats = {k: VariantTiming(str(k), timers[k].samples) for k in alive}
        lead = min(stats.values(), key=lambda t: t.median_ms)
        alive = [k for k in alive if stats[k].quantile(0.2) <= lead.quantile(0.8) * (1 + TIE_TOLERANCE)]
        if len(alive) <= 1:
            break
        rep *= 2
        for k in alive:
            timers[k].sample(rep)
    return [t.samples for t in timers]


def _timed(fn, *args) -> float:
    t0 = time.perf_counter()
    result = fn(*args)
    _wait(result)
    return (time.perf_counter() - t0) * 1e3


def _wait(result) -> None:
    """Make sure a call's results are computed (IREE's default ABI already waits).

    Reads back only the LAST result: a benchmark entry returns its big first result, then
    one-element slices, and copying a big result to the host would dominate the timing.
    """
    items = result if isinstance(result, (list, tuple)) else [result]
    for r in items[-1:]:
        if hasattr(r, "to_host"):
            r.to_host()


def device_identity(driver: str) -> dict:
    """``{"driver", "device", "driver_version"}`` of the first device of an IREE driver.

    The device name comes from ``iree.runtime``'s driver query (e.g. "NVIDIA H200"); the
    driver version from ``/proc/driver/nvidia/version`` for CUDA, the OS for CPU drivers.
    """
    import iree.runtime as rt

    name = "unknown"
    try:
        devices = rt.get_driver(driver).query_available_devices()
        if devices:
            name = devices[0].get("name") or devices[0].get("path") or name
    except Exception:  # noqa: BLE001 - identity is best effort; tuning still works
        pass
    version = platform.platform()
    if driver.startswith("cuda"):
        try:
            text = pathlib.Path("/proc/driver/nvidia/version").read_text()
            version = text.splitlines()[0].split("Kernel Module")[-1].split()[0] if "Kernel Module" in text else text.splitlines()[0]
        except OSError:
            version = "unknown"
    if name == "unknown" and not driver.startswith("cuda"):
        name = platform.processor() or platform.machine()
    return {"driver": driver, "device": name, "driver_version": version}


def default_results_path() -> pathlib.Path:
    """``tuning.json`` in the cache folder (:func:`autotune_export.support.paths.default_cache_dir`)."""

    return default_cache_dir() / "tuning.json"


class TuningCache:
    """A tuning-results JSON file used as a cache (format ``autotune-export.tuning-results/1``).

    Entries: ``{"executable", "group", "variant", "device", "driver", "driver_version",
    "module_sha256", "workload", "median_ms": {variant: ms}, "spread_ms": {variant: [p20, p80]},
    "strategy", "time"}``. Writes are atomic under the file's lock (``<path>.lock``, see
    :mod:`autotune_export.support.files`); an unreadable file is treated as empty (and replaced
    on the next write).
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = pathlib.Path(path) if path is not None else default_results_path()

    def entries(self) -> list[dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
            return []
        return [e for e in data.get("results", []) if isinstance(e, dict)]

    @staticmethod
    def _key(e: dict) -> tuple:
        return (e.get("device"), e.get("driver_version"), e.get("module_sha256"), e.get("executable"), e.get("group"), e.get("workload"))

    def lookup(self, **key) -> dict | None:
        """The entry matching device, driver_version, module_sha256, executable, group, workload."""
        want = self._key(key)
        return next((e for e in self.entries() if self._key(e) == want), None)

    def store(self, entry: dict) -> None:
        """Add or replace the entry with the same key. Raises OSError when the file cannot be
        written."""
        with files.locked(self.path):
            kept = [e for e in self.entries() if self._key(e) != self._key(entry)]
            data = {"format": RESULTS_FORMAT, "results": kept + [entry]}
            files.atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True))


class AutotunedModule:
    """A loaded autotune-export module.

    ``module``: path of a .vmfb or its bytes. ``driver``: IREE HAL driver (``cuda``,
    ``local-task``, ``local-sync``). ``strategy``: one of :data:`STRATEGIES`. ``cache``: a
    :class:`TuningCache`, a path, ``True`` (the default file, see :func:`default_results_path`)
    or ``None``/``False`` (no cache). ``results``: a tuning-results file for ``"fixed"``.
    ``do_bench``: ``f(run, *, unroll, warmup_ms, rep_ms) -> samples in ms`` (default
    :func:`loop_bench`). ``flush_l2``: run the module's L2-flush entry before each timed run
    (then one run per sample). ``search``: how :meth:`tune_group` times the variants:
    ``"exhaustive"`` (the default: every variant with the full ``warmup_ms``/``rep_ms``
    budgets, as Triton's autotuner does; also used with a custom ``do_bench`` or ``flush_l2``)
    or ``"race"`` (experimental: :func:`race`, short runs of every variant and longer ones only
    for those still in contention, ``race_budget_ms`` per variant in its first round; on the
    H200 it tuned the 9 matmul configs in 0.34-0.51 s against 1.32 s, but once picked a variant
    1.2x the fastest, and once took 1.9 s). Ties within
    :data:`TIE_TOLERANCE` go to the lower variant index (:func:`pick`). ``device_results``:
    calls return ``iree.runtime.DeviceArray`` results (no copy to the host) unless told
    otherwise per call. Raises ``RuntimeError`` (iree.runtime) when the driver or module
    cannot be loaded, ``ValueError`` for a module without autotune metadata or a bad strategy.
    """

    def __init__(self, module: str | bytes | os.PathLike, driver: str = "cuda", *, strategy: str = "request",
                 cache: TuningCache | str | os.PathLike | bool | None = True, results: str | os.PathLike | None = None,
                 warmup_ms: float = 25.0, rep_ms: float = 100.0, do_bench: Callable | None = None,
                 flush_l2: bool = False, min_rounds: int = 3, max_rounds: int = 20, search: str = "exhaustive",
                 race_budget_ms: float = 30.0, device_results: bool = False):
        import iree.runtime as rt

        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy '{strategy}'; expected one of {', '.join(STRATEGIES)}")
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
        self.search, self.race_budget_ms = search, race_budget_ms
        data = bytes(module) if isinstance(module, (bytes, bytearray)) else pathlib.Path(module).read_bytes()
        self.module_sha256 = hashlib.sha256(data).hexdigest()
        self.config = _config(rt, driver)
        self.context = rt.SystemContext(config=self.config)
        self.vm_module = rt.VmModule.copy_buffer(self.context.instance, data)
        self.context.add_vm_module(self.vm_module)
        self.functions = self.context.modules[self.vm_module.name]
        fn = self.vm_module.lookup_function(AUTOTUNE_FUNCTION)
        if fn is None:
            raise ValueError(f"the module has no @{AUTOTUNE_FUNCTION} function: was it built by autotune-export?")
        meta = fn.reflection.get(REFLECTION_KEY)
        if meta is None:
            raise ValueError(f"@{AUTOTUNE_FUNCTION} carries no {REFLECTION_KEY} reflection metadata")
        fields = GroupInfo.__dataclass_fields__
        self.groups = {g.key: g for g in (GroupInfo(**{k: d[k] for k in fields if k in d}) for d in json.loads(meta))}
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
        self._rounds: dict[str, dict[str, list[float]]] = {}
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
        ``--tuning-results`` follows too (:func:`autotune_export.contract.choose_result`: the
        last entry naming the group whose variant the group has). Returns group -> variant."""
        entries = TuningCache(results).entries()
        picked = {}
        for info in self.groups.values():
            chosen = choose_result(entries, info.executable, info.group, info.variants)
            if chosen is not None:
                self.select(info.key, chosen["variant"])
                self.sources[info.key] = "results"
                picked[info.key] = chosen["variant"]
        return picked

    # --- calling --------------------------------------------------------------------------
    def __call__(self, function: str, *args, device: bool | None = None):
        """Call exported ``function``; returns its results.

        Arguments: numpy arrays and scalars, or ``iree.runtime.DeviceArray`` values already on
        the module's device (no copy: :meth:`device_array` makes one). Results are numpy arrays,
        or DeviceArrays with ``device=True`` (default: the module's ``device_results``). DLPack
        arrays (torch, jax, cupy) are not taken as they are: iree.runtime 3.13 has no DLPack
        import; pass ``numpy`` views of host memory or DeviceArrays.

        With the ``"round-robin"`` strategy, a call of a group's host function first runs on
        the next variant in rotation and is timed, until the group locks on its fastest variant.
        """
        device = self.device_results if device is None else device
        info = self._rotating.get(function)
        if info is None:
            if function == AUTOTUNE_FUNCTION:
                # The module's own @__autotune runs each variant once (no clock in the VM);
                # through this runtime the same entry point tunes for real.
                self.autotune()
                return None
            result = self._invoker(function)(*args)
            return result if device else _to_host(result)
        rounds = self._rounds.setdefault(info.key, {v: [] for v in info.variants})
        variant = min(info.variants, key=lambda v: len(rounds[v]))
        self.select(info.key, variant)
        t0 = time.perf_counter()
        result = self._invoker(function)(*args)
        _wait(result)
        rounds[variant].append((time.perf_counter() - t0) * 1e3)
        self._maybe_lock(info, rounds, _workload_of(args))
        return result if device else _to_host(result)

    def _invoker(self, function: str):
        """The (cached) iree.runtime function of ``function``."""
        fn = self._invokers.get(function)
        if fn is None:
            fn = self._invokers[function] = self.functions[function]
        return fn

    @property
    def _rotating(self) -> dict[str, GroupInfo]:
        """Host function -> the group still rotating through its variants (round-robin)."""
        if self.strategy != "round-robin":
            return {}
        locked = self._locked()
        return {g.host: g for g in reversed(list(self.groups.values())) if g.key not in locked}

    def device_array(self, array) -> object:
        """``array`` (numpy) copied once to the module's device, for calls without copies."""
        return self._rt.asdevicearray(self.config.device, array)

    def _locked(self) -> set[str]:
        return {k for k, s in self.sources.items() if s in ("round-robin", "tuned", "cache", "results")}

    def _maybe_lock(self, info: GroupInfo, rounds: dict[str, list[float]], workload: str) -> None:
        counts = [len(ts) for ts in rounds.values()]
        if min(counts) < self.min_rounds:
            return
        # The first timed call of a variant may include its load: drop it when we can.
        timings = [VariantTiming(v, ts[1:] if len(ts) > 2 else ts) for v, ts in rounds.items()]
        ranked = sorted(timings, key=lambda t: t.median_ms)
        best, second = ranked[0], ranked[1] if len(ranked) > 1 else None
        stable = second is None or best.quantile(0.8) < second.quantile(0.2)
        if stable or min(counts) >= self.max_rounds:
            self.select(info.key, best.variant)
            self.sources[info.key] = "round-robin"
            self._record(info, timings, workload, "round-robin")

    # --- tuning ---------------------------------------------------------------------------
    def cache_entry(self, group: str) -> dict | None:
        """The tuning-cache entry that answers ``group`` (``executable::group`` or its bare
        name) on this device, module and tuning workload: a dict with ``variant``,
        ``median_ms`` and ``spread_ms`` per variant (ms), ``strategy``, ``time`` (see
        :class:`TuningCache`). None without a cache, without an entry, or when the entry's
        variant is not one of the group's."""
        info = self.group(group)
        if self.cache is None:
            return None
        hit = self.cache.lookup(**self._key(info, _tune_workload(info)))
        return hit if hit is not None and hit.get("variant") in info.variants else None

    def tune_group(self, group: str) -> list[VariantTiming]:
        """Tune one group on its fake workload (or take it from the cache); select the winner.

        Returns the timings (empty when the choice came from the cache: :meth:`cache_entry`
        has the timings measured then).
        """
        info = self.group(group)
        if not info.bench:
            # Built without benchmark entries (its host takes dynamic shapes and no
            # tune_workload says which to measure): only live calls can tune it.
            self.notes[info.key] = (f"{info.key} has no benchmark entries (no tune_workload for its host's dynamic "
                                    "arguments): left at its default; strategy='round-robin' tunes it on live calls")
            return []
        workload = _tune_workload(info)
        hit = self.cache_entry(info.key)
        if hit is not None:
            self.select(info.key, hit["variant"])
            self.sources[info.key] = "cache"
            return []
        if self.search == "race" and self.do_bench is loop_bench and not self.flush_l2:
            fns = [self.functions[b] for b in info.bench]
            samples = race([lambda n, f=f: f(n) for f in fns], unroll=info.unroll, budget_ms=self.race_budget_ms)
            timings = [VariantTiming(v, ts) for v, ts in zip(info.variants, samples)]
        else:
            timings = [self.bench(info.key, k) for k in range(len(info.variants))]
        best = pick(timings)
        self.select(info.key, best.variant)
        self.sources[info.key] = "tuned"
        self._record(info, timings, workload, self.strategy)
        return timings

    def autotune(self) -> dict[str, list[VariantTiming]]:
        """Tune every group (``@__autotune``'s job; the cache answers when it can)."""
        return {key: self.tune_group(key) for key in self.groups}

    def bench(self, group: str, variant: int, warmup_ms: float | None = None, rep_ms: float | None = None) -> VariantTiming:
        """Time variant ``variant`` of ``group`` on its fake workload (ms per run)."""
        info = self.group(group)
        if not info.bench:
            raise ValueError(f"{info.key} has no benchmark entries (built without tune_workload for its host's dynamic "
                             "arguments); time it on live calls (strategy='round-robin')")
        fn = self.functions[info.bench[variant]]
        warmup = self.warmup_ms if warmup_ms is None else warmup_ms
        rep = self.rep_ms if rep_ms is None else rep_ms
        if self.flush_l2:
            return VariantTiming(info.variants[variant], self._flushed_samples(fn, warmup, rep))
        return VariantTiming(info.variants[variant], list(self.do_bench(lambda n: fn(n), unroll=info.unroll, warmup_ms=warmup, rep_ms=rep)))

    def _flushed_samples(self, fn, warmup_ms: float, rep_ms: float) -> list[float]:
        flush = self.functions[FLUSH_L2_FUNCTION]
        fn(1)
        start = time.perf_counter()
        while (time.perf_counter() - start) * 1e3 < warmup_ms:
            fn(1)
        times = []
        start = time.perf_counter()
        while len(times) < 5 or (time.perf_counter() - start) * 1e3 < rep_ms:
            _wait(flush())
            times.append(_timed(fn, 1))
        return times

    def _key(self, info: GroupInfo, workload: str) -> dict:
        return {
            "device": self.identity["device"],
            "driver_version": self.identity["driver_version"],
            "module_sha256": self.module_sha256,
            "executable": info.executable,
            "group": info.group,
            "workload": workload,
        }

    def _record(self, info: GroupInfo, timings: Sequence[VariantTiming], workload: str, strategy: str) -> dict:
        best = pick(timings)
        entry = {
            **self._key(info, workload),
            "driver": self.driver,
            "variant": best.variant,
            "median_ms": {t.variant: t.median_ms for t in timings},
            "spread_ms": {t.variant: list(t.spread_ms) for t in timings},
            "strategy": strategy,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        if self.cache is not None:
            self.cache.store(entry)
        return entry


def _tune_workload(info: GroupInfo) -> str:
    """The cache key of a group's tuning workload: its fake arguments' types, ``x``-joined."""
    return "x".join(info.tune_args) if info.tune_args else ""


def _config(rt, driver: str):
    """``iree.runtime.Config(driver)``; when the driver cannot make a device, a RuntimeError
    that says which driver and what is missing (rather than IREE's "Could not create
    device")."""
    try:
        return rt.Config(driver)
    except (RuntimeError, ValueError) as err:
        raw = (str(err).splitlines()[0] if str(err) else type(err).__name__).removesuffix(" Exception for last tried follows.")
        if isinstance(err, ValueError):
            reason = "iree.runtime has no such driver (drivers: cuda, local-task, local-sync)"
        else:
            name = driver.split(":", 1)[0]
            try:
                devices = rt.get_driver(name).query_available_devices()
                reason = "no device is available" if not devices else "the device could not be opened"
            except Exception as query:  # noqa: BLE001 - the driver's own reason is the answer
                text = str(query)
                if "libcuda" in text or "nvcuda" in text:
                    reason = "the CUDA driver library libcuda.so is not installed or not on the library path (no NVIDIA driver)"
                else:
                    reason = text.splitlines()[0] if text else "the driver cannot be created"
            if name == "cuda" and "device" in reason:
                reason += " (no NVIDIA GPU visible: check nvidia-smi and CUDA_VISIBLE_DEVICES)"
        hint = " A module built with --backend llvm-cpu runs on driver='local-task'." if driver.startswith("cuda") else ""
        raise RuntimeError(f"cannot create a device of IREE driver '{driver}': {reason} (iree.runtime: {raw}).{hint}") from None


def _to_host(result):
    if isinstance(result, (list, tuple)):
        return tuple(r.to_host() if hasattr(r, "to_host") else r for r in result)
    return result.to_host() if hasattr(result, "to_host") else result


def _workload_of(args) -> str:
    """A cache key for live arguments: shapes and dtypes of arrays, values of scalars."""
    parts = []
    for a in args:
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            parts.append("x".join(str(d) for d in a.shape) + ":" + str(a.dtype))
        else:
            parts.append(repr(a))
    return ",".join(parts)
