"""The tuning worker: a process of its own that loads a module with ``iree.runtime`` and runs
the benchmark and check entries of the variants the tuning process gives it, so that a
variant that faults (a CUDA illegal address poisons the context; a CPU dispatch's
segmentation fault ends the process) or never finishes takes down the worker, not the program
being tuned. The parent side, which starts it, enforces the time limits and restarts it, is
:mod:`autotune_export.runtime.isolation`; run as ``python -m autotune_export.runtime.worker
--reply-fd N`` (no compiler, no Triton: iree.runtime and numpy, as the runtime itself).

Protocol: one JSON object per line. Requests come on stdin; replies go to the file descriptor
``--reply-fd`` (stdout and stderr stay free for whatever the runtime or a kernel prints). After
start the worker reads ``{"op": "load", "module": PATH, "driver": D, "flush": NAME|null,
"flags": [iree.runtime flags]}`` and answers ``{"ok": true, "sha256": ...}`` or ``{"error": REASON}``; then per request:

``{"op": "call", "function": F, "args": [int, ...]}``
    one synchronous call of entry ``F`` (a benchmark entry ``bench(n)``), waiting for its last
    result; ``{"ok": true, "ms": wall time}``.
``{"op": "reference", "function": F0, "accurate": R}``
    runs check entry ``F0`` (the default variant's) and, when ``R`` is given, the group's
    reference entry, and keeps what the variants are checked against in the worker (on the
    device; :func:`autotune_export.runtime.checking.baseline`).
``{"op": "check", "reference": F0, "function": F, "compare": C}``
    runs check entry ``F`` and compares its results with those kept of ``F0``, on the device by
    the group's compare entry ``C`` when given, by
    :func:`autotune_export.runtime.checking.disagreement`: ``{"ok": true, "problem": null}``
    or the first difference as a string. Only the verdict crosses the pipe, never the results.
``{"op": "measure", "benchmarker": B, "info": G, "workload": W, "variants": [k, ...],
"benches": [F, ...], "warmup_ms": .., "rep_ms": ..}``
    ``B`` (base64 of a pickled :class:`autotune_export.runtime.Benchmarker`) measures the
    variants' benchmark entries, together (a race interleaves them); the parent sends one
    variant per request where it must know which one failed. Streams
    ``{"variant": k, "samples": [...]}`` per variant, then ``{"ok": true}``.

A request that raises (``iree.runtime`` refuses to launch a variant, say) is answered
``{"error": REASON}`` and the worker goes on; the parent decides whether to keep it.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import hashlib
import json
import os
import pickle
import signal
import sys
import time


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (``prctl(PR_SET_PDEATHSIG)``), so a
    worker stuck in a kernel that never returns does not outlive the program being tuned (a
    stuck worker never reads the end of its stdin). Best effort: elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG


class _Worker:
    def __init__(self, reply):
        self.reply = reply
        self.functions = None
        self.flush = None
        self.references: dict = {}  # check entry of a default -> its checking.Baseline

    def send(self, message: dict) -> None:
        self.reply.write(json.dumps(message) + "\n")
        self.reply.flush()

    def load(self, req: dict) -> dict:
        import iree.runtime as rt

        from autotune_export.runtime.device import make_config

        if req.get("flags"):
            rt.flags.parse_flags(*req["flags"])
        data = open(req["module"], "rb").read()
        config = make_config(rt, req["driver"], req.get("allocators", ()))
        self.context = rt.SystemContext(config=config)
        vm_module = rt.VmModule.copy_buffer(self.context.instance, data)
        self.context.add_vm_module(vm_module)
        self.functions = self.context.modules[vm_module.name]
        if req.get("flush"):
            self.flush = self.functions[req["flush"]]
        return {"ok": True, "sha256": hashlib.sha256(data).hexdigest(), "pid": os.getpid()}

    def call(self, req: dict) -> dict:
        from autotune_export.runtime.timing import _wait

        fn = self.functions[req["function"]]
        t0 = time.perf_counter()
        _wait(fn(*req.get("args", [])))
        return {"ok": True, "ms": (time.perf_counter() - t0) * 1e3}

    def reference(self, req: dict) -> dict:
        from autotune_export.runtime.calls import as_list

        from autotune_export.runtime.checking import baseline

        default = as_list(self.functions[req["function"]]())  # kept on the device
        accurate = as_list(self.functions[req["accurate"]]()) if req.get("accurate") else None
        self.references[req["function"]] = baseline(default, accurate)
        return {"ok": True}

    def check(self, req: dict) -> dict:
        from autotune_export.runtime.calls import as_list
        from autotune_export.runtime.checking import disagreement

        ref = self.references.get(req["reference"])
        if ref is None:
            raise LookupError(f"no reference results of {req['reference']} in this worker")
        out = as_list(self.functions[req["function"]]())
        compare = self.functions[req["compare"]] if req.get("compare") else None
        problem = disagreement(ref.expected, out, compare, tolerances=ref.tolerances)
        return {"ok": True, "problem": problem, "against": ref.against, "why": ref.why}

    def measure(self, req: dict) -> dict:
        from autotune_export.contract import GroupReflection

        bench = pickle.loads(base64.b64decode(req["benchmarker"]))
        if hasattr(bench, "flush") and req.get("flushed"):
            bench.flush = self.flush
        info = GroupReflection.from_json(req["info"])
        fns = [self.functions[name] for name in req["benches"]]
        runs = [lambda n, f=f: f(n) for f in fns]
        budgets = {"warmup_ms": req.get("warmup_ms"), "rep_ms": req.get("rep_ms")}
        samples = bench.measure(info, req["workload"], req["variants"], runs, **budgets)
        for k, s in zip(req["variants"], samples):
            self.send({"variant": k, "samples": list(s)})
        return {"ok": True}


def _one_line(err: Exception) -> str:
    """An exception in one line: iree.runtime's first line up to its call-stack notes
    ("; while invoking native function ...")."""
    lines = str(err).strip().splitlines()
    text = (lines[0] if lines else "").split("; while ", 1)[0].removeprefix("Error invoking function: ")
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m autotune_export.runtime.worker")
    p.add_argument("--reply-fd", type=int, required=True)
    args = p.parse_args(argv)
    _die_with_parent()
    reply = os.fdopen(args.reply_fd, "w", encoding="utf-8")
    worker = _Worker(reply)
    ops = {
        "load": worker.load,
        "call": worker.call,
        "reference": worker.reference,
        "check": worker.check,
        "measure": worker.measure,
    }
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        if op == "exit":
            return 0
        try:
            out = ops[op](req)
        except Exception as err:  # noqa: BLE001 - the reason goes to the parent, which decides
            out = {"error": _one_line(err), "detail": str(err)[-2000:]}
        worker.send(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
