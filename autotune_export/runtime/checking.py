"""The cross-check of variants: a variant's results on the fake data must equal the default
variant's within tolerances by result dtype (:func:`results_agree`), before it may win."""

from __future__ import annotations

from typing import Sequence

__all__ = ["CHECK_TOLERANCES", "results_agree"]


#: Tolerances of the cross-check by result dtype kind/size: (rtol, atol). Variants differ in
#: reduction order and fusion (tl.dot tiles, split-K, atomics), so floats agree only up to
#: their precision; integers and booleans must be equal.
CHECK_TOLERANCES = {"float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2), "float32": (1e-3, 1e-5), "float64": (1e-7, 1e-12)}


def results_agree(reference: Sequence, results: Sequence) -> str | None:
    """None when ``results`` equal ``reference`` (numpy arrays, in order) within
    :data:`CHECK_TOLERANCES` (NaN equals NaN; other float formats, e.g. fp8, with rtol 0.125);
    else what differs first, in one line."""
    import numpy as np

    if len(reference) != len(results):
        return f"{len(results)} results, not {len(reference)}"
    for i, (a, b) in enumerate(zip(reference, results)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"result {i} has shape {b.shape}, not {a.shape}"
        if a.dtype.kind in "biu":
            bad = int(np.count_nonzero(a != b))
            if bad:
                return f"result {i}: {bad} of {a.size} elements differ"
            continue
        rtol, atol = CHECK_TOLERANCES.get(a.dtype.name, (0.125, 1e-2))
        try:
            fa, fb = a.astype(np.float64), b.astype(np.float64)
        except (TypeError, ValueError):
            if a.tobytes() != b.tobytes():
                return f"result {i} ({a.dtype}) differs"
            continue
        close = np.isclose(fb, fa, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            j = int(np.argmin(close.reshape(-1)))
            return (f"result {i}: {int(close.size - close.sum())} of {close.size} elements differ beyond rtol={rtol}, "
                    f"atol={atol}; first at flat index {j}: {fb.reshape(-1)[j]!r} vs {fa.reshape(-1)[j]!r}")
    return None
