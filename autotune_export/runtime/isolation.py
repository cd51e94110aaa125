"""Tuning in a worker process (issue 24 item 5): the parent side.

A variant that faults (a CUDA illegal address poisons the context for good; a CPU dispatch's
out-of-bounds store is a segmentation fault), never finishes, or that ``iree.runtime`` refuses
to run must not take down or hang the program being tuned. As XLA's, Helion's and IREE's
tuners do, the benchmark and check entries run in a separate process (:mod:`.worker`) that
loads the same ``.vmfb`` with ``iree.runtime`` and hands back timings and verdicts; this side
starts it, gives every request a time limit, and reads the outcome:

* a reply: the timings, or the cross-check's verdict;
* the worker died (a signal, an exit): the variant that was running **faulted**; the worker is
  gone with its poisoned context, the next request starts a fresh one;
* the limit passed: the variant **hung**; the worker is killed (a running kernel cannot be
  stopped any other way, docs/limits.md) and the next request starts a fresh one;
* an error reply (the runtime raised, e.g. it cannot load or launch the variant): the variant
  **failed** with the runtime's reason; the worker is restarted too, since a CUDA error may
  leave the context unusable.

Each outcome is a :class:`VariantFailure` with ``kind`` ``"fault"``, ``"hang"`` or
``"error"`` and a one-line ``reason``. A worker that cannot start or load the module raises
:class:`WorkerUnavailable` instead (no variant's fault).

The design follows Helion's ``helion/autotuner/benchmark_worker.py`` (pytorch/helion): one
long-lived worker started with a fresh interpreter (spawn, not fork: a forked child would
inherit the parent's CUDA state), a pipe with a ``poll`` limit per job, the worker killed and
started again after a timeout, a sticky CUDA error or an unexpected exit, and
``PR_SET_PDEATHSIG`` so a worker never outlives its parent. The worker runs in a session and
process group of its own (``start_new_session``), and is killed by that group: a kill reaches
whatever the worker started, never the tuning process or the rest of its group (a test
runner's worker, a shell's job), and a Ctrl-C at the terminal reaches the tuning process only,
which then ends its worker. Here the worker is a
``subprocess`` running ``python -m autotune_export.runtime.worker`` rather than a
``multiprocessing`` spawn, which would re-import the program's ``__main__`` in the child (a
script without an ``if __name__ == "__main__"`` guard would run again); requests and replies are
JSON lines, so nothing but the (picklable) benchmarker is pickled.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import pathlib
import pickle
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable, Sequence, TypeVar

__all__ = [
    "ISOLATION_MODES",
    "ISOLATION_ENV",
    "default_isolation",
    "VariantFailure",
    "WorkerUnavailable",
    "TuningWorker",
    "Isolation",
    "measure_variants",
    "measures_in_worker",
]

#: ``AutotunedModule(isolation=...)``: ``"process"`` (every benchmark and check entry of
#: tuning runs in a worker), ``"none"`` (in this process, as before), ``"auto"`` (the default:
#: in a worker unless every variant to run already ran to completion on this device).
ISOLATION_MODES = ("auto", "process", "none")
#: Environment variable giving the isolation of an ``AutotunedModule`` (and of ``tune``)
#: created without one (a CI or a benchmark that wants ``"none"``, as triton.autotune runs).
ISOLATION_ENV = "AUTOTUNE_EXPORT_ISOLATION"


def default_isolation() -> str:
    """``$AUTOTUNE_EXPORT_ISOLATION`` when set, else ``"auto"``. Raises ValueError for a value
    that is not one of :data:`ISOLATION_MODES`."""
    value = os.environ.get(ISOLATION_ENV, "").strip() or "auto"
    if value not in ISOLATION_MODES:
        raise ValueError(f"{ISOLATION_ENV}={value!r} is not one of {', '.join(ISOLATION_MODES)}")
    return value


_T = TypeVar("_T")


class VariantFailure(Exception):
    """A variant that cannot be tuned: ``kind`` is ``"fault"`` (the worker died while it ran),
    ``"hang"`` (it ran past its time limit, ``limit_s`` seconds) or ``"error"`` (the runtime
    raised); ``reason`` says what happened, in one line; ``cut_short``: the group's time limit
    ran out first (a hang that says nothing about the variant)."""

    def __init__(self, kind: str, reason: str, limit_s: float | None = None, cut_short: bool = False):
        super().__init__(reason)
        self.kind, self.reason, self.limit_s = kind, reason, limit_s
        #: The group's time limit, not the variant's own, ended it (or it never ran): no verdict.
        self.cut_short = cut_short


class WorkerUnavailable(Exception):
    """The worker could not start or could not load the module (``reason``): no variant's
    fault; the tuning process decides what to do without it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


