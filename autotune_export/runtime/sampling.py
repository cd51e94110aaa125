"""Samples of benchmark entries on a clock: :func:`loop_bench` and :class:`LoopTimer` (Triton's
``do_bench`` way: one variant at a time, fixed budgets) and :class:`CallSampler` with
:func:`race_calls` (the default search's sampling: one warm-up per group, calls sized from the
kernels' own time, :func:`autotune_export.runtime.search.race` over them). The clock is
``time.perf_counter`` unless one is given (a replay's simulated clock). Times are in ms.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from typing import Callable, Sequence

from autotune_export.runtime.profile import phase as _phase
from autotune_export.runtime.search import race


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
        """Time ``run(iters)`` until ``rep_ms`` have passed and at least ``at_least`` samples
        were taken; each sample is the call less the one-iteration call ``base``, per run. A
        call that the per-call cost makes up more than half of resolves nothing (a late
        ``base`` or a fast call under load gave samples of 0 ms, which won the group): the
        calls are made 4x longer and the sample is taken again (up to 100,000 iterations;
        past that, ``base`` counts as half the call), so no sample is ever 0."""
        start, n = time.perf_counter(), 0
        while n < at_least or (time.perf_counter() - start) * 1e3 < rep_ms:
            t = _timed(self.run, self.iters)
            if t - self.base < 0.5 * t and self.iters < 100_000:
                self.iters = min(100_000, 4 * self.iters)
                continue
            self.samples.append(max(t - self.base, 0.5 * t) / ((self.iters - 1) * self.unroll))
            n += 1


#: :class:`CallSampler` sizes the calls from at least this share of the first variant's
#: one-iteration call (the rest may be the per-call cost: fake-data fills, the host round trip).
MIN_KERNEL_SHARE = 0.25

#: The whole-group budget of :class:`WallClock`'s race when none is given: this many ms per
#: variant (Triton's ``do_bench`` spends 125 ms per config), warm-up included ...
AUTO_BUDGET_MS_PER_VARIANT = 20.0

#: ... and at least this many times what the warm-up and round 0 took, so that the budget
#: grows with the kernels' own time: where one call of each variant lasts tens of ms (the 8192^3
#: matmul: 8 dispatches of 1.5-3.5 ms per call), round 0 alone takes most of 20 ms per variant,
#: and the leading variants still get a head-to-head (:func:`race`'s partial rounds). 1.2: at
#: 8192^3 on the H200 (benchmarks/tuning_bootstrap.py) the tuning then costs 0.18-0.19x
#: triton.autotune's (1.5: 0.23-0.25x) and picks the ncu-fastest in every draw.
ROUND0_BUDGET_FACTOR = 1.2

#: The length (ms) :class:`CallSampler` sizes calls to: long enough that host jitter (tens of
#: microseconds) is a few percent of a call, which the fastest of a few samples removes; short
#: enough that a late call costs little and the budget buys many samples (the noise on the H200
#: is late calls, whose share, not length, decides how many samples find a variant's time: with
#: calls of 3 ms the ncu-fastest variant won 88-98% of the draws of three of its recorded runs,
#: with 1.5 ms 95-100%, benchmarks/tuning_bootstrap.py).
CALL_MS = 1.5

#: The pairs of calls (one iteration, two iterations) :class:`CallSampler` measures the
#: per-call cost on.
_PAIRS = 4

#: The most iterations one call of :class:`CallSampler` runs.
_MAX_ITERS = 100_000


class CallSampler:
    """Samples of benchmark entries on a clock, for :func:`race`: calls of one size for every
    variant, sized from the kernels' own time.

    ``runs[k](n)`` runs variant ``k``'s dispatch ``n * unroll`` times in one synchronous call.
    :meth:`start` warms the device up on ``runs[0]`` (calls of one iteration for at least
    ``warmup_ms`` and twice) and measures the per-call cost that is not the dispatches (fake
    data fills, the host round trip): ``fixed = 2 * t(run(1)) - t(run(2))``, once per group (the
    fake data and the call are the same for every variant), from medians of four pairs of calls
    ``run(1)``, ``run(2)`` taken in turn (and the last four warm-up calls for ``t(run(1))``),
    which count towards ``warmup_ms``. Every variant's calls then run the same ``iters``
    iterations, so that a call of the first variant lasts about ``call_ms``
    (:data:`CALL_MS`), from at least :data:`MIN_KERNEL_SHARE` of its one-iteration call: with
    one size for all, the per-call cost is the same share of every sample and an error in
    ``fixed`` cannot reorder the variants (sized per variant, a ``fixed`` 1 ms too high made a
    variant of one-iteration calls 0.125 ms per run faster against one of two: on the H200 at
    4096^3 it picked a variant 1.10x the ncu-fastest). A sample is ``t(run(iters)) / (iters *
    unroll)`` ms per run during the race; :meth:`less_fixed` takes each run's share of the
    per-call cost off all of them at the end. :attr:`log` lists every call (variant,
    iterations, ms). ``profile``: a :class:`autotune_export.runtime.profile.TuningProfile` to
    charge the calls to. ``clock``: seconds, ``time.perf_counter`` (read at each call) by
    default; a replay passes a simulated one.
    """

    def __init__(
        self,
        runs: Sequence[Callable[[int], object]],
        unroll: int,
        *,
        warmup_ms: float = 25.0,
        call_ms: float = CALL_MS,
        profile=None,
        clock: Callable[[], float] | None = None,
    ):
        self.runs, self.unroll = list(runs), max(1, int(unroll))
        self.warmup_ms, self.call_ms = warmup_ms, call_ms
        self.profile = profile
        self.clock = clock or (lambda: time.perf_counter())
        self.fixed = 0.0
        #: The per-call cost :meth:`less_fixed` took off (ms).
        self.fixed_used = 0.0
        #: Per variant, the iterations of its calls (one size for every variant).
        self.iters: dict[int, int] = {}
        self.common = 1
        #: Per variant, the dispatches its calls ran (warm-up included).
        self.dispatched: dict[int, int] = {}
        #: Per variant, how long (ms) the call of its last sample took.
        self.last_call_ms: dict[int, float] = {}
        self._fastest_call = math.inf
        self._t1 = 0.0
        #: Every call, in order: (variant, iterations, ms), warm-up included.
        self.log: list[tuple[int, int, float]] = []
        self.started_at = self.clock()

    def spent_ms(self) -> float:
        """Time since :meth:`start` (ms): what a whole-group budget counts."""
        return (self.clock() - self.started_at) * 1e3

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
        # (Lower) median: a late call does not move it.
        t1 = statistics.median_low(ones[1:])
        if pairs_too:
            # The per-call cost from _PAIRS pairs of calls of one and of two iterations taken in
            # turn, so that a drift of the device's speed moves both alike, and from medians of
            # four, which one late call does not move (tests/unit/test_race_replay.py).
            pairs = [
                (self._call(0, 1, "warm-up (device, first variant)"), self._call(0, 2, "warm-up (device, first variant)"))
                for _ in range(_PAIRS)
            ]
            t1 = statistics.median(ones[1:][-_PAIRS:] + [a for a, _ in pairs])
            self.fixed = min(max(0.0, 2 * t1 - statistics.median([b for _, b in pairs])), t1)
        # The kernels' part of a one-iteration call; at least a quarter of the call, so that an
        # overestimated fixed cost never makes calls more than 4x what t1 alone gives.
        per_call = max(t1 - self.fixed, MIN_KERNEL_SHARE * t1, 1e-4)
        self.common = min(_MAX_ITERS, max(1, math.ceil(self.call_ms / per_call)))
        self._t1 = t1

    def sample(self, k: int) -> float:
        """One more sample of variant ``k``: one call of :attr:`common` iterations, its ms
        over its runs (the per-call cost included: :meth:`less_fixed`)."""
        n = self.iters.setdefault(k, self.common)
        ms = self._call(k, n, "timed calls")
        self.last_call_ms[k] = ms
        self._fastest_call = min(self._fastest_call, ms)
        return ms / (n * self.unroll)

    def cost_ms(self, k: int) -> float:
        """What one more sample of variant ``k`` takes (ms): its last call (before its first,
        the mean of the other variants' last calls), for :func:`race`'s budget."""
        if k in self.last_call_ms:
            return self.last_call_ms[k]
        known = list(self.last_call_ms.values())
        return statistics.fmean(known) if known else self.common * self._t1

    def less_fixed(self, samples: Sequence[Sequence[float]]) -> list[list[float]]:
        """``samples`` (of :meth:`sample`) less each run's share of the per-call cost:
        ``fixed``, but at most half the fastest timed call, so that no sample comes out near or
        below zero where the warm-up's estimate came out too high (on the H200 a device still
        warming up made it 3.4 ms for calls of 2.2: every variant then read 0 and the tie rule
        picked the first). One amount off every sample (all calls are of one size), so their
        order stays the race's."""
        fixed = min(self.fixed, 0.5 * self._fastest_call) if self._fastest_call < math.inf else 0.0
        self.fixed_used = fixed
        share = fixed / (self.common * self.unroll)
        return [[x - share for x in s] for s in samples]


def race_calls(
    runs: Sequence[Callable[[int], object]],
    unroll: int,
    *,
    budget_ms: float | None = None,
    warmup_ms: float = 25.0,
    call_ms: float = CALL_MS,
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
            cost_ms=sampler.cost_ms,
        )
        samples = sampler.less_fixed(samples)
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
