"""Issue 21.5 on the CPU (real IREE execution, local-task): a dispatch runs only the variants its
own ``prune_configs_by`` keeps (``autotune.allowed``), whatever the group's choice: tuned, selected,
or rotated live. tests/unit/data/cpu_allowed.mlir: @short_ok is right for n >= 1024 only (an
unmasked kernel's block past a small n), fastest by the given timings; the @small host's
dispatch may run @plain only. On main the attribute was ignored and @small computed 3 * x."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.runtime.tuner import AutotunedModule, GivenTimings

DATA = pathlib.Path(__file__).parent / "data"
TIMES = {"plain": 2.0, "short_ok": 1.0}


@pytest.fixture(scope="module")
def vmfb(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(DATA / "cpu_allowed.mlir")


def _load(vmfb, tmp_path, **kw) -> AutotunedModule:
    kw.setdefault("cache", tmp_path / "tuning.json")
    kw.setdefault("benchmarker", GivenTimings(TIMES))
    return AutotunedModule(vmfb, driver="local-task", warmup_ms=5, rep_ms=20, **kw)


def test_a_disallowed_choice_runs_the_sites_first_allowed_variant(vmfb, tmp_path):
    m = _load(vmfb, tmp_path)
    big, small = np.linspace(-3, 3, 4096, dtype=np.float32), np.linspace(-3, 3, 256, dtype=np.float32)
    for k in range(2):  # whatever the group's choice, @small runs @plain
        m.select("scale", k)
        np.testing.assert_array_equal(m("big", big), 2 * big)
        np.testing.assert_array_equal(m("small", small), 2 * small)


def test_tuned_choice_never_runs_where_pruning_rejects_it(vmfb, tmp_path):
    m = _load(vmfb, tmp_path)
    m.autotune()
    assert m.chosen["al_ex::scale"] == "short_ok"  # the fastest at the dispatch tuning measures
    small = np.arange(256, dtype=np.float32)
    np.testing.assert_array_equal(m("small", small), 2 * small)
    big = np.arange(4096, dtype=np.float32)
    np.testing.assert_array_equal(m("big", big), 2 * big)


def test_round_robin_never_runs_a_disallowed_variant_on_live_data(vmfb, tmp_path):
    m = _load(vmfb, tmp_path, strategy="round-robin", min_rounds=3)
    small, big = np.arange(256, dtype=np.float32), np.arange(4096, dtype=np.float32)
    seen = set()
    for _ in range(12):  # the live calls of @big rotate the group's choice; @small follows it
        np.testing.assert_array_equal(m("big", big), 2 * big)
        seen.add(m.chosen["al_ex::scale"])
        np.testing.assert_array_equal(m("small", small), 2 * small)
    assert seen == {"plain", "short_ok"}


@pytest.fixture(scope="module")
def small_first(cpu_vmfb) -> pathlib.Path:
    """The same module with @small first: the dispatch tuning measures (the group's first) is
    the one that may run @plain only."""
    text = (DATA / "cpu_allowed.mlir").read_text()
    big = text.index("util.func public @big")
    small = text.index("util.func public @small")
    return cpu_vmfb(text[:big] + text[small:] + text[big:small], "cpu_allowed_small_first")


def test_no_entry_for_a_variant_the_measured_dispatch_may_not_run(small_first, tmp_path):
    m = _load(small_first, tmp_path)
    info = m.groups["al_ex::scale"]
    assert info.bench == ["__autotune.al_ex.scale.bench.0", ""]
    assert info.check == ["__autotune.al_ex.scale.check.0", ""]
    assert info.tuned_allowed() == [0]
    assert [(e["site"], e["tuned"], e["variants"]) for e in info.allowed] == [("dispatch 0 in @small", True, [0])]
    with pytest.raises(ValueError, match="no benchmark entry for short_ok"):
        m.bench("scale", 1)


def test_tuning_times_and_picks_only_what_the_measured_dispatch_may_run(small_first, tmp_path):
    m = _load(small_first, tmp_path)
    m.autotune()
    assert [entry[2] for entry in m.benchmarker.log] == ["plain"]  # @short_ok is never timed
    assert m.chosen["al_ex::scale"] == "plain"
    small = np.arange(256, dtype=np.float32)
    np.testing.assert_array_equal(m("small", small), 2 * small)


def test_round_robin_rotates_only_over_what_the_host_dispatch_may_run(small_first, tmp_path):
    m = _load(small_first, tmp_path, strategy="round-robin", min_rounds=3)
    small = np.arange(256, dtype=np.float32)
    seen = set()
    for _ in range(8):
        np.testing.assert_array_equal(m("small", small), 2 * small)
        seen.add(m.chosen["al_ex::scale"])
    assert seen == {"plain"}
    assert {entry[2] for entry in m.benchmarker.log} == {"plain"}


def test_tune_report_says_why_a_variant_was_not_measured(small_first, tmp_path):
    from autotune_export.tools.tune import _rows

    m = _load(small_first, tmp_path)
    m.autotune()
    (row,) = [r for r in _rows(m) if r["variant"] == "short_ok"]
    assert row["median_ms"] is None
    assert row["dropped_reason"] == "not run by the measured dispatch (its prune_configs_by does not keep it)"