#: CUDA errors that leave the context unusable (the process must go): the variant faulted,
#: though the runtime answered with an error rather than dying. CUDA driver API,
#: ``cudaError_enum``; Helion's tuner treats the same ones as unrecoverable.
_STICKY = re.compile(
    r"ILLEGAL_ADDRESS|illegal memory access|LAUNCH_FAILED|unspecified launch failure|ILLEGAL_INSTRUCTION|"
    r"MISALIGNED_ADDRESS|HARDWARE_STACK_ERROR|INVALID_ADDRESS_SPACE|INVALID_PC|LAUNCH_TIMEOUT|ECC_UNCORRECTABLE",
    re.IGNORECASE,
)


#: IREE status codes of a run whose device work failed asynchronously (a failed semaphore): on
#: CUDA an illegal address reaches Python as ``RuntimeError: ABORTED`` (H200, IREE 3.13), the
#: context poisoned behind it.
_FAILED_DEVICE = re.compile(r"\b(ABORTED|DATA_LOSS)\b")


def classify_error(reason: str, detail: str = "") -> tuple[str, str]:
    """The kind and reason of a variant whose run the runtime answered with an error:
    ``reason`` (the error's first line) and ``detail`` (its full text). ``"fault"`` when it
    names a CUDA error that poisons the context (:data:`_STICKY`) or an IREE status of failed
    device work (``ABORTED``, ``DATA_LOSS``), else ``"error"`` (the runtime refused the
    variant: out of resources, say). A line of ``detail`` naming the CUDA error is added to a
    reason that lacks it."""
    text = f"{reason}\n{detail}"
    kind = "fault" if _STICKY.search(text) or _FAILED_DEVICE.search(reason) else "error"
    if not _STICKY.search(reason):
        line = next((ln.strip() for ln in detail.splitlines() if _STICKY.search(ln)), "")
        if line:
            reason = f"{reason} ({line[:200]})"
    return kind, reason


class _Died(Exception):
    pass


class _TimedOut(Exception):
    pass


def _signal_name(code: int) -> str:
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"
    what = {
        "SIGSEGV": "segmentation fault",
        "SIGBUS": "bus error",
        "SIGABRT": "aborted",
        "SIGFPE": "arithmetic fault",
        "SIGILL": "illegal instruction",
        "SIGKILL": "killed",
    }.get(name)
    return f"{name} ({what})" if what else name


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group that ``proc`` leads (started with ``start_new_session``);
    ``proc`` alone when it leads none or when its group is this process's (never killed)."""
    killpg = getattr(os, "killpg", None)
    try:
        group = os.getpgid(proc.pid) if killpg else None
    except OSError:
        group = None
    if killpg is not None and group == proc.pid and group != os.getpgrp():
        killpg(group, signal.SIGKILL)
    else:
        proc.kill()


