"""The compile workers (autotune_export.cuda.workers): how many, and that they end with the
process that started them. No Triton compilation: the workers run plain functions."""
import argparse
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from autotune_export.cuda import workers

# Starts a pool the way compile_variants and `autotune-export -j 2` do (workers.start / new_pool),
# prints the worker's pid, then waits to be killed.
PARENT = textwrap.dedent('''
    import os, sys, time
    from autotune_export.cuda import workers
    if sys.argv[1] == "start":
        workers.start(2)  # what the command does once it has read its input
        pool = workers.standby(1)
    else:
        pool = workers.new_pool(1)
    with workers.without_main():
        pid = pool.submit(os.getpid).result()
    print(pid, flush=True)
    time.sleep(600)
''')


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie has ended
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["start", "new_pool"])
def test_workers_end_with_a_terminated_parent(tmp_path, monkeypatch, how):
    """Issue 21: a SIGTERM'd `autotune-export -j 2` left its compile worker running (it waits
    for work on a queue whose other end it holds itself)."""
    monkeypatch.delenv(workers.NO_COMPILE_ENV, raising=False)  # start() starts nothing while it is set
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([sys.executable, str(script), how], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(parent.stdout.readline())
        assert not _gone(worker)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) == -signal.SIGTERM
        deadline = time.monotonic() + 60  # a limit on the wait, not a measurement
        while not _gone(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = not _gone(worker)
        if alive:
            os.kill(worker, signal.SIGKILL)
        assert not alive, "the worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()


@pytest.mark.parametrize("jobs", [0, -1, True, 1.5, "2"])
def test_jobs_must_be_a_positive_int(jobs):
    """Issue 21: -j 0 / jobs=0 was an internal error (ValueError out of compile_variants)."""
    with pytest.raises(ValueError, match="at least 1"):
        workers.check_jobs(jobs)
    with pytest.raises(ValueError, match="at least 1"):
        workers.count(jobs)


def test_jobs_argument():
    assert workers.jobs_argument("3") == 3
    workers.check_jobs(None)
    assert workers.count(1) == 0
    with pytest.raises(argparse.ArgumentTypeError, match=r"^0: at least 1 process compiles \(leave it out for one per core"):
        workers.jobs_argument("0")
    with pytest.raises(argparse.ArgumentTypeError, match="got 'x'"):
        workers.jobs_argument("x")
