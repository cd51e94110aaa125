"""The H200 benchmark of issue 25 (GPU side): a whole program of fp16 matmuls, four builds.

    PYTHONPATH=/tmp/site:. python3 benchmarks/program_h200/run.py out/program_h200 [--json OUT.json] [--tuning-results R.json]

Reads what benchmarks/program_h200/build.py wrote (no compiler here: iree.runtime, numpy), its
``manifest.json`` naming the driver, the functions, their inputs and the outputs they compute:

* ``plain.vmfb``: program.mlir by plain iree-compile for CUDA (IREE's own code, sm_89 PTX:
  IREE 3.13 has no sm_90 code generation);
* ``tuned.vmfb``: ``autotune-export program --backend cuda``: every matmul dispatch a group of
  IREE's default, IREE candidates and Triton candidates (sm_90 cubins);
* ``iree_only.vmfb``: the same with ``--no-triton``;
* ``frozen.vmfb`` (when build.py made one from a tuning-results file): what the tuned program
  becomes, every choice fixed (no choice globals, no ``scf.if``, IREE's command-buffer
  memoization back);
* any other ``NAME.vmfb`` the manifest lists (build.py ``--flags-variant``: plain or frozen with
  more iree-compile flags), measured and checked the same way, after the four above.

Steps, all under a time limit (``--budget-s``, default 85 s; the script stops and fails past it):

1. inputs: every matrix has entries in {-0.5, -0.25, 0, 0.25, 0.5} (fp16), so every product and
   partial sum is a multiple of 1/16 below 128 in magnitude and exact in fp16 and fp32 whatever
   the summation order: the numpy reference (fp32 matmul) is exact and each output must match
   it to 1/16 (``--atol``, default 0.0625: one fp16 step above 64, the largest sums);
2. check: every function of every build, as loaded (groups on IREE's default), and every
   variant of every group on its host function (others on their default), each output
   compared with numpy; a mismatch or an error fails the run (exit 1) and the variant is never
   timed;
3. tune: every group by the runtime's own tuning (``AutotunedModule.tune_group``: the groups'
   benchmark entries, kernel time per run on the module's fake data, race search, the
   cross-check (for these fp16 groups: no less accurate than IREE's default against the group's
   reference computation, IREE's default with an f32 accumulator; docs/program.md), the
   runtime's pick; a line per group says how many IREE and Triton variants the cross-check
   kept and what was picked; not wall-clock calls of ``main``,
   whose noise picked worse configs for ``main``'s groups in run s4). With ``--tuning-results
   R.json`` the tuned build's module uses R.json as its tuning cache, so the runtime writes its
   picks there itself (the tuning-results format ``autotune-export program --tuning-results``
   and build.py ``--tuning-results`` read; the file is written anew). Then, for the report,
   each checked variant's time per call of its host function (others on their picks), and the
   kernel time of ``main``'s dispatches: IREE's defaults (plain's code) against the picks;
4. per call: ``main``, ``call_floor`` and the single-matmul functions of every build on its
   picks, interleaved (a batch of each build in turn, ``--final-reps`` rounds: the builds see
   the same GPU clocks and temperature), median; target 1 is judged on these;
5. report: per build the per-call time of ``main``, per dispatch the time of IREE's default, the
   best IREE candidate and the best Triton candidate, the speedups, and whether the issue's
   H200 targets hold: the tuned program >= 4x faster per call than plain (the frozen build when
   there is one: what a tuned program becomes; the tuned build with its run-time choice is
   shown too); with Triton off no dispatch's pick slower than IREE's default beyond 3 % and
   one faster, by kernel time. ``*_kernel`` columns: the same variants' GPU time per run from the groups'
   benchmark entries (a loop of runs per call, no host overhead; fake data).

``--device-allocator caching`` makes every build's device with IREE's caching allocator and,
on CUDA, sets ``--cuda_async_allocations=false`` first, so that a call's output allocations
reuse the memory the previous call freed instead of CUDA's stream-ordered pools: IREE's default
costs a call 0.1-0.45 ms that grows with its output bytes, in every build alike, which hides
part of what tuning buys (docs/runtime.md, "Per-call allocations"; run s12). Both ways are
reported; the issue's target is read off each.

How calls are timed (the same function, ``time_call``, for every build and function): inputs
are on the device once (``device_array``); each call goes through iree.runtime's own function
object (``module.functions[name]``, the path a user's call takes), returns DeviceArrays that
stay on the device (no host transfer, no numpy conversion in the timed loop) and are dropped at
the next call; Python's garbage collector is off while timing. A call is **synchronous**: IREE's
default ABI allocates the outputs, submits, and waits for the GPU before it returns, so a
per-call time is the GPU time plus one call's host and driver work, not hidden by the next
call. (Back-to-back asynchronous calls with one wait at the end need the
``--iree-execution-model=async-external`` ABI, whose functions take a wait and a signal fence
and have no synchronous form, which the toolkit's runtime entries need.) ``call_floor`` (one
tiny elementwise dispatch, in every build alike) measures that host and driver floor of a
call; ``main - floor`` is the report's estimate of the GPU part.
"""