class TuningWorker:
    """One worker process (:mod:`.worker`) that has loaded ``module`` (a .vmfb path) on IREE
    driver ``driver``; ``flush``: the name of the module's L2-flush entry, for a benchmarker
    that flushes; ``flags``: ``iree.runtime`` flags the worker parses before it creates its
    device (``iree.runtime.flags.parse_flags``: the ones the program parsed, so the worker's
    device is configured as the program's). Started by :meth:`start`; :meth:`request` sends one request and returns its
    final reply. Raises :class:`WorkerUnavailable` when it cannot start or load the module
    within ``start_timeout_s`` seconds (loading includes creating the device and, on CUDA, the
    driver's compilation of PTX)."""

    def __init__(
        self,
        module: str | os.PathLike,
        driver: str,
        *,
        flush: str | None = None,
        start_timeout_s: float = 120.0,
        sha256: str | None = None,
        flags: Sequence[str] = (),
        allocators: Sequence[str] = (),
    ):
        self.module, self.driver, self.flush, self.flags = str(module), driver, flush, list(flags)
        self.allocators = list(allocators)
        self.start_timeout_s, self.sha256 = start_timeout_s, sha256
        self.proc: subprocess.Popen | None = None
        self._fd = -1
        self._buf = b""
        self._log = None
        #: Seconds the last :meth:`start` took (process start, imports, module load).
        self.start_s = 0.0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start the worker and load the module (a no-op while it is alive)."""
        if self.alive:
            return
        self.kill()
        t0 = time.perf_counter()
        read_fd, write_fd = os.pipe()
        self._log = tempfile.TemporaryFile()
        env = dict(os.environ)
        # The worker imports what this process imports: the same autotune_export and iree.
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "autotune_export.runtime.worker", "--reply-fd", str(write_fd)],
                stdin=subprocess.PIPE,
                stdout=self._log,
                stderr=self._log,
                pass_fds=(write_fd,),
                env=env,
                close_fds=True,
                start_new_session=True,  # its own group: kill() ends that group, never ours
            )
        except OSError as err:
            os.close(read_fd)
            os.close(write_fd)
            raise WorkerUnavailable(f"cannot start the tuning worker ({err.strerror or err})") from None
        os.close(write_fd)
        self._fd, self._buf = read_fd, b""
        try:
            reply = self.request(
                {
                    "op": "load",
                    "module": self.module,
                    "driver": self.driver,
                    "flush": self.flush,
                    "flags": self.flags,
                    "allocators": self.allocators,
                },
                self.start_timeout_s,
            )
        except (_Died, _TimedOut, VariantFailure) as err:
            reason = err.reason if isinstance(err, VariantFailure) else str(err)
            self.kill()
            raise WorkerUnavailable(f"the tuning worker cannot load the module: {reason}") from None
        if self.sha256 and reply.get("sha256") != self.sha256:
            self.kill()
            raise WorkerUnavailable(f"the tuning worker loaded another module from {self.module} (it changed on disk)")
        self.start_s = time.perf_counter() - t0

    def request(self, message: dict, timeout_s: float, on_reply: Callable[[dict], None] | None = None) -> dict:
        """Send ``message`` and return its final reply (one with ``ok`` or ``error``); replies
        before it go to ``on_reply``. Raises :class:`VariantFailure` (``"error"``) for an error
        reply, ``_Died`` when the worker dies, ``_TimedOut`` (after killing the worker) when no
        final reply comes within ``timeout_s`` seconds."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _Died(self._death()) from None
        try:
            while True:
                reply = self._read(deadline, timeout_s)
                if "ok" in reply:
                    return reply
                if "error" in reply:
                    err = VariantFailure("error", reply["error"])
                    err.detail = reply.get("detail", "")
                    raise err
                if on_reply is not None:
                    on_reply(reply)
        except (KeyboardInterrupt, SystemExit):
            # Interrupted before the final reply (a Ctrl-C: the worker leads its own process
            # group, so it did not get the signal): the worker is still on this request, and
            # its late reply would answer the next one. It is ended; the next request starts
            # a fresh worker.
            self.kill()
            raise

    def _read(self, deadline: float, timeout_s: float) -> dict:
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise _TimedOut(f"no answer within {timeout_s:.3g} s")
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise _Died(self._death())
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def _death(self) -> str:
        """Why the worker is gone, in one line (its exit, and the last line it printed)."""
        code = None
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(timeout=10)
        how = (
            "the worker process was killed by " + _signal_name(code)
            if code is not None and code < 0
            else f"the worker process exited with status {code}"
            if code is not None
            else "the worker process stopped answering"
        )
        last = self._last_output()
        self.kill()
        return how + (f"; its last output: {last}" if last else "")

    def _last_output(self) -> str:
        if self._log is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0)
            lines = [ln.strip() for ln in self._log.read().decode(errors="replace").splitlines() if ln.strip()]
            return lines[-1][:300] if lines else ""
        return ""

    def kill(self) -> None:
        """End the worker (at once: a worker stuck in a kernel answers nothing): SIGKILL to
        its process group, which it leads (:meth:`start`), so what it started ends too; never
        to this process's group."""
        if self.proc is not None:
            if self.proc.poll() is None:
                with contextlib.suppress(OSError):
                    _kill_group(self.proc)
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                self.proc.wait(timeout=10)
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
        self.proc, self._fd, self._buf, self._log = None, -1, b"", None

    def close(self) -> None:
        """Ask the worker to exit, then make sure it has."""
        if self.alive:
            with contextlib.suppress(OSError):
                self.proc.stdin.write(b'{"op": "exit"}\n')
                self.proc.stdin.flush()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        self.kill()


