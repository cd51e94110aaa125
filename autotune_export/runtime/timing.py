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

import gc
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
    "relative_spread",
    "FIRST_ROUND_NOISE",
    "CALL_JITTER_MS",
    "AUTO_BUDGET_MS_PER_VARIANT",
    "ROUND0_BUDGET_FACTOR",
    "MIN_KERNEL_SHARE",
    "CallSampler",
    "race_calls",
    "pick",
    "TIE_TOLERANCE",
    "Benchmarker",
    "WallClock",
    "SimulatedBench",
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
        """The lower median of the samples (``statistics.median_low``: for an even count the
        smaller of the two middle samples, so that of two samples a late call, which only ever
        adds time, is not half the estimate); infinite without samples."""
        return statistics.median_low(self.times_ms) if self.times_ms else float("inf")

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
#: and temperature drift of about a percent.
FIRST_ROUND_NOISE = 0.02

#: The delay (ms) one call of a benchmark entry may suffer beyond its kernels' time, once in a
#: while: on the H200 (issue 24's runs, tests/unit/data/h200_tuning_mm9.json) single calls of
#: 4 to 15 ms came back 2.5 and 3.4 ms late (+19% and +71% of a sample), a delay of its own, not
#: a share of the call. A variant with ONE sample is dropped only when that sample, less this
#: much of its call, is still slower than the leader (:func:`contenders`' ``slack``): so the
#: fastest variant is never dropped on one late call. Two or more samples need no such
#: allowance: a variant's fastest sample bounds it, and one late call does not move it.
CALL_JITTER_MS = 4.0

#: :class:`CallSampler` sizes a variant's calls from at least this share of its one-iteration
#: call (the rest may be the per-call cost: fake-data fills, the host round trip).
MIN_KERNEL_SHARE = 0.25

#: The whole-group budget of :class:`WallClock`'s race when none is given: this many ms per
#: variant (Triton's ``do_bench`` spends 125 ms per config), warm-up included ...
AUTO_BUDGET_MS_PER_VARIANT = 20.0

#: ... and at least this many times what the warm-up and round 0 took, so that the budget
#: grows with the kernels' own time: where one call of each variant lasts tens of ms (the 8192^3
#: matmul: 8 dispatches of 1.5-3.5 ms per call), round 0 alone takes most of 20 ms per variant,
#: and the variants it could not separate still get the samples that separate them.
ROUND0_BUDGET_FACTOR = 1.5


def race(
    sample: Callable[[int], float],
    count: int,
    *,
    budget_ms: float | None = None,
    spent_ms: Callable[[], float] | None = None,
    round0_budget_factor: float | None = None,
    slack: Callable[[int], float] | None = None,
    max_rounds: int = 40,
    confidence: float = 0.99,
    min_noise: float = 0.002,
) -> list[list[float]]:
    """The default search: racing (the "racing" of configuration selection, Maron & Moore,
    1994; successive elimination). Returns per-run samples (ms) per variant ``0 .. count - 1``,
    in order.

    ``sample(k)`` takes one more sample of variant ``k`` (ms per run; :class:`CallSampler` on
    the wall clock or a simulated one, given values in :class:`GivenTimings`). Every round takes
    ONE sample of each variant still in contention (round 0: of every variant), interleaved (a
    drift of the device's clocks, temperature or other work affects every contender alike) and
    in an order rotated by one each round (so no variant is always timed first, right after
    another one's calls). After each round :func:`contenders` drops the variants that are
    slower than the leader beyond noise (``slack``: the share of a variant's one sample that
    one late call may be, see :data:`CALL_JITTER_MS`).

    The race ends when it is settled (one variant left: the leader is separated beyond noise,
    the early stop; or the ones left tie within ``TIE_TOLERANCE`` and are measured finer than
    it), after ``max_rounds`` rounds after round 0, or when ``spent_ms()`` has reached
    ``budget_ms`` at the end of a round (a whole-group budget, checked between rounds: a round
    once begun is finished, so every contender has as many samples as the others and every
    variant at least one; the race overruns the budget by one round at most).
    ``round0_budget_factor``: raise the budget, after round 0, to this many times
    ``spent_ms()`` (the default budget's growth with the kernels' time,
    :data:`ROUND0_BUDGET_FACTOR`). The winner is then :func:`pick` of the samples, as for every
    search.
    """
    samples: list[list[float]] = [[] for _ in range(count)]
    if count == 0:
        return samples
    alive = list(range(count))
    for round_ in range(max_rounds + 1):
        turn = round_ % len(alive)
        for k in alive[turn:] + alive[:turn]:
            samples[k].append(sample(k))
        if round_ == 0 and round0_budget_factor is not None and spent_ms is not None:
            budget_ms = max(budget_ms or 0.0, round0_budget_factor * spent_ms())
        alive, settled = contenders(samples, alive, confidence=confidence, min_noise=min_noise, slack=slack)
        if settled or (budget_ms is not None and spent_ms is not None and spent_ms() >= budget_ms):
            break
    return samples