from __future__ import annotations

import argparse
import gc
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

BUILDS = ("plain", "iree_only", "tuned", "frozen")


class Budget:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def check(self, what: str) -> None:
        if time.monotonic() > self.end:
            raise TimeoutError(f"over the time budget during {what}")


def inputs(manifest, rng) -> dict[str, list[np.ndarray]]:
    """Per function its input arrays (manifest ``matrices``: name -> shape, ``functions``:
    function -> input names; one array is shared by the functions that name it)."""
    mats = {n: (rng.integers(-2, 3, size=tuple(s)) * 0.25).astype(np.float16) for n, s in manifest["matrices"].items()}
    return {fn: [mats[n] for n in spec["inputs"]] for fn, spec in manifest["functions"].items()}


def references(manifest, mats) -> dict[str, list[np.ndarray]]:
    """Per function its outputs by numpy, one per manifest ``functions[fn]["outputs"]`` entry
    ``[op, i, j]``: ``matmul`` (fp32 ``np.matmul`` of inputs i and j) or ``add`` (i + j in
    fp32); exact here (module docstring)."""
    out, memo = {}, {}
    for fn, spec in manifest["functions"].items():
        refs = []
        for op, i, j in spec["outputs"]:
            key = (op, spec["inputs"][i], spec["inputs"][j])
            if key not in memo:
                x, y = mats[fn][i].astype(np.float32), mats[fn][j].astype(np.float32)
                memo[key] = np.matmul(x, y) if op == "matmul" else x + y
            refs.append(memo[key])
        out[fn] = refs
    return out


def outputs(result) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def host_array(x) -> np.ndarray:
    return np.asarray(x.to_host() if hasattr(x, "to_host") else x)


def time_call(fn, args, iters: int, reps: int) -> list[float]:
    """``reps`` samples, each the time per call (ms) of a batch of ``iters`` back-to-back
    synchronous calls ``fn(*args)`` (module docstring: how calls are timed), after two
    untimed calls; garbage collection off while timing."""
    fn(*args)
    fn(*args)
    samples = []
    was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(iters):
                fn(*args)
            samples.append((time.perf_counter() - t0) * 1e3 / iters)
    finally:
        if was:
            gc.enable()
    return samples


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
    """A module without ``@__autotune`` (plain iree-compile) through iree.runtime alone, with
    the part of AutotunedModule's interface run_build uses (``functions``: iree.runtime's own
    function objects, as AutotunedModule's are)."""

    def __init__(self, path: str, driver: str, allocators=()):
        import iree.runtime as rt

        from autotune_export.runtime.device import make_config

        self._rt = rt
        self.config = make_config(rt, driver, allocators)
        self.context = rt.SystemContext(config=self.config)
        with open(path, "rb") as f:
            vm = rt.VmModule.copy_buffer(self.context.instance, f.read())
        self.context.add_vm_module(vm)
        self.functions = self.context.modules[vm.name]
        self.groups = {}

    def device_array(self, x):
        return self._rt.asdevicearray(self.config.device, x)


def load(path: str, driver: str, cache=False, allocators=()):
    """AutotunedModule for a module with ``@__autotune`` (``cache``: the tuning-results file its
    tuning writes, or False; no isolation worker: every variant was checked on live data
    first), else :class:`Plain`; ``allocators``: the device's allocator specs (``--device-allocator``)."""
    try:
        return AutotunedModule(path, driver=driver, strategy="fixed", cache=cache, isolation="none", device_allocators=allocators)
    except ValueError as err:
        if "no @__autotune" not in str(err):
            raise
        return Plain(path, driver, allocators)


