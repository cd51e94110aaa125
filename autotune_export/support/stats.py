"""Summary statistics of timing samples (standard library only: the runtime imports this on GPU
machines that have neither Triton nor numpy)."""

from __future__ import annotations

import statistics
from fractions import Fraction
from typing import Iterable

__all__ = ["quantile"]

#: q is taken as the nearest fraction with at most this denominator (0.2 is 1/5, 0.25 is 1/4).
_MAX_DENOMINATOR = 1000


def quantile(samples: Iterable[float], q: float) -> float:
    """The ``q`` quantile (``0 <= q <= 1``) of ``samples``, by linear interpolation between the
    two closest ranks: position ``q * (len - 1)`` in the sorted samples, numpy's default
    (``method="linear"``) and ``statistics.quantiles(..., method="inclusive")``, which computes
    it. ``q`` is read as the nearest fraction ``k / n`` with ``n <= 1000`` (exact for the
    quantiles in use: 0.2, 0.5, 0.8). One sample is its own quantile for every ``q``.

    Units are those of the samples (milliseconds here). Raises ValueError for no samples or a
    ``q`` outside [0, 1].
    """
    xs = sorted(samples)
    if not xs:
        raise ValueError("quantile of no samples")
    if not 0 <= q <= 1:
        raise ValueError(f"quantile {q} is outside [0, 1]")
    frac = Fraction(q).limit_denominator(_MAX_DENOMINATOR)
    if len(xs) == 1 or frac == 0:
        return xs[0]
    if frac == 1:
        return xs[-1]
    cuts = statistics.quantiles(xs, n=frac.denominator, method="inclusive")
    return cuts[frac.numerator - 1]
