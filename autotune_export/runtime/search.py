"""The default search and its estimators, apart from any clock: :func:`race` (racing over
variants, given a function that takes one more sample of a variant), :func:`contenders` (its
elimination rule), :func:`pick` (the winner, with the documented tie rule) and
:class:`VariantTiming`. Times are in milliseconds. How samples are taken (calls on a clock) is
:mod:`.sampling`; who takes them (the wall clock, given timings) :mod:`.benchmarkers`;
:mod:`.timing` gathers all three.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable, Sequence

from autotune_export.support.stats import quantile as _quantile


@dataclass
class VariantTiming:
    """Timings of one variant: ``times_ms`` holds one sample per timed run, in milliseconds."""

    variant: str
    times_ms: list[float]
    #: (p20, p80) of a timing read back from the tuning cache (``times_ms`` then holds its median).
    recorded: tuple | None = None
    #: The estimate (ms) of a timing read back from the tuning cache (None: the samples').
    recorded_estimate: float | None = None

    @property
    def median_ms(self) -> float:
        """The median of the samples: their 0.5 :meth:`quantile` (for an even count the mean of
        the two middle samples), by the one rule of the p20-p80 spread, so ``p20 <= median <=
        p80`` of :attr:`spread_ms` always holds (the lower median of 2 samples was the smaller
        one, below the interpolated p20); infinite without samples."""
        return self.quantile(0.5) if self.times_ms else float("inf")

    @property
    def estimate_ms(self) -> float:
        """What :func:`pick` ranks by: the fastest sample (:func:`estimate`), or the recorded
        estimate of a timing read back from the tuning cache (one of an older release, which
        recorded none: its median); infinite without samples."""
        if self.recorded_estimate is not None:
            return self.recorded_estimate
        return estimate(self.times_ms)

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


def estimate(samples: Sequence[float]) -> float:
    """A variant's time (ms) from its samples: the fastest one; infinite without samples.

    Noise on a host clock only adds time (a late call, the host issuing work slower than the
    GPU runs it, a device still speeding up; ``timeit`` takes the minimum for this reason): on
    the H200 (issue 24, tests/unit/data/h200_tuning_calls.json) a call's time per dispatch was
    the kernel's ncu time plus 13-117 us, that excess drifting between calls, and of the
    recorded runs whose calls could tell the ncu-fastest variant apart at all, the fastest
    sample ranked it first in every one, the median not in all (benchmarks/tuning_bootstrap.py).
    """
    return min(samples) if samples else float("inf")


#: Estimates closer than this (relative) are a tie: the lower variant index wins, so processes
#: and ranks tuning the same module pick the same variant.
TIE_TOLERANCE = 0.01


def pick(timings: Sequence["VariantTiming"]) -> "VariantTiming":
    """The winner of ``timings`` (in variant order): the lowest estimate
    (:attr:`VariantTiming.estimate_ms`, the fastest sample), except that a variant whose
    estimate is within :data:`TIE_TOLERANCE` of the lowest and that comes earlier wins (a
    documented, deterministic tie rule)."""
    best = min(t.estimate_ms for t in timings)
    return next(t for t in timings if t.estimate_ms <= best * (1 + TIE_TOLERANCE))


#: The relative noise :func:`contenders` assumes while no variant has two samples.
FIRST_ROUND_NOISE = 0.02

#: No variant is dropped before it has this many samples: one or two calls may both be late (on
#: the H200, tests/unit/data/h200_tuning_calls.json, a third of one run's calls of the fastest
#: 8192x8192x128 variant came back 2-6x slow, 1.5x of another's at 4096^3), and the fastest of
#: three rarely is (benchmarks/tuning_bootstrap.py: dropped on two, the ncu-fastest variant lost
#: 5-10% of the draws of such runs).
MIN_SAMPLES_TO_DROP = 3

#: The confidence of :func:`contenders`' allowance (``z`` its quantile of the standard normal,
#: 3.09): 0.999 rather than 0.99 kept the ncu-fastest variant in every draw of the H200's
#: quietest recorded runs at 2048^3, where 0.99 lost 0.7% of them, at no cost
#: (benchmarks/tuning_bootstrap.py).
CONFIDENCE = 0.999

#: The noise :func:`contenders` allows for is this quantile of every sample's excess over its
#: variant's fastest sample (pooled over the variants with two samples or more): how far above
#: a variant's time most of its samples lie, not only the median one (a median made the allowance
#: too small on the H200's late-call-heavy runs).
NOISE_QUANTILE = 0.9


def race(
    sample: Callable[[int], float],
    count: int,
    *,
    budget_ms: float | None = None,
    spent_ms: Callable[[], float] | None = None,
    round0_budget_factor: float | None = None,
    cost_ms: Callable[[int], float] | None = None,
    max_rounds: int = 40,
    confidence: float = CONFIDENCE,
    min_noise: float = 0.002,
) -> list[list[float]]:
    """The default search: racing (the "racing" of configuration selection, Maron & Moore,
    1994; successive elimination) with a final head-to-head under a budget. Returns per-run
    samples (ms) per variant ``0 .. count - 1``, in order.

    ``sample(k)`` takes one more sample of variant ``k`` (ms per run;
    :class:`~autotune_export.runtime.sampling.CallSampler` on the wall clock or a simulated one,
    given values in :class:`~autotune_export.runtime.benchmarkers.GivenTimings`). Every round
    takes ONE sample of each variant still in contention (round 0: of every variant),
    interleaved (a drift of the device's clocks, temperature or other work affects every
    contender alike) and in an order rotated by one each round (so no variant is always timed
    first, right after another one's calls). After each round :func:`contenders` drops the
    variants slower than the leader beyond noise.

    The race ends when it is settled (one variant left: the leader is separated beyond noise,
    the early stop; or the ones left tie within ``TIE_TOLERANCE`` and are measured finer than
    it), after ``max_rounds`` rounds after round 0, or by the whole-group budget: ``budget_ms``
    of ``spent_ms()``. Round 0 is always whole (every variant gets a sample). A later round
    that would overrun the budget (``cost_ms(k)``: what one more sample of ``k`` takes, ms)
    takes only the leading contenders by :func:`lower_bounds` whose samples fit in what is
    left, at least the first two (the head-to-head); when not even those fit, the race ends. Without
    ``cost_ms`` every round is whole and the race ends once ``spent_ms()`` reaches the budget
    (one round over at most). ``round0_budget_factor``: raise the budget, after round 0, to
    this many times ``spent_ms()`` (the default budget's growth with the kernels' time,
    :data:`~autotune_export.runtime.sampling.ROUND0_BUDGET_FACTOR`). The winner is then
    :func:`pick` of the samples, as for every search.
    """
    samples: list[list[float]] = [[] for _ in range(count)]
    if count == 0:
        return samples
    alive = list(range(count))
    budgeted = budget_ms is not None and spent_ms is not None
    for round_ in range(max_rounds + 1):
        turn = round_ % len(alive)
        order = alive[turn:] + alive[:turn]
        if round_ > 0 and budgeted and cost_ms is not None:
            left = budget_ms - spent_ms()
            if sum(cost_ms(k) for k in order) > left:
                taken, need = [], 0.0
                low = lower_bounds(samples, alive, confidence=confidence, min_noise=min_noise)
                for k in sorted(alive, key=lambda k: (low[k], k)):
                    if len(taken) >= 2 and need + cost_ms(k) > left:
                        break
                    taken.append(k)
                    need += cost_ms(k)
                if need > left:
                    break
                order = [k for k in order if k in taken]
        for k in order:
            samples[k].append(sample(k))
        if round_ == 0 and round0_budget_factor is not None and spent_ms is not None:
            budget_ms = max(budget_ms or 0.0, round0_budget_factor * spent_ms())
            budgeted = True
        alive, settled = contenders(samples, alive, confidence=confidence, min_noise=min_noise)
        if settled or (budgeted and spent_ms() >= budget_ms):
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
    confidence: float = CONFIDENCE,
    min_noise: float = 0.002,
) -> tuple[list[int], bool]:
    """The variants of ``alive`` still in contention after a round of :func:`race` (its rule),
    and whether the race is settled.

    With ``n_k`` samples of variant ``k`` and estimate ``e_k`` (:func:`estimate`, its fastest
    sample): the noise ``rn`` is the :data:`NOISE_QUANTILE` quantile of every sample's excess
    over its variant's fastest, ``x / e_k - 1``, pooled over every variant with two samples or
    more (those already dropped too; at least ``min_noise``; :data:`FIRST_ROUND_NOISE` while
    no variant has two); ``k``'s allowance is ``a_k = z * rn / sqrt(n_k)`` (``z`` the
    ``confidence`` quantile of the standard normal, ``statistics.NormalDist``), and 1 (never
    dropped) below :data:`MIN_SAMPLES_TO_DROP` samples. With ``L`` the variant of the lowest
    estimate (ties to the lower index), ``k`` stays while ``e_k * (1 - a_k) <= e_L * (1 +
    TIE_TOLERANCE)``: it could still be the fastest, or tie with it and win by :func:`pick`'s
    tie rule. The estimate is the fastest sample, so late calls never drop a variant that has
    one sample near its time. Settled: one variant left, or every one left within
    ``TIE_TOLERANCE`` of ``e_L`` with ``a_k < TIE_TOLERANCE / 2`` (:func:`pick`'s tie rule
    decides)."""
    est = {k: estimate(samples[k]) for k in alive}
    spread = _allowances(samples, alive, confidence, min_noise)

    def allowance(k: int) -> float:
        return 1.0 if len(samples[k]) < MIN_SAMPLES_TO_DROP else spread[k]

    lead = min(alive, key=lambda k: (est[k], k))
    bound = est[lead] * (1 + TIE_TOLERANCE)
    kept = [k for k in alive if est[k] * (1 - allowance(k)) <= bound]
    tied = all(est[k] <= bound and allowance(k) < TIE_TOLERANCE / 2 for k in kept)
    return kept, len(kept) <= 1 or tied


def _allowances(samples: Sequence[Sequence[float]], alive: Sequence[int], confidence: float, min_noise: float) -> dict:
    """Per variant of ``alive``, ``min(1, z * rn / sqrt(n_k))`` (:func:`contenders`)."""
    excess = [x / min(s) - 1 for s in samples if len(s) >= 2 and min(s) > 0 for x in s]
    noise = max(min_noise, _quantile(excess, NOISE_QUANTILE)) if excess else max(min_noise, FIRST_ROUND_NOISE)
    z = statistics.NormalDist().inv_cdf(confidence)
    return {k: min(1.0, z * noise / math.sqrt(len(samples[k]))) for k in alive}


def lower_bounds(
    samples: Sequence[Sequence[float]], alive: Sequence[int], *, confidence: float = CONFIDENCE, min_noise: float = 0.002
) -> dict:
    """Per variant of ``alive`` (each with a sample), how fast it could still be (ms):
    ``e_k * (1 - a_k)``, its estimate less :func:`contenders`' allowance (without the floor
    below :data:`MIN_SAMPLES_TO_DROP`). :func:`race` gives the samples of a round cut short by
    the budget to the variants of the lowest bounds: the leaders, and those whose few or
    scattered samples leave them a chance (on the H200 a fastest variant whose first calls all
    came back late lost such rounds to slower ones with a lower estimate)."""
    a = _allowances(samples, alive, confidence, min_noise)
    return {k: estimate(samples[k]) * (1 - a[k]) for k in alive}
