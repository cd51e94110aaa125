"""Choices per workload, the per-variant tuning cache and the cross-check of variants (issue
13, points 4-6), on the CPU path (real IREE execution on local-task).

tests/unit/data/cpu_workloads.mlir: one group of y = 2 * x with three variants whose speed
depends on n (@per_elem fastest for n = 1024, @fixed for n = 262144) and @wrong (3 * x, the
fastest, and wrong), tuned on two workloads. The fast suite decides on given timings with the
same ranking (:data:`TIMES`); the integration test times them for real."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

from autotune_export.runtime import AutotunedModule
from autotune_export.runtime.tuner import GivenTimings, TuningCache, results_agree
from autotune_export.tools import cli

DATA = pathlib.Path(__file__).parent / "data"
GROUP = "wl_ex::scale"
SMALL, LARGE = 1024, 262144
#: ms per run by (variant, n): @per_elem fastest for n = 1024, @fixed for n = 262144, @wrong
#: fastest everywhere (and wrong).
TIMES = {("per_elem", SMALL): 1.0, ("fixed", SMALL): 3.0, ("wrong", SMALL): 0.5,
         ("per_elem", LARGE): 90.0, ("fixed", LARGE): 30.0, ("wrong", LARGE): 10.0}


def given(group: str, variant: str, workload: str) -> float:
    """:data:`TIMES` of a tuning workload (``tensor<1024xf32>``) or a live one (its n first)."""
    return TIMES[(variant, int(re.search(r"\d+", workload).group()))]


def _build(tmp, text: str, name: str) -> pathlib.Path:
    src, out = tmp / f"{name}.mlir", tmp / f"{name}.vmfb"
    src.write_text(text)
    assert cli.main([str(src), "--emit", "vmfb", "--backend", "llvm-cpu", "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory) -> pathlib.Path:
    return _build(tmp_path_factory.mktemp("wl"), (DATA / "cpu_workloads.mlir").read_text(), "cpu_workloads")


def _load(vmfb, **kw) -> AutotunedModule:
    kw.setdefault("cache", None)
    if not kw.pop("wall_clock", False):
        kw.setdefault("benchmarker", GivenTimings(given))
    return AutotunedModule(vmfb, driver="local-task", warmup_ms=2, rep_ms=10, **kw)


def _x(n: int) -> np.ndarray:
    return np.linspace(-2, 2, n, dtype=np.float32)


@pytest.mark.integration  # times the variants with the wall clock
def test_two_workloads_pick_two_variants_on_the_wall_clock(vmfb):
    m = _load(vmfb, wall_clock=True)
    m.autotune()
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}


def test_two_workloads_pick_two_variants(vmfb):
    m = _load(vmfb)
    m.autotune()
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    assert m.chosen[GROUP] == "per_elem"  # the first workload's winner is the fallback
    for n in (SMALL, LARGE, 5000):
        np.testing.assert_array_equal(m("run", _x(n)), 2 * _x(n))


def test_dispatch_selects_by_workload_and_falls_back(vmfb):
    """Filling a slot with the (wrong) variant 2 for n = 1024 changes exactly the calls of that
    workload: the dispatch site compares its workload with the table."""
    m = _load(vmfb)
    info = m.group("scale")
    assert m._set_slot(info, [SMALL], 2)
    np.testing.assert_array_equal(m("run", _x(SMALL)), 3 * _x(SMALL))
    np.testing.assert_array_equal(m("run", _x(777)), 2 * _x(777))  # other workloads: the group's choice
    m.select("scale", "wrong")
    np.testing.assert_array_equal(m("run", _x(777)), 3 * _x(777))
    assert m._set_slot(info, [SMALL], 0)
    np.testing.assert_array_equal(m("run", _x(SMALL)), 2 * _x(SMALL))


def test_wrong_variant_is_dropped_before_it_wins(vmfb):
    m = _load(vmfb)
    timings = {t.variant: t.median_ms for t in m.tune_group("scale")}
    assert timings["wrong"] < timings["per_elem"]  # it is the fastest...
    assert m.dropped[GROUP] == {2}  # ...and never chosen
    assert "variant wrong was dropped" in m.notes[GROUP] and "differ from the default variant per_elem" in m.notes[GROUP]
    assert "wrong" not in m.per_workload[GROUP].values()


def test_results_agree_tolerances():
    a = np.array([1.0, 2.0, np.nan], np.float32)
    assert results_agree([a], [a + 1e-6]) is None
    assert "1 of 3 elements differ" in results_agree([a], [np.array([1.0, 2.1, np.nan], np.float32)])
    assert results_agree([np.array([1, 2])], [np.array([1, 3])]) == "result 0: 1 of 2 elements differ"
    h = np.array([1.0, 100.0], np.float16)
    assert results_agree([h], [h * np.float16(1.005)]) is None  # within f16 precision
    assert "shape" in results_agree([a], [a[:2]])


def test_timings_are_cached_per_variant_and_workload(vmfb, tmp_path, monkeypatch):
    """A module with one more variant (same code for the others) times only the new one."""
    text = (DATA / "cpu_workloads.mlir").read_text()
    two = _build(tmp_path, text.replace("variants([@per_elem, @fixed, @wrong])", "variants([@per_elem, @fixed])"), "two")
    cache = tmp_path / "tuning.json"
    first = _load(two, cache=cache)
    first.autotune()
    rows = TuningCache(cache).timings()
    assert {(r["workload"], r["ruler"]) for r in rows} == {("tensor<1024xf32>", "bench"), ("tensor<262144xf32>", "bench")}
    assert len(rows) == 4  # 2 variants x 2 workloads

    three = _load(vmfb, cache=cache)
    three.autotune()
    timed = [(variant, workload) for kind, _, variant, workload in three.benchmarker.log]
    assert timed == [("wrong", "tensor<1024xf32>"), ("wrong", "tensor<262144xf32>")]  # once per workload
    assert three.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    assert len(TuningCache(cache).timings()) == 6


def test_round_robin_tunes_each_workload_and_a_second_process_reads_the_cache(vmfb, tmp_path, monkeypatch):
    cache = tmp_path / "tuning.json"
    m = _load(vmfb, cache=cache, strategy="round-robin", min_rounds=5, max_rounds=10)
    for _ in range(40):
        for n in (SMALL, LARGE):
            np.testing.assert_array_equal(m("run", _x(n)), 2 * _x(n))  # every live call right: @wrong never runs
        if len(m.per_workload.get(GROUP, {})) == 2:
            break
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    assert m.dropped[GROUP] == {2}
    live = [r for r in TuningCache(cache).timings() if r["ruler"] == "live"]
    assert len(live) == 4  # per_elem and fixed, per workload

    selected = []
    original = AutotunedModule.select

    def spy(self, group, variant):
        selected.append(variant)
        return original(self, group, variant)

    monkeypatch.setattr(AutotunedModule, "select", spy)
    again = _load(vmfb, cache=cache, strategy="round-robin", min_rounds=5, max_rounds=10)
    for n in (SMALL, LARGE):
        np.testing.assert_array_equal(again("run", _x(n)), 2 * _x(n))
    assert again.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    assert set(selected) == {0}  # no rotation: only the fallback (the first workload's winner) was selected
    data = json.loads(cache.read_text())
    assert {tuple(e["workload_values"]) for e in data["results"] if e["strategy"] == "round-robin"} == {(SMALL,), (LARGE,)}


def test_tuning_results_freeze_the_table(vmfb, tmp_path):
    """The cache written by tuning, given to --tuning-results, freezes both choices into the IR;
    strategy="fixed" with the same file fills the run-time table the same way."""
    cache = tmp_path / "tuning.json"
    _load(vmfb, cache=cache).autotune()
    out = tmp_path / "pinned.mlir"
    assert cli.main([str(DATA / "cpu_workloads.mlir"), "--tuning-results", str(cache), "-p", "pin-variants", "-o", str(out)]) == 0
    text = out.read_text()
    assert "choices([1024] = @per_elem, [262144] = @fixed)" in text
    fixed = _load(vmfb, strategy="fixed", results=cache)
    assert fixed.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
