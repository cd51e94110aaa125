"""Round-robin never runs a variant on live data before it has been checked (issue 21, item 1),
on the CPU path (real IREE execution on local-task).

tests/unit/data/cpu_workloads.mlir without its tune_workload: the host takes tensor<?xf32>, so
the group is built without benchmark and check entries (a warning at the build), and its
@wrong variant (3 * x, given as the fastest) cannot be caught by the cross-check. Round-robin
leaves such a group on its default unless the user passes allow_unchecked=True. Timings are
given (GivenTimings): nothing here decides on the wall clock."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.runtime import AutotunedModule
from autotune_export.runtime.timing import GivenTimings

DATA = pathlib.Path(__file__).parent / "data"
GROUP = "wl_ex::scale"
TIMES = {"per_elem": 3.0, "fixed": 2.0, "wrong": 1.0}


@pytest.fixture(scope="module")
def vmfb(cpu_vmfb) -> pathlib.Path:
    text = (DATA / "cpu_workloads.mlir").read_text()
    clause = "\n      tune_workload([tensor<1024xf32>], [tensor<262144xf32>])"
    assert text.count(clause) == 1
    return cpu_vmfb(text.replace(clause, ""), "dynamic")


def _load(vmfb, **kw) -> AutotunedModule:
    return AutotunedModule(vmfb, driver="local-task", cache=None, strategy="round-robin", min_rounds=2, max_rounds=4,
                           benchmarker=GivenTimings(TIMES), **kw)


def test_unchecked_variants_never_run_on_live_data(vmfb):
    with pytest.warns(RuntimeWarning, match="wl_ex::scale is not tuned on live calls: variants fixed, wrong cannot be checked"):
        m = _load(vmfb)
    info = m.group("scale")
    assert info.check == [] and info.bench == []
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    for _ in range(30):
        np.testing.assert_array_equal(m("run", x), 2 * x)
    assert (m.chosen[GROUP], m.sources[GROUP]) == ("per_elem", "default")
    assert not any(kind == "live" for kind, *_ in m.benchmarker.log)  # nothing rotated, nothing timed
    assert "allow_unchecked=True" in m.notes[GROUP] and "tune_workload" in m.notes[GROUP]


def test_allow_unchecked_rotates_at_the_users_risk(vmfb):
    """Opted in, round-robin rotates through every variant on live calls, unchecked: the wrong
    one's results are returned (the risk the option names), and, given as the fastest, it wins."""
    m = _load(vmfb, allow_unchecked=True)
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    seen = {}
    for _ in range(12):
        before = len(m.benchmarker.log)
        y = np.asarray(m("run", x))
        ran = [v for kind, _, v, _ in m.benchmarker.log[before:] if kind == "live"]  # the variant this call ran
        if ran:
            seen[ran[0]] = y
    assert sorted(seen) == ["fixed", "per_elem", "wrong"]
    np.testing.assert_array_equal(seen["wrong"], 3 * x)
    assert (m.chosen[GROUP], m.sources[GROUP]) == ("wrong", "round-robin")
