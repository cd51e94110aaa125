"""Tuning in a worker process (issue 24 item 5), on the CPU: real IREE execution (local-task) of
tests/unit/data/cpu_faulty.mlir, whose @oob stores 4 TiB out of bounds (a segmentation fault),
@spin never terminates and @greedy asks for more workgroup local memory than the executor has
when ``--task_worker_local_memory=65536`` is set; @ok (the default) and @fast compute 2 * x.

The worker (``autotune_export.runtime.worker``) runs them; the program (this test process)
goes on. Limits here are generous (no decision depends on the machine's load); the tests that
need a limit to pass (the hangs), and the tune command's (which times on the wall clock), are in
the integration suite.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import signal
import subprocess
import sys

import numpy as np
import pytest

from autotune_export.runtime.isolation import Isolation, VariantFailure, WorkerUnavailable
from autotune_export.runtime.tuner import AutotunedModule, GivenTimings, TuningCache

DATA = pathlib.Path(__file__).parent / "data"
DRIVER = "local-task"
PREFIX = "__autotune.faulty_ex.scale"
#: The variants' indices in the group (cpu_faulty.mlir's order).
OK, OOB, SPIN, GREEDY, FAST = range(5)
#: Local memory per worker that @greedy's 128 KiB does not fit.
SMALL_LOCAL_MEMORY = ["--task_worker_local_memory=65536"]


@pytest.fixture(scope="module")
def faulty(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(DATA / "cpu_faulty.mlir")


def _isolation(path: pathlib.Path, **kw) -> Isolation:
    kw.setdefault("variant_timeout_s", 120.0)
    return Isolation(path, DRIVER, hashlib.sha256(path.read_bytes()).hexdigest(), **kw)


def test_a_fault_kills_the_worker_not_the_program(faulty):
    """@oob's segmentation fault ends the worker: a "fault" naming the signal; the next request
    runs in a fresh worker, which loads the module again."""
    iso = _isolation(faulty)
    try:
        assert iso.call(f"{PREFIX}.bench.{OK}", 1) >= 0
        pid = iso.worker.proc.pid
        with pytest.raises(VariantFailure) as err:
            iso.call(f"{PREFIX}.bench.{OOB}", 1, what="variant oob")
        assert err.value.kind == "fault"
        assert "SIGSEGV (segmentation fault)" in err.value.reason and err.value.reason.startswith("variant oob: ")
        assert not iso.worker.alive and len(iso.starts) == 1
        # The program goes on: the next variant runs in a new worker.
        assert iso.check(f"{PREFIX}.check.{OK}", f"{PREFIX}.check.{FAST}") is None
        assert len(iso.starts) == 2 and iso.worker.proc.pid != pid
    finally:
        iso.close()
    assert iso.worker.proc is None


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_the_worker_is_a_process_group_of_its_own(faulty):
    """The worker leads a session and process group of its own, and is killed by that group:
    a kill never reaches the tuning process's group (main started it in the caller's group:
    under pytest-xdist that is the xdist worker's, and the fast suite once stopped at 98 % with
    both xdist workers gone), and a Ctrl-C at a terminal reaches the tuning process, not the
    worker in the middle of a variant (which would read as that variant's fault)."""
    iso = _isolation(faulty)
    try:
        assert iso.call(f"{PREFIX}.bench.{OK}", 1) >= 0
        proc = iso.worker.proc
        assert os.getpgid(proc.pid) == proc.pid != os.getpgrp()
        assert os.getsid(proc.pid) == proc.pid != os.getsid(0)
        iso.worker.kill()
        assert proc.returncode == -signal.SIGKILL and not iso.worker.alive
        assert iso.call(f"{PREFIX}.bench.{FAST}", 1) >= 0 and len(iso.starts) == 2  # this process goes on
    finally:
        iso.close()


def test_a_variant_the_runtime_refuses_is_an_error_with_its_reason(faulty):
    """@greedy: iree.runtime raises (RESOURCE_EXHAUSTED); the reason is the runtime's."""
    iso = _isolation(faulty, flags=SMALL_LOCAL_MEMORY)
    try:
        with pytest.raises(VariantFailure) as err:
            iso.call(f"{PREFIX}.bench.{GREEDY}", 1)
        assert err.value.kind == "error"
        assert "RESOURCE_EXHAUSTED" in err.value.reason and "131072b of local memory" in err.value.reason
        assert iso.call(f"{PREFIX}.bench.{FAST}", 1) >= 0
    finally:
        iso.close()


def test_without_the_flag_greedy_runs(faulty):
    """The flags reach the worker: without them the executor's default local memory fits."""
    iso = _isolation(faulty)
    try:
        assert iso.check(f"{PREFIX}.check.{OK}", f"{PREFIX}.check.{GREEDY}") is None
    finally:
        iso.close()


def test_a_worker_that_cannot_load_the_module_is_unavailable(tmp_path):
    bad = tmp_path / "bad.vmfb"
    bad.write_bytes(b"PK\x03\x04 not a module")
    iso = _isolation(bad)
    try:
        with pytest.raises(WorkerUnavailable) as err:
            iso.call(f"{PREFIX}.bench.0", 1)
        assert err.value.reason.startswith("the tuning worker cannot load the module: ")
    finally:
        iso.close()


def test_a_module_given_as_bytes_is_written_for_the_worker(faulty):
    data = faulty.read_bytes()
    iso = Isolation(data, DRIVER, hashlib.sha256(data).hexdigest(), variant_timeout_s=120.0)
    tmp = pathlib.Path(iso.worker.module)
    try:
        assert tmp.read_bytes() == data
        assert iso.call(f"{PREFIX}.bench.{FAST}", 2) >= 0
    finally:
        iso.close()
    assert not tmp.exists()


#: The variant limit of the two tests that let @spin run into it for real: @spin never returns,
#: so any limit passes (and on the CPU its worker spins a core until then); the variants that
#: must finish get 120 s.
HANG_LIMIT_S = 3.0


@pytest.mark.integration
def test_a_hang_is_killed_at_the_limit(faulty):
    """@spin never returns: at the limit the worker is killed ("hang"), and the next request
    runs in a fresh worker. (A real limit passes here: integration suite.)"""
    iso = _isolation(faulty, variant_timeout_s=HANG_LIMIT_S)
    try:
        with pytest.raises(VariantFailure) as err:
            iso.call(f"{PREFIX}.bench.{SPIN}", 1)
        assert err.value.kind == "hang" and err.value.limit_s == HANG_LIMIT_S
        assert "did not finish within the limit of 3 s per variant" in err.value.reason
        assert not iso.worker.alive
        iso.variant_timeout_s = 120.0
        assert iso.call(f"{PREFIX}.bench.{OK}", 1) >= 0 and len(iso.starts) == 2
    finally:
        iso.close()


def test_a_hang_names_the_default_limit(faulty):
    """The reason and limit of a hang under the default limit (60 s, docs/runtime.md's table),
    without waiting 60 s: the step says that no answer came in time, as
    ``TuningWorker.request`` does once the limit has passed (the integration tests above let a
    real, shorter one pass)."""
    from autotune_export.runtime.isolation import _TimedOut

    data = faulty.read_bytes()
    iso = Isolation(faulty, DRIVER, hashlib.sha256(data).hexdigest())
    given = []

    def no_answer(worker, timeout_s):
        given.append(timeout_s)
        worker.kill()
        raise _TimedOut(f"no answer within {timeout_s:.3g} s")

    try:
        with pytest.raises(VariantFailure) as err:
            iso.run(no_answer, what="its first run")
    finally:
        iso.close()
    assert given == [60.0]
    assert err.value.kind == "hang" and err.value.limit_s == 60.0 and not err.value.cut_short
    assert err.value.reason == "its first run did not finish within the limit of 60 s per variant (60 s); the worker was killed"


# --- tuning through the worker (AutotunedModule, autotune-export tune) ------------------------
WORKLOAD = "tensor<4096xf32>"
#: Given timings (ms): the variants that fail would win if they could; @greedy (which runs
#: without the flag) is slower than @fast.
TIMES = {"ok": 3.0, "oob": 0.5, "spin": 0.25, "greedy": 2.0, "fast": 1.0}


def _record_hang(m: AutotunedModule, cache: pathlib.Path, limit_s: float) -> None:
    """What a tuning whose @spin ran past ``limit_s`` stored in the tuning cache (the fast suite
    lets no limit pass: test_a_real_hang_is_dropped_and_recorded makes the same entry for real)."""
    info = m.group("scale")
    TuningCache(cache).store(None, (), [{"fingerprint": info.fingerprints[SPIN], "device": m.identity["device"],
                                         "driver_version": m.identity["driver_version"], "workload": WORKLOAD,
                                         "kind": "hang", "reason": f"its first run did not finish within {limit_s} s",
                                         "limit_s": limit_s, "time": "2026-12-01T00:00:00"}])


@pytest.mark.integration  # two tune commands, each a process with workers, that decide on the wall clock
def test_tune_command_reports_the_dropped_variants(faulty, tmp_path):
    """``autotune-export tune --isolation process`` in a process of its own (the flag makes
    @greedy too big for the CPU executor, process-wide): exit 0, @oob dropped as a fault, @greedy
    as an error with IREE's reason, @spin from the cache's record, a winner among @ok and @fast
    (timed with the wall clock in the worker; the test does not ask which)."""
    results = tmp_path / "r.json"
    m = AutotunedModule(faulty, driver=DRIVER, cache=None, isolation="none")
    _record_hang(m, results, 120.0)
    proc = subprocess.run([sys.executable, "-m", "autotune_export.tools.tune", str(faulty), "--device", DRIVER,
                           "--results", str(results), "--isolation", "process", "--variant-timeout", "120",
                           f"--iree-flag={SMALL_LOCAL_MEMORY[0]}", "--warmup", "1", "--rep", "5", "--json"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    rows = {r["variant"]: r for r in json.loads(proc.stdout)["variants"]}
    assert rows["oob"]["dropped"] and rows["oob"]["dropped_reason"].startswith("fault: its first run: the worker process was killed by SIGSEGV")
    assert rows["greedy"]["dropped"] and rows["greedy"]["dropped_reason"].startswith("error: its first run: RuntimeError: ")
    assert "RESOURCE_EXHAUSTED; dispatch requires 131072b of local memory but only 65536b is available" in rows["greedy"]["dropped_reason"]
    assert rows["spin"]["dropped"] and "(tuning cache, " in rows["spin"]["dropped_reason"]
    assert all(rows[v]["median_ms"] is None and not rows[v]["winner"] for v in ("oob", "greedy", "spin"))
    assert [v for v, r in rows.items() if r["winner"]] in (["ok"], ["fast"])
    assert all(rows[v]["median_ms"] is not None and rows[v]["samples"] > 0 for v in ("ok", "fast"))  # measured
    assert "variant oob was dropped (fault)" in proc.stderr and "variant greedy was dropped (error)" in proc.stderr
    # The table spells the reasons too.
    proc = subprocess.run([sys.executable, "-m", "autotune_export.tools.tune", str(faulty), "--device", DRIVER,
                           "--results", str(results), "--isolation", "process", f"--iree-flag={SMALL_LOCAL_MEMORY[0]}"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[1]: line for line in proc.stdout.splitlines()[1:]}
    assert "dropped: fault: its first run: the worker process was killed by SIGSEGV" in lines["oob"]
    assert lines["greedy"].split()[2:5] == ["-", "-", "-"] and "dropped: error: " in lines["greedy"]


@pytest.mark.integration
def test_a_real_hang_is_dropped_and_recorded(faulty, tmp_path):
    """@spin for real: its first run passes the limit (:data:`HANG_LIMIT_S`), the worker is
    killed, the variant is dropped as a hang and recorded with its limit; tuning picks @fast and
    this process goes on."""
    cache = tmp_path / "tuning.json"
    m = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=GivenTimings(TIMES), isolation="process",
                        variant_timeout_s=HANG_LIMIT_S)
    m.autotune()
    reasons = m.drop_reasons["faulty_ex::scale"]
    assert set(reasons) == {"oob", "spin"}
    # GivenTimings measures here, each of its runs made in the worker: "its run".
    assert reasons["spin"] == "hang: its run did not finish within the limit of 3 s per variant (3 s); the worker was killed"
    assert m.chosen == {"faulty_ex::scale": "fast"}
    assert len(m.worker_starts) == 3  # the first, after the fault, after the hang
    hang = next(f for f in TuningCache(cache).failures() if f["kind"] == "hang")
    assert hang["limit_s"] == HANG_LIMIT_S and hang["fingerprint"] == m.group("scale").fingerprints[SPIN]
    x = np.arange(4096, dtype=np.float32)
    assert np.array_equal(m("scale", x), 2 * x)


def test_the_group_limit_stores_no_verdict(faulty, tmp_path):
    """A group whose time limit has run out before its variants ran: none is blamed (no failure
    in the tuning cache), no decision is stored (the next tuning resumes), the group stays on
    its default and a note says why. No worker is started."""
    cache = tmp_path / "tuning.json"
    m = AutotunedModule(faulty, driver=DRIVER, cache=cache, benchmarker=GivenTimings(TIMES), isolation="process",
                        group_timeout_s=0.0)
    m.tune_group("scale")
    assert m.chosen == {"faulty_ex::scale": "ok"} and m.worker_starts == []
    reasons = m.drop_reasons["faulty_ex::scale"]
    assert reasons["fast"] == "hang: not run (its run): the group's time limit had passed"
    assert "tuning stopped at the group's time limit (0 s)" in m.notes["faulty_ex::scale"]
    assert TuningCache(cache).failures() == [] and TuningCache(cache).entries() == []


def test_how_runtime_errors_are_classified():
    """A runtime error of a variant's run is a fault when the device work failed: on the H200
    (IREE 3.13) an illegal address reached Python as ``RuntimeError: ABORTED``; a CUDA error
    name in the text counts too, and is added to the reason. The CPU executor's refusal stays
    an error."""
    from autotune_export.runtime.isolation import classify_error

    assert classify_error("RuntimeError: ABORTED") == ("fault", "RuntimeError: ABORTED")
    kind, reason = classify_error("RuntimeError: ABORTED", "ABORTED\nfoo.c:12: CUDA_ERROR_ILLEGAL_ADDRESS; an illegal memory access")
    assert kind == "fault" and reason == "RuntimeError: ABORTED (foo.c:12: CUDA_ERROR_ILLEGAL_ADDRESS; an illegal memory access)"
    refused = "RuntimeError: c/runtime/src/iree/hal/drivers/local_task/block_processor.c:738: RESOURCE_EXHAUSTED; dispatch requires"
    assert classify_error(refused, refused) == ("error", refused)


def test_an_interrupted_request_ends_the_worker(faulty):
    """Review, Dec 2: the worker leads its own process group, so a Ctrl-C reaches only this
    process; a request interrupted while the worker runs @spin left the worker on it, and the
    next request read no answer and blamed its own variant ("hang"). Interrupted (here by
    SIGALRM raising KeyboardInterrupt 0.5 s into @spin's run: the worker is up, so the request is
    sent at once), the worker is ended, and the next
    request runs in a fresh one."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    iso = _isolation(faulty, variant_timeout_s=120.0)
    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        assert iso.call(f"{PREFIX}.bench.{OK}", 1) >= 0
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            iso.call(f"{PREFIX}.bench.{SPIN}", 1)
        assert not iso.worker.alive
        assert iso.call(f"{PREFIX}.bench.{OK}", 1) >= 0  # answered, by a fresh worker
        assert len(iso.starts) == 2
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        iso.close()