class Isolation:
    """The tuning process's worker and its limits: ``module`` (a .vmfb path, or its bytes: then
    written to a temporary file the worker loads), ``driver``, ``sha256`` (the module's, checked
    against what the worker loaded), ``flush`` (the L2-flush entry's name or None),
    ``variant_timeout_s`` (seconds one variant's step may take: one call, one check, or the
    measurement of one variant), ``start_timeout_s`` (starting a worker and loading the
    module) and ``flags`` (``iree.runtime`` flags, :class:`TuningWorker`). The worker starts on the first request and again after a failure.

    :meth:`run` runs one step of one variant and turns every way it can go wrong into a
    :class:`VariantFailure`. Times are wall-clock seconds."""

    def __init__(
        self,
        module: str | os.PathLike | bytes,
        driver: str,
        sha256: str,
        *,
        flush: str | None = None,
        variant_timeout_s: float = 60.0,
        start_timeout_s: float = 120.0,
        flags: Sequence[str] = (),
        allocators: Sequence[str] = (),
    ):
        self._tmp = None
        if isinstance(module, (bytes, bytearray)):
            self._tmp = tempfile.mkdtemp(prefix="autotune-export-worker-")
            path = pathlib.Path(self._tmp) / "module.vmfb"
            path.write_bytes(bytes(module))
            module = path
        self.variant_timeout_s = variant_timeout_s
        self.worker = TuningWorker(
            module, driver, flush=flush, start_timeout_s=start_timeout_s, sha256=sha256, flags=flags, allocators=allocators
        )
        #: Workers started (1 + restarts) and their start times in s, for reports.
        self.starts: list[float] = []
        self._references_of, self._references = None, set()
        self.last_against: tuple[str, str] = ("default", "")

    def _ready(self) -> TuningWorker:
        if not self.worker.alive:
            self.worker.start()
            self.starts.append(self.worker.start_s)
        return self.worker

    def run(self, step: Callable[[TuningWorker, float], _T], deadline: float | None = None, *, what: str = "") -> _T:
        """``step(worker, timeout_s)`` with ``timeout_s`` = the variant limit, or what is left
        until ``deadline`` (``time.monotonic()`` seconds; the group's limit) when that is less.
        Raises :class:`VariantFailure` (``what`` names the step in the reason) or
        :class:`WorkerUnavailable`."""
        limit = self.variant_timeout_s
        group_limited = False
        if deadline is not None and deadline - time.monotonic() < limit:
            limit, group_limited = max(0.0, deadline - time.monotonic()), True
        if limit <= 0:
            raise VariantFailure(
                "hang",
                f"not run{' (' + what + ')' if what else ''}: the group's time limit had passed",
                limit_s=0.0,
                cut_short=True,
            )
        worker = self._ready()
        try:
            return step(worker, limit)
        except _TimedOut:
            which = "the group's time limit" if group_limited else f"the limit of {limit:.3g} s per variant"
            raise VariantFailure(
                "hang",
                f"{what + ' ' if what else ''}did not finish within {which} ({limit:.3g} s); the worker was killed",
                limit_s=limit,
                cut_short=group_limited,
            ) from None
        except _Died as died:
            raise VariantFailure("fault", f"{what + ': ' if what else ''}{died}") from None
        except VariantFailure as err:  # an error reply: restart, since a CUDA error may be sticky
            self.worker.kill()
            kind, reason = classify_error(err.reason, getattr(err, "detail", ""))
            raise VariantFailure(kind, f"{what + ': ' if what else ''}{reason}") from None

    # --- the steps ---------------------------------------------------------------------------
    def call(self, function: str, *args: int, deadline: float | None = None, what: str = "") -> float:
        """Run entry ``function(*args)`` once in the worker; its wall time in ms."""
        return self.run(
            lambda w, t: w.request({"op": "call", "function": function, "args": list(args)}, t)["ms"], deadline, what=what
        )

    def check(
        self,
        reference: str,
        function: str,
        deadline: float | None = None,
        what: str = "",
        reference_what: str = "",
        compare: str = "",
        accurate: str = "",
    ) -> str | None:
        """Check entry ``function``'s results against entry ``reference``'s (the default
        variant's), in the worker, on the device by the group's ``compare`` entry when it has
        one (:func:`autotune_export.runtime.checking.disagreement`): None when they agree, else
        the first difference. The
        reference runs first, in a request of its own, once per worker: a failure there is
        raised with ``.reference`` True (``reference_what`` names it). ``accurate``: the group's
        reference entry (``GroupReflection.reference``), run with it: the variant is then checked
        for accuracy against it (:func:`autotune_export.runtime.checking.baseline`)."""
        if self._references_of != self.worker.proc or reference not in self._references:
            try:
                request = {"op": "reference", "function": reference, "accurate": accurate}
                self.run(lambda w, t: w.request(request, t), deadline, what=reference_what)
            except VariantFailure as err:
                err.reference = True
                raise
            if self._references_of != self.worker.proc:
                self._references_of, self._references = self.worker.proc, set()
            self._references.add(reference)
        reply = self.run(
            lambda w, t: w.request({"op": "check", "reference": reference, "function": function, "compare": compare}, t),
            deadline,
            what=what,
        )
        #: What the last check compared with (checking.Baseline's ``against`` and ``why``).
        self.last_against = (reply.get("against", "reference" if accurate else "default"), reply.get("why", ""))
        return reply["problem"]

    def measure(
        self,
        benchmarker,
        info,
        workload: str,
        variants: list[int],
        benches: list[str],
        *,
        deadline: float | None = None,
        warmup_ms: float | None = None,
        rep_ms: float | None = None,
    ) -> dict[int, list[float]]:
        """``benchmarker.measure`` of ``variants`` (their benchmark entries ``benches``) in one
        request to the worker, with the variant limit times their number: per variant its
        samples (ms). Give one variant to learn which one failed; several when the benchmarker
        must see them together (a race interleaves them). Raises :class:`VariantFailure`."""
        payload = {
            "op": "measure",
            "benchmarker": _pickled(benchmarker),
            "info": info.to_json(),
            "workload": workload,
            "variants": list(variants),
            "benches": list(benches),
            "warmup_ms": warmup_ms,
            "rep_ms": rep_ms,
            "flushed": getattr(benchmarker, "flush", None) is not None,
        }
        done: dict[int, list[float]] = {}

        def on_reply(reply: dict) -> None:
            if "samples" in reply:
                done[reply["variant"]] = reply["samples"]

        saved = self.variant_timeout_s
        self.variant_timeout_s = saved * max(1, len(variants))
        try:
            self.run(lambda w, t: w.request(payload, t, on_reply), deadline, what="its measurement")
        finally:
            self.variant_timeout_s = saved
        return done

    def close(self) -> None:
        """End the worker and remove the temporary module file."""
        self.worker.close()
        if self._tmp is not None:
            import shutil

            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def _pickled(obj) -> str:
    """``obj`` pickled for the worker, without what cannot cross a process (a flush function
    of this process's module: the worker binds its own)."""
    import copy

    clone = copy.copy(obj)
    if getattr(clone, "flush", None) is not None:
        clone.flush = None
    return base64.b64encode(pickle.dumps(clone)).decode()


