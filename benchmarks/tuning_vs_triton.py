"""Run-time tuning: AutotunedModule.autotune() vs triton.autotune, same configs, same shapes (GPU).

    python benchmarks/tuning_vs_triton.py [--vmfb-dir .gpu_bench] [--shapes 4096x4096x4096,...]
        [--runs 3] [--no-cold] [--json out.json]

Needs the modules of benchmarks/build_gpu_inputs.py (``mm_MxNxK.vmfb``: examples/matmul with
``tune_workload`` set to the shape), iree.runtime, and torch + triton for the anchor. Shapes are
M x N x K (A is MxK, B is KxN), fp16.

Per shape, each side in its own process:

* ours: load the module (time), ``autotune()`` ``--runs`` times with its defaults (wall time and
  pick of each), then every variant timed exhaustively with 5x the budgets (warmup 100 ms,
  rep 500 ms of ``AutotunedModule.bench``): the pick's time over the best;
* Triton, warm: ``matmul_autotuned`` (the same 9 configs, key M, N, K) is called once on
  1024^3 (same specialization: compiles every config and tunes that key), then for each shape the
  first call with the new key is timed (= tuning: Triton's do_bench, 25/100 ms per config) ``--runs``
  times (the autotuner's cache is cleared between runs), then every config is timed exhaustively
  with ``do_bench(warmup=100, rep=500)``;
* Triton, cold: a fresh process and an empty TRITON_CACHE_DIR, the first call on the shape
  (compilation of the 9 configs, Triton's launcher build, and tuning).

"pick / best" is each tuner's pick measured against the exhaustive best of its own ruler; the
"other ruler" column measures the same pick (by config) with the other side's exhaustive times;
"ncu" is the device time (gpu__time_duration, median of 3 launches on random inputs) of the
picked config's IREE variant over the fastest variant's, for both tuners: one ruler for both.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

SHAPES = "4096x4096x4096,8192x8192x8192,64x8192x8192"


def _shape(s: str) -> tuple[int, int, int]:
    m, n, k = (int(x) for x in s.split("x"))
    return m, n, k


def _config_index(variant: str) -> int:
    return int(re.match(r"[A-Za-z_]+?_(\d+)_", variant).group(1))


# ---------------------------------------------------------------------------------------------
# Workers


def worker_iree(vmfb: str, runs: int, ex_warmup: float, ex_rep: float, search: str = "exhaustive") -> dict:
    from autotune_export.runtime.tuner import AutotunedModule

    t0 = time.perf_counter()
    mod = AutotunedModule(vmfb, driver="cuda", cache=None, search=search)
    load_s = time.perf_counter() - t0
    (group,) = mod.groups.values()
    out_runs = []
    for _ in range(runs):
        t = time.perf_counter()
        timings = mod.autotune()[group.key]
        wall = time.perf_counter() - t
        pick = mod.chosen[group.key]  # the runtime's own rule (tie rule, cross-check)
        out_runs.append({"wall_s": wall, "pick": pick, "medians_ms": {v.variant: v.median_ms for v in timings}})
    exhaustive = {}
    for k, v in enumerate(group.variants):
        exhaustive[v] = mod.bench(group.key, k, warmup_ms=ex_warmup, rep_ms=ex_rep).median_ms
    return {"load_s": load_s, "variants": group.variants, "tune_args": group.tune_args, "runs": out_runs,
            "exhaustive_ms": exhaustive}


def worker_ncu_ruler(vmfb_dir: str, shapes, calls: int = 3) -> None:
    """Under ncu: every variant of every shape's module, ``calls`` launches on random inputs."""
    import numpy as np

    import iree.runtime as rt

    for shape in shapes:
        key = "x".join(map(str, shape))
        m, n, k = shape
        mod = C.open_module(os.path.join(vmfb_dir, f"mm_{key}.vmfb"))
        (group,) = mod.groups.values()
        rng = np.random.default_rng(0)
        ad = rt.asdevicearray(mod.config.device, rng.standard_normal((m, k), dtype=np.float32).astype(np.float16))
        bd = rt.asdevicearray(mod.config.device, rng.standard_normal((k, n), dtype=np.float32).astype(np.float16))
        f = mod.functions["matmul_host"]
        for v in range(len(group.variants)):
            mod.select(group.key, v)
            for _ in range(calls):
                f(ad, bd)
        del mod


