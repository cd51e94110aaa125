"""Tuning never changes what the program computes (CPU path, real IREE execution on
local-task): tests/unit/data/cpu_stateful.mlir's host @step doubles its argument in place (a
dispatch with a tied result) and counts its calls in a mutable global; every strategy, the
module's own @__autotune and long benchmark runs must leave both alone. Decisions are made on
given timings (@b faster), so they do not depend on the machine's load."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.runtime import AutotunedModule, GivenTimings

DATA = pathlib.Path(__file__).parent / "data"
DRIVER = "local-task"
X = np.linspace(-4, 4, 777, dtype=np.float32)


@pytest.fixture(scope="module")
def vmfb(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(DATA / "cpu_stateful.mlir")


def _load(vmfb, **kw) -> AutotunedModule:
    kw.setdefault("cache", None)
    return AutotunedModule(vmfb, driver=DRIVER, benchmarker=GivenTimings({"a": 2.0, "b": 1.0}), **kw)


def _step(m, expect_calls: int) -> None:
    y, calls = m("step", X)
    np.testing.assert_array_equal(y, 2 * X)  # the in-place result, in every variant
    assert int(calls) == expect_calls


@pytest.mark.parametrize("strategy", ["request", "load", "fixed"])
def test_tuning_leaves_module_state_alone(vmfb, strategy):
    m = _load(vmfb, strategy=strategy)
    _step(m, 1)
    m.autotune()  # the runtime's tuning (cached: not at all)
    _step(m, 2)
    m("__autotune")  # the module's entry point, through the runtime
    _step(m, 3)
    m.functions["__autotune"]()  # the module's entry point as iree-run-module calls it
    _step(m, 4)
    assert m.chosen["ip_ex::double"] == "b"  # every strategy tunes when asked (autotune())
    for k in range(2):
        m.bench("double", k, warmup_ms=1, rep_ms=3)
        m.select("double", k)
        _step(m, 5 + k)


def test_round_robin_counts_only_live_calls(vmfb):
    m = _load(vmfb, strategy="round-robin", min_rounds=2, max_rounds=3)
    for n in range(1, 9):
        _step(m, n)
    assert (m.sources["ip_ex::double"], m.chosen["ip_ex::double"]) == ("round-robin", "b")


def test_in_place_fake_data_does_not_drift(vmfb):
    """1000 runs of an in-place doubling on the benchmark's fake data: each run gets a fresh
    buffer of the same seeded data, so every result is the check entry's (one run: 2 * x[0],
    x[0] in +-[0.5, 2)); drifting data would reach 2^1000 * x[0] = inf."""
    m = _load(vmfb)
    info = m.group("double")
    for bench, check in zip(info.bench, info.check):
        once = float(np.asarray(m.functions[check]().to_host()).ravel()[0])
        assert 1.0 <= abs(once) < 4.0
        results = m.functions[bench](1000)
        values = [float(np.asarray(r.to_host()).ravel()[0]) for r in results]
        assert values == [once] * len(values)
