"""One matmul module, two workloads, one choice each: does tuning pick, per shape, a variant
within 1% of the fastest measured by ncu? (issue 13; runs on the GPU machine)

    python benchmarks/workload_choices.py [--vmfb .gpu_bench/mm_multi.vmfb] [--runs 3] [--json out.json]

``mm_multi.vmfb`` (benchmarks/build_gpu_inputs.py) is examples/matmul with
``tune_workload([4096^3 operands], [8192x128x8192 operands])``. Steps:

1. tuning: ``--runs`` fresh ``AutotunedModule(..., cache=None).autotune()`` per search
   (``exhaustive``, ``race``): wall time and the per-workload table (workload values (M, N) ->
   variant) each run;
2. results: after tuning, the host function on random fp16 inputs of each shape, 64 rows
   against numpy (float32 accumulation), relative error;
3. the ruler: under Nsight Compute (``gpu__time_duration.sum``), every variant of the group on
   each shape (the slot of the shape's workload set to the variant), 3 launches each on
   random inputs; the median per (shape, variant);
4. per shape and run: the pick's ncu time over the fastest variant's (goal: <= 1.01).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 128, 8192)]


def _inputs(rt, device, shape, seed=0):
    import numpy as np

    m, n, k = shape
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((k, n), dtype=np.float32).astype(np.float16)
    return a, b, rt.asdevicearray(device, a), rt.asdevicearray(device, b)


def ncu_worker(vmfb: str, calls: int = 3) -> None:
    import iree.runtime as rt

    mod = C.open_module(vmfb)
    (group,) = mod.groups.values()
    f = mod.functions["matmul_host"]
    for shape in SHAPES:
        _, _, ad, bd = _inputs(rt, mod.config.device, shape)
        for k in range(len(group.variants)):
            assert mod._set_slot(group, [shape[0], shape[1]], k)
            for _ in range(calls):
                f(ad, bd)


def ruler(kernels: list[dict], group) -> dict:
    """{shape: {variant: median us}}: a kernel row belongs to (shape, variant) by its name (the
    variant's export, or its specialization) and its grid (the config's)."""
    out = {}
    for shape in SHAPES:
        m, n, _ = shape
        key = "x".join(map(str, shape))
        out[key] = {}
        for v, cfg in zip(group.variants, group.configs):
            c = dict(cfg)
            grid = -(-m // c["BLOCK_M"]) * -(-n // c["BLOCK_N"])
            us = [x["us"] for x in kernels if x["name"] in (v, v + "_spec") and (x.get("grid") or "").startswith(f"({grid},")]
            out[key][v] = C.median(us) if us else None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vmfb", default=os.path.join(C.ROOT, ".gpu_bench", "mm_multi.vmfb"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", default=None)
    ap.add_argument("--ncu-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ncu_worker:
        ncu_worker(args.vmfb)
        return 0
    import numpy as np

    import iree.runtime as rt
    from autotune_export.runtime.tuner import AutotunedModule

    report = {"env": C.environment(gpu=True), "vmfb": args.vmfb, "tuning": {}, "results": {}}
    for search in ("exhaustive", "race"):
        runs = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            mod = AutotunedModule(args.vmfb, driver="cuda", cache=None, search=search)
            load = time.perf_counter() - t0
            t0 = time.perf_counter()
            mod.autotune()
            wall = time.perf_counter() - t0
            (group,) = mod.groups.values()
            table = {"x".join(map(str, k)): v for k, v in mod.per_workload[group.key].items()}
            medians = {w: {t.variant: [t.median_ms, len(t.times_ms)] for t in ts} for w, ts in mod.timings[group.key].items()}
            runs.append({"load_s": load, "wall_s": wall, "table": table, "dropped": sorted(mod.dropped.get(group.key, ())),
                         "notes": mod.notes.get(group.key), "medians_ms_samples": medians})
            print(f"{search:10} tuning {wall:.3f} s (load {load:.2f} s): {table}", flush=True)
        report["tuning"][search] = runs
    for shape in SHAPES:
        a, b, ad, bd = _inputs(rt, mod.config.device, shape, seed=1)
        c = np.asarray(mod("matmul_host", ad, bd))
        rows = np.random.default_rng(2).choice(shape[0], size=min(64, shape[0]), replace=False)
        ref = a[rows].astype(np.float32) @ b.astype(np.float32)
        err = float(np.linalg.norm(c[rows].astype(np.float32) - ref) / np.linalg.norm(ref))
        report["results"]["x".join(map(str, shape))] = err
        print(f"result {shape}: relative error {err:.2e} ({'OK' if err < 1e-2 else 'BAD'})", flush=True)
    del mod
    got = C.ncu_kernel_times([os.path.abspath(__file__), "--ncu-worker", "--vmfb", args.vmfb], timeout=400)
    if "error" in got:
        print("ncu failed:", got["error"])
        report["ncu_error"] = got["error"]
        C.write_json(args.json, report)
        return 1
    meta = AutotunedModule(args.vmfb, driver="cuda", cache=None)
    (group,) = meta.groups.values()
    us = ruler(got["kernels"], group)
    report["ncu_us"] = us
    rows = []
    for shape in SHAPES:
        key = "x".join(map(str, shape))
        times = {v: t for v, t in us[key].items() if t is not None}
        best = min(times, key=times.get)
        for search, runs in report["tuning"].items():
            for r in runs:
                pick = r["table"].get("x".join(map(str, shape[:2])))
                rows.append([key, search, pick, times.get(pick), best, times[best],
                             (times.get(pick) or float("nan")) / times[best]])
    print(C.table(["shape", "search", "pick", "pick us (ncu)", "fastest", "fastest us", "ratio"], rows,
                  "Picks per workload against ncu"))
    report["rows"] = rows
    C.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