def relative_spread(samples: Sequence[float]) -> float:
    """The relative spread of ``samples`` (at least two, positive median): ``1.4826 * MAD /
    median``, the median absolute deviation scaled to estimate a normal's standard deviation
    (``statistics``), divided by the median. Unlike ``stdev / mean`` one late call among three
    or more samples does not inflate it; for two samples it is ``0.74 |a - b| / mean``."""
    m = statistics.median(samples)
    return 1.4826 * statistics.median(abs(x - m) for x in samples) / m


def contenders(
    samples: Sequence[Sequence[float]],
    alive: Sequence[int],
    *,
    confidence: float = 0.99,
    min_noise: float = 0.002,
    slack: Callable[[int], float] | None = None,
) -> tuple[list[int], bool]:
    """The variants of ``alive`` still in contention after a round of :func:`race` (its rule),
    and whether the race is settled.

    With ``n_k`` samples of variant ``k``, median ``m_k`` and fastest sample ``b_k``: the noise
    ``rn`` is the pooled relative spread, the median of :func:`relative_spread` over every
    variant with two samples or more (those already dropped too, so that a late call of one of
    the last two contenders does not make the noise; at least ``min_noise``;
    :data:`FIRST_ROUND_NOISE` while no variant has two samples); the half-width of ``k``'s
    interval is ``h_k = z * rn / sqrt(n_k)`` (``z`` the ``confidence`` quantile of the standard
    normal, ``statistics.NormalDist``). With ``L`` the variant of the lowest median (ties to
    the lower index), ``k`` stays while ``b_k * (1 - a_k) <= m_L * (1 + h_L) * (1 +
    TIE_TOLERANCE)``, where ``a_k = h_k``, or for a variant with one sample ``max(h_k,
    slack(k))`` (``slack``: the share of that sample one late call may be; None: 0). It could
    still be the fastest, or tie with it and win by :func:`pick`'s tie rule. The fastest sample,
    not the median, bounds ``k`` from below: one slow sample (a late call, a first call) never
    drops a fast variant with two samples or more. Settled: one variant left, or every one left
    within ``TIE_TOLERANCE`` of ``m_L`` with ``h_k < TIE_TOLERANCE / 2`` and two samples or
    more (:func:`pick`'s tie rule decides)."""
    med = {k: statistics.median_low(samples[k]) for k in alive}
    spreads = [relative_spread(s) for s in samples if len(s) >= 2 and statistics.median(s) > 0]
    noise = max(min_noise, statistics.median(spreads)) if spreads else max(min_noise, FIRST_ROUND_NOISE)
    z = statistics.NormalDist().inv_cdf(confidence)
    half = {k: z * noise / math.sqrt(len(samples[k])) for k in alive}
    lead = min(alive, key=lambda k: (med[k], k))
    bound = med[lead] * (1 + half[lead]) * (1 + TIE_TOLERANCE)

    def allowance(k: int) -> float:
        if len(samples[k]) == 1 and slack is not None:
            return min(0.95, max(half[k], slack(k)))
        return half[k]

    kept = [k for k in alive if min(samples[k]) * (1 - allowance(k)) <= bound]
    tied = all(med[k] <= med[lead] * (1 + TIE_TOLERANCE) and half[k] < TIE_TOLERANCE / 2 and len(samples[k]) >= 2 for k in kept)
    return kept, len(kept) <= 1 or tied


#: The pairs of calls (one iteration, two iterations) :class:`CallSampler` measures the
#: per-call cost on.
_PAIRS = 4

#: The most iterations one call of :class:`CallSampler` runs.
_MAX_ITERS = 100_000


