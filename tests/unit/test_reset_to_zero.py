"""reset_to_zero on the CPU path (real IREE execution on local-task): tests/unit/data/cpu_reset_to_zero.mlir's
group accumulates into results 0 and 2 (``out[i] += x[i]``, a read-modify-write as an atomic
add is) and declares them ``reset_to_zero(0, 2)``. Every call returns x, 3x, 2x, not x, 2x, 3x
..., before and after tuning by the runtime and by the module's own @__autotune, and the
benchmark entries zero those outputs before every timed run. A copy of the group without the
clause, built into the same module, shows the accumulation where it is deterministic (an
output written in place into a global)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.runtime import AutotunedModule
from autotune_export.tools import cli

DATA = pathlib.Path(__file__).parent / "data"
SOURCE = DATA / "cpu_reset_to_zero.mlir"
DRIVER = "local-task"
X = np.linspace(-4, 4, 777, dtype=np.float32)


def _with_plain_copy(text: str) -> str:
    """The module plus a copy of its executable without reset_to_zero(0, 2) (@plain_ex) and of
    @acc_state dispatching it (@plain_acc_state, on the global @plain_state): one build."""
    exe = text[text.index("hal.executable.source private @acc_ex"):text.index("util.func public @acc(")]
    state = text[text.index("util.global private mutable @state"):]
    clause = "variants([@a, @b]) reset_to_zero(0, 2) tune_workload(tensor<4096xf32>)"
    assert exe.count(clause) == 1
    plain = exe.replace("@acc_ex", "@plain_ex").replace(clause, "variants([@a, @b])")
    plain_state = (state.replace("@state", "@plain_state").replace("@acc_state", "@plain_acc_state")
                   .replace("@acc_ex::@acc", "@plain_ex::@acc"))
    return text + plain + plain_state


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory) -> pathlib.Path:
    tmp = tmp_path_factory.mktemp("zero")
    (tmp / "acc.mlir").write_text(_with_plain_copy(SOURCE.read_text()))
    assert cli.main([str(tmp / "acc.mlir"), "--emit", "vmfb", "--backend", "llvm-cpu", "-o", str(tmp / "acc.vmfb")]) == 0
    return tmp / "acc.vmfb"


def _load(path, **kw) -> AutotunedModule:
    kw.setdefault("cache", None)
    return AutotunedModule(path, driver=DRIVER, warmup_ms=1, rep_ms=3, **kw)


def _calls_right(m, times: int = 3) -> None:
    for _ in range(times):
        for host in ("acc", "acc_state"):
            r0, r1, r2 = m(host, X)
            np.testing.assert_array_equal(r0, X)        # zero-filled, then += x
            np.testing.assert_array_equal(r1, 3 * X)    # a plain store
            np.testing.assert_array_equal(r2, 2 * X)    # zero-filled, then += 2x


def test_every_call_starts_from_zero(vmfb):
    m = _load(vmfb, strategy="request")
    _calls_right(m)
    timings = m.autotune()  # the runtime's tuning: every variant's benchmark entry
    assert set(timings) == {"acc_ex::acc", "plain_ex::acc"}
    assert [t.variant for t in timings["acc_ex::acc"]] == ["a", "b"]
    assert all(t.median_ms > 0 for t in timings["acc_ex::acc"])
    assert m.chosen["acc_ex::acc"] in ("a", "b")
    _calls_right(m)
    for k in range(2):  # each variant, pinned
        m.select("acc_ex::acc", k)
        _calls_right(m, times=2)
    m.functions["__autotune"]()  # the module's own entry point (each variant once, in the VM)
    _calls_right(m)


def test_benchmark_entries_zero_before_every_run(vmfb):
    """200 runs on the benchmark's fake data (x = 0.5): the zeroed outputs are refilled with
    zeros before each run, so the last runs' results are 0 + 0.5, 3 * 0.5, 0 + 2 * 0.5 (an
    accumulation over the runs would give about 100 and 200)."""
    m = _load(vmfb)
    info = m.group("acc_ex::acc")
    for bench in info.bench:
        results = m.functions[bench](25)  # 25 * 8 runs
        values = np.array([float(np.asarray(r.to_host()).ravel()[0]) for r in results]).reshape(-1, 3)
        np.testing.assert_array_equal(values, np.tile([0.5, 1.5, 1.0], (len(values), 1)))


def test_without_the_clause_in_place_accumulates(vmfb):
    """Without reset_to_zero (the copy @plain_acc_state), result 0, written in place into a
    global, accumulates from call to call: x, 2x, 3x. (Result 2, untied, starts from whatever
    a fresh buffer holds: undefined, so not asserted.)"""
    m = _load(vmfb)
    for k in range(1, 4):
        r0, r1, _ = m("plain_acc_state", X)
        np.testing.assert_array_equal(r0, k * X)
        np.testing.assert_array_equal(r1, 3 * X)
    _calls_right(m, times=1)  # the zeroed group next to it is unaffected
