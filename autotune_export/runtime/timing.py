"""How the runtime measures variants: wall-clock benchmarking (:func:`loop_bench`,
:func:`race`, :class:`WallClock`) and given timings (:class:`GivenTimings`), behind one
interface, :class:`Benchmarker`, that :class:`autotune_export.runtime.AutotunedModule` takes as
``benchmarker=``.

Every tuning decision of the runtime (``tune_group``, strategy ``"load"``, round-robin on live
calls) is made on what a benchmarker returns, so a test or a replay can decide on given timings
(:class:`GivenTimings`) while the module still runs for real; the wall clock is read only by
:class:`WallClock` (the default) and the functions it uses. Times are in milliseconds.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

from autotune_export.support.stats import quantile as _quantile

__all__ = [
    "VariantTiming",
    "loop_bench",
    "LoopTimer",
    "race",
    "pick",
    "TIE_TOLERANCE",
    "Benchmarker",
    "WallClock",
    "GivenTimings",
]


@dataclass
class VariantTiming:
    """Timings of one variant: ``times_ms`` holds one sample per timed run, in milliseconds."""

    variant: str
    times_ms: list[float]
    #: (p20, p80) of a timing read back from the tuning cache (``times_ms`` then holds its median).
    recorded: tuple | None = None

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
        if self.recorded is not None:
            return tuple(self.recorded)
        return self.quantile(0.2), self.quantile(0.8)


def loop_bench(run: Callable[[int], object], *, unroll: int, warmup_ms: float = 25.0, rep_ms: float = 100.0,
               target_ms: float = 10.0) -> list[float]:
    """Time a benchmark entry; returns per-run samples in ms.

    ``run(n)`` makes one synchronous call that runs the group's dispatch ``n *
    unroll`` times (autotune-export's ``bench`` entries). ``n`` is chosen so a call lasts about
    ``target_ms``; after ``warmup_ms`` of untimed calls, calls are timed for ``rep_ms`` (at least
    5). A sample is (call time - time of ``run(1)``) / extra runs (``(n - 1) * unroll``): the
    per-call cost (fake data, the host round trip) cancels. This is the default ``do_bench`` of every IREE
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

    def calibrate(self, warmup_ms: float, target_ms: float, first_call: bool = True) -> None:
        if first_call:
            self.run(2)  # first call: executable load, allocations (race() warms up once for all)
        per_run = max(1e-3, min(_timed(self.run, 2) for _ in range(2)) / (2 * self.unroll))
        self.iters = max(2, min(100_000, 1 + round(target_ms / per_run / self.unroll)))
        start = time.perf_counter()
        while (time.perf_counter() - start) * 1e3 < warmup_ms:
            self.run(self.iters)
        self.base = min(_timed(self.run, 1) for _ in range(2))

    def sample_once(self) -> None:
        """Take one paired sample: a call of one iteration, then one of the calibrated size;
        the sample is their difference per extra run. Pairing keeps the per-call cost out of
        the sample without the bias a single ``base`` measurement would give every sample of
        this entry (host jitter of tens of us, against a few ms of extra runs)."""
        extra = (self.iters - 1) * self.unroll
        base = _timed(self.run, 1)
        self.samples.append(max(0.0, _timed(self.run, self.iters) - base) / extra)

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


def race(runs: Sequence[Callable[[int], object]], *, unroll: int, budget_ms: float = 15.0,
         target_ms: float = 3.0, max_rounds: int = 4, warmup_ms: float = 30.0) -> list[list[float]]:
    """Time benchmark entries by racing; returns per-run samples (ms) per entry, in order.

    The device is first warmed up (``warmup_ms`` of the first entry: clocks ramp up, the
    first launches pay for module loading), then every entry is calibrated (calls of about
    ``target_ms``; samples are paired, :meth:`LoopTimer.sample_once`). Round 0 takes 3 samples of every entry, round ``r`` twice as many as round
    ``r - 1`` of each entry still in contention (its 20th
    percentile below the leader's 80th percentile times ``1 + TIE_TOLERANCE``). Samples of a
    round are INTERLEAVED (one sample of each contender in turn), so a drift of the device
    (clocks, temperature, other work) affects every contender alike instead of favouring
    whichever entry ran first. The race ends when one entry is left, when the contenders' medians
    are within the tie tolerance of each other (after round 1), after ``max_rounds``, or when the
    sampling time passes twice ``budget_ms`` per entry.
    Successive halving in spirit (Jamieson & Talwalkar, 2016); Triton's autotuner times every
    config with its full do_bench budget instead.
    """
    timers = [LoopTimer(run, unroll) for run in runs]
    if not timers:
        return []
    start = time.perf_counter()
    while (time.perf_counter() - start) * 1e3 < warmup_ms:
        timers[0].run(2)
    for timer in timers:
        timer.calibrate(warmup_ms=0.0, target_ms=target_ms, first_call=False)
    alive = list(range(len(timers)))
    count = 3
    deadline = time.perf_counter() + 2 * budget_ms * len(timers) / 1e3  # sampling time of the whole race
    for round_ in range(max_rounds + 1):
        for _ in range(count):
            for k in alive:
                timers[k].sample_once()
        stats = {k: VariantTiming(str(k), timers[k].samples) for k in alive}
        lead = min(stats.values(), key=lambda t: t.median_ms)
        alive = [k for k in alive if stats[k].quantile(0.2) <= lead.quantile(0.8) * (1 + TIE_TOLERANCE)]
        tied = all(stats[k].median_ms <= lead.median_ms * (1 + TIE_TOLERANCE) for k in alive)
        if len(alive) <= 1 or (tied and round_ > 0) or time.perf_counter() > deadline:
            break  # one left; the rest tie (pick's tie rule decides); or out of budget
        count *= 2
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



class Benchmarker(Protocol):
    """What the tuner asks of a benchmarker (times in ms).

    ``measure(info, workload, variants, runs, warmup_ms=None, rep_ms=None)``: per-run samples
    for each variant index in ``variants``, in order; ``runs[i](n)`` is variant
    ``variants[i]``'s benchmark entry (one synchronous call running the group's dispatch ``n *
    info.unroll`` times on the fake data of tuning workload ``workload``, the key the tuning
    cache uses, e.g. ``"tensor<1024xf32>"``); ``warmup_ms``/``rep_ms`` override the budgets
    (None: the benchmarker's own). ``info`` is the group's
    :class:`autotune_export.runtime.tuner.GroupInfo`.

    ``time_call(info, workload, variant, call)``: run ``call()`` (a live call of the group's
    host function with variant index ``variant`` selected for live workload ``workload``) and
    return ``(its result, the time it took in ms)``. The result must be ``call()``'s own: it is
    what the program receives.
    """

    def measure(self, info, workload: str, variants: Sequence[int], runs: Sequence[Callable[[int], object]], *,
                warmup_ms: float | None = None, rep_ms: float | None = None) -> list[list[float]]: ...

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]: ...


