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

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

from autotune_export.runtime.profile import phase as _phase
from autotune_export.support.stats import quantile as _quantile

__all__ = [
    "VariantTiming",
    "loop_bench",
    "LoopTimer",
    "race",
    "contenders",
    "FIRST_ROUND_NOISE",
    "AUTO_BUDGET_MS_PER_VARIANT",
    "CallSampler",
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


def loop_bench(
    run: Callable[[int], object], *, unroll: int, warmup_ms: float = 25.0, rep_ms: float = 100.0, target_ms: float = 10.0
) -> list[float]:
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


#: The relative noise :func:`contenders` assumes while no variant has two samples (round 0):
#: calls of about 3 ms or more, a few tens of microseconds of host jitter, and a GPU's clock
#: and temperature drift of about a percent. A variant whose single sample is more than about
#: 10% slower than the leader's is dropped after round 0.
FIRST_ROUND_NOISE = 0.02

#: The whole-group budget of :class:`WallClock`'s race when none is given: this many ms per
#: variant (Triton's ``do_bench`` spends 125 ms per config), warm-up included.
AUTO_BUDGET_MS_PER_VARIANT = 25.0


def race(
    sample: Callable[[int], float],
    count: int,
    *,
    budget_ms: float | None = None,
    spent_ms: Callable[[], float] | None = None,
    first_samples: int = 1,
    max_rounds: int = 4,
    confidence: float = 0.99,
    min_noise: float = 0.002,
) -> list[list[float]]:
    """The default search: successive halving by racing (Jamieson & Talwalkar, 2016; the
    "racing" of configuration selection, Maron & Moore, 1994). Returns per-run samples (ms) per
    variant ``0 .. count - 1``, in order.

    ``sample(k)`` takes one more sample of variant ``k`` (ms per run; :class:`CallSampler` on the
    wall clock, given values in :class:`GivenTimings`). Round 0 takes ``first_samples`` of every
    variant; round ``r`` twice as many as round ``r - 1`` of each variant still in contention.
    Samples of a round are INTERLEAVED (one sample of each contender in turn), so a drift of the
    device (clocks, temperature, other work) affects every contender alike.

    After each round, with ``n_k`` samples of variant ``k``, median ``m_k`` and fastest sample
    ``b_k``: the noise is the pooled relative spread ``rn`` (the median over variants of
    ``statistics.stdev / statistics.mean`` of their samples; at least ``min_noise``;
    :data:`FIRST_ROUND_NOISE` while no variant has two samples, so that round 0's single
    samples drop only clear losers), the
    half-width of ``k``'s interval ``h_k = z * rn / sqrt(n_k)`` (``z`` the ``confidence``
    quantile of the standard normal, ``statistics.NormalDist``). With ``L`` the variant of the
    lowest median, variant ``k`` stays in contention while ``b_k * (1 - h_k) <= m_L * (1 + h_L)
    * (1 + TIE_TOLERANCE)``: it could still be the fastest or tie with it (the tie rule of
    :func:`pick` may then prefer it). The fastest sample, not the median, bounds ``k`` from
    below, so one slow sample (host jitter, a first call) never drops a fast variant. The race
    ends when one variant is left (the leader is separated beyond noise: the early stop), when
    the contenders' medians are within ``TIE_TOLERANCE`` of ``m_L`` and measured finer than it
    (``h_k < TIE_TOLERANCE / 2``: :func:`pick`'s tie rule decides), after ``max_rounds``, or
    once ``spent_ms()`` passes ``budget_ms`` (a whole-group budget; every variant still gets one
    sample). The winner is then :func:`pick` of the samples, as for every search.
    """
    samples: list[list[float]] = [[] for _ in range(count)]
    if count == 0:
        return samples
    over = lambda: budget_ms is not None and spent_ms is not None and spent_ms() >= budget_ms
    alive = list(range(count))
    per_round = max(1, first_samples)
    for round_ in range(max_rounds + 1):
        for i in range(per_round):
            if (round_ or i) and over():
                return samples
            for k in alive:
                if (round_ or i) and over():
                    return samples
                samples[k].append(sample(k))
        alive, settled = contenders(samples, alive, confidence=confidence, min_noise=min_noise)
        if settled or over():
            break
        per_round *= 2
    return samples


def contenders(
    samples: Sequence[Sequence[float]], alive: Sequence[int], *, confidence: float = 0.99, min_noise: float = 0.002
) -> tuple[list[int], bool]:
    """The variants of ``alive`` still in contention after a round of :func:`race` (its rule),
    and whether the race is settled (one left, or the rest tie within TIE_TOLERANCE and are
    measured finer than it)."""
    med = {k: statistics.median(samples[k]) for k in alive}
    spreads = [
        statistics.stdev(samples[k]) / statistics.fmean(samples[k])
        for k in alive
        if len(samples[k]) >= 2 and statistics.fmean(samples[k]) > 0
    ]
    noise = max(min_noise, statistics.median(spreads)) if spreads else max(min_noise, FIRST_ROUND_NOISE)
    z = statistics.NormalDist().inv_cdf(confidence)
    half = {k: z * noise / math.sqrt(len(samples[k])) for k in alive}
    lead = min(alive, key=lambda k: (med[k], k))
    bound = med[lead] * (1 + half[lead]) * (1 + TIE_TOLERANCE)
    kept = [k for k in alive if min(samples[k]) * (1 - half[k]) <= bound]
    tied = all(med[k] <= med[lead] * (1 + TIE_TOLERANCE) and half[k] < TIE_TOLERANCE / 2 for k in kept)
    return kept, len(kept) <= 1 or tied


#: The most iterations one call of :class:`CallSampler` runs.
_MAX_ITERS = 100_000


class CallSampler:
    """Samples of benchmark entries on the wall clock, for :func:`race`: calls sized from the
    kernel's own time.

    ``runs[k](n)`` runs variant ``k``'s dispatch ``n * unroll`` times in one synchronous call.
    :meth:`start` warms the device up on ``runs[0]`` (calls of one iteration for at least
    ``warmup_ms`` and twice) and measures the per-call cost that is not the dispatches (fake
    data fills, the host round trip): ``fixed = 2 * t(run(1)) - t(run(2))``, once per group (the
    fake data and the call are the same for every variant). A variant's first :meth:`sample`
    probes it with one iteration and sizes its calls: ``iters`` iterations, so that a call lasts
    about ``call_ms`` (host jitter of tens of microseconds stays well below the 1% the tie rule
    resolves); when one iteration already lasts that long, the probe is the first sample. A
    sample is ``(t(run(iters)) - fixed) / (iters * unroll)`` ms per run. ``profile``: a
    :class:`autotune_export.runtime.profile.TuningProfile` to charge the calls to.
    """

    def __init__(
        self, runs: Sequence[Callable[[int], object]], unroll: int, *, warmup_ms: float = 25.0, call_ms: float = 3.0, profile=None
    ):
        self.runs, self.unroll = list(runs), max(1, int(unroll))
        self.warmup_ms, self.call_ms = warmup_ms, call_ms
        self.profile = profile
        self.fixed = 0.0
        self.iters: dict[int, int] = {}
        #: Per variant, the dispatches its calls ran (warm-up and probes included).
        self.dispatched: dict[int, int] = {}
        self._pending: dict[int, float] = {}
        self.started_at = time.perf_counter()

    def spent_ms(self) -> float:
        """Wall time since :meth:`start` (ms): what a whole-group budget counts."""
        return (time.perf_counter() - self.started_at) * 1e3

    def _call(self, k: int, n: int, what: str) -> float:
        """Time ``runs[k](n)`` (ms). No result is read back: the call returns once its work is
        done (IREE's synchronous ABI waits on the call's fence; on the H200 a ``bench(2)``
        call of the 8192^3 matmul returned after its 16 dispatches' 32 ms), and reading back
        even one element cost 1.7 ms per call there (``DeviceArray.to_host``)."""
        with _phase(self.profile, what):
            t0 = time.perf_counter()
            self.runs[k](n)
            ms = (time.perf_counter() - t0) * 1e3
        self.dispatched[k] = self.dispatched.get(k, 0) + n * self.unroll
        if self.profile is not None:
            self.profile.count_dispatches(n * self.unroll)
        return ms

    def start(self) -> None:
        self.started_at = time.perf_counter()
        if not self.runs:
            return
        ones = []
        while len(ones) < 2 or (time.perf_counter() - self.started_at) * 1e3 < self.warmup_ms:
            ones.append(self._call(0, 1, "warm-up (device, first variant)"))
            if len(ones) > 1000:
                break
        t1 = min(ones[-2:])
        if t1 < 4 * self.call_ms:
            t2 = self._call(0, 2, "warm-up (device, first variant)")
            self.fixed = min(max(0.0, 2 * t1 - t2), t1)
        # else: one iteration lasts 4 calls' worth; its fixed part (fills, host round trip: a
        # fraction of a ms) is left in the samples, the same for every variant.
        self._pending[0] = t1

    def sample(self, k: int) -> float:
        if k not in self.iters:
            t1 = self._pending.pop(k, None)
            if t1 is None:
                t1 = self._call(k, 1, "probe calls (one per variant)")
            # The kernels' part of a one-iteration call; at least a tenth of the call, so that
            # an overestimated fixed cost never makes calls of millions of iterations.
            per_call = max(t1 - self.fixed, 0.1 * t1, 1e-4)
            self.iters[k] = min(_MAX_ITERS, max(1, math.ceil(self.call_ms / per_call)))
            if self.iters[k] == 1 and k != 0:
                return max(0.0, t1 - self.fixed) / self.unroll
            # Variant 0's t1 is the least of its warm-up calls, run back to back on a warm
            # device: as a sample it would favour variant 0 over the others' single probes
            # (on the H200 at 8192^3 it won one race of three while 1.108x the ncu-fastest).
            # Its first sample is one fresh call, as the others' are.
        n = self.iters[k]
        return max(0.0, self._call(k, n, "timed calls") - self.fixed) / (n * self.unroll)


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

    def measure(
        self,
        info,
        workload: str,
        variants: Sequence[int],
        runs: Sequence[Callable[[int], object]],
        *,
        warmup_ms: float | None = None,
        rep_ms: float | None = None,
    ) -> list[list[float]]: ...

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]: ...


