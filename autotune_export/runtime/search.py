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