def picklable(obj) -> bool:
    """Whether ``obj`` (a benchmarker) can be measured with in the worker."""
    try:
        _pickled(obj)
    except Exception:  # noqa: BLE001 - lambdas, open handles, module functions: measured here instead
        return False
    return True


def measures_in_worker(benchmarker) -> bool:
    """Whether ``benchmarker`` takes its measurements in the worker (a :class:`WallClock`
    that can be pickled: its clock is then the worker's, next to the kernels), rather than here
    with each of its calls sent to the worker (any other benchmarker, e.g.
    :class:`~autotune_export.runtime.timing.GivenTimings`, whose log is this process's, or a
    ``WallClock`` with a ``do_bench`` that cannot be pickled: it then times the round trips)."""
    from autotune_export.runtime.timing import WallClock

    return isinstance(benchmarker, WallClock) and picklable(benchmarker)


def measure_variants(
    iso: Isolation, benchmarker, info, workload: str, ks: list[int], benches: list[str], *, deadline: float | None = None
) -> tuple[dict[int, list[float]], dict[int, VariantFailure]]:
    """Measure variants ``ks`` of group ``info`` (benchmark entries ``benches[k]``, on tuning
    workload ``workload``, its cache key) with ``benchmarker`` through the worker of ``iso``.
    Returns (per variant its samples in ms, per variant that failed its :class:`VariantFailure`);
    every variant of ``ks`` is in exactly one of them. Raises :class:`WorkerUnavailable`.

    A benchmarker that measures in the worker (:func:`measures_in_worker`) first sees every
    variant run once alone (``bench(1)``, 8 dispatches), so a fault or hang is pinned on the
    variant that caused it; then the survivors are measured in one request (together, as a race
    needs them), and only if that fails, one by one. Any other benchmarker measures here, each
    of its calls ``run(n)`` made in the worker; a failed call drops its variant and the others
    are measured again."""
    samples: dict[int, list[float]] = {}
    failed: dict[int, VariantFailure] = {}
    if measures_in_worker(benchmarker):
        alive = []
        for k in ks:
            try:
                iso.call(benches[k], 1, deadline=deadline, what="its first run")
            except VariantFailure as err:
                failed[k] = err
            else:
                alive.append(k)
        try:
            if alive:
                samples.update(iso.measure(benchmarker, info, workload, alive, [benches[k] for k in alive], deadline=deadline))
        except VariantFailure:
            for k in alive:
                if k in samples:
                    continue
                try:
                    samples.update(iso.measure(benchmarker, info, workload, [k], [benches[k]], deadline=deadline))
                except VariantFailure as err:
                    failed[k] = err
        return samples, failed
    pending = list(ks)
    while pending:
        running: list[int | None] = [None]

        def runner(k: int) -> Callable[[int], None]:
            def run(n: int) -> None:
                running[0] = k
                iso.call(benches[k], n, deadline=deadline, what="its run")

            return run

        try:
            out = benchmarker.measure(info, workload, pending, [runner(k) for k in pending])
        except VariantFailure as err:
            failed[running[0]] = err
            pending = [k for k in pending if k != running[0]]
            continue
        samples.update({k: list(s) for k, s in zip(pending, out)})
        pending = []
    return samples, failed
