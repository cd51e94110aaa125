"""Replay a recording here (no GPU): re-run every case on CPU tensors, intercept the same
launches in the same order, export each through ``autotune_export.interop.launch.launch_to_mlir``
and build its ``.vmfb`` for ``--target``.

    .venv-corpus/bin/python benchmarks/corpus/replay.py RECORDING [--target sm_90] [--cases a,b]

RECORDING: the folder record.py wrote (index.json), or one holding its ``corpus-*.tar`` parts.
Writes ``.gpu_corpus/`` (git-ignored): ``recording/`` (the recording, unpacked), per launch
``CASE/N.mlir`` and ``CASE/N.vmfb``, and ``manifest.json``: per launch its status
(``as written``, ``workaround`` with which, ``refused`` with the diagnostic), the vmfb, and which
recorded arrays are the host function's arguments and results, in order.

Generic: nothing here knows a kernel. Per launch it gives ``launch_to_mlir`` what a user would:
the kernel object, grid and arguments of the intercepted launch (keywords as given), and which
tensor parameters the kernel writes: those its TTIR stores through, each ``inplace`` when the
TTIR also loads from it, else an ``output`` (a new buffer). The TTIR is the GPU's (recorded by
record.py), else (a dry run) compiled here for the recorded specialization
(``autotune_export.cuda.triton_compat.compile_ast``). The replayed launch must be the recorded
one (kernel, tensor shapes and dtypes, scalars); after it, the tensors it wrote get their
recorded contents, so that the case goes on as it did on the GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys
import time
import traceback

os.environ.pop("TRITON_INTERPRET", None)  # the kernels must be JITFunctions, as in the export
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402


class Mismatch(Exception):
    """The replayed launch is not the recorded one."""


def _scalar_equal(rec: dict, now: dict) -> bool:
    if rec.get("kind") != now.get("kind"):
        return False
    a, b = rec.get("value"), now.get("value")
    if rec["kind"] == "float":
        return a == b or abs(a - b) <= 1e-6 * max(1.0, abs(a))
    return a == b


def compare(recorded: dict, kernel, values: dict) -> None:
    """Raise Mismatch naming the first difference between the recorded launch and this one."""
    fn = common.python_function(kernel)
    if fn.__name__ != recorded["kernel"]["function"]:
        raise Mismatch(f"kernel {fn.__name__}, recorded {recorded['kernel']['function']}")
    for p in recorded["params"]:
        if p["kind"] == "default":
            continue
        now = common.describe_value(values.get(p["name"]))
        if p["kind"] == "tensor":
            if now.get("kind") != "tensor" or (now["dtype"], now["shape"]) != (p["dtype"], p["shape"]):
                raise Mismatch(f"parameter {p['name']}: {now.get('dtype')}{now.get('shape')}, recorded {p['dtype']}{p['shape']}")
        elif not _scalar_equal(p, now):
            raise Mismatch(f"parameter {p['name']}: {now.get('value', now['kind'])!r}, recorded {p.get('value', p['kind'])!r}")


def local_access(kernel, values: dict, recorded: dict) -> tuple[list[str], list[str], bool]:
    """(written, read, atomics) tensor parameters by the TTIR compiled here for the recorded launch."""
    from autotune_export.cuda import triton_compat as compat
    import torch

    fn = common.python_function(kernel)
    jit = kernel
    while not hasattr(jit, "params"):
        jit = jit.fn
    final = recorded.get("final_constexprs") or {}
    signature, constexprs, runtime = {}, {}, []
    for name, is_constexpr, _ in common.parameters(fn):
        v = values.get(name)
        if is_constexpr:
            signature[name] = "constexpr"
            d = final.get(name)
            constexprs[name] = common.tl_value(d) if d is not None else (v.value if hasattr(v, "value") else v)
        elif v is None:
            signature[name] = "constexpr"
            constexprs[name] = None
        elif isinstance(v, torch.Tensor):
            signature[name] = "*" + _TRITON.get(common.dtype_name(v), common.dtype_name(v))
            runtime.append(name)
        elif isinstance(v, bool):
            signature[name] = "i1"
            runtime.append(name)
        elif isinstance(v, int):
            signature[name] = "i32" if -2**31 <= v < 2**31 else "i64"
            runtime.append(name)
        else:
            signature[name] = "fp32"
            runtime.append(name)
    opts = {"num_warps": int(common.tl_value(final.get("option:num_warps", {"kind": "int", "value": 4}))),
            "num_stages": int(common.tl_value(final.get("option:num_stages", {"kind": "int", "value": 3})))}
    compiled = compat.compile_ast(jit, signature, constexprs, [], 90, opts)
    written, read, atomics = common.ttir_access(compiled.asm["ttir"])
    return sorted(runtime[i] for i in written), sorted(runtime[i] for i in read), atomics


try:  # strided views (issue 23 item 1): the storage span a view's launch reaches
    from autotune_export.cuda.launch_model import storage_span as _storage_span
except ImportError:  # an autotune-export without them: such launches are refused by this harness
    _storage_span = None

_TRITON = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int8": "i8", "int16": "i16",
           "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


_WATCHED: dict[type, type] = {}


def _watch_best_config(kernel, chosen, entry: dict) -> None:
    """Set ``kernel.best_config`` to ``chosen`` and refuse the launch ``entry`` when code
    outside Triton reads it back. A library that reads the autotuner's ``best_config`` after
    a launch (attorch sizes its reduction by ``best_config.kwargs['BLOCK_SIZE']``) makes what
    the launch's outputs mean depend on the config that ran; an exported module picks its
    variant inside the program (tuned at run time, per workload) and hands no config back to
    host code outside it, so the launch is refused, naming the line that reads it. The
    kernel's class becomes a subclass (one per class) whose ``best_config`` property does the
    watching; the attribute behaves as before otherwise."""
    cls = type(kernel)
    watched = _WATCHED.get(cls) or next((w for w in _WATCHED.values() if w is cls), None)
    if watched is None:
        triton_dir = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules[cls.__module__].__file__)))

        def get(self):
            value, watching = self.__dict__.get("_corpus_best", (None, None))
            frame = sys._getframe(1)
            where = os.path.abspath(frame.f_code.co_filename)
            if watching is not None and watching.get("status") != "refused" and not where.startswith(triton_dir + os.sep):
                try:
                    shown = os.path.relpath(where, common.SOURCES)
                except ValueError:
                    shown = where
                name = common.python_function(self).__name__
                watching.update(status="refused", reason=(
                    f"{shown}:{frame.f_lineno} reads {name}.best_config after the launch: the library uses the "
                    "config that ran to read the launch's outputs, and an exported module picks its variant "
                    "inside the program, handing no config back to code outside it"))
            return value

        def set_(self, value):
            self.__dict__["_corpus_best"] = (value, None)

        watched = type(cls.__name__, (cls,), {"best_config": property(get, set_)})
        _WATCHED[cls] = watched
    kernel.__class__ = watched
    kernel.__dict__.pop("best_config", None)
    kernel.__dict__["_corpus_best"] = (chosen, entry)


class Replayer:
    def __init__(self, rec_dir: pathlib.Path, out: pathlib.Path, target: str):
        self.rec_dir, self.out, self.target = rec_dir, out, target
        self.expected: list[dict] = []
        self.results: list[dict] = []
        self.position = 0
        self.case: str | None = None
        self.paused = lambda: False  # cases.recording_paused once cases is imported

    def install(self) -> None:
        from triton.runtime.jit import KernelInterface

        original = KernelInterface.__getitem__
        me = self

        def getitem(kernel, grid):
            if me.case is None or me.paused():
                return original(kernel, grid)
            return lambda *args, **kwargs: me.launch(kernel, grid, args, kwargs)
        KernelInterface.__getitem__ = getitem

    def launch(self, kernel, grid, args, kwargs):
        import torch

        fn = common.python_function(kernel)
        if self.position >= len(self.expected):
            self.results.append({"case": self.case, "index": self.position, "kernel": fn.__name__,
                                 "status": "refused", "reason": "replay makes more launches than the recording"})
            self.position += 1
            return None
        recorded = self.expected[self.position]
        self.position += 1
        values, _ = common.bind(fn, args, kwargs)
        entry = {"case": self.case, "index": recorded["index"], "kernel": f"{recorded['kernel']['file']}:{fn.__name__}",
                 "wrappers": recorded["kernel"]["wrappers"], "notes": []}
        self.results.append(entry)
        arrays = common.load_arrays(self.rec_dir, recorded)
        try:
            compare(recorded, kernel, values)
            self._export(entry, kernel, grid, args, kwargs, values, recorded)
        except Mismatch as e:
            entry.update(status="refused", reason=f"replay differs from the recording: {e}")
        except Exception as e:  # noqa: BLE001 - launch_to_mlir's refusals and anything else
            entry.update(status="refused", reason=f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-3000:])
        self._autotuner_state(kernel, recorded, entry)
        # The case goes on with what the GPU computed.
        for p in recorded["changed"]:
            t = values.get(p)
            if isinstance(t, torch.Tensor) and f"after__{p}" in arrays:
                t.copy_(common.from_numpy(arrays[f"after__{p}"], common.dtype_name(t)).reshape(t.shape))
        return None

    @staticmethod
    def _autotuner_state(kernel, recorded, entry) -> None:
        """An Autotuner keeps the config it ran as ``best_config`` (libraries read it after the
        launch, e.g. to size a reduction): the recorded one, found by its values. A read of it
        by the library refuses the launch (:func:`_watch_best_config`)."""
        configs = getattr(kernel, "configs", None)
        final = recorded.get("final_constexprs") or {}
        if not configs:
            return
        def matches(c) -> bool:
            if any(common.tl_value(final.get(k, {"kind": "other"})) != v for k, v in c.kwargs.items()):
                return False
            return all(common.tl_value(final[f"option:{o}"]) == getattr(c, o) for o in ("num_warps", "num_stages")
                       if f"option:{o}" in final and getattr(c, o, None) is not None)
        chosen = next((c for c in configs if matches(c)), configs[0])
        _watch_best_config(kernel, chosen, entry)

    def _export(self, entry, kernel, grid, args, kwargs, values, recorded) -> None:
        import torch

        from autotune_export.interop.launch import launch_to_mlir

        tensors = [p for p, v in values.items() if isinstance(v, torch.Tensor)]
        strided = [p for p in tensors if not values[p].is_contiguous() and values[p].numel() > 0]
        if strided and _storage_span is None:
            raise Mismatch(f"non-contiguous tensor argument(s) {', '.join(strided)}: this autotune-export has no "
                           "strided views (launch_model.storage_span)")
        if "ttir_written" in recorded:
            written, read, source = recorded["ttir_written"], recorded["ttir_read"], "the GPU's TTIR"
            atomics = recorded.get("ttir_atomics", False)
        else:
            written, read, atomics = local_access(kernel, values, recorded)
            source = "TTIR compiled here"
        missed = [p for p in recorded["changed"] if p not in written]
        if missed:
            entry["notes"].append(f"changed on the GPU but not written by {source}: {', '.join(missed)}")
            written = sorted(set(written) | set(missed))
        written = [p for p in tensors if p in written]
        inplace = [p for p in written if p in read]
        outputs = [p for p in written if p not in read]
        entry.update(written=written, inplace=inplace, outputs=outputs, access_from=source)
        folder = self.out / self.case
        folder.mkdir(parents=True, exist_ok=True)
        mlir = folder / f"{recorded['index']}.mlir"
        launch_to_mlir(kernel, grid, *args, outputs=outputs, inplace=inplace, name="main", output=mlir,
                       target=self.target, **kwargs)
        names = [p for p in tensors]  # kernel parameter order (bind keeps the def's order for positionals)
        order = [n for n, _, _ in common.parameters(common.python_function(kernel))]
        names.sort(key=order.index)
        host_in = [p for p in names if p not in written or p in inplace] if inplace else [p for p in names if p not in written]
        results = [p for p in names if p in written]
        changed = set(recorded["changed"])
        spans = self._spans(folder / f"{recorded['index']}.spans.npz", recorded, values, strided, changed)

        def where(p: str, array: str) -> dict:
            if p in spans:  # a strided view: the module takes (returns) the storage it spans
                return {"array": f"span_{array}", "file": spans[p]["file"], "span": spans[p]["span"]}
            return {"array": array}

        entry.update(mlir=str(mlir.relative_to(self.out)),
                     inputs=[{"param": p, **where(p, f"before__{p}"), "dtype": common.dtype_name(values[p])} for p in host_in],
                     results=[{"param": p, **where(p, f"after__{p}" if p in changed else f"before__{p}"),
                               "dtype": common.dtype_name(values[p]), "changed": p in changed} for p in results],
                     data=recorded["data"], atomics=atomics)
        if spans:
            entry["notes"].append("strided views passed as the storage they span: " + ", ".join(
                f"{p} ({spans[p]['span']})" for p in spans))

    def _spans(self, path: pathlib.Path, recorded: dict, values: dict, strided: list[str], changed: set) -> dict:
        """Per strided tensor parameter: the arrays the exported module takes and returns for it,
        the storage the view spans in the shape of its span (launch_model.storage_span: the
        module's argument), written to ``path`` (``span_before__P``, ``span_after__P``):
        ``{P: {"file": path relative to the output folder, "span": kind}}``. From the recorded
        storage (record.py's span arrays) when there; else, for a view without gaps (a
        permutation such as ``b.t()``, a broadcast), scattered from the recorded contents through
        the view's strides, which then reach every element of the span. Raises Mismatch for a
        view with gaps recorded without its storage."""
        if not strided:
            return {}
        import numpy as np

        arrays = common.load_arrays(self.rec_dir, recorded)
        out, kinds = {}, {}
        for p in strided:
            t = values[p]
            span = _storage_span(tuple(t.shape), tuple(t.stride()))
            kinds[p] = span.kind
            for when in ("before", "after"):
                if when == "after" and p not in changed:
                    continue
                recorded_span = arrays.get(f"span_{when}__{p}")
                if recorded_span is None:
                    if span.kind not in ("permuted", "broadcast"):
                        raise Mismatch(f"argument {p} is a {span.kind} view ({span.describe()}) and the recording "
                                       "holds its contents only, not the storage it spans (record.py keeps it since "
                                       "4e16538)")
                    logical = arrays[f"{when}__{p}"]
                    n = 1 + sum((d - 1) * st for d, st in zip(t.shape, t.stride()))
                    flat = np.zeros(n, dtype=logical.dtype)
                    view = np.lib.stride_tricks.as_strided(flat, logical.shape, [st * flat.itemsize for st in t.stride()])
                    view[...] = logical
                    recorded_span = flat
                out[f"span_{when}__{p}"] = recorded_span.reshape(span.shape)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **out)
        return {p: {"file": str(path.relative_to(self.out)), "span": kinds[p]} for p in strided}

    def build(self, entry) -> None:
        """``.mlir`` -> ``.vmfb`` (the CLI's pipeline, in this process)."""
        from autotune_export.passes import DEFAULT_PIPELINES, PassContext
        from autotune_export.support.diagnostics import DiagnosticError
        from autotune_export.tools.cli import compile_source, iree_compile, read_source

        mlir = self.out / entry["mlir"]
        vmfb = mlir.with_suffix(".vmfb")
        try:
            source = read_source(str(mlir))
            ctx = PassContext(source=source)
            # Compile in this process when the harness changed Triton here (its patches do not
            # reach the toolkit's spawned compile workers, which import the kernel file afresh).
            jobs = {"jobs": 1} if common.DROPPED_AUTOTUNE_NAMES else {}
            text = compile_source(source, DEFAULT_PIPELINES["iree"], ctx, target=self.target, **jobs)
            iree_compile(text, self.target, str(vmfb))
            entry["vmfb"] = str(vmfb.relative_to(self.out))
            entry.setdefault("status", "as written")
        except DiagnosticError as e:
            entry.update(status="refused", reason=str(e))
        except Exception as e:  # noqa: BLE001
            entry.update(status="refused", reason=f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-3000:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recording", nargs="+", help="one recording, or several of one GPU (record.py --cases ...) "
                    "whose cases are replayed together, in the order given")
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--out", default=str(common.GPU_CORPUS))
    ap.add_argument("--cases", default="")
    ap.add_argument("--update", action="store_true", help="keep the manifest's other cases (replay some again, "
                    "e.g. after a fix, with --cases)")
    a = ap.parse_args(argv)
    out = pathlib.Path(a.out)
    previous = json.loads((out / "manifest.json").read_text()) if a.update and (out / "manifest.json").is_file() else None
    rec_dir = out / "recording"
    shutil.rmtree(rec_dir, ignore_errors=True)
    index = common.merge_recordings([common.unpack(r, out / f"recording.part{k}") for k, r in enumerate(a.recording)],
                                    rec_dir)
    for k in range(len(a.recording)):
        shutil.rmtree(out / f"recording.part{k}", ignore_errors=True)
    env = index["environment"]
    common.add_sources()
    common.tolerate_unknown_autotune_names()
    capability = tuple(env.get("capability", (9, 0)))
    if common.answer_cuda_queries(capability):
        note = f"torch.cuda.get_device_capability() answered {capability} (the recorded GPU's)"
    else:
        note = None
    import cases

    rep = Replayer(rec_dir, out, a.target)
    rep.paused = cases.recording_paused
    rep.install()
    wanted = [w for w in a.cases.split(",") if w]
    t0 = time.time()
    for case in index["cases"]:
        if wanted and not any(w in case["name"] for w in wanted):
            continue
        if "error" in case:
            rep.results.append({"case": case["name"], "index": None, "status": "not recorded", "reason": case["error"]})
            continue
        rep.case, rep.expected, rep.position = case["name"], case["launches"], 0
        first = len(rep.results)
        print(f"case {case['name']}: {len(case['launches'])} launch(es)", flush=True)
        failure = None
        fn = cases.CASES[case["name"]]
        answers = common.device_answers(fn, capability)
        answered = type(answers).__name__ != "nullcontext"
        if answered:
            from autotune_export.cuda.stub_driver import device_properties

            answered_sms = device_properties(int(capability[0]) * 10 + int(capability[1]))["multiprocessor_count"]
        try:
            with answers:
                if getattr(fn, "generated", False):  # kernels written at run time: the recorded files
                    cases.relaunch_generated(case["launches"], rec_dir)
                else:
                    fn("cpu")
        except Exception as e:  # noqa: BLE001
            failure = (f"the case failed on the CPU before this launch: {type(e).__name__}: {e}",
                       traceback.format_exc()[-3000:])
        rep.case = None
        for missing in case["launches"][rep.position:]:
            rep.results.append({"case": case["name"], "index": missing["index"], "status": "refused",
                                "kernel": f"{missing['kernel']['file']}:{missing['kernel']['function']}",
                                "reason": failure[0] if failure else "the replay made fewer launches than the recording",
                                **({"traceback": failure[1]} if failure else {})})
        for entry in rep.results[first:]:
            if "mlir" in entry and "status" not in entry:
                rep.build(entry)
            if "status" not in entry:  # the case stopped inside this launch's interception
                entry.update(status="refused", reason=failure[0] if failure else "the launch was not exported",
                             **({"traceback": failure[1]} if failure else {}))
            if note and "attorch" in entry.get("kernel", ""):
                entry.setdefault("notes", []).append(note)
            if answered:
                entry.setdefault("notes", []).append(
                    f"the case ran with Triton's driver and torch.cuda answering for sm_{capability[0]}{capability[1]} "
                    f"(autotune_export.cuda.stub_driver.answering_for: {answered_sms} SMs"
                    + (f", the recorded {env.get('gpu')} has {env['sms']}" if env.get("sms") not in (None, answered_sms) else "")
                    + "): its library asks the GPU")
            print(f"  #{entry['index']} {entry.get('kernel', '')}: {entry['status']}"
                  + (f" ({entry['reason'][:300]})" if entry.get("reason") else "")
                  + (f" inplace={','.join(entry['inplace'])}" if entry.get("inplace") else ""), flush=True)
    launches = rep.results
    if a.update and previous is not None:  # the other cases as they were, in the recording's order
        replayed = {r["case"] for r in rep.results}
        kept = [r for r in previous["launches"] if r["case"] not in replayed]
        order = {c["name"]: k for k, c in enumerate(index["cases"])}
        launches = sorted(kept + rep.results, key=lambda r: (order.get(r["case"], len(order)), r.get("index") or 0))
    manifest = {"format": 1, "target": a.target, "recording": str(rec_dir.relative_to(out)), "environment": env,
                "seconds": round(time.time() - t0, 1), "launches": launches}
    if common.DROPPED_AUTOTUNE_NAMES:
        manifest["dropped_autotune_names"] = [list(x) for x in common.DROPPED_AUTOTUNE_NAMES]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    counts: dict[str, int] = {}
    for r in launches:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"replay: {len(launches)} launches: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
          + f" -> {out / 'manifest.json'} ({manifest['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
