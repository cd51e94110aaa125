"""Tuning through the worker process on the CPU (issue 24 item 5; the fixtures, variants and
given timings of test_isolation.py): faults and recorded hangs dropped, a hang retried under a
longer limit, round-robin checked in the worker first. In a file of its own so that the fast
suite's two workers (``--dist loadfile``) share test_isolation's load."""

from __future__ import annotations

import numpy as np
import pytest

from autotune_export.runtime.tuner import AutotunedModule, GivenTimings, TuningCache
from test_isolation import DATA, DRIVER, GREEDY, OOB, SPIN, TIMES, WORKLOAD, _record_hang


@pytest.fixture(scope="module")
def faulty(cpu_vmfb):
    return cpu_vmfb(DATA / "cpu_faulty.mlir")  # built once per session (conftest.cpu_vmfb)


def test_tuning_drops_a_fault_and_a_recorded_hang_and_goes_on(faulty, tmp_path):
    """Default isolation ("auto"): nothing ran before, so the variants run in a worker. @oob
    faults (dropped, reason kept, recorded), @spin is dropped from the cache's record of its
    hang (not run again), the winner is @fast (given 1 ms against @ok's 3), and this process
    goes on: its own call runs @fast and returns 2 * x."""
    cache = tmp_path / "tuning.json"
    given = GivenTimings(TIMES)
    m = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=given, isolation="auto", variant_timeout_s=120.0)
    _record_hang(m, cache, 120.0)
    m.tune_group("scale")
    reasons = m.drop_reasons["faulty_ex::scale"]
    assert set(reasons) == {"oob", "spin"}
    assert reasons["oob"].startswith("fault: its run: the worker process was killed by SIGSEGV (segmentation fault)")
    assert reasons["spin"].startswith("hang: its first run did not finish within 120.0 s (tuning cache, ")
    assert m.chosen == {"faulty_ex::scale": "fast"}
    assert {v for kind, _, v, _ in given.log if kind == "bench"} == {"ok", "greedy", "fast"}
    assert len(m.worker_starts) >= 2  # one more after the fault
    x = np.arange(4096, dtype=np.float32)
    assert np.array_equal(m("scale", x), 2 * x)
    assert "variant oob was dropped (fault)" in m.notes["faulty_ex::scale"]
    recorded = {f["fingerprint"]: f for f in TuningCache(cache).failures()}
    info = m.group("scale")
    assert recorded[info.fingerprints[OOB]]["kind"] == "fault" and recorded[info.fingerprints[SPIN]]["kind"] == "hang"
    decision = TuningCache(cache).entries()[0]
    assert decision["variant"] == "fast" and set(decision["median_ms"]) == {"ok", "greedy", "fast"}
    m.close_worker()
    # A second load: the cache answers, the drops included; no worker is started.
    m2 = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=GivenTimings(TIMES), isolation="auto")
    m2.tune_group("scale")
    assert m2.chosen == {"faulty_ex::scale": "fast"} and m2.worker_starts == []
    assert set(m2.drop_reasons["faulty_ex::scale"]) == {"oob", "spin"}
    assert "(tuning cache, " in m2.drop_reasons["faulty_ex::scale"]["oob"]


def test_a_longer_limit_tries_a_recorded_hang_again(faulty, tmp_path):
    """A hang recorded under a shorter limit than this tuning's is not a verdict: it runs again
    (here @spin is skipped only by the shorter record; its new run would hang, so the test
    asks only whether the record still drops it)."""
    cache = tmp_path / "tuning.json"
    m = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=GivenTimings(TIMES), isolation="none",
                        variant_timeout_s=120.0)
    _record_hang(m, cache, 20.0)
    m._recorded_failures(m.group("scale"), WORKLOAD)
    assert "spin" not in m.drop_reasons.get("faulty_ex::scale", {})
    _record_hang(m, cache, 120.0)
    m._recorded_failures(m.group("scale"), WORKLOAD)
    assert m.drop_reasons["faulty_ex::scale"]["spin"].startswith("hang: ")


def test_a_decision_made_while_a_hang_was_dropped_does_not_answer_a_longer_limit(faulty, tmp_path):
    """Tester, Dec 2 trial 3, finding 1: a tuning under a short limit drops a variant as a hang
    and stores its decision; a later tuning under a longer limit gives the hang another chance,
    so that stored decision must not answer it (it did: the variant was never tried again and
    vanished from the table). @greedy (which runs fine here) stands for a variant that was only
    slow once: recorded as hung under 20 s, it wins under 120 s with the given timings."""
    cache = tmp_path / "tuning.json"
    m = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=GivenTimings(TIMES), isolation="auto",
                        variant_timeout_s=20.0)
    info = m.group("scale")
    TuningCache(cache).store(None, (), [{"fingerprint": info.fingerprints[GREEDY], "device": m.identity["device"],
                                         "driver_version": m.identity["driver_version"], "workload": WORKLOAD,
                                         "kind": "hang", "reason": "its first run did not finish within 20.0 s",
                                         "limit_s": 20.0, "time": "2026-12-01T00:00:00"}])
    _record_hang(m, cache, 1000.0)  # @spin stays dropped under both limits
    m.tune_group("scale")
    assert m.chosen == {"faulty_ex::scale": "fast"} and "greedy" in m.drop_reasons["faulty_ex::scale"]
    again = dict(TIMES, greedy=0.1)
    m2 = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=GivenTimings(again), isolation="auto",
                         variant_timeout_s=120.0)
    m.close_worker()
    m2.tune_group("scale")
    assert m2.chosen == {"faulty_ex::scale": "greedy"}
    assert "greedy" not in m2.drop_reasons.get("faulty_ex::scale", {})
    m2.close_worker()
    m3 = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=GivenTimings(TIMES), isolation="auto",
                         variant_timeout_s=20.0)
    m3.tune_group("scale")  # the same limit as the record: the stored decision answers
    assert m3.sources["faulty_ex::scale"] == "cache"


def test_round_robin_checks_in_the_worker_before_live_calls(faulty, tmp_path):
    """Round-robin runs variants on live calls, in this process: before the first one, every
    variant is checked in the worker, so @oob (fault) and @spin (recorded hang) never run live;
    the live calls rotate through @ok, @greedy and @fast and return 2 * x."""
    cache = tmp_path / "tuning.json"
    given = GivenTimings(TIMES)
    m = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=given, strategy="round-robin",
                        isolation="process", variant_timeout_s=120.0, min_rounds=2, max_rounds=2)
    _record_hang(m, cache, 120.0)
    x = np.arange(4096, dtype=np.float32)
    for _ in range(8):
        assert np.array_equal(m("scale", x), 2 * x)
    assert set(m.drop_reasons["faulty_ex::scale"]) == {"oob", "spin"}
    assert m.drop_reasons["faulty_ex::scale"]["oob"].startswith("fault: its check run: the worker process was killed by SIGSEGV")
    assert {v for kind, _, v, _ in given.log if kind == "live"} == {"ok", "greedy", "fast"}
    assert m.chosen["faulty_ex::scale"] == "fast"