class WallClock:
    """The default benchmarker: the host's ``time.perf_counter``.

    ``search``: ``"race"`` (the default: :func:`race` over :class:`CallSampler`, calls sized
    from each kernel's own time, ``warmup_ms`` of device warm-up once per group, calls of about
    ``call_ms``, ``race_budget_ms`` for the whole group, warm-up included: None for
    :data:`AUTO_BUDGET_MS_PER_VARIANT` per variant, ``math.inf`` for none) or ``"exhaustive"`` (every variant
    with the full ``warmup_ms``/``rep_ms`` budgets of ``do_bench``, Triton's autotuner's way).
    ``do_bench``: ``f(run, *, unroll, warmup_ms, rep_ms) -> samples`` (default
    :func:`loop_bench`; a custom one, like ``flush``, makes the search exhaustive);
    ``warmup_ms``/``rep_ms``: its budgets per variant (Triton's ``do_bench`` defaults, 25 and
    100 ms); ``flush``: a function run before each timed run (the module's L2 flush entry), then
    one run per sample. A live call is timed from its start until its last result is ready
    (:func:`_wait`). ``profile``: a :class:`autotune_export.runtime.profile.TuningProfile`.
    """

    def __init__(
        self,
        *,
        do_bench: Callable | None = None,
        warmup_ms: float = 25.0,
        rep_ms: float = 100.0,
        search: str = "race",
        race_budget_ms: float | None = None,
        flush: Callable[[], object] | None = None,
        race_warmup_ms: float = 25.0,
        call_ms: float = 3.0,
        profile=None,
    ):
        self.do_bench = do_bench or loop_bench
        self.warmup_ms, self.rep_ms = warmup_ms, rep_ms
        self.search, self.race_budget_ms = search, race_budget_ms
        self.race_warmup_ms, self.call_ms = race_warmup_ms, call_ms
        self.flush = flush
        self.profile = profile

    def measure(
        self,
        info,
        workload: str,
        variants: Sequence[int],
        runs: Sequence[Callable[[int], object]],
        *,
        warmup_ms: float | None = None,
        rep_ms: float | None = None,
    ) -> list[list[float]]:
        warmup = self.warmup_ms if warmup_ms is None else warmup_ms
        rep = self.rep_ms if rep_ms is None else rep_ms
        if (
            self.search == "race"
            and self.do_bench is loop_bench
            and self.flush is None
            and len(runs) > 1
            and warmup_ms is None
            and rep_ms is None
        ):
            sampler = CallSampler(runs, info.unroll, warmup_ms=self.race_warmup_ms, call_ms=self.call_ms, profile=self.profile)
            sampler.start()
            budget = self.race_budget_ms if self.race_budget_ms is not None else AUTO_BUDGET_MS_PER_VARIANT * len(runs)
            samples = race(sampler.sample, len(runs), budget_ms=budget, spent_ms=sampler.spent_ms)
            if self.profile is not None:
                self.profile.kernel_ms += sum(
                    n * statistics.median(samples[k]) for k, n in sampler.dispatched.items() if samples[k]
                )
            return samples
        if self.flush is not None:
            return [self._flushed_samples(run, warmup, rep) for run in runs]
        with _phase(self.profile, "exhaustive do_bench"):
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
    (see :meth:`autotune_export.runtime.AutotunedModule.__call__`). A value may also be a
    sequence: the variant's successive samples, in turn (noise, for the search's tests).
    ``search``: ``"race"`` (the default, as :class:`WallClock`'s: :func:`race` on the given
    samples; ``budget_ms`` is then a whole-group budget on a simulated clock that advances by
    each sample's ms times ``info.unroll``, one call of one iteration) or ``"exhaustive"``
    (``samples`` samples of every variant). ``execute``: still run each benchmark entry once
    (``run(1)``), so the module's benchmark code is exercised; live calls always run (their
    results are the program's). :attr:`log` records ``(kind, group key, variant name,
    workload)`` per variant measured and per live call, ``kind`` being ``"bench"`` or
    ``"live"``: what the tuner believed it timed; :attr:`sampled` counts the samples per
    ``(group key, variant name)``. Raises KeyError for a variant the mapping does not name.
    """

    def __init__(
        self,
        ms: Mapping[str, float] | Callable[[str, str, str], float],
        *,
        samples: int = 3,
        execute: bool = True,
        search: str = "race",
        budget_ms: float | None = None,
    ):
        self.ms = ms
        self.samples = samples
        self.execute = execute
        self.search, self.budget_ms = search, budget_ms
        self.log: list[tuple[str, str, str, str]] = []
        self.sampled: dict[tuple[str, str], int] = {}

    def _ms(self, info, variant: int, workload: str) -> float:
        return self._sample(info, variant, workload, 0)

    def _sample(self, info, variant: int, workload: str, i: int) -> float:
        name = info.variants[variant]
        value = self.ms(info.key, name, workload) if callable(self.ms) else self.ms[name]
        if isinstance(value, (list, tuple)):
            value = value[i % len(value)]
        return float(value)

    def measure(
        self,
        info,
        workload: str,
        variants: Sequence[int],
        runs: Sequence[Callable[[int], object]],
        *,
        warmup_ms: float | None = None,
        rep_ms: float | None = None,
    ) -> list[list[float]]:
        for k, run in zip(variants, runs):
            if self.execute:
                _wait(run(1))
            self.log.append(("bench", info.key, info.variants[k], workload))
        clock = [0.0]

        def sample(i: int) -> float:
            k = variants[i]
            key = (info.key, info.variants[k])
            n = self.sampled.get(key, 0)
            self.sampled[key] = n + 1
            ms = self._sample(info, k, workload, n)
            clock[0] += ms * max(1, info.unroll)
            return ms

        if self.search == "race" and len(variants) > 1 and warmup_ms is None and rep_ms is None:
            return race(sample, len(variants), budget_ms=self.budget_ms, spent_ms=lambda: clock[0])
        return [[sample(i) for _ in range(self.samples)] for i in range(len(variants))]

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]:
        result = call()
        self.log.append(("live", info.key, info.variants[variant], workload))
        return result, self._ms(info, variant, workload)