def check_outputs(what: str, fn, args, refs, atol: float, failures: list, only: int | None = None) -> bool:
    """Call ``fn(*args)`` and compare its outputs (or output ``only``) with ``refs``; a
    mismatch or an error is a failure (appended to ``failures``). Returns whether all agree."""
    try:
        outs = outputs(fn(*args))
        if len(outs) != len(refs):
            raise ValueError(f"{len(outs)} outputs, numpy has {len(refs)}")
        pairs = [(o, r) for i, (o, r) in enumerate(zip(outs, refs)) if only is None or i == only]
        errs = [float(np.max(np.abs(host_array(o).astype(np.float32) - r))) for o, r in pairs]
    except Exception as err:  # a variant that fails to run is a failure, reported by name
        failures.append(f"{what}: {type(err).__name__}: {err}")
        print(f"  check {what}: BAD ({type(err).__name__})")
        return False
    ok = all(e <= atol for e in errs)
    if not ok:
        failures.append(f"{what}: max error {max(errs)} > {atol}")
    print(f"  check {what}: {'OK' if ok else 'BAD'} (max err {max(errs)})")
    return ok


def manifest_driver(folder: str) -> str:
    with open(os.path.join(folder, "manifest.json")) as fh:
        return json.load(fh)["driver"]


def run_build(name: str, path: str, manifest, mats, refs, args, budget: Budget, failures: list):
    """Check, tune (groups) and time one build; returns (report, what the final per-call
    timing needs: the functions and their device inputs)."""
    results = args.tuning_results if name == "tuned" and args.tuning_results else False
    t0 = time.perf_counter()
    m = load(path, manifest["driver"], cache=results, allocators=args.device_allocator)
    load_s = time.perf_counter() - t0
    dev = {fn: [m.device_array(x) for x in xs] for fn, xs in mats.items()}
    funcs = {fn: m.functions[fn] for fn in manifest["functions"]}
    report = {"load_s": round(load_s, 2), "groups": {}, "functions_ok": {}}
    groups = list(m.groups.values())
    # 2. check every function as loaded, then every variant of every group on its host function.
    for fn in manifest["functions"]:
        budget.check(f"{name}: checking {fn}")
        report["functions_ok"][fn] = check_outputs(f"{name} @{fn}", funcs[fn], dev[fn], refs[fn], args.atol, failures)
    for g in groups:
        checked = []
        for k in range(len(g.variants)):
            budget.check(f"{name}: checking {g.group}")
            m.select(g.key, k)
            mine = own_output(g, len(refs[g.host]))
            what = f"{name} {g.variants[k]} [{kind_of(g, k)}]"
            checked.append(check_outputs(what, funcs[g.host], dev[g.host], refs[g.host], args.atol, failures, mine))
        m.select(g.key, g.default)
        report["groups"][g.key] = {"host": g.host, "variants": g.variants, "checked": checked, "kinds": [kind_of(g, k) for k in range(len(g.variants))]}
    # 3. tune: the runtime's own tuning of each group (benchmark entries: kernel time on the
    # module's fake data, race search, cross-check (accuracy against the reference), its pick and, with
    # --tuning-results, its own writer); then, for the report, each checked variant's time per
    # call of its host function (the other groups on their picks).
    for g in groups:
        budget.check(f"{name}: tuning {g.group}")
        m.tune_group(g.key)
    for g in groups:
        entry = report["groups"][g.key]
        measured = (m.timings.get(g.key) or {}).get(0) or []
        kernel = {t.variant: t.median_ms for t in measured if t.times_ms}
        entry["kernel_ms"] = [kernel.get(v) for v in g.variants]
        entry["chosen"] = g.variants.index(m.chosen[g.key])
        entry["dropped"] = sorted(m.dropped.get(g.key, set()))
        if g.key in m.notes:
            print(f"  note {g.key}: {m.notes[g.key]}")
        # What the cross-check kept (against the group's reference computation where it has one:
        # docs/program.md, "The cross-check"), per kind, and what tuning picked.
        kept = [kind_of(g, k) for k in range(len(g.variants)) if k not in entry["dropped"]]
        counts = ", ".join(f"{kind} {kept.count(kind)}/{[kind_of(g, k) for k in range(len(g.variants))].count(kind)}" for kind in ("iree", "triton"))
        print(f"  {name} {g.group}: cross-check against the {'reference' if g.reference else 'default'} kept {counts}; "
              f"picks {m.chosen[g.key]} [{kind_of(g, entry['chosen'])}]")
        samples = {}
        for k in range(len(g.variants)):
            budget.check(f"{name}: timing {g.group}")
            if entry["checked"][k]:
                m.select(g.key, k)
                samples[k] = time_call(funcs[g.host], dev[g.host], args.iters, args.reps)
        m.select(g.key, entry["chosen"])
        entry["times_ms"] = [statistics.median(samples[k]) if k in samples else None for k in range(len(g.variants))]
    if groups:
        # Kernel time of main's dispatches (the runtime's medians): IREE's defaults (plain's code)
        # against the picks, the ratio target 1 asks of per-call times, without the call floor.
        mains = [report["groups"][g.key] for g in groups if g.host == "main"]
        if mains and all(e["kernel_ms"][0] is not None and e["kernel_ms"][e["chosen"]] is not None for e in mains):
            default = sum(e["kernel_ms"][0] for e in mains)
            chosen = sum(e["kernel_ms"][e["chosen"]] for e in mains)
            report["main_kernel_ms"] = {"default": default, "chosen": chosen}
    report["dispatch_ms"] = {}
    for fn in manifest["dispatches"]:
        g = next((g for g in groups if g.host == fn), None)
        if g is None:
            budget.check(f"{name}: timing {fn}")
            report["dispatch_ms"][fn] = {"default": statistics.median(time_call(funcs[fn], dev[fn], args.iters, args.reps))}
            continue
        e = report["groups"][g.key]
        by = {}
        for kind in ("default", "iree", "triton"):
            ts = [t for t, k in zip(e["times_ms"], e["kinds"]) if k == kind and t is not None]
            if ts:
                by[kind] = min(ts)
        if e["times_ms"][e["chosen"]] is not None:
            by["chosen"] = e["times_ms"][e["chosen"]]
        for kind in ("default", "iree", "triton"):
            ks = [t for t, k in zip(e.get("kernel_ms", []), e["kinds"]) if k == kind and t is not None]
            if ks:
                by[f"{kind}_kernel"] = min(ks)
        if e.get("kernel_ms") and e["kernel_ms"][e["chosen"]] is not None:
            by["chosen_kernel"] = e["kernel_ms"][e["chosen"]]
        by["chosen_variant"] = g.variants[e["chosen"]]
        by["variants"] = {"iree": e["kinds"].count("iree") + 1, "triton": e["kinds"].count("triton")}
        report["dispatch_ms"][fn] = by
    return report, (funcs, dev)


