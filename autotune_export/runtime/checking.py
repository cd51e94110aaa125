"""The cross-check of variants: before a variant may win, its results on the fake data must
equal the default variant's within tolerances by result dtype (:func:`results_agree`); or, in
a group that has a reference computation (``GroupReflection.reference``: the default's
computation in higher precision, which ``autotune-export program`` builds for dispatches
accumulating in f16/bf16), be NO LESS ACCURATE than the default's against that reference
(:func:`accuracy_tolerances`, :func:`baseline`): the one home of both rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from autotune_export.runtime.calls import as_list, to_host
from autotune_export.runtime.profile import phase

__all__ = [
    "ACCURACY_SLACK",
    "CHECK_TOLERANCES",
    "OTHER_FLOAT_TOLERANCE",
    "Baseline",
    "accuracy_tolerances",
    "baseline",
    "results_agree",
    "tolerances_of",
    "disagreement",
]


#: The version of the cross-check's rules, part of every decision's key in the tuning cache
#: (runtime/records.py): a decision made under other rules is not reused (tuned again). 2 (Dec 2
#: 2026): bf16/fp8 results get the accuracy allowance; a reference whose allowance is the
#: results' size is not used (before, such a group's cross-check kept any result). Decisions
#: of earlier releases carry none.
CHECK_RULES = 2

#: Tolerances of the cross-check by result dtype kind/size: (rtol, atol). Variants differ in
#: reduction order and fusion (tl.dot tiles, split-K, atomics), so floats agree only up to
#: their precision; integers and booleans must be equal.
CHECK_TOLERANCES = {"float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2), "float32": (1e-3, 1e-5), "float64": (1e-7, 1e-12)}
#: (rtol, atol) of the other float formats (fp8).
OTHER_FLOAT_TOLERANCE = (0.125, 1e-2)


def tolerances_of(dtype_name: str) -> tuple[float, float]:
    """(rtol, atol) of results of numpy dtype ``dtype_name`` (``"float16"``)."""
    return CHECK_TOLERANCES.get(dtype_name, OTHER_FLOAT_TOLERANCE)


#: How much larger than the default's own excess error (:func:`accuracy_tolerances`) a
#: variant's may be. Two computations of equal accuracy that round in a different order (an
#: f16-accumulating variant with other K tiles than the default's) have errors of one
#: distribution, whose maxima over a result differ by far less than 2x once the result has
#: more than a few elements; a variant accumulating in a format of 3 fewer mantissa bits
#: (bf16 vs f16) has errors ~8x larger and fails.
ACCURACY_SLACK = 2.0

#: The largest allowance (``ACCURACY_SLACK * E`` of :func:`accuracy_tolerances`) a reference
#: may give, as a fraction of the largest result magnitude: past it the default's own error is
#: of the results' size (a fused consumer that thresholds or amplifies the root's rounding: one
#: element of a step function flipping makes E = 1 where every result is 0 or 1), any result
#: would pass, and the variants are compared with the default instead (:func:`baseline`).
REFERENCE_ALLOWANCE_LIMIT = 0.1


def accuracy_tolerances(reference: Sequence, default: Sequence) -> list[tuple[float, float]]:
    """Per result, the ``(rtol, atol)`` a variant's results must meet against the reference
    computation's (``|out - ref| <= atol + rtol * |ref|``, numpy's ``isclose``, as
    :func:`results_agree` and the device compare entry apply them) to be no less accurate than
    the default variant's ``default`` (numpy arrays, in order, the reference's shapes):

    ``rtol, atol = tolerances_of(dtype)`` (what any two correct computations of the result
    agree within: rounding to the result's dtype and the order of an f32 accumulation; on the
    fake data of ``fake_data.fake_fill`` an f32 accumulation of the products is exact),
    and ``atol`` grows by ``ACCURACY_SLACK * E``, where ``E = max(|default - ref| - (atol +
    rtol * |ref|))`` over the elements where both are finite, at least 0: the default's own
    error beyond those tolerances, measured on this very data. That is where the reduction
    length and the accumulator's format enter: an f16 accumulation of K products of size ~1
    has errors ~ sqrt(K) * 2^-11 * |partial sums| (Higham and Mary, "A new approach to
    probabilistic rounding error analysis", SIAM J. Sci. Comput. 41(5), 2019), so E grows with
    K and with fewer mantissa bits; an a-priori bound (Higham's ``gamma_K * sum |a_k b_k|``,
    ``gamma_K = K u / (1 - K u)``, >= 1 for f16 once K >= 2048) would be larger than the error
    of a variant that reads a transposed operand, which must fail. So the default always
    passes (its error is within ``atol + E``), a variant at least as accurate passes, and a
    variant that reads the wrong elements (errors of the size of the results) or accumulates
    in a coarser format fails. Integer results keep exact equality (the tolerances are
    unused)."""
    import numpy as np

    out = []
    for r, e in zip(reference, default_excess(reference, default)):
        rtol, atol = tolerances_of(np.asarray(r).dtype.name)
        out.append((rtol, atol + ACCURACY_SLACK * e))
    return out


def default_excess(reference: Sequence, default: Sequence) -> list[float]:
    """Per result, ``E`` of :func:`accuracy_tolerances`: the default's largest error beyond its
    dtype's tolerances against the reference, over the elements where both are finite, at
    least 0 (0 for non-float results, mismatched shapes and empty results)."""
    import numpy as np

    out = []
    for r, d in zip(reference, default):
        r, d = np.asarray(r), np.asarray(d)
        if not is_float(r.dtype) or r.shape != d.shape or r.size == 0:
            out.append(0.0)
            continue
        rtol, atol = tolerances_of(r.dtype.name)
        fr, fd = r.astype(np.float64), d.astype(np.float64)
        finite = np.isfinite(fr) & np.isfinite(fd)
        excess = np.abs(fd - fr) - (atol + rtol * np.abs(fr))
        out.append(max(float(excess[finite].max(initial=0.0)), 0.0))
    return out


def is_float(dtype) -> bool:
    """Whether numpy dtype ``dtype`` holds floating-point numbers: numpy's own (kind ``f``/``c``)
    and ml_dtypes' (bfloat16, the fp8 formats: numpy kind ``V``, which is how iree.runtime hands
    back bf16 and fp8 results)."""
    import numpy as np

    if np.dtype(dtype).kind in "fc":
        return True
    try:
        import ml_dtypes

        ml_dtypes.finfo(dtype)
        return True
    except (ImportError, TypeError, ValueError):
        return False


#: How a drop note says the variant was checked against the group's reference (tune's table
#: reads it: tools/tune.py).
AGAINST_REFERENCE = "against the group's higher-precision reference computation"


@dataclass
class Baseline:
    """What a group's variants are checked against: ``expected`` (check results, as the check
    entries return them: the reference computation's, or the default variant's where the group
    has none) and ``tolerances`` (per result ``(rtol, atol)``; None: by dtype,
    :func:`tolerances_of`). ``against``: "reference" or "default", for the drop note."""

    expected: list
    tolerances: list | None = None
    against: str = "default"
    #: Why a group with a reference entry is compared with its default instead ("": it is not).
    why: str = ""

    def describe(self, default_name: str) -> str:
        """How a dropped variant's results differ, for the note (``default_name``: the
        default variant's export)."""
        if self.against == "reference":
            return f"they are less accurate than the default variant {default_name}'s {AGAINST_REFERENCE}"
        if self.why:
            return (
                f"they differ from the default variant {default_name}'s (compared with it, not the group's reference: {self.why})"
            )
        return f"they differ from the default variant {default_name}'s"