def ncu_ruler(kernels: list[dict], shapes, configs: list[dict], variants: list[str]) -> dict:
    """{shape: {variant: median us}} from the ncu rows: a row belongs to (shape, variant) when
    its name is the variant's export (or its specialization) and its grid is that config's."""
    out = {}
    for shape in shapes:
        key = "x".join(map(str, shape))
        m, n, _ = shape
        out[key] = {}
        for v in variants:
            cfg = configs[_config_index(v)]
            grid = -(-m // cfg["BLOCK_M"]) * -(-n // cfg["BLOCK_N"])
            us = [x["us"] for x in kernels if x["name"] in (v, v + "_spec") and (x.get("grid") or "").startswith(f"({grid},")]
            out[key][v] = C.median(us)
    return out


def _triton_setup():
    import importlib.util

    import torch
    import triton

    spec = importlib.util.spec_from_file_location("mm_kernel_bench", C.MATMUL_KERNEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return torch, triton, mod


def _triton_args(torch, triton, shape):
    m, n, k = shape
    a = torch.randn((m, k), device="cuda", dtype=torch.float16)
    b = torch.randn((k, n), device="cuda", dtype=torch.float16)
    c = torch.empty((m, n), device="cuda", dtype=torch.float16)
    args = (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)  # noqa: E731
    return args, grid


def _pick_index(mod, cfg) -> int:
    for i, c in enumerate(mod.CONFIGS):
        meta = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages")}
        if dict(cfg.kwargs) == meta and cfg.num_warps == c["num_warps"] and cfg.num_stages == c["num_stages"]:
            return i
    return -1


def worker_triton_warm(shapes: list, runs: int, ex_warmup: float, ex_rep: float) -> dict:
    t0 = time.perf_counter()
    torch, triton, mod = _triton_setup()
    import_s = time.perf_counter() - t0
    kernel = mod.matmul_autotuned
    args, grid = _triton_args(torch, triton, (1024, 1024, 1024))
    torch.cuda.synchronize()
    t = time.perf_counter()
    kernel[grid](*args)
    torch.cuda.synchronize()
    warmup_call_s = time.perf_counter() - t
    out = {"import_s": import_s, "warmup_call_s": warmup_call_s, "triton": triton.__version__,
           "torch": torch.__version__, "shapes": {}}
    for shape in shapes:
        args, grid = _triton_args(torch, triton, tuple(shape))
        rs = []
        for _ in range(runs):
            kernel.cache.clear()
            torch.cuda.synchronize()
            t = time.perf_counter()
            kernel[grid](*args)
            torch.cuda.synchronize()
            wall = time.perf_counter() - t
            rs.append({"wall_s": wall, "pick": _pick_index(mod, kernel.best_config), "pick_config": str(kernel.best_config),
                       "bench_time_s": getattr(kernel, "bench_time", None)})
        ex = []
        for c in mod.CONFIGS:
            meta = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages")}
            fn = lambda: mod.matmul_kernel[grid](*args, num_warps=c["num_warps"], num_stages=c["num_stages"], **meta)  # noqa: E731
            ex.append(triton.testing.do_bench(fn, warmup=ex_warmup, rep=ex_rep, return_mode="median"))
        # correctness of the last pick (the autotuner's cache holds it)
        kernel[grid](*args)
        a, b, cc = args[0], args[1], args[2]
        ref = (a.float() @ b.float())
        err = float(((cc.float() - ref).norm() / ref.norm()).item())
        out["shapes"]["x".join(map(str, shape))] = {"runs": rs, "exhaustive_ms": ex, "rel_err": err}
    return out


def worker_triton_cold(shape) -> dict:
    t0 = time.perf_counter()
    torch, triton, mod = _triton_setup()
    torch.zeros(1, device="cuda")
    import_s = time.perf_counter() - t0
    kernel = mod.matmul_autotuned
    args, grid = _triton_args(torch, triton, tuple(shape))
    torch.cuda.synchronize()
    t = time.perf_counter()
    kernel[grid](*args)
    torch.cuda.synchronize()
    first = time.perf_counter() - t
    return {"import_s": import_s, "first_call_s": first, "bench_time_s": getattr(kernel, "bench_time", None),
            "pick": _pick_index(mod, kernel.best_config), "pick_config": str(kernel.best_config),
            "cache_dir": os.environ.get("TRITON_CACHE_DIR")}


# ---------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vmfb-dir", default=os.path.join(C.ROOT, ".gpu_bench"))
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ex-warmup", type=float, default=100.0)
    ap.add_argument("--ex-rep", type=float, default=500.0)
    ap.add_argument("--no-cold", action="store_true")
    ap.add_argument("--no-ncu", action="store_true", help="skip the ncu ruler (device time of every variant)")
    ap.add_argument("--cold-shapes", default=None, help="shapes for the cold Triton runs (default: --shapes)")
    ap.add_argument("--deadline-s", type=float, default=None, help="skip cold runs once this much time has passed")
    ap.add_argument("--json", default=None)
    ap.add_argument("--search", default="exhaustive", choices=["exhaustive", "race"], help="AutotunedModule's search")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--vmfb", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    shapes = [_shape(s) for s in args.shapes.split(",")]
    if args.worker == "iree":
        print(json.dumps(worker_iree(args.vmfb, args.runs, args.ex_warmup, args.ex_rep, args.search)))
        return 0
    if args.worker == "triton-warm":
        print(json.dumps(worker_triton_warm(shapes, args.runs, args.ex_warmup, args.ex_rep)))
        return 0
    if args.worker == "ncu-ruler":
        worker_ncu_ruler(args.vmfb_dir, shapes)
        return 0
    if args.worker == "triton-cold":
        print(json.dumps(worker_triton_cold(shapes[0])))
        return 0

    start = time.perf_counter()
    me = os.path.abspath(__file__)
    common = ["--runs", str(args.runs), "--ex-warmup", str(args.ex_warmup), "--ex-rep", str(args.ex_rep)]
    report = {"env": C.environment(gpu=True), "search": args.search, "ours": {}, "triton_cold": {}}
    for shape in shapes:
        key = "x".join(map(str, shape))
        vmfb = os.path.join(args.vmfb_dir, f"mm_{key}.vmfb")
        r = C.run_json_worker([me, "--worker", "iree", "--vmfb", vmfb, "--search", args.search, *common])
        report["ours"][key] = r
        print(f"  ours {key}: {json.dumps({k: r.get(k) for k in ('load_s', 'error')})} "
              f"runs {[(round(x['wall_s'], 2), x['pick']) for x in r.get('runs', [])]}", flush=True)
    tw = C.run_json_worker([me, "--worker", "triton-warm", "--shapes", args.shapes, *common],
                           env={"TRITON_CACHE_DIR": tempfile.mkdtemp(prefix="triton-warm-")})
    report["triton_warm"] = tw
    print(f"  triton warm: {json.dumps({k: v for k, v in tw.items() if k != 'shapes'})}", flush=True)
    ruler = {}
    if not args.no_ncu:
        variants = next((o["variants"] for o in report["ours"].values() if "variants" in o), [])
        r = C.ncu_kernel_times([me, "--worker", "ncu-ruler", "--shapes", args.shapes, "--vmfb-dir", args.vmfb_dir], timeout=240)
        if "error" in r:
            report["ncu_ruler_error"] = r["error"]
            print(f"  ncu ruler: {r['error']}", flush=True)
        else:
            report["ncu_raw"] = r["raw"]
            ruler = ncu_ruler(r["kernels"], shapes, C.example_matmul_configs(), variants)
            print(f"  ncu ruler: {ruler}", flush=True)
    report["ncu_ruler_us"] = ruler
    if not args.no_cold:
        cold_shapes = [_shape(s) for s in (args.cold_shapes or args.shapes).split(",")]
        for shape in cold_shapes:
            key = "x".join(map(str, shape))
            if args.deadline_s and time.perf_counter() - start > args.deadline_s:
                report["triton_cold"][key] = {"error": "skipped: deadline"}
                continue
            r = C.run_json_worker([me, "--worker", "triton-cold", "--shapes", key],
                                  env={"TRITON_CACHE_DIR": tempfile.mkdtemp(prefix="triton-cold-")})
            report["triton_cold"][key] = r
            print(f"  triton cold {key}: {r}", flush=True)


    rows, summary = [], []
    for shape in shapes:
        key = "x".join(map(str, shape))
        o = report["ours"].get(key, {})
        dev = {_config_index(v): us for v, us in ruler.get(key, {}).items() if us}
        dev_best = min(dev.values()) if dev else None
        t = tw.get("shapes", {}).get(key, {}) if isinstance(tw, dict) else {}
        iree_ex = o.get("exhaustive_ms") or {}
        tri_ex = t.get("exhaustive_ms") or []
        by_idx = {_config_index(v): ms for v, ms in iree_ex.items()}
        iree_best = min(iree_ex.values()) if iree_ex else None
        tri_best = min(tri_ex) if tri_ex else None
        row = {"shape": key}
        if o.get("runs"):
            walls = [x["wall_s"] for x in o["runs"]]
            picks = [x["pick"] for x in o["runs"]]
            own = [iree_ex[p] / iree_best for p in picks]
            other = [tri_ex[_config_index(p)] / tri_best for p in picks] if tri_ex else []
            on_dev = [dev[_config_index(p)] / dev_best for p in picks] if dev else []
            row["ours"] = {"wall_first_s": walls[0], "wall_median_s": statistics.median(walls), "picks": picks,
                           "pick_over_best": own, "pick_over_best_triton_ruler": other, "pick_over_best_ncu": on_dev,
                           "load_s": o.get("load_s"), "best": min(iree_ex, key=iree_ex.get)}
            rows.append([key, "autotune-export", f"{walls[0]:.2f}", f"{statistics.median(walls):.2f}",
                         f"load {o.get('load_s', 0):.2f}", ", ".join(str(_config_index(p)) for p in picks),
                         f"{_config_index(row['ours']['best'])}", " ".join(f"{x:.3f}" for x in own),
                         " ".join(f"{x:.3f}" for x in other), " ".join(f"{x:.3f}" for x in on_dev)])
        if t.get("runs"):
            walls = [x["wall_s"] for x in t["runs"]]
            picks = [x["pick"] for x in t["runs"]]
            own = [tri_ex[p] / tri_best for p in picks]
            other = [by_idx[p] / iree_best for p in picks if p in by_idx] if iree_ex else []
            cold = report["triton_cold"].get(key, {})
            on_dev = [dev[p] / dev_best for p in picks if p in dev] if dev else []
            row["triton"] = {"wall_first_s": walls[0], "wall_median_s": statistics.median(walls), "picks": picks,
                             "pick_over_best": own, "pick_over_best_iree_ruler": other, "pick_over_best_ncu": on_dev,
                             "cold_first_call_s": cold.get("first_call_s"), "cold_pick": cold.get("pick"),
                             "best": tri_ex.index(tri_best)}
            rows.append([key, "triton.autotune", f"{walls[0]:.2f}", f"{statistics.median(walls):.2f}",
                         f"cold {cold['first_call_s']:.2f}" if cold.get("first_call_s") else (cold.get("error", "") or "")[:40],
                         ", ".join(map(str, picks)), str(tri_ex.index(tri_best)),
                         " ".join(f"{x:.3f}" for x in own), " ".join(f"{x:.3f}" for x in other),
                         " ".join(f"{x:.3f}" for x in on_dev)])
        if dev:
            row["ncu_best_config"] = min(dev, key=dev.get)
        if "ours" in row and "triton" in row:
            row["tuning_time_ratio_warm"] = row["ours"]["wall_median_s"] / row["triton"]["wall_median_s"]
            if row["triton"].get("cold_first_call_s"):
                row["tuning_time_ratio_cold"] = (row["ours"]["wall_first_s"] + (row["ours"]["load_s"] or 0)) / row["triton"]["cold_first_call_s"]
        summary.append(row)
    print()
    print(C.table(["shape MxNxK", "tuner", "tuning s (1st)", "tuning s (median)", "cold / load s", "picks (config)",
                   "best (own ruler)", "pick / best (own)", "pick / best (other ruler)", "pick / best (ncu)"], rows,
                  title="Run-time tuning, fp16 matmul, 9 configs"))
    for row in summary:
        if "tuning_time_ratio_warm" in row:
            cold = f", (load + first tuning) / Triton cold first call {row['tuning_time_ratio_cold']:.3f}" if "tuning_time_ratio_cold" in row else ""
            print(f"{row['shape']}: tuning time ours / Triton (warm) {row['tuning_time_ratio_warm']:.3f}{cold}")
    report["summary"] = summary
    C.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
