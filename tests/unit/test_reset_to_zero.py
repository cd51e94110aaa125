"""reset_to_zero on the CPU path (real IREE execution on local-task): tests/unit/data/cpu_reset_to_zero.mlir's
group accumulates into results 0 and 2 (``out[i] += x[i]``, a read-modify-write as an atomic
add is) and declares them ``reset_to_zero(0, 2)``. A call of @acc (every result a fresh,
untied buffer) returns x, 3x, 2x every time, not x, 2x, 3x ..., before and after tuning by the
runtime and by the module's own @__autotune, and the benchmark entries zero those outputs
before every timed run. @acc_state passes result 0 in place (a global): as in Triton, which
zeroes reset_to_zero arguments only while benchmarking, it accumulates from call to call
(x, 2x, 3x), with the clause as without it (a copy of the group without the clause, built into
the same module). tests/unit/data/cpu_inplace_reset.mlir: the same for an accumulator the
caller passes in place, and the benchmark and check entries that start it from zeros."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.runtime import AutotunedModule, GivenTimings

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
def vmfb(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(_with_plain_copy(SOURCE.read_text()), "acc")


def _load(path, **kw) -> AutotunedModule:
    kw.setdefault("cache", None)
    kw.setdefault("benchmarker", GivenTimings({"a": 2.0, "b": 1.0}))  # decisions not on the wall clock
    return AutotunedModule(path, driver=DRIVER, warmup_ms=1, rep_ms=3, **kw)


#: id(module) -> what @acc_state's global held after its last call (it accumulates).
_STATE: dict[int, np.ndarray] = {}


def _calls_right(m, times: int = 3) -> None:
    for _ in range(times):
        r0, r1, r2 = m("acc", X)
        np.testing.assert_array_equal(r0, X)        # zero-filled, then += x
        np.testing.assert_array_equal(r1, 3 * X)    # a plain store
        np.testing.assert_array_equal(r2, 2 * X)    # zero-filled, then += 2x
        before = _STATE.get(id(m), np.zeros_like(X))
        r0, r1, r2 = m("acc_state", X)
        np.testing.assert_array_equal(r0, before + X)  # in place: never zeroed on a real call
        np.testing.assert_array_equal(r1, 3 * X)
        np.testing.assert_array_equal(r2, 2 * X)
        _STATE[id(m)] = r0


def test_every_call_starts_from_zero(vmfb):
    m = _load(vmfb, strategy="request")
    _calls_right(m)
    timings = m.autotune()  # the runtime's tuning: every variant's benchmark entry
    assert set(timings) == {"acc_ex::acc", "plain_ex::acc"}
    assert [t.variant for t in timings["acc_ex::acc"]] == ["a", "b"]
    assert all(t.median_ms > 0 for t in timings["acc_ex::acc"])
    assert m.chosen["acc_ex::acc"] == "b"  # the given timings: @b faster
    _calls_right(m)
    for k in range(2):  # each variant, pinned
        m.select("acc_ex::acc", k)
        _calls_right(m, times=2)
    m.functions["__autotune"]()  # the module's own entry point (each variant once, in the VM)
    _calls_right(m)


def test_benchmark_entries_zero_before_every_run(vmfb):
    """200 runs on the benchmark's fake data: the zeroed outputs are refilled with zeros before
    each run, so every run's results are those of the check entry (one run on fresh fake data):
    0 + x, 3x, 0 + 2x at element 0 (an accumulation over the runs would give 100x and 200x)."""
    m = _load(vmfb)
    info = m.group("acc_ex::acc")
    for bench, check in zip(info.bench, info.check):
        once = [np.asarray(r.to_host()) for r in m.functions[check]()]
        x0 = float(once[0][0])
        assert x0 != 0 and [float(r[0]) for r in once] == [x0, 3 * x0, 2 * x0]
        results = m.functions[bench](25)  # 25 * 8 runs
        values = np.array([float(np.asarray(r.to_host()).ravel()[0]) for r in results]).reshape(-1, 3)
        np.testing.assert_array_equal(values, np.tile([x0, 3 * x0, 2 * x0], (len(values), 1)))


def test_in_place_accumulates_with_the_clause_as_without(vmfb):
    """Result 0 of @acc_state, written in place into a global, accumulates from call to call
    (x, 2x, 3x) with reset_to_zero(0, 2) as without it (the copy @plain_acc_state): Triton
    zeroes it only while benchmarking. (Result 2, untied, starts from whatever a fresh buffer
    holds without the clause: undefined, so not asserted.)"""
    m = _load(vmfb)
    for k in range(1, 4):
        for host in ("plain_acc_state", "acc_state"):
            r0, r1, _ = m(host, X)
            np.testing.assert_array_equal(r0, k * X)
            np.testing.assert_array_equal(r1, 3 * X)


@pytest.fixture(scope="module")
def in_place_vmfb(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(DATA / "cpu_inplace_reset.mlir")


def test_in_place_accumulator_is_zeroed_only_while_tuning(in_place_vmfb):
    """The caller's accumulator (reset_to_zero, passed in place): every real call, in every
    variant, before and after tuning, returns acc + x; the check entries start from zeros (their
    result is the fake x itself, the same for both variants) and every benchmark run too (no
    drift over 200 runs)."""
    m = _load(in_place_vmfb)
    acc = np.arange(1024, dtype=np.float32)
    x = np.linspace(-4, 4, 1024, dtype=np.float32)
    for k in range(2):
        m.select("acc", k)
        np.testing.assert_array_equal(m("step", x, acc), acc + x)
    m.autotune()
    np.testing.assert_array_equal(m("step", x, acc), acc + x)
    m.functions["__autotune"]()
    np.testing.assert_array_equal(m("step", x, acc), acc + x)
    info = m.group("acc")
    fake = [np.asarray(m.functions[c]().to_host()) for c in info.check]
    np.testing.assert_array_equal(fake[0], fake[1])
    assert np.count_nonzero(fake[0]) == fake[0].size  # 0 + x, x in +-[0.5, 2)
    for bench in info.bench:
        runs = [float(np.asarray(r.to_host())[0]) for r in m.functions[bench](25)]
        assert runs == [float(fake[0][0])] * len(runs)
