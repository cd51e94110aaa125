"""The cross-check's accuracy rule (runtime/checking.py, docs/program.md "The cross-check"): in a
group with a reference computation, a variant passes when it is no less accurate than the
default against the reference; a variant that reads the wrong elements fails. Numbers from
numpy models of the computations on values of the fake data's kind (fake_data.fake_fill:
``±(1 + f/8) * 2^(e-1)``), no IREE."""

from __future__ import annotations

import numpy as np

from autotune_export.runtime.checking import (
    ACCURACY_SLACK,
    Baseline,
    accuracy_tolerances,
    baseline,
    disagreement,
    results_agree,
    tolerances_of,
)

M, N, K = 48, 40, 2048


def _fake(shape, seed):
    """Values as fake_fill makes them: sign, 1 exponent bit and 3 mantissa bits at random."""
    rng = np.random.default_rng(seed)
    sign = rng.choice([-1.0, 1.0], size=shape)
    e = rng.integers(0, 2, size=shape)
    f = rng.integers(0, 8, size=shape)
    return (sign * (1 + f / 8) * 2.0 ** (e - 1)).astype(np.float16)


def _round_bits(x, bits):
    """``x`` (float64) rounded to ``bits`` significant bits, to nearest even (a float format
    with ``bits - 1`` stored mantissa bits and an unbounded exponent)."""
    m, e = np.frexp(x)
    return np.ldexp(np.round(np.ldexp(m, bits)), e - bits)


def _accumulate(a, b, bits):
    """``a @ b`` summed in order over K, every partial sum rounded to ``bits`` significant bits
    (11: fp16, as IREE's fp16 matmul accumulates; 8: bf16), the result rounded to fp16."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]))
    for k in range(a.shape[1]):
        acc = _round_bits(acc + np.outer(a64[:, k], b64[k, :]), bits)
    return acc.astype(np.float16)


A, B = _fake((M, K), 1), _fake((K, N), 2)
#: The reference: the exact sum (fake products are exact, an f64 sum of them too) rounded to fp16.
REF = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16)
DEFAULT = _accumulate(A, B, 11)  # IREE's fp16 matmul: accumulates in fp16


def _tolerances():
    return accuracy_tolerances([REF], [DEFAULT])


def test_the_fp16_default_is_far_from_the_reference_and_drops_a_precise_variant_by_the_old_rule():
    """The bug: compared with the fp16-accumulating default, an f32-accumulating variant (a
    Triton candidate) differs beyond the dtype's tolerances and would be dropped."""
    precise = (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16)
    assert np.abs(DEFAULT.astype(np.float64) - REF).max() > 0.1  # the default's own error
    assert results_agree([DEFAULT], [precise]) is not None  # default-only rule: dropped


def test_a_more_precise_variant_passes_against_the_reference():
    precise = (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16)  # f32, another order
    assert results_agree([REF], [precise], _tolerances()) is None
    assert results_agree([REF], [REF], _tolerances()) is None


def test_the_fp16_accumulating_default_passes():
    tol = _tolerances()
    assert results_agree([REF], [DEFAULT], tol) is None
    rtol, atol = tol[0]
    base_rtol, base_atol = tolerances_of("float16")
    assert rtol == base_rtol and atol > base_atol  # widened by the default's measured error
    excess = (np.abs(DEFAULT.astype(np.float64) - REF) - (base_atol + base_rtol * np.abs(REF.astype(np.float64)))).max()
    assert np.isclose(atol, base_atol + ACCURACY_SLACK * excess)


def test_an_fp16_variant_in_another_order_passes():
    """Equally accurate, rounded in another order (the K loop reversed)."""
    other = _accumulate(A[:, ::-1], B[::-1, :], 11)
    assert not np.array_equal(other, DEFAULT)
    assert results_agree([REF], [other], _tolerances()) is None


def test_a_transposed_read_fails():
    """A variant that reads B as if transposed (B^T of a square slice; all elements wrong)."""
    square = B[:N, :].T  # N x N read where K x N is stored
    wrong = (A[:, :N].astype(np.float32) @ square.astype(np.float32)).astype(np.float16)
    problem = results_agree([REF], [wrong], _tolerances())
    assert problem is not None and "elements differ" in problem


def test_a_wrong_stride_on_one_tile_edge_fails():
    """Exact everywhere except the last 8 columns, which read B with a stride one off (the
    neighbouring column): a few wrong elements are enough."""
    wrong = REF.copy()
    b_shift = np.roll(B, -1, axis=1)
    wrong[:, -8:] = (A.astype(np.float64) @ b_shift.astype(np.float64)).astype(np.float16)[:, -8:]
    problem = results_agree([REF], [wrong], _tolerances())
    assert problem is not None and f"of {M * N} elements" in problem


def test_a_variant_less_accurate_than_the_default_fails():
    """Accumulating in bf16 (8 significant bits, 3 fewer than the default's fp16)."""
    coarse = _accumulate(A, B, 8)
    problem = results_agree([REF], [coarse], _tolerances())
    assert problem is not None and "beyond rtol" in problem


