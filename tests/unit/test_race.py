"""The racing search and the tie rule of the runtime, on a simulated clock: each benchmark
"run" advances time by its variant's cost, so the logic is tested without timing anything."""

from __future__ import annotations

import pytest

from autotune_export.runtime import tuner


@pytest.fixture
def clock(monkeypatch):
    state = {"now": 0.0}
    monkeypatch.setattr(tuner.time, "perf_counter", lambda: state["now"])
    return state


def _entries(clock, costs_ms, overhead_ms=0.05, unroll=8):
    """Benchmark entries: run(n) takes overhead + n * unroll * cost ms."""
    calls = [0] * len(costs_ms)

    def make(k):
        def run(n):
            calls[k] += 1
            clock["now"] += (overhead_ms + n * unroll * costs_ms[k]) / 1e3
        return run

    return [make(k) for k in range(len(costs_ms))], calls


def test_race_finds_the_fastest_and_stops_timing_the_slow(clock):
    costs = [0.30, 0.10, 0.50, 0.101, 0.90]
    runs, calls = _entries(clock, costs)
    samples = tuner.race(runs, unroll=8, budget_ms=30)
    timings = [tuner.VariantTiming(str(k), s) for k, s in enumerate(samples)]
    assert tuner.pick(timings).variant == "1"
    for k, cost in enumerate(costs):
        assert timings[k].median_ms == pytest.approx(cost, rel=1e-6)
    # The clearly slower variants were timed in round 0 only; the two close ones longer.
    rounds0 = [len(samples[k]) for k in (0, 2, 4)]
    assert min(len(samples[1]), len(samples[3])) > max(rounds0)
    # Total simulated time (30 ms of device warm-up included): about half of the 5 x 125 ms
    # that full do_bench budgets take.
    assert clock["now"] * 1e3 < 5 * 125 * 0.6


def test_pick_prefers_the_earlier_variant_within_the_tie_tolerance():
    t = tuner.VariantTiming
    assert tuner.pick([t("a", [1.005]), t("b", [1.0]), t("c", [0.999])]).variant == "a"
    assert tuner.pick([t("a", [1.02]), t("b", [1.0])]).variant == "b"


def test_loop_bench_samples_per_run(clock):
    (run,), _ = _entries(clock, [0.25], overhead_ms=0.5)
    samples = tuner.loop_bench(run, unroll=8, warmup_ms=5, rep_ms=20)
    assert len(samples) >= 5 and all(s == pytest.approx(0.25, rel=1e-6) for s in samples)
