"""Record the corpus: run every case on the GPU and keep, per Triton launch, its inputs and
outputs.

    python3 benchmarks/corpus/record.py --out $OUT --pack            # on the GPU machine
    TRITON_INTERPRET=1 python benchmarks/corpus/record.py --device cpu --out /tmp/rec   # dry run

Needs torch and Triton only (no autotune_export compiler, no iree; the TTIR analysis of
autotune_export.cuda.ttir is used when it imports). Every launch ``kernel[grid](*args,
**kwargs)`` is seen at Triton's ``KernelInterface.__getitem__`` (the object the library
indexes: ``JITFunction``, ``Autotuner``, ``Heuristics``); before it runs every tensor argument
is copied to the host, after it (``torch.cuda.synchronize()``) again. The innermost
``JITFunction.run`` of the launch (after the autotuner's choice and the heuristics) gives the
constexpr values the kernel ran with and, on the GPU, its compiled kernel, whose TTIR says
which pointers the kernel writes and reads (``autotune_export.cuda.ttir``).

Writes into ``--out``: ``index.json`` (versions, device, per case its launches: kernel file and
function, wrappers, every argument described, launch options, final constexprs, grid, which
tensors changed, the TTIR's written/read parameters) and ``launches/CASE/N.npz`` (``before__P``
for every tensor argument P, ``after__P`` for those that changed; for a strided view also
``span_before__P`` / ``span_after__P``, the storage it spans: common.storage_slice). With ``--pack`` the launches
go into ``corpus-NNN.tar`` parts of at most ``--part-mib`` MiB (index.json in the first one
too), which is what comes back from a GPU machine (at most 8 files). ``--device cpu`` is the dry
run (Triton's interpreter: set TRITON_INTERPRET=1; autotuners take their first config there,
as nothing can be timed).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tarfile
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent.parent))  # autotune_export (its TTIR analysis), when present

import numpy as np  # noqa: E402

import common  # noqa: E402


class Recorder:
    """Intercepts launches while a case runs and writes what they did."""

    def __init__(self, out: pathlib.Path, device: str):
        self.out, self.device = out, device
        self.case: str | None = None
        self.launches: list[dict] = []
        self.inner: tuple | None = None  # (jit, args, kwargs, return value) of the last JITFunction.run
        self.depth = 0
        self.paused = lambda: False  # cases.recording_paused once cases is imported

    # --- patches --------------------------------------------------------------------------
    def install(self) -> None:
        from triton.runtime import jit as jit_mod
        from triton.runtime.jit import JITFunction, KernelInterface

        rec = self
        original_getitem = KernelInterface.__getitem__

        def getitem(kernel, grid):
            launcher = original_getitem(kernel, grid)
            if rec.case is None or rec.depth or rec.paused():
                return launcher

            def launch(*args, **kwargs):
                return rec.launch(kernel, grid, launcher, args, kwargs)
            return launch

        KernelInterface.__getitem__ = getitem
        runners = [JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction
            runners.append(InterpretedFunction)
        except ImportError:  # pragma: no cover
            pass
        for cls in runners:
            original_run = cls.run

            def run(self, *args, _orig=original_run, **kwargs):
                ret = _orig(self, *args, **kwargs)
                rec.inner = (self, args, kwargs, ret)
                return ret
            cls.run = run
        del jit_mod
        self._install_inductor()
        if self.device == "cpu":
            # Dry run: nothing can be timed in the interpreter; each autotuner takes its first
            # config (all configs "take" the same time, the first one wins).
            from triton.runtime.autotuner import Autotuner

            Autotuner._bench = lambda self, *args, config, **meta: [1.0, 1.0, 1.0]

    def _install_inductor(self) -> None:
        """Inductor launches the kernels it generated through ``CachingAutotuner.run`` and its own
        launchers, not through Triton's ``kernel[grid]``. While a case runs (on a GPU), ``run``
        autotunes as Inductor does (``precompile``, ``autotune_to_one_config``), then launches
        through Triton's front door with the config it chose: ``self.fn[grid](*args,
        **config.kwargs, num_warps=, num_stages=)``, the arguments and grid from Inductor's
        own ``_interpret_args_grid`` (what it does under TRITON_INTERPRET=1, where ``run``
        takes that path itself: the dry run). That launch is recorded like any other."""
        try:
            from torch._inductor.runtime.triton_heuristics import CachingAutotuner
        except ImportError:  # pragma: no cover - a torch without Inductor
            return
        original = CachingAutotuner.run
        rec = self

        def run(self, *args, stream=None, benchmark_run=False, **kwargs):
            if (rec.case is None or benchmark_run or getattr(self, "triton_interpret", False)
                    or not hasattr(self, "_interpret_args_grid")):
                return original(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
            if not self.launchers:
                self.precompile()
            if len(self.launchers) > 1:
                self.autotune_to_one_config(*args, **kwargs)
            config = self.launchers[0].config
            kernel_args, grid = self._interpret_args_grid(args, config)
            options = {"num_warps": config.num_warps, "num_stages": config.num_stages}
            return self.fn[grid](*kernel_args, **kwargs, **config.kwargs, **options)

        CachingAutotuner.run = run

    # --- one launch -----------------------------------------------------------------------
    def launch(self, kernel, grid, launcher, args, kwargs):
        import torch

        fn = common.python_function(kernel)
        values, options = common.bind(fn, args, kwargs)
        tensors = {p: v for p, v in values.items() if isinstance(v, torch.Tensor)}
        before = {p: common.to_numpy(t) for p, t in tensors.items()}
        # strided views: also the storage they span (what an export takes as the argument)
        spans = {p: common.storage_slice(t) for p, t in tensors.items()}
        spans = {p: s for p, s in spans.items() if s is not None}
        span_before = {p: common.to_numpy(s) for p, s in spans.items()}
        self.inner = None
        self.depth += 1
        not_run = None
        try:
            ret = launcher(*args, **kwargs)
        except Exception as e:
            # Dry run: Triton's interpreter lacks some of what kernels use (libdevice calls);
            # the launch is kept, not run, so that the replay still sees it.
            if self.device != "cpu" or type(e).__name__ != "InterpreterError":
                raise
            ret, not_run = None, f"{type(e).__name__}: {e}"[:300]
        finally:
            self.depth -= 1
        if self.device == "cuda":
            torch.cuda.synchronize()
        after = {p: common.to_numpy(t) for p, t in tensors.items()}
        changed = [p for p in tensors if not common.same_bits(before[p], after[p])]
        span_after = {p: common.to_numpy(spans[p]) for p in changed if p in spans}
        index = len(self.launches)
        final = self._final_constexprs(fn)
        entry = {
            "case": self.case,
            "index": index,
            "kernel": {**self._kernel_file(fn), "function": fn.__name__, "wrappers": common.wrappers(kernel)},
            "params": [{"name": n, "constexpr": c, **(common.describe_value(values[n]) if n in values else {"kind": "default"})}
                       for n, c, _ in common.parameters(fn)],
            "options": {k: common.describe_value(v) for k, v in options.items()},
            "final_constexprs": final,
            "grid": self._grid(grid, values, final),
            "changed": changed,
            "aliases": self._aliases(tensors),
            "data": f"launches/{self.case}/{index}.npz",
        }
        if not_run:
            entry["not_run"] = not_run
        entry.update(self._ttir_access())
        arrays = {f"before__{p}": a for p, a in before.items()}
        arrays.update({f"after__{p}": after[p] for p in changed})
        arrays.update({f"span_before__{p}": a for p, a in span_before.items()})
        arrays.update({f"span_after__{p}": a for p, a in span_after.items()})
        path = self.out / entry["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **arrays)
        entry["bytes"] = path.stat().st_size
        self.launches.append(entry)
        print(f"  launch {self.case}#{index} {fn.__name__} ({'/'.join(entry['kernel']['wrappers'])}) "
              f"grid={entry['grid']} changed={','.join(changed) or '-'} {entry['bytes'] // 1024} KiB"
              + (f" NOT RUN ({not_run})" if not_run else ""), flush=True)
        return ret

    def _kernel_file(self, fn) -> dict:
        """Where the kernel's code is: a path under the corpus' sources, or (a file written at
        run time, e.g. by Inductor) a copy kept with the recording, ``generated/NAME``
        (``source``)."""
        path = os.path.abspath(fn.__code__.co_filename)
        if path.startswith(str(common.SOURCES) + os.sep) or not os.path.isfile(path):
            return {"file": os.path.relpath(path, common.SOURCES)}
        kept = f"generated/{os.path.basename(path)}"
        target = self.out / kept
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(pathlib.Path(path).read_bytes())
        return {"file": kept, "source": kept, "written_at": path}

    def _final_constexprs(self, fn) -> dict | None:
        """The constexpr values the innermost JITFunction.run was called with."""
        if self.inner is None:
            return None
        _, args, kwargs, _ = self.inner
        kw = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        values, options = common.bind(fn, args, kw)
        out = {n: common.describe_value(values[n]) for n, c, _ in common.parameters(fn) if c and n in values}
        out.update({f"option:{k}": common.describe_value(v) for k, v in options.items()
                    if k in common.LAUNCH_OPTIONS})
        return out

    @staticmethod
    def _grid(grid, values, final) -> list | str:
        if not callable(grid):
            return list(grid) if isinstance(grid, (tuple, list)) else [grid]
        meta = dict(values)
        for k, d in (final or {}).items():
            if not k.startswith("option:"):
                meta[k] = common.tl_value(d)
        try:
            g = grid(meta)
            return [int(x) for x in (g if isinstance(g, (tuple, list)) else [g])]
        except Exception as e:  # noqa: BLE001 - only informative
            return f"callable ({type(e).__name__}: {e})"

    @staticmethod
    def _aliases(tensors) -> list[list[str]]:
        """Groups of tensor arguments that are the same memory (same pointer and shape)."""
        seen: dict = {}
        for p, t in tensors.items():
            seen.setdefault((t.data_ptr(), tuple(t.shape), str(t.dtype)), []).append(p)
        return [ps for ps in seen.values() if len(ps) > 1]

    def _ttir_access(self) -> dict:
        """Written/read parameters by the TTIR of the kernel that ran (GPU only)."""
        if self.inner is None:
            return {}
        compiled = self.inner[3]
        asm = getattr(compiled, "asm", None)
        src = getattr(compiled, "src", None)
        if not asm or "ttir" not in asm or src is None:
            return {}
        try:
            names = [n for n, t in src.signature.items() if t != "constexpr"]
            written, read, atomics = common.ttir_access(asm["ttir"])
            return {"ttir_args": names, "ttir_written": sorted(names[i] for i in written if i < len(names)),
                    "ttir_read": sorted(names[i] for i in read if i < len(names)), "ttir_atomics": atomics}
        except Exception as e:  # noqa: BLE001 - the replay then decides from the data
            return {"ttir_error": f"{type(e).__name__}: {e}"[:300]}


def environment(device: str) -> dict:
    import torch
    import triton

    env = {"python": sys.version.split()[0], "torch": torch.__version__, "triton": triton.__version__,
           "numpy": np.__version__, "device": device, "interpret": os.environ.get("TRITON_INTERPRET", "")}
    if device == "cuda":
        p = torch.cuda.get_device_properties(0)
        env.update(gpu=p.name, capability=list(torch.cuda.get_device_capability(0)), sms=p.multi_processor_count)
    return env


def pack(out: pathlib.Path, part_mib: float) -> list[pathlib.Path]:
    """Put index.json and launches/ into corpus-NNN.tar parts of at most part_mib MiB each."""
    files = sorted(p for p in (out / "launches").rglob("*.npz"))
    generated = sorted((out / "generated").glob("*.py")) if (out / "generated").is_dir() else []
    limit = int(part_mib * 2**20)
    parts, current, size = [], [], 0
    for f in files:
        n = f.stat().st_size + 1024
        if current and size + n > limit:
            parts.append(current)
            current, size = [], 0
        current.append(f)
        size += n
    if current:
        parts.append(current)
    written = []
    for k, group in enumerate(parts or [[]]):
        tar_path = out / f"corpus-{k:03d}.tar"
        with tarfile.open(tar_path, "w") as tar:
            if k == 0:
                tar.add(out / "index.json", arcname="index.json")
                for f in generated:
                    tar.add(f, arcname=str(f.relative_to(out)))
            for f in group:
                tar.add(f, arcname=str(f.relative_to(out)))
        written.append(tar_path)
    for f in files + generated:
        f.unlink()
    if generated:
        (out / "generated").rmdir()
    for d in sorted((out / "launches").rglob("*"), reverse=True):
        if d.is_dir():
            d.rmdir()
    (out / "launches").rmdir()
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder to write (e.g. $OUT)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: dry run in Triton's interpreter")
    ap.add_argument("--cases", default="", help="comma-separated substrings: only cases whose name has one")
    ap.add_argument("--pack", action="store_true", help="pack into corpus-NNN.tar parts (what a GPU machine sends back)")
    ap.add_argument("--part-mib", type=float, default=15.0)
    a = ap.parse_args(argv)
    if a.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        print("record.py: --device cpu runs Triton's interpreter: set TRITON_INTERPRET=1", file=sys.stderr)
        return 2
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    common.add_sources()
    common.tolerate_unknown_autotune_names()
    if a.device == "cpu":
        common.answer_cuda_queries()
    import cases

    rec = Recorder(out, a.device)
    rec.paused = cases.recording_paused
    rec.install()
    wanted = [w for w in a.cases.split(",") if w]
    index = {"format": 1, "environment": environment(a.device), "sources": _sources(), "cases": []}
    t0 = time.time()
    for name, case in cases.CASES.items():
        if wanted and not any(w in name for w in wanted):
            continue
        print(f"case {name}", flush=True)
        rec.case, rec.launches = name, []
        entry = {"name": name, "launches": rec.launches}
        answers = common.device_answers(case)
        if type(answers).__name__ != "nullcontext":
            entry["device_answers"] = "sm_90 (autotune_export.cuda.stub_driver.answering_for: no GPU here)"
        try:
            with answers:
                case(a.device)
        except Exception as e:  # noqa: BLE001 - recorded, the others go on
            entry["error"] = f"{type(e).__name__}: {e}"[:2000]
            entry["traceback"] = traceback.format_exc()[-4000:]
            print(f"  ERROR {entry['error']}", flush=True)
        rec.case = None
        index["cases"].append(entry)
    if common.DROPPED_AUTOTUNE_NAMES:
        index["dropped_autotune_names"] = [list(x) for x in common.DROPPED_AUTOTUNE_NAMES]
    index["seconds"] = round(time.time() - t0, 1)
    (out / "index.json").write_text(json.dumps(index, indent=1))
    n = sum(len(c["launches"]) for c in index["cases"])
    errors = sum(1 for c in index["cases"] if "error" in c)
    total = sum(l["bytes"] for c in index["cases"] for l in c["launches"])
    print(f"record: {len(index['cases'])} cases, {n} launches, {errors} case errors, {total / 2**20:.1f} MiB, "
          f"{index['seconds']} s -> {out}")
    if a.pack:
        for p in pack(out, a.part_mib):
            print(f"record: wrote {p} ({p.stat().st_size / 2**20:.1f} MiB)")
    return 0 if errors == 0 else 1


def _sources() -> str:
    p = common.SOURCES / "SOURCES.txt"
    return p.read_text() if p.is_file() else ""


if __name__ == "__main__":
    sys.exit(main())
