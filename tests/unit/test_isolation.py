"""Tuning in a worker process (issue 24 item 5), on the CPU: real IREE execution (local-task) of
tests/unit/data/cpu_faulty.mlir, whose @oob stores 4 TiB out of bounds (a segmentation fault),
@spin never terminates and @greedy asks for more workgroup local memory than the executor has
when ``--task_worker_local_memory=65536`` is set; @ok (the default) and @fast compute 2 * x.

The worker (``autotune_export.runtime.worker``) runs them; the program (this test process)
goes on. Limits here are generous (no decision depends on the machine's load); the one test
that needs a limit to pass, the hang, is in the integration suite.
"""

from __future__ import annotations

import hashlib
import pathlib

import pytest

from autotune_export.runtime.isolation import Isolation, VariantFailure, WorkerUnavailable
from autotune_export.tools import cli

DATA = pathlib.Path(__file__).parent / "data"
DRIVER = "local-task"
PREFIX = "__autotune.faulty_ex.scale"
#: The variants' indices in the group (cpu_faulty.mlir's order).
OK, OOB, SPIN, GREEDY, FAST = range(5)
#: Local memory per worker that @greedy's 128 KiB does not fit.
SMALL_LOCAL_MEMORY = ["--task_worker_local_memory=65536"]


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("faulty") / "cpu_faulty.vmfb"
    assert cli.main([str(DATA / "cpu_faulty.mlir"), "--emit", "vmfb", "--backend", "llvm-cpu", "-o", str(out)]) == 0
    return out


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


@pytest.mark.integration
def test_a_hang_is_killed_at_the_limit(faulty):
    """@spin never returns: at the limit the worker is killed ("hang"), and the next request
    runs in a fresh worker. (A real limit passes here: integration suite.)"""
    iso = _isolation(faulty, variant_timeout_s=20.0)
    try:
        with pytest.raises(VariantFailure) as err:
            iso.call(f"{PREFIX}.bench.{SPIN}", 1)
        assert err.value.kind == "hang" and err.value.limit_s == 20.0
        assert "did not finish within the limit of 20 s per variant" in err.value.reason
        assert iso.call(f"{PREFIX}.bench.{OK}", 1) >= 0 and len(iso.starts) == 2
    finally:
        iso.close()
