"""benchmarks/tuning_vs_triton.py's verdict on issue 24's "Done when" (done_when), on the rows of
the H200 run of 05:17 (its summary, rounded) and on the same rows with every criterion met."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("tuning_vs_triton", os.path.join(ROOT, "benchmarks", "tuning_vs_triton.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(os.path.join(ROOT, "benchmarks"))
    return module


def _row(case, variants, ours, triton, picks):
    ratio = sorted(ours)[1] / sorted(triton)[1]
    return {"case": case, "variants": variants, "ours_wall_s": ours, "triton_wall_s": triton, "ratio": ratio,
            "ours_pick_over_ncu_best": picks}


S1 = [
    _row("mm9:2048x2048x2048", 9, [0.196, 0.194, 0.202], [0.999, 0.996, 1.081], [1.070, 1.0, 1.0]),
    _row("mm9:4096x4096x4096", 9, [0.379, 0.338, 0.243], [1.088, 1.081, 1.074], [1.105, 1.184, 1.105]),
    _row("mm9:8192x8192x8192", 9, [0.321, 0.303, 0.302], [1.264, 1.247, 1.246], [1.108, 1.0, 1.0]),
    _row("mm9:8192x128x8192", 9, [0.236, 0.178, 0.170], [0.986, 0.998, 0.955], [1.0, 1.0, 1.0]),
    _row("s64:4096x4096x4096", 64, [1.293, 1.326, 1.326], [7.785, 7.915, 7.799], [1.0, 1.014, 1.106]),
]


def test_the_h200_run_of_0517_fails_the_ratio_at_4096_and_the_picks(bench):
    ratio, picks, cases = bench.done_when(S1, 3)
    assert not ratio["pass"] and "mm9:4096x4096x4096 0.313" in ratio["detail"]
    assert not picks["pass"]
    assert "mm9:2048x2048x2048 2/3" in picks["detail"] and "mm9:4096x4096x4096 0/3" in picks["detail"]
    assert "mm9:8192x128x8192 3/3" in picks["detail"] and "s64:4096x4096x4096 1/3" in picks["detail"]
    assert cases["pass"] and "64 variants" in cases["detail"]


def test_every_criterion_met_passes_and_a_missing_case_or_ruler_fails(bench):
    good = [dict(r, ours_wall_s=[0.2 * x for x in r["triton_wall_s"]], ratio=0.2, ours_pick_over_ncu_best=[1.0, 1.004, 1.0])
            for r in S1]
    assert [v["pass"] for v in bench.done_when(good, 3)] == [True, True, True]
    unjudged = [dict(r, ours_pick_over_ncu_best=[]) if r["case"].startswith("s64") else r for r in good]
    assert [v["pass"] for v in bench.done_when(unjudged, 3)] == [True, False, True]
    assert "(not judged)" in bench.done_when(unjudged, 3)[1]["detail"]
    assert [v["pass"] for v in bench.done_when(good[:4], 3)] == [True, True, False]
    assert [v["pass"] for v in bench.done_when([dict(r, ratio=None) if r is good[0] else r for r in good], 3)][0] is False