class CallSampler:
    """Samples of benchmark entries on a clock, for :func:`race`: calls sized from the
    kernel's own time.

    ``runs[k](n)`` runs variant ``k``'s dispatch ``n * unroll`` times in one synchronous call.
    :meth:`start` warms the device up on ``runs[0]`` (calls of one iteration for at least
    ``warmup_ms`` and twice) and measures the per-call cost that is not the dispatches (fake
    data fills, the host round trip): ``fixed = 2 * t(run(1)) - t(run(2))``, once per group (the
    fake data and the call are the same for every variant), from medians of four pairs of calls
    ``run(1)``, ``run(2)`` taken in turn (and the last four warm-up calls for ``t(run(1))``),
    which count towards ``warmup_ms``. A variant's first :meth:`sample` probes it with one
    iteration and sizes its calls: ``iters`` iterations, so that a call lasts about ``call_ms``
    (host jitter of tens of microseconds stays well below the 1% the tie rule resolves), from at
    least :data:`MIN_KERNEL_SHARE` of the probe; when one iteration already lasts that long, the
    probe is the first sample. :attr:`log` lists every call (variant, iterations, ms). A
    sample is ``(t(run(iters)) - fixed) / (iters * unroll)`` ms per run. ``profile``: a
    :class:`autotune_export.runtime.profile.TuningProfile` to charge the calls to. ``clock``:
    seconds, ``time.perf_counter`` (read at each call) by default; :class:`GivenTimings`
    passes a simulated one.
    """

    def __init__(
        self,
        runs: Sequence[Callable[[int], object]],
        unroll: int,
        *,
        warmup_ms: float = 25.0,
        call_ms: float = 3.0,
        profile=None,
        clock: Callable[[], float] | None = None,
    ):
        self.runs, self.unroll = list(runs), max(1, int(unroll))
        self.warmup_ms, self.call_ms = warmup_ms, call_ms
        self.profile = profile
        self.clock = clock or (lambda: time.perf_counter())
        self.fixed = 0.0
        self.iters: dict[int, int] = {}
        #: Per variant, the dispatches its calls ran (warm-up and probes included).
        self.dispatched: dict[int, int] = {}
        #: Per variant, how long (ms) the call of its last sample took.
        self.last_call_ms: dict[int, float] = {}
        self._pending: dict[int, float] = {}
        self._last_warmup = 0.0
        #: Every call, in order: (variant, iterations, ms), warm-up and probes included.
        self.log: list[tuple[int, int, float]] = []
        self.started_at = self.clock()

    def spent_ms(self) -> float:
        """Time since :meth:`start` (ms): what a whole-group budget counts."""
        return (self.clock() - self.started_at) * 1e3

    def slack(self, k: int) -> float:
        """The share of variant ``k``'s last sample that one late call may be:
        :data:`CALL_JITTER_MS` over the length of that call (for :func:`contenders`)."""
        call = self.last_call_ms.get(k, 0.0)
        return CALL_JITTER_MS / call if call > 0 else 1.0

    def _call(self, k: int, n: int, what: str) -> float:
        """Time ``runs[k](n)`` (ms). No result is read back: the call returns once its work is
        done (IREE's synchronous ABI waits on the call's fence; on the H200 a ``bench(2)``
        call of the 8192^3 matmul returned after its 16 dispatches' 32 ms), and reading back
        even one element cost 1.7 ms per call there (``DeviceArray.to_host``)."""
        with _phase(self.profile, what):
            t0 = self.clock()
            self.runs[k](n)
            ms = (self.clock() - t0) * 1e3
        self.dispatched[k] = self.dispatched.get(k, 0) + n * self.unroll
        self.log.append((k, n, ms))
        if self.profile is not None:
            self.profile.count_dispatches(n * self.unroll)
        return ms

    def start(self) -> None:
        self.started_at = self.clock()
        if not self.runs:
            return
        # Calls of one iteration for warmup_ms, at least two. Their number is set from the
        # second call (the first may load or allocate), not by watching the clock: a loop that
        # stops on the call that crosses warmup_ms ends on a late call more often than not.
        # The pairs for the fixed cost below, when they are taken, count towards warmup_ms (as
        # three calls of one iteration each).
        ones = [self._call(0, 1, "warm-up (device, first variant)") for _ in range(2)]
        count = min(1000, max(2, math.ceil(self.warmup_ms / max(min(ones), 1e-3))))
        pairs_too = min(ones) < 4 * self.call_ms
        ones += [self._call(0, 1, "warm-up (device, first variant)") for _ in range(count - 2 - 3 * _PAIRS * pairs_too)]
        # (Lower) median: a late call (CALL_JITTER_MS) does not move it.
        t1 = statistics.median_low(ones[1:])
        if pairs_too:
            # The per-call cost from _PAIRS pairs of calls of one and of two iterations taken in
            # turn, so that a drift of the device's speed moves both alike (calls of two
            # iterations taken after all those of one, on a device still speeding up, made it
            # too large: 0.78 ms for 0.5 on a device 2x slow to 1x over 80 ms, 0.53 now), and
            # from medians of four, which one late call does not move (the lesser of two calls
            # of two iterations, as before, was low by their noise and the fixed cost high by as
            # much: replayed on the H200's recorded calls at 4096^3, +-30% a call, it sized some
            # variants' calls 2-6x too long; tests/unit/test_race_replay.py).
            pairs = [
                (self._call(0, 1, "warm-up (device, first variant)"), self._call(0, 2, "warm-up (device, first variant)"))
                for _ in range(_PAIRS)
            ]
            t1 = statistics.median(ones[1:][-_PAIRS:] + [a for a, _ in pairs])
            self.fixed = min(max(0.0, 2 * t1 - statistics.median([b for _, b in pairs])), t1)
            self._last_warmup = pairs[-1][0]
        else:
            # One iteration lasts 4 calls' worth; its fixed part (fills, host round trip: a
            # fraction of a ms) is left in the samples, the same for every variant.
            self._last_warmup = ones[-1]
        self._pending[0] = t1

    def sample(self, k: int) -> float:
        if k not in self.iters:
            t1 = self._pending.pop(k, None)
            if t1 is None:
                t1 = self._call(k, 1, "probe calls (one per variant)")
                if t1 < self.call_ms:
                    # A short kernel: a second probe is cheap, and one late probe would make
                    # its calls too short (the per-call cost then weighs on its samples). Not
                    # for a probe of call_ms or more: its calls are of one or two iterations
                    # anyway, and the second probe cost the H200's 4096^3 tuning 8 calls of
                    # 4.3 ms (and the budget 1.5x as much, ROUND0_BUDGET_FACTOR).
                    t1 = min(t1, self._call(k, 1, "probe calls (one per variant)"))
            # The kernels' part of a one-iteration call; at least a quarter of the call, so that
            # an overestimated fixed cost never makes calls more than 4x what t1 alone gives
            # (calls too long cost the race rounds; ones too short only add noise).
            per_call = max(t1 - self.fixed, MIN_KERNEL_SHARE * t1, 1e-4)
            self.iters[k] = min(_MAX_ITERS, max(1, math.ceil(self.call_ms / per_call)))
            if self.iters[k] == 1:
                # One iteration fills a call: the probe is the first sample. Variant 0's is its
                # LAST warm-up call, one call as every other variant's probe is, not t1, the
                # least of its warm-up calls (a least of several favoured variant 0: on the
                # H200 at 8192^3 it won one race of three while 1.108x the ncu-fastest).
                t = self._last_warmup if k == 0 else t1
                self.last_call_ms[k] = t
                return max(0.0, t - self.fixed) / self.unroll
        n = self.iters[k]
        ms = self._call(k, n, "timed calls")
        self.last_call_ms[k] = ms
        return max(0.0, ms - self.fixed) / (n * self.unroll)


