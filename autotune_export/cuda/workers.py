"""The worker processes that compile Triton variants, and starting them ahead of need.

:func:`autotune_export.cuda.triton_compile.compile_variants` compiles its misses in ``jobs``
processes: itself and ``jobs - 1`` workers started with the "spawn" method. A spawned worker
needs about 0.4 s (a Python start, Triton and this toolkit imported) before its first variant.
:func:`start` starts them before the caller knows it has misses, so that this start-up runs
while the caller does its own work (the ``autotune-export`` command starts them when it has
read its input, and parses it meanwhile); the next ``compile_variants`` with the same ``jobs``
then uses them, and so does every later one, until :func:`stop`.

This module imports neither Triton (the command calls :func:`start` before it imports
Triton; the workers and a thread import it while they start) nor
:mod:`~autotune_export.cuda.triton_compile`, which uses it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # imported where a pool is made (new_pool): most commands make none
    import concurrent.futures

__all__ = [
    "start",
    "stop",
    "standby",
    "without_main",
    "count",
    "check_jobs",
    "jobs_argument",
    "new_pool",
    "warm_up",
    "NO_COMPILE_ENV",
]

#: :data:`autotune_export.cuda.triton_compile.NO_COMPILE_ENV` (named here too, so that this
#: module needs no Triton): while it is set, no compilation happens, and :func:`start` starts
#: nothing.
NO_COMPILE_ENV = "AUTOTUNE_EXPORT_NO_TRITON_COMPILE"

# (number of workers, pool) of the workers start() started, or None; the thread warming up
# this process meanwhile.
_standby: tuple[int, concurrent.futures.ProcessPoolExecutor] | None = None
_warming: threading.Thread | None = None


def check_jobs(jobs: int | None) -> None:
    """The one rule for a number of compiling processes (``-j``/``--jobs``, the ``jobs`` of
    ``compile_variants`` and of the materialize pass): a positive int, or None for one per
    core. Raises ValueError (one line) otherwise: 0 is not "one per core" (leave it out)."""
    if jobs is None:
        return
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise ValueError(f"jobs = {jobs!r}: expected a whole number of processes, at least 1")
    if jobs < 1:
        raise ValueError(
            f"jobs = {jobs}: at least 1 process compiles (leave it out for one per core, {os.cpu_count() or 1} here)"
        )


def jobs_argument(text: str) -> int:
    """``-j``/``--jobs`` as an argparse ``type``: :func:`check_jobs` of the int ``text``;
    argparse.ArgumentTypeError with its message otherwise."""
    import argparse

    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, at least 1; got {text!r}") from None
    try:
        check_jobs(jobs)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err).replace(f"jobs = {jobs}: ", f"{jobs}: ")) from None
    return jobs


def count(jobs: int | None) -> int:
    """How many workers ``jobs`` compiling processes use: ``jobs - 1`` (this process is one of
    them); ``jobs`` None means one per core (os.cpu_count()). Raises ValueError for anything
    :func:`check_jobs` refuses."""
    check_jobs(jobs)
    return max(0, (jobs or os.cpu_count() or 1) - 1)


@contextlib.contextmanager
def without_main() -> Iterator[None]:
    """While in here, the processes the "spawn" method starts do not run this process's
    ``__main__`` again: multiprocessing re-imports it in every child (as ``__mp_main__``) to find
    functions defined there, which for ``autotune-export`` is the whole command, its front end and
    passes (0.2-0.4 s per worker). Nothing a worker runs lives in ``__main__``: the compile
    function is found in :mod:`autotune_export.cuda.triton_compile`, kernels by their file."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")  # no __spec__, no __file__
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def new_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of ``workers`` processes, started with the "spawn" method (Triton's settings are
    process-wide and a forked MLIR context is not safe). Processes start when work is
    submitted: submit inside :func:`without_main`. Each worker ends with this process, however
    it ends (SIGTERM, SIGKILL, a crash): :func:`_end_with_parent`."""
    import concurrent.futures
    import multiprocessing

    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_end_with_parent,
        initargs=(os.getpid(),),
    )


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _end_with_parent(parent: int) -> None:
    """The first thing a worker runs: it ends when ``parent`` (the process that started it)
    does. Left alone it would not: it waits for work on a queue whose writing end it holds
    itself, so a parent killed by a signal (no ``atexit``, no pool shutdown) leaves it waiting
    for ever. On Linux the kernel sends it SIGKILL when the parent ends (``prctl``
    ``PR_SET_PDEATHSIG``; the parent's thread that started it, the one submitting work, lives
    as long as the pool does); elsewhere a daemon thread checks the parent every second. A
    worker whose parent is gone already ends at once."""
    import signal

    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # ended before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), name="autotune-export-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def warm_up() -> None:
    """Compute now what the first ``triton.compile`` of a process computes before anything
    else: Triton's key of its own installation (``triton.runtime.cache.triton_key``, 3.6 to
    3.9: a sha256 over its compiler sources and the 500 MB ``libtriton.so``, about 0.5 s,
    memoized per process). Imports Triton; anything missing is skipped (another release's
    first compile computes what it needs)."""
    try:
        from triton.runtime.cache import triton_key

        triton_key()
    except Exception:
        pass


def _ready() -> None:
    """The first thing a worker started by :func:`start` runs: its start-up, so that its first
    variant does not wait for it: :func:`warm_up` (the compile function's module,
    :mod:`autotune_export.cuda.triton_compile`, imports no IREE)."""
    warm_up()


def start(jobs: int | None = None) -> None:
    """Start now the :func:`count` workers that ``compile_variants(..., jobs=jobs)`` would
    start when it finds misses. They wait for variants; :func:`stop` ends them (the pool also
    ends at exit). This process, which compiles too, warms up in a thread meanwhile
    (:func:`warm_up`: Triton imported, then file reads and hashing, which release the GIL);
    with one job, that is all. Nothing happens when as many are started already, or while
    :data:`NO_COMPILE_ENV` is set."""
    global _standby, _warming
    n = count(jobs)
    if os.environ.get(NO_COMPILE_ENV) or (_standby is not None and _standby[0] == n):
        return
    stop()
    if n > 0:
        pool = new_pool(n)
        with without_main():
            for _ in range(n):
                pool.submit(_ready)
        _standby = (n, pool)
    _warming = threading.Thread(target=warm_up, name="autotune-export-warm-up", daemon=True)
    _warming.start()


def standby(workers: int) -> concurrent.futures.ProcessPoolExecutor | None:
    """The pool :func:`start` started when it has ``workers`` workers, else None."""
    return _standby[1] if _standby is not None and _standby[0] == workers else None


def stop() -> None:
    """End the workers :func:`start` started, after the variants they are compiling."""
    global _standby, _warming
    if _warming is not None:
        _warming.join()  # not left running at exit
        _warming = None
    if _standby is not None:
        pool, _standby = _standby[1], None
        pool.shutdown(wait=True, cancel_futures=True)