class WallClock:
    """The default benchmarker: the host's ``time.perf_counter``.

    ``do_bench``: ``f(run, *, unroll, warmup_ms, rep_ms) -> samples`` (default
    :func:`loop_bench`); ``warmup_ms``/``rep_ms``: its budgets per variant (Triton's
    ``do_bench`` defaults, 25 and 100 ms); ``search``: ``"exhaustive"`` (every variant with the
    full budgets) or ``"race"`` (:func:`race`, ``race_budget_ms`` per variant; only with the
    default ``do_bench``, without ``flush`` and for more than one variant); ``flush``: a
    function run before each timed run (the module's L2 flush entry), then one run per
    sample. A live call is timed from its start until its last result is ready (:func:`_wait`).
    """

    def __init__(self, *, do_bench: Callable | None = None, warmup_ms: float = 25.0, rep_ms: float = 100.0,
                 search: str = "exhaustive", race_budget_ms: float = 15.0, flush: Callable[[], object] | None = None):
        self.do_bench = do_bench or loop_bench
        self.warmup_ms, self.rep_ms = warmup_ms, rep_ms
        self.search, self.race_budget_ms = search, race_budget_ms
        self.flush = flush

    def measure(self, info, workload: str, variants: Sequence[int], runs: Sequence[Callable[[int], object]], *,
                warmup_ms: float | None = None, rep_ms: float | None = None) -> list[list[float]]:
        warmup = self.warmup_ms if warmup_ms is None else warmup_ms
        rep = self.rep_ms if rep_ms is None else rep_ms
        if (self.search == "race" and self.do_bench is loop_bench and self.flush is None and len(runs) > 1
                and warmup_ms is None and rep_ms is None):
            return race(list(runs), unroll=info.unroll, budget_ms=self.race_budget_ms)
        if self.flush is not None:
            return [self._flushed_samples(run, warmup, rep) for run in runs]
        return [list(self.do_bench(run, unroll=info.unroll, warmup_ms=warmup, rep_ms=rep)) for run in runs]

    def _flushed_samples(self, run: Callable[[int], object], warmup_ms: float, rep_ms: float) -> list[float]:
        run(1)
        start = time.perf_counter()
        while (time.perf_counter() - start) * 1e3 < warmup_ms:
            run(1)
        times = []
        start = time.perf_counter()
        while len(times) < 5 or (time.perf_counter() - start) * 1e3 < rep_ms:
            _wait(self.flush())
            times.append(_timed(run, 1))
        return times

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]:
        t0 = time.perf_counter()
        result = call()
        _wait(result)
        return result, (time.perf_counter() - t0) * 1e3


class GivenTimings:
    """A benchmarker that decides on given timings instead of a clock (tests, replays of
    recorded timings): deterministic, whatever the machine's load.

    ``ms``: the time of a variant in ms, either a mapping from variant name to ms or a function
    ``(group key, variant name, workload) -> ms``, where ``workload`` is the tuning workload's
    key (``"tensor<1024xf32>"``) for benchmarks and the live workload's key for live calls
    (see :meth:`autotune_export.runtime.AutotunedModule.__call__`). Every measurement returns
    ``samples`` equal samples. ``execute``: still run each benchmark entry once (``run(1)``),
    so the module's benchmark code is exercised; live calls always run (their results are
    the program's). :attr:`log` records ``(kind, group key, variant name, workload)`` per
    measurement, ``kind`` being ``"bench"`` or ``"live"``: what the tuner believed it timed.
    Raises KeyError for a variant the mapping does not name.
    """

    def __init__(self, ms: Mapping[str, float] | Callable[[str, str, str], float], *, samples: int = 3,
                 execute: bool = True):
        self.ms = ms
        self.samples = samples
        self.execute = execute
        self.log: list[tuple[str, str, str, str]] = []

    def _ms(self, info, variant: int, workload: str) -> float:
        name = info.variants[variant]
        return float(self.ms(info.key, name, workload) if callable(self.ms) else self.ms[name])

    def measure(self, info, workload: str, variants: Sequence[int], runs: Sequence[Callable[[int], object]], *,
                warmup_ms: float | None = None, rep_ms: float | None = None) -> list[list[float]]:
        out = []
        for k, run in zip(variants, runs):
            if self.execute:
                _wait(run(1))
            self.log.append(("bench", info.key, info.variants[k], workload))
            out.append([self._ms(info, k, workload)] * self.samples)
        return out

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]:
        result = call()
        self.log.append(("live", info.key, info.variants[variant], workload))
        return result, self._ms(info, variant, workload)