def per_call(handles: dict, functions: list[str], args, budget: Budget) -> dict[str, dict[str, list[float]]]:
    """Step 4: per build and function (``main``, ``call_floor``, the single-matmul functions)
    the per-call times (ms) on the build's choices (the tuned builds' picks), the builds
    interleaved: ``--final-reps`` rounds, each one batch (``--iters`` calls) of each function of
    each build in turn, so that every build sees the same GPU clocks and temperature."""
    samples = {name: {fn: [] for fn in functions} for name in handles}
    for _ in range(args.final_reps):
        for fn in functions:
            for name, (funcs, dev) in handles.items():
                budget.check(f"per-call timing of {name} @{fn}")
                samples[name][fn] += time_call(funcs[fn], dev[fn], args.iters, 1)
    return samples


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="what build.py wrote (plain.vmfb, tuned.vmfb, iree_only.vmfb, frozen.vmfb)")
    ap.add_argument("--json", help="write the report here too")
    ap.add_argument("--tuning-results", metavar="R.json", help="write the tuned build's picks here (a tuning-results file, written anew)")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--final-reps", type=int, default=7, help="interleaved rounds of the per-call timing of main")
    ap.add_argument("--atol", type=float, default=0.0625)
    ap.add_argument("--budget-s", type=float, default=85.0)
    ap.add_argument("--device-allocator", action="append", default=[], metavar="SPEC",
                    help="every build's device made with this allocator (IREE's --device_allocator, e.g. caching; "
                         "on CUDA with --cuda_async_allocations=false, so that a call's allocations reuse freed memory)")
    args = ap.parse_args(argv)
    if args.device_allocator and manifest_driver(args.folder).startswith("cuda"):
        import iree.runtime as rt

        rt.flags.parse_flags("--cuda_async_allocations=false")  # before the first CUDA device
        print("runtime: --cuda_async_allocations=false, --device_allocator=" + ",".join(args.device_allocator))
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
    if args.tuning_results and os.path.exists(args.tuning_results):
        os.remove(args.tuning_results)
    mats = inputs(manifest, np.random.default_rng(0))
    refs = references(manifest, mats)
    print(f"inputs and numpy references: {time.perf_counter() - t0:.1f} s")
    failures: list[str] = []
    reports, handles = {}, {}
    built = manifest.get("sha256", {})
    for name in [*(b for b in BUILDS if b in built), *sorted(set(built) - set(BUILDS))]:  # flags variants last
        path = os.path.join(args.folder, f"{name}.vmfb")
        try:
            reports[name], handles[name] = run_build(name, path, manifest, mats, refs, args, budget, failures)
        except Exception as err:
            failures.append(f"{name}: {type(err).__name__}: {err}")
            print(f"FAILED {name}: {type(err).__name__}: {err}")
            if isinstance(err, TimeoutError):
                break
    functions = ["main", "call_floor", *manifest["dispatches"]]
    try:
        for name, rows in per_call(handles, functions, args, budget).items():
            reports[name]["per_call_samples_ms"] = rows
            reports[name]["per_call_ms"] = {fn: statistics.median(ts) for fn, ts in rows.items()}
            reports[name]["main_ms"] = reports[name]["per_call_ms"]["main"]
            reports[name]["floor_ms"] = reports[name]["per_call_ms"]["call_floor"]
    except Exception as err:
        failures.append(f"per call: {type(err).__name__}: {err}")
        print(f"FAILED per call: {type(err).__name__}: {err}")
    print("\n== per call (ms, median of interleaved batches; synchronous calls on each build's picks; floor: call_floor, one tiny dispatch) ==")
    print("  " + f"{'build':10s}" + "".join(f"{fn:>12s}" for fn in functions) + f"{'main-floor':>12s}   module load")
    for name, r in reports.items():
        if "per_call_ms" in r:
            cells = "".join(f"{r['per_call_ms'][fn]:12.3f}" for fn in functions)
            print(f"  {name:10s}{cells}{r['main_ms'] - r['floor_ms']:12.3f}   {r['load_s']} s")
    print("\n== per dispatch (ms per call of its own function, host overhead included; TFLOP/s) ==")
    for fn, label in manifest["dispatches"].items():
        row = [label]
        for name, r in reports.items():
            d = r["dispatch_ms"].get(fn, {})
            parts = ", ".join(
                f"{k} {v:.3f} ({manifest['flops'][fn] / v / 1e9 if v > 0 else float('inf'):.0f})"
                for k, v in d.items()
                if k in ("default", "iree", "triton", "chosen", "default_kernel", "iree_kernel", "triton_kernel", "chosen_kernel")
            )
            row.append(f"{name}: {parts}")
        print("  " + " | ".join(row))
        for name, r in reports.items():
            d = r["dispatch_ms"].get(fn, {})
            if "chosen_variant" in d:
                print(f"      {name} picks {d['chosen_variant']} (variants: {d['variants']})")
    verdict = {}
    plain = reports.get("plain", {}).get("main_ms")
    for name in reports:
        if name != "plain" and plain and "main_ms" in reports[name]:
            verdict[f"{name}_vs_plain"] = round(plain / reports[name]["main_ms"], 2)
    if verdict:
        judged = "frozen" if "frozen_vs_plain" in verdict else "tuned"
        speedup = verdict[f"{judged}_vs_plain"]
        shown = ", ".join(f"{k.replace('_vs_plain', '')} {v:.2f}x" for k, v in verdict.items())
        print(f"\ntarget 1: the tuned program ({judged}) per call {speedup:.2f}x faster than plain (need >= 4; {shown}): {'MET' if speedup >= 4 else 'NOT MET'}")
    for name, r in reports.items():
        if "main_kernel_ms" in r:
            k = r["main_kernel_ms"]
            verdict[f"{name}_main_kernel_ratio"] = round(k["default"] / k["chosen"], 2)
            print(f"kernel time of main's dispatches ({name}, runtime's medians): IREE's defaults {k['default']:.3f} ms, "
                  f"picks {k['chosen']:.3f} ms: {k['default'] / k['chosen']:.2f}x")
    if "iree_only" in reports:
        # Per dispatch, the kernel time of the pick against IREE's default (the runtime's medians).
        rows = reports["iree_only"]["dispatch_ms"]
        has = {fn: d for fn, d in rows.items() if "chosen_kernel" in d and "default_kernel" in d}
        slower = [fn for fn, d in has.items() if d["chosen_kernel"] > d["default_kernel"] * 1.03]
        faster = [fn for fn, d in has.items() if d["chosen_kernel"] < d["default_kernel"] * 0.97]
        verdict["iree_only_slower"], verdict["iree_only_faster"] = slower, faster
        print(f"target 2: Triton off (c): no dispatch slower than IREE's default ({slower or 'none'} slower), "
              f"one faster ({faster or 'none'}): {'MET' if not slower and faster else 'NOT MET'}")
    if args.tuning_results and os.path.exists(args.tuning_results):
        print(f"tuned build's picks written to {args.tuning_results} (build.py --tuning-results makes frozen.vmfb of them)")
    print(f"\n{len(failures)} failure(s); total {time.perf_counter() - t0:.1f} s")
    for f in failures:
        print("  FAIL", f)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"reports": reports, "verdict": verdict, "failures": failures, "device_allocator": args.device_allocator}, fh, indent=1, default=str)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