def race_calls(
    runs: Sequence[Callable[[int], object]],
    unroll: int,
    *,
    budget_ms: float | None = None,
    warmup_ms: float = 25.0,
    call_ms: float = 3.0,
    profile=None,
    clock: Callable[[], float] | None = None,
    log: list | None = None,
) -> list[list[float]]:
    """The default search on benchmark entries (``runs`` and ``unroll`` as for
    :class:`CallSampler`): :class:`CallSampler` (warm-up, calls sized from each kernel's time)
    and :func:`race` on it. Returns per-run samples (ms) per variant, in order. ``budget_ms``:
    the whole-group budget, warm-up included (None: :data:`AUTO_BUDGET_MS_PER_VARIANT` per
    variant, raised after round 0 to :data:`ROUND0_BUDGET_FACTOR` times what warm-up and round
    0 took; ``math.inf``: none). ``log``: a list that
    receives :attr:`CallSampler.log` (every call: variant, iterations, ms). Python's garbage
    collector is off while it runs (as ``timeit`` does), so that no collection lands in a
    timed call. :class:`WallClock` runs it
    on the wall clock, :class:`GivenTimings` (``call_overhead_ms``) on a simulated one."""
    sampler = CallSampler(runs, unroll, warmup_ms=warmup_ms, call_ms=call_ms, profile=profile, clock=clock)
    auto = budget_ms is None
    collecting = gc.isenabled()
    gc.disable()
    try:
        sampler.start()
        samples = race(
            sampler.sample,
            len(runs),
            budget_ms=AUTO_BUDGET_MS_PER_VARIANT * len(runs) if auto else budget_ms,
            spent_ms=sampler.spent_ms,
            round0_budget_factor=ROUND0_BUDGET_FACTOR if auto else None,
            slack=sampler.slack,
        )
    finally:
        if collecting:
            gc.enable()
        if log is not None:
            log[:] = sampler.log
    if profile is not None:
        profile.kernel_ms += sum(n * statistics.median(samples[k]) for k, n in sampler.dispatched.items() if samples[k])
    return samples


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
        #: The calls of the last race (variant index within the measured ones, iterations,
        #: ms), warm-up and probes included: :attr:`CallSampler.log`.
        self.calls: list[tuple[int, int, float]] = []

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
            return race_calls(
                runs,
                info.unroll,
                budget_ms=self.race_budget_ms,
                warmup_ms=self.race_warmup_ms,
                call_ms=self.call_ms,
                profile=self.profile,
                log=self.calls,
            )
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