def test_an_exact_default_leaves_the_dtype_tolerances():
    """A default equal to the reference (an f32 accumulator already) adds nothing: the rule is
    the dtype's tolerances, as without a reference."""
    assert accuracy_tolerances([REF], [REF]) == [tolerances_of("float16")]
    ints = np.arange(6, dtype=np.int32)
    assert accuracy_tolerances([ints], [ints + 1]) == [tolerances_of("int32")]  # integers: exact, unused


def test_non_finite_default_elements_do_not_widen_the_tolerance():
    """An element where the default overflowed (inf) is no measure of its error: the variant
    must still be close to the reference there."""
    bad = DEFAULT.copy()
    bad[0, 0] = np.inf
    assert accuracy_tolerances([REF], [bad]) == _tolerances()
    assert results_agree([REF], [bad], accuracy_tolerances([REF], [bad])) is not None


class _Host:
    """An array as the check entries return it (``to_host()``), for :func:`baseline`."""

    def __init__(self, a):
        self.a, self.dtype = a, a.dtype

    def to_host(self):
        return self.a


def test_baseline_checks_against_the_reference_when_there_is_one():
    """Through the runtime's own seam (baseline, then disagreement on the host: no compare
    entry): with a reference the precise variant agrees, the default-only baseline drops it."""
    precise = (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16)
    with_ref = baseline([_Host(DEFAULT)], [_Host(REF)])
    assert with_ref.against == "reference" and with_ref.tolerances == _tolerances()
    assert disagreement(with_ref.expected, [_Host(precise)], tolerances=with_ref.tolerances) is None
    alone = baseline([_Host(DEFAULT)])
    assert alone.against == "default" and alone.tolerances is None
    assert disagreement(alone.expected, [_Host(precise)]) is not None
    assert "less accurate than the default variant @d's" in Baseline([], against="reference").describe("@d")


def test_bf16_results_get_the_allowance_too():
    """Tester, Dec 2 session 4, finding 0: iree.runtime hands back bf16 results as
    ml_dtypes.bfloat16 (numpy kind "V"), which the float test skipped: a bf16 group's tolerances
    stayed the dtype's, the bf16-accumulating default failed them and every other variant, even
    one bit-identical to the default, was dropped. The same computation in bf16 (8 significant
    bits, as a bf16 matmul accumulating in bf16 has them) as the fp16 models above."""
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    ref = (A.astype(np.float64) @ B.astype(np.float64)).astype(bf16)
    default = _accumulate(A, B, 8).astype(np.float64).astype(bf16)
    precise = (A.astype(np.float32) @ B.astype(np.float32)).astype(bf16)
    base_rtol, base_atol = tolerances_of("bfloat16")
    assert results_agree([ref], [default]) is not None  # the default misses the dtype's tolerances
    ((rtol, atol),) = accuracy_tolerances([ref], [default])
    assert rtol == base_rtol and atol > base_atol + 0.1  # widened by the default's own error
    assert results_agree([ref], [default.copy()], [(rtol, atol)]) is None  # bit-identical: kept
    assert results_agree([ref], [precise], [(rtol, atol)]) is None
    shifted = (A.astype(np.float32) @ np.roll(B, 1, axis=0).astype(np.float32)).astype(bf16)  # B's rows off by one
    assert results_agree([ref], [shifted], [(rtol, atol)]) is not None  # wrong elements: dropped


def test_a_reference_whose_allowance_is_the_results_size_is_not_used():
    """Tester, Dec 2 session 4, finding 1b: an f16 matmul with a fused step consumer
    (``select(x > 0, 1, 0)``): the fp16-accumulating default flips one element of 1536 against
    the reference, so E = 1 and the allowance 2 passes any 0/1 result (all ones, all zeros, the
    negated step). Such a reference cannot separate variants: the group is compared with its
    default instead (the variants must then agree with the default's results), and says why."""
    x = (A[:32, :512].astype(np.float64) @ B[:512, :48].astype(np.float64))
    ref = (x > 0).astype(np.float16)
    default = ref.copy()
    default.reshape(-1)[7] = 1 - default.reshape(-1)[7]  # the one element whose sum's sign f16 flips
    b = baseline([_Host(default)], [_Host(ref)])
    assert b.against == "default" and b.tolerances is None
    assert b.why == ("on the fake data the default's error beyond float16's tolerances reaches 0.999 in result 0, "
                     "whose largest magnitude is 1: an allowance that size would pass wrong results")
    for wrong in (np.ones_like(ref), np.zeros_like(ref), (x < 0).astype(np.float16)):
        assert disagreement(b.expected, [_Host(wrong)]) is not None
        assert results_agree([ref], [wrong], accuracy_tolerances([ref], [default])) is None  # what the reference would have kept
    assert disagreement(b.expected, [_Host(default.copy())]) is None
    assert "(compared with it, not the group's reference: on the fake data" in b.describe("@d")


def test_a_reference_within_the_limit_stays_the_baseline():
    """The fp16 models above: the default's allowance is a few percent of the results' size,
    so the reference stays what variants are checked against."""
    b = baseline([_Host(DEFAULT)], [_Host(REF)])
    assert b.against == "reference" and b.why == ""
    ((_, atol),) = b.tolerances
    assert 0 < atol < 0.1 * np.abs(REF.astype(np.float64)).max()
