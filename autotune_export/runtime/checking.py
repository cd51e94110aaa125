"""The cross-check of variants: a variant's results on the fake data must equal the default
variant's within tolerances by result dtype (:func:`results_agree`), before it may win."""

from __future__ import annotations

from typing import Sequence

from autotune_export.runtime.calls import as_list, to_host
from autotune_export.runtime.profile import phase

__all__ = ["CHECK_TOLERANCES", "OTHER_FLOAT_TOLERANCE", "results_agree", "tolerances_of", "disagreement"]


#: Tolerances of the cross-check by result dtype kind/size: (rtol, atol). Variants differ in
#: reduction order and fusion (tl.dot tiles, split-K, atomics), so floats agree only up to
#: their precision; integers and booleans must be equal.
CHECK_TOLERANCES = {"float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2), "float32": (1e-3, 1e-5), "float64": (1e-7, 1e-12)}
#: (rtol, atol) of the other float formats (fp8).
OTHER_FLOAT_TOLERANCE = (0.125, 1e-2)


def tolerances_of(dtype_name: str) -> tuple[float, float]:
    """(rtol, atol) of results of numpy dtype ``dtype_name`` (``"float16"``)."""
    return CHECK_TOLERANCES.get(dtype_name, OTHER_FLOAT_TOLERANCE)


def disagreement(reference: Sequence, results: Sequence, compare=None, profile=None) -> str | None:
    """Why ``results`` differ from ``reference`` (the default variant's check results; both as
    the check entries return them, ``iree.runtime.DeviceArray`` values), or None.

    ``compare``: the group's compare entry (an ``iree.runtime`` function, see
    :func:`autotune_export.passes.bench_entries.compare_entry`), which counts on the device, per
    result, the elements that differ by :func:`results_agree`'s rule and tolerances (passed to
    it: they have one home, here): when every count is 0 the results agree and nothing is copied
    to the host. Otherwise (a count, or no compare entry: f64 and fp8 results, modules of
    earlier releases) both are copied to the host and :func:`results_agree` says what differs.
    ``profile``: a :class:`~autotune_export.runtime.profile.TuningProfile` to charge."""
    if compare is not None:
        with phase(profile, "cross-check: comparison (device)"):
            tolerances = [t for r in reference for t in tolerances_of(_dtype_name(r))]
            counts = as_list(compare(*reference, *results, *tolerances))
        if not any(int(c) for c in counts):
            return None
    with phase(profile, "cross-check: host copies"):
        host_ref, host_out = as_list(to_host(tuple(reference))), as_list(to_host(tuple(results)))
    with phase(profile, "cross-check: comparison (host)"):
        return results_agree(host_ref, host_out)


def _dtype_name(array) -> str:
    """The numpy name of an array's element type (``"float16"``), "" when it has none."""
    try:
        import numpy as np

        return np.dtype(array.dtype).name
    except (AttributeError, TypeError):
        return ""


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
        rtol, atol = tolerances_of(a.dtype.name)
        try:
            fa, fb = a.astype(np.float64), b.astype(np.float64)
        except (TypeError, ValueError):
            if a.tobytes() != b.tobytes():
                return f"result {i} ({a.dtype}) differs"
            continue
        close = np.isclose(fb, fa, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            j = int(np.argmin(close.reshape(-1)))
            return (
                f"result {i}: {int(close.size - close.sum())} of {close.size} elements differ beyond rtol={rtol}, "
                f"atol={atol}; first at flat index {j}: {fb.reshape(-1)[j]!r} vs {fa.reshape(-1)[j]!r}"
            )
    return None
