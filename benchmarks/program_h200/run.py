"""The H200 benchmark of issue 25 (GPU side): a whole program of fp16 matmuls, three builds.

    PYTHONPATH=/tmp/site:. python3 benchmarks/program_h200/run.py out/program_h200 [--json OUT.json]

Reads what benchmarks/program_h200/build.py wrote (no compiler here: iree.runtime, numpy), its
``manifest.json`` naming the driver, the functions, their inputs and the products they compute:

* ``plain.vmfb``: program.mlir by plain iree-compile for CUDA (IREE's own code, sm_89 PTX:
  IREE 3.13 has no sm_90 code generation);
* ``tuned.vmfb``: ``autotune-export program --backend cuda``: every matmul dispatch a group of
  IREE's default, IREE candidates and Triton candidates (sm_90 cubins);
* ``iree_only.vmfb``: the same with ``--no-triton``.

Steps, all under a time limit (``--budget-s``, default 85 s; the script stops and fails past it):

1. inputs: every matrix has entries in {-0.5, -0.25, 0, 0.25, 0.5} (fp16), so every product and
   partial sum is a multiple of 1/16 below 128 in magnitude and exact in fp16 and fp32 whatever
   the summation order: the numpy reference (fp32 matmul) is exact and each variant must match
   it to 1/16 (``--atol``, default 0.0625: one fp16 step above 64, the largest sums);
2. check: every variant of every group runs its host function (others on their default) and
   each output is compared with numpy; a mismatch or an error fails the run (exit 1) and the
   variant is never timed;
3. tune: per group, each checked variant is timed on its host function (``main``'s groups one
   after the other, each on the best of those before: coordinate descent; the single-matmul
   functions' groups alone: their times are the per-dispatch times); the fastest is selected;
4. report: per build the per-call time of ``main`` (median of ``--reps`` timed batches of
   ``--iters`` calls), per dispatch the time of IREE's default, the best IREE candidate and the
   best Triton candidate, the speedups, and whether the issue's H200 targets hold: tuned (b)
   >= 4x faster per call than plain (a); with Triton off (c) no dispatch slower than IREE's
   default beyond 3 % and one faster. ``*_kernel`` columns: the same variants' GPU time per run
   from the groups' benchmark entries (a loop of runs per call, no host overhead; fake data).

Calls are synchronous (an iree.runtime call returns once the GPU work is done); outputs stay on
the device while timing. Per-dispatch times are wall-clock per call of the single-matmul
functions (``mm_4096``, ``mm_skinny``, ``bmm``): each includes one call's host overhead (tens of
microseconds), as the per-call time of ``main`` does once for its three dispatches.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from autotune_export.runtime import AutotunedModule  # noqa: E402

class Budget:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def check(self, what: str) -> None:
        if time.monotonic() > self.end:
            raise TimeoutError(f"over the time budget during {what}")


def inputs(manifest, rng) -> dict[str, list[np.ndarray]]:
    """Per function its input matrices (manifest ``matrices``: name -> shape, ``functions``:
    function -> input names; one matrix is shared by the functions that name it)."""
    mats = {n: (rng.integers(-2, 3, size=tuple(s)) * 0.25).astype(np.float16) for n, s in manifest["matrices"].items()}
    return {fn: [mats[n] for n in spec["inputs"]] for fn, spec in manifest["functions"].items()}


def references(manifest, mats) -> dict[str, list[np.ndarray]]:
    """Per function its outputs by numpy: one fp32 ``matmul`` per (lhs, rhs) input pair of
    manifest ``functions[fn]["products"]`` (exact here, module docstring)."""
    out, memo = {}, {}
    for fn, spec in manifest["functions"].items():
        refs = []
        for i, j in spec["products"]:
            key = (spec["inputs"][i], spec["inputs"][j])
            if key not in memo:
                memo[key] = np.matmul(mats[fn][i].astype(np.float32), mats[fn][j].astype(np.float32))
            refs.append(memo[key])
        out[fn] = refs
    return out


def outputs(result) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def host_array(x) -> np.ndarray:
    return np.asarray(x.to_host() if hasattr(x, "to_host") else x)


def time_call(fn, args, iters: int, reps: int) -> float:
    """Median over ``reps`` batches of ``iters`` back-to-back calls, per call, in ms."""
    fn(*args)
    fn(*args)
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn(*args)
        samples.append((time.perf_counter() - t0) * 1e3 / iters)
    return statistics.median(samples)


def own_output(group, n: int) -> int | None:
    """The output index of ``group``'s dispatch in its host (``<host>_dispatch_<i>`` -> i), or
    None when unknown or when the host has one output."""
    m = re.fullmatch(rf"{re.escape(group.host)}_dispatch_(\d+)", group.executable)
    return int(m.group(1)) if m and n > 1 and int(m.group(1)) < n else None


def kind_of(group, k: int) -> str:
    """``default`` (variant 0: IREE's own configuration), ``iree`` or ``triton``."""
    if k == group.default:
        return "default"
    cfg = group.configs[k] if k < len(group.configs) and group.configs[k] else []
    return "triton" if any(entry and entry[0] == "triton" for entry in cfg) else "iree"


class Plain:
    """A module without variant groups (plain iree-compile) through iree.runtime alone, with
    the part of AutotunedModule's interface run_build uses."""

    def __init__(self, path: str, driver: str):
        import iree.runtime as rt

        self._rt = rt
        self.config = rt.Config(driver)
        self.context = rt.SystemContext(config=self.config)
        with open(path, "rb") as f:
            vm = rt.VmModule.copy_buffer(self.context.instance, f.read())
        self.context.add_vm_module(vm)
        self.functions = self.context.modules[vm.name]
        self.groups = {}

    def device_array(self, x):
        return self._rt.asdevicearray(self.config.device, x)


def load(path: str, driver: str):
    """AutotunedModule for a module with ``@__autotune``, else :class:`Plain`."""
    try:
        return AutotunedModule(path, driver=driver, strategy="fixed", cache=False)
    except ValueError as err:
        if "no @__autotune" not in str(err):
            raise
        return Plain(path, driver)


def run_build(name: str, path: str, manifest, mats, refs, args, budget: Budget, failures: list) -> dict:
    t0 = time.perf_counter()
    m = load(path, manifest["driver"])
    load_s = time.perf_counter() - t0
    dev = {fn: [m.device_array(x) for x in xs] for fn, xs in mats.items()}
    funcs = {fn: m.functions[fn] for fn in manifest["functions"]}
    report = {"load_s": round(load_s, 2), "groups": {}}
    groups = list(m.groups.values())
    # 2. check every variant of every group on its host function.
    for g in groups:
        checked = []
        for k in range(len(g.variants)):
            budget.check(f"{name}: checking {g.group}")
            m.select(g.key, k)
            try:
                outs = outputs(funcs[g.host](*dev[g.host]))
                # The group's own output (its dispatch's index: IREE numbers a function's
                # dispatches in program order, which is the order of its products), or all.
                mine = own_output(g, len(outs))
                pairs = [(o, r) for i, (o, r) in enumerate(zip(outs, refs[g.host])) if mine is None or i == mine]
                errs = [float(np.max(np.abs(host_array(o).astype(np.float32) - r))) for o, r in pairs]
            except Exception as err:  # a variant that fails to run is a failure, reported by name
                errs, outs = None, None
                failures.append(f"{name}: {g.variants[k]}: {type(err).__name__}: {err}")
            ok = errs is not None and all(e <= args.atol for e in errs)
            if errs is not None and not ok:
                failures.append(f"{name}: {g.variants[k]}: max error {max(errs)} > {args.atol}")
            print(f"  check {name} {g.variants[k]} [{kind_of(g, k)}]: {'OK' if ok else 'BAD'} (max err {max(errs) if errs else 'n/a'})")
            checked.append(ok)
        m.select(g.key, g.default)
        report["groups"][g.key] = {"host": g.host, "variants": g.variants, "checked": checked, "kinds": [kind_of(g, k) for k in range(len(g.variants))]}
    # 3. tune: per group, time each checked variant on its host function.
    for g in groups:
        entry = report["groups"][g.key]
        times = []
        for k in range(len(g.variants)):
            budget.check(f"{name}: timing {g.group}")
            if not entry["checked"][k]:
                times.append(None)
                continue
            m.select(g.key, k)
            times.append(time_call(funcs[g.host], dev[g.host], args.iters, args.reps))
        best = min((t, k) for k, t in enumerate(times) if t is not None)[1]
        m.select(g.key, best)
        entry.update(times_ms=times, chosen=best)
        # GPU time per run from the group's benchmark entries (a loop of runs in one call: no
        # per-call host overhead), for the single-matmul functions' groups; n/a if unavailable.
        if g.host in manifest["dispatches"] and args.kernel_times:
            kernel = []
            for k in range(len(g.variants)):
                budget.check(f"{name}: kernel times of {g.group}")
                try:
                    kernel.append(m.bench(g.key, k, warmup_ms=3, rep_ms=15).median_ms if entry["checked"][k] else None)
                except Exception as err:  # reported, not a failure: the per-call times stand
                    print(f"  kernel time of {g.variants[k]}: n/a ({type(err).__name__}: {str(err)[:200]})")
                    kernel.append(None)
            entry["kernel_ms"] = kernel
    budget.check(f"{name}: timing main")
    report["main_ms"] = time_call(funcs["main"], dev["main"], args.iters, args.reps)
    report["dispatch_ms"] = {}
    for fn in manifest["dispatches"]:
        g = next(g for g in groups if g.host == fn) if any(g.host == fn for g in groups) else None
        if g is None:
            report["dispatch_ms"][fn] = {"default": time_call(funcs[fn], dev[fn], args.iters, args.reps)}
            continue
        e = report["groups"][g.key]
        by = {}
        for kind in ("default", "iree", "triton"):
            ts = [t for t, k in zip(e["times_ms"], e["kinds"]) if k == kind and t is not None]
            if ts:
                by[kind] = min(ts)
        by["chosen"] = e["times_ms"][e["chosen"]]
        for kind in ("default", "iree", "triton"):
            ks = [t for t, k in zip(e.get("kernel_ms", []), e["kinds"]) if k == kind and t is not None]
            if ks:
                by[f"{kind}_kernel"] = min(ks)
        by["chosen_variant"] = g.variants[e["chosen"]]
        by["variants"] = {"iree": e["kinds"].count("iree") + 1, "triton": e["kinds"].count("triton")}
        report["dispatch_ms"][fn] = by
    return report


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="what build.py wrote (plain.vmfb, tuned.vmfb, iree_only.vmfb)")
    ap.add_argument("--json", help="write the report here too")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--atol", type=float, default=0.0625)
    ap.add_argument("--budget-s", type=float, default=85.0)
    ap.add_argument("--no-kernel-times", dest="kernel_times", action="store_false", help="skip the bench-entry kernel times")
    args = ap.parse_args(argv)
    budget = Budget(args.budget_s)
    t0 = time.perf_counter()
    with open(os.path.join(args.folder, "manifest.json")) as fh:
        manifest = json.load(fh)
    # The modules must be the ones the manifest describes (one build, build.py's sha256s).
    for name, want in manifest.get("sha256", {}).items():
        with open(os.path.join(args.folder, f"{name}.vmfb"), "rb") as fh:
            have = hashlib.sha256(fh.read()).hexdigest()
        if have != want:
            print(f"FAILED: {name}.vmfb is not the one manifest.json describes (sha256 {have[:12]} != {want[:12]}): rebuild")
            return 1
    mats = inputs(manifest, np.random.default_rng(0))
    refs = references(manifest, mats)
    print(f"inputs and numpy references: {time.perf_counter() - t0:.1f} s")
    failures: list[str] = []
    reports = {}
    for name in ("plain", "iree_only", "tuned"):
        path = os.path.join(args.folder, f"{name}.vmfb")
        try:
            reports[name] = run_build(name, path, manifest, mats, refs, args, budget, failures)
        except Exception as err:
            failures.append(f"{name}: {type(err).__name__}: {err}")
            print(f"FAILED {name}: {type(err).__name__}: {err}")
            if isinstance(err, TimeoutError):
                break
    print("\n== per call of main (ms) ==")
    for name, r in reports.items():
        print(f"  {name:10s} {r['main_ms']:8.3f} ms   (module load {r['load_s']} s)")
    print("\n== per dispatch (ms per call of its own function, host overhead included; TFLOP/s) ==")
    for fn, label in manifest["dispatches"].items():
        row = [label]
        for name, r in reports.items():
            d = r["dispatch_ms"].get(fn, {})
            parts = ", ".join(
                f"{k} {v:.3f} ({manifest['flops'][fn] / v / 1e9:.0f})"
                for k, v in d.items()
                if k in ("default", "iree", "triton", "chosen", "default_kernel", "iree_kernel", "triton_kernel")
            )
            row.append(f"{name}: {parts}")
        print("  " + " | ".join(row))
        for name, r in reports.items():
            d = r["dispatch_ms"].get(fn, {})
            if "chosen_variant" in d:
                print(f"      {name} picks {d['chosen_variant']} (variants: {d['variants']})")
    verdict = {}
    if "plain" in reports and "tuned" in reports:
        speedup = reports["plain"]["main_ms"] / reports["tuned"]["main_ms"]
        verdict["tuned_vs_plain"] = round(speedup, 2)
        print(f"\ntarget 1: tuned (b) per call {speedup:.2f}x faster than plain (a) (need >= 4): {'MET' if speedup >= 4 else 'NOT MET'}")
    if "iree_only" in reports:
        rows = reports["iree_only"]["dispatch_ms"]
        slower = [fn for fn, d in rows.items() if "chosen" in d and d["chosen"] > d["default"] * 1.03]
        faster = [fn for fn, d in rows.items() if "chosen" in d and d["chosen"] < d["default"] * 0.97]
        verdict["iree_only_slower"], verdict["iree_only_faster"] = slower, faster
        print(f"target 2: Triton off (c): no dispatch slower than IREE's default ({slower or 'none'} slower), "
              f"one faster ({faster or 'none'}): {'MET' if not slower and faster else 'NOT MET'}")
    print(f"\n{len(failures)} failure(s); total {time.perf_counter() - t0:.1f} s")
    for f in failures:
        print("  FAIL", f)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"reports": reports, "verdict": verdict, "failures": failures}, fh, indent=1, default=str)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