class SimulatedBench:
    """Benchmark entries on a simulated clock, for replays of the wall-clock search
    (:func:`race_calls` with ``clock=bench.clock`` and ``runs=bench.runs``): a call of variant
    ``k`` with ``n`` iterations lasts ``overhead_ms + n * unroll * per_run(k, i) + late_ms(k,
    i)`` ms, ``i`` being the index of that call among ``k``'s calls (warm-up and probes
    included), and advances the clock by as much. ``per_run``: ms per dispatch; ``late_ms``: a
    delay of that call beyond its dispatches (None: none). :attr:`calls` lists, per variant,
    the ``n`` of each call. Nothing here reads a real clock."""

    def __init__(
        self,
        count: int,
        per_run: Callable[[int, int], float],
        unroll: int,
        *,
        overhead_ms: float = 0.0,
        late_ms: Callable[[int, int], float] | None = None,
    ):
        self.per_run, self.unroll, self.overhead_ms, self.late_ms = per_run, max(1, int(unroll)), overhead_ms, late_ms
        self.now = 0.0
        self.calls: list[list[int]] = [[] for _ in range(count)]
        self.runs = [self._run(k) for k in range(count)]

    def clock(self) -> float:
        """The simulated time in seconds (as ``time.perf_counter``)."""
        return self.now

    def _run(self, k: int) -> Callable[[int], None]:
        def run(n: int) -> None:
            i = len(self.calls[k])
            self.calls[k].append(n)
            ms = self.overhead_ms + n * self.unroll * self.per_run(k, i) + (self.late_ms(k, i) if self.late_ms else 0.0)
            self.now += ms / 1e3

        return run


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
    (``samples`` samples of every variant). ``call_overhead_ms`` (race only): replay
    :class:`WallClock`'s search itself instead, :func:`race_calls` (warm-up, calls sized from
    each kernel's time, the default budget when ``budget_ms`` is None) on
    :class:`SimulatedBench` calls: a call of ``n`` iterations of a variant lasts
    ``call_overhead_ms + n * info.unroll * v``, ``v`` the variant's next given value (so a
    sequence is per call, warm-up and probes included; :attr:`sampled` then counts calls). ``execute``: still run each benchmark entry once
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
        call_overhead_ms: float | None = None,
    ):
        self.ms = ms
        self.samples = samples
        self.call_overhead_ms = call_overhead_ms
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

        race_search = self.search == "race" and len(variants) > 1 and warmup_ms is None and rep_ms is None
        if race_search and self.call_overhead_ms is not None:

            def per_run(i: int, call: int) -> float:
                key = (info.key, info.variants[variants[i]])
                self.sampled[key] = self.sampled.get(key, 0) + 1
                return self._sample(info, variants[i], workload, call)

            bench = SimulatedBench(len(variants), per_run, info.unroll, overhead_ms=self.call_overhead_ms)
            return race_calls(bench.runs, info.unroll, budget_ms=self.budget_ms, clock=bench.clock)
        if race_search:
            return race(sample, len(variants), budget_ms=self.budget_ms, spent_ms=lambda: clock[0])
        return [[sample(i) for _ in range(self.samples)] for i in range(len(variants))]

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]:
        result = call()
        self.log.append(("live", info.key, info.variants[variant], workload))
        return result, self._ms(info, variant, workload)