def baseline(default: Sequence, reference: Sequence | None = None, profile=None) -> Baseline:
    """The :class:`Baseline` of a group from its default variant's check results ``default``
    and, when the group has a reference entry, the reference's ``reference`` (both as the
    check entries return them): with a reference, both are copied to the host once (per group
    and tuning run) for :func:`accuracy_tolerances`, and the variants are compared with the
    reference; without one, with the default (by dtype). ``profile``: a
    :class:`~autotune_export.runtime.profile.TuningProfile` to charge."""
    if reference is None:
        return Baseline(list(default))
    with phase(profile, "cross-check: host copies"):
        host_ref, host_default = as_list(to_host(tuple(reference))), as_list(to_host(tuple(default)))
    why = _uninformative(host_ref, default_excess(host_ref, host_default))
    if why:
        return Baseline(list(default), None, "default", why)
    return Baseline(list(reference), accuracy_tolerances(host_ref, host_default), "reference")


def _uninformative(reference: Sequence, excess: Sequence[float]) -> str:
    """Why a reference cannot tell a right result from a wrong one ("" when it can): an
    allowance ``ACCURACY_SLACK * E`` (``excess``: :func:`default_excess`) over
    :data:`REFERENCE_ALLOWANCE_LIMIT` of a result's largest magnitude."""
    import numpy as np

    for i, (r, e) in enumerate(zip(reference, excess)):
        r = np.asarray(r)
        if not is_float(r.dtype) or r.size == 0:
            continue
        fr = r.astype(np.float64)
        top = float(np.abs(fr[np.isfinite(fr)]).max(initial=0.0))
        if ACCURACY_SLACK * e > REFERENCE_ALLOWANCE_LIMIT * top:
            return (
                f"on the fake data the default's error beyond {r.dtype.name}'s tolerances reaches "
                f"{e:.4g} in result {i}, whose largest magnitude is {top:.4g}: "
                "an allowance that size would pass wrong results"
            )
    return ""


def disagreement(reference: Sequence, results: Sequence, compare=None, profile=None, tolerances=None) -> str | None:
    """Why ``results`` differ from ``reference`` (the default variant's check results, or the
    reference computation's: :attr:`Baseline.expected`; both as
    the check entries return them, ``iree.runtime.DeviceArray`` values), or None.
    ``tolerances``: per result ``(rtol, atol)`` (:attr:`Baseline.tolerances`); None: by
    dtype (:func:`tolerances_of`).

    ``compare``: the group's compare entry (an ``iree.runtime`` function, see
    :func:`autotune_export.passes.bench_entries.compare_entry`), which counts on the device, per
    result, the elements that differ by :func:`results_agree`'s rule and tolerances (passed to
    it: they have one home, here): when every count is 0 the results agree and nothing is copied
    to the host. Otherwise (a count, or no compare entry: f64 and fp8 results, modules of
    earlier releases) both are copied to the host and :func:`results_agree` says what differs.
    ``profile``: a :class:`~autotune_export.runtime.profile.TuningProfile` to charge."""
    if compare is not None:
        with phase(profile, "cross-check: comparison (device)"):
            flat = [t for pair in _per_result(reference, tolerances) for t in pair]
            counts = as_list(compare(*reference, *results, *flat))
        if not any(int(c) for c in counts):
            return None
    with phase(profile, "cross-check: host copies"):
        host_ref, host_out = as_list(to_host(tuple(reference))), as_list(to_host(tuple(results)))
    with phase(profile, "cross-check: comparison (host)"):
        return results_agree(host_ref, host_out, tolerances)


def _per_result(reference: Sequence, tolerances) -> list[tuple[float, float]]:
    """``tolerances``, or per result of ``reference`` its dtype's (:func:`tolerances_of`)."""
    return list(tolerances) if tolerances is not None else [tolerances_of(_dtype_name(r)) for r in reference]


def _dtype_name(array) -> str:
    """The numpy name of an array's element type (``"float16"``), "" when it has none."""
    try:
        import numpy as np

        return np.dtype(array.dtype).name
    except (AttributeError, TypeError):
        return ""


def results_agree(reference: Sequence, results: Sequence, tolerances=None) -> str | None:
    """None when ``results`` equal ``reference`` (numpy arrays, in order) within
    :data:`CHECK_TOLERANCES` (NaN equals NaN; other float formats, e.g. fp8, with rtol 0.125),
    or within ``tolerances`` (per result ``(rtol, atol)``, :func:`accuracy_tolerances`) when
    given; else what differs first, in one line."""
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
        rtol, atol = tolerances[i] if tolerances is not None else tolerances_of(a.dtype.name)
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
