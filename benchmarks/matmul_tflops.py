"""Absolute matmul throughput: the tuned kernel through IREE vs torch.matmul (cuBLAS) (GPU).

    python benchmarks/matmul_tflops.py [--vmfb-dir .gpu_bench] [--shapes 4096x4096x4096,8192x8192x8192]
        [--calls 30] [--no-ncu] [--json out.json]

Needs mm_<shape>.vmfb from benchmarks/build_gpu_inputs.py, iree.runtime, torch, triton, ncu.
fp16 inputs, random normal, row-major; C = A @ B with fp32 accumulation.

* IREE: the module whose tune workload is the shape is loaded and tuned (autotune(), defaults);
  wall per call = median of ``--calls`` synchronous calls of ``matmul_host`` with
  device-resident inputs (allocation of C, dispatch, wait), after 3 warm-up calls.
* torch: ``torch.matmul(a, b)`` then ``torch.cuda.synchronize()``, same count; also
  ``triton.testing.do_bench`` (CUDA events, L2 flushed) for the device-side view.
* device time: ``ncu --metrics gpu__time_duration.sum`` over 5 launches each of the IREE
  dispatch (the tuned variant), torch.matmul (every kernel cuBLAS launches for one call,
  summed), and, as a same-kernel anchor, Triton launching the picked config itself.
TFLOP/s = 2 M N K / time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

SHAPES = "4096x4096x4096,8192x8192x8192"


def _shape(s):
    return tuple(int(x) for x in s.split("x"))


def _cfg_of_variant(variant: str, configs: list[dict]) -> dict:
    return configs[int(re.match(r"[A-Za-z_]+?_(\d+)_", variant).group(1))]


def worker_iree(vmfb_dir: str, shapes, calls: int, ncu_picks: dict | None = None) -> dict:
    import numpy as np


    import iree.runtime as rt

    out = {}
    for shape in shapes:
        key = "x".join(map(str, shape))
        m, n, k = shape
        mod = C.open_module(os.path.join(vmfb_dir, f"mm_{key}.vmfb"))
        (group,) = mod.groups.values()
        rng = np.random.default_rng(0)
        a = rng.standard_normal((m, k), dtype=np.float32).astype(np.float16)
        b = rng.standard_normal((k, n), dtype=np.float32).astype(np.float16)
        ad = rt.asdevicearray(mod.config.device, a)
        bd = rt.asdevicearray(mod.config.device, b)
        f = mod.functions["matmul_host"]
        if ncu_picks is not None:
            mod.select(group.key, ncu_picks[key])
            for _ in range(5):
                f(ad, bd)
            continue
        t = time.perf_counter()
        timings = mod.autotune()[group.key]
        tune_s = time.perf_counter() - t
        pick = min(timings, key=lambda v: v.median_ms)
        for _ in range(3):
            c = f(ad, bd)
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            f(ad, bd)
            times.append((time.perf_counter() - t) * 1e3)
        rows = 256
        ref = a[:rows].astype(np.float32) @ b.astype(np.float32)
        got = np.asarray(c.to_host())[:rows].astype(np.float32)
        out[key] = {"pick": pick.variant, "pick_bench_ms": pick.median_ms, "tune_s": tune_s,
                    "wall_ms": statistics.median(times), "wall_min_ms": min(times),
                    "rel_err_first_rows": float(np.linalg.norm(got - ref) / np.linalg.norm(ref))}
    return out


def _load_triton_kernel():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mm_kernel_bench", C.MATMUL_KERNEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def worker_torch(shapes, calls: int) -> dict:
    import torch
    import triton

    out = {"torch": torch.__version__}
    for shape in shapes:
        m, n, k = shape
        a = torch.randn((m, k), device="cuda", dtype=torch.float16)
        b = torch.randn((k, n), device="cuda", dtype=torch.float16)
        for _ in range(3):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            torch.matmul(a, b)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t) * 1e3)
        ev = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=25, rep=200, return_mode="median")
        out["x".join(map(str, shape))] = {"wall_ms": statistics.median(times), "wall_min_ms": min(times), "do_bench_ms": ev}
    return out


def worker_ncu_torch(shapes, picks: dict) -> None:
    """Sections, each opened by a marker kernel whose grid is (section + 1): for shape i,
    section 2i = torch.matmul x5, section 2i+1 = Triton launching the picked config x5."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def ncu_marker(p):
        tl.store(p + tl.program_id(0), 1.0)

    mm = _load_triton_kernel()
    flag = torch.zeros(64, device="cuda")
    data = []
    for shape in shapes:
        m, n, k = shape
        a = torch.randn((m, k), device="cuda", dtype=torch.float16)
        b = torch.randn((k, n), device="cuda", dtype=torch.float16)
        c = torch.empty((m, n), device="cuda", dtype=torch.float16)
        data.append((a, b, c))
    torch.cuda.synchronize()
    for i, shape in enumerate(shapes):
        m, n, k = shape
        a, b, c = data[i]
        ncu_marker[(2 * i + 1,)](flag)
        for _ in range(5):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        cfg = _cfg_of_variant(picks["x".join(map(str, shape))], mm.CONFIGS)
        meta = {kk: v for kk, v in cfg.items() if kk not in ("num_warps", "num_stages")}
        grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
        mm.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                               c.stride(1), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], **meta)
        torch.cuda.synchronize()  # compiled outside the section
        ncu_marker[(2 * i + 2,)](flag)
        for _ in range(5):
            mm.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                   c.stride(1), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], **meta)
        torch.cuda.synchronize()


def _sections(kernels: list[dict]) -> dict[int, list[dict]]:
    out, cur = {}, None
    for kr in kernels:
        if "ncu_marker" in kr["name"]:
            cur = int((kr.get("grid") or "(0").strip("()").split(",")[0]) - 1
            continue
        if cur is not None:
            out.setdefault(cur, []).append(kr)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vmfb-dir", default=os.path.join(C.ROOT, ".gpu_bench"))
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--no-ncu", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--picks", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    shapes = [_shape(s) for s in args.shapes.split(",")]
    if args.worker == "iree":
        print(json.dumps(worker_iree(args.vmfb_dir, shapes, args.calls)))
        return 0
    if args.worker == "torch":
        print(json.dumps(worker_torch(shapes, args.calls)))
        return 0
    if args.worker == "ncu-iree":
        worker_iree(args.vmfb_dir, shapes, args.calls, ncu_picks=json.loads(args.picks))
        return 0
    if args.worker == "ncu-torch":
        worker_ncu_torch(shapes, json.loads(args.picks))
        return 0

    me = os.path.abspath(__file__)
    base = ["--shapes", args.shapes, "--calls", str(args.calls), "--vmfb-dir", args.vmfb_dir]
    report = {"env": C.environment(gpu=True)}
    report["iree"] = C.run_json_worker([me, "--worker", "iree", *base])
    print(f"  iree: {report['iree']}", flush=True)
    report["torch"] = C.run_json_worker([me, "--worker", "torch", *base])
    print(f"  torch: {report['torch']}", flush=True)
    picks = {k: v["pick"] for k, v in report["iree"].items() if isinstance(v, dict) and "pick" in v}
    mm_configs = C.example_matmul_configs()
    dev = {}
    if not args.no_ncu and picks:
        ni = C.ncu_kernel_times([me, "--worker", "ncu-iree", "--picks", json.dumps(picks), *base])
        nt = C.ncu_kernel_times([me, "--worker", "ncu-torch", "--picks", json.dumps(picks), *base])
        report["ncu_raw"] = {"iree": ni.get("raw"), "torch": nt.get("raw")}
        report["ncu_errors"] = {k: v.get("error") for k, v in (("iree", ni), ("torch", nt)) if v.get("error")}
        for shape in shapes:
            key = "x".join(map(str, shape))
            m, n, _ = shape
            cfg = _cfg_of_variant(picks[key], mm_configs) if key in picks else None
            grid = -(-m // cfg["BLOCK_M"]) * -(-n // cfg["BLOCK_N"]) if cfg else None
            iree_us = [x["us"] for x in ni.get("kernels", []) if x["name"].startswith("matmul_")
                       and (x.get("grid") or "").startswith(f"({grid},")]
            dev[key] = {"iree_us": C.median(iree_us), "iree_n": len(iree_us)}
        secs = _sections(nt.get("kernels", []))
        for i, shape in enumerate(shapes):
            key = "x".join(map(str, shape))
            # torch's section also holds the one untimed Triton launch that compiles the config.
            cublas = [x for x in secs.get(2 * i, []) if "matmul_kernel" not in x["name"]]
            tri = [x["us"] for x in secs.get(2 * i + 1, []) if "matmul_kernel" in x["name"]]
            dev.setdefault(key, {}).update({"torch_us_per_call": sum(x["us"] for x in cublas) / 5 if cublas else None,
                                            "torch_kernels": sorted({x["name"][:80] for x in cublas}),
                                            "triton_same_config_us": C.median(tri)})
        print(f"  ncu: {dev} {report['ncu_errors']}", flush=True)
    report["device"] = dev

    rows, summary = [], []
    for shape in shapes:
        key = "x".join(map(str, shape))
        m, n, k = shape
        flop = 2.0 * m * n * k
        tf = lambda us: flop / (us * 1e-6) / 1e12 if us else None  # noqa: E731
        i = report["iree"].get(key, {}) if isinstance(report["iree"], dict) else {}
        t = report["torch"].get(key, {}) if isinstance(report["torch"], dict) else {}
        d = dev.get(key, {})
        row = {"shape": key, "pick": i.get("pick"), "iree_device_us": d.get("iree_us"), "torch_device_us": d.get("torch_us_per_call"),
               "triton_same_config_device_us": d.get("triton_same_config_us"),
               "iree_wall_ms": i.get("wall_ms"), "torch_wall_ms": t.get("wall_ms"), "torch_do_bench_ms": t.get("do_bench_ms"),
               "iree_tflops_device": tf(d.get("iree_us")), "torch_tflops_device": tf(d.get("torch_us_per_call")),
               "iree_tflops_wall": tf(i.get("wall_ms", 0) * 1e3), "torch_tflops_wall": tf(t.get("wall_ms", 0) * 1e3),
               "rel_err": i.get("rel_err_first_rows"), "cublas_kernels": d.get("torch_kernels")}
        if row["iree_device_us"] and row["torch_device_us"]:
            row["device_ratio_iree_over_torch"] = row["iree_device_us"] / row["torch_device_us"]
        if row["iree_wall_ms"] and row["torch_wall_ms"]:
            row["wall_ratio_iree_over_torch"] = row["iree_wall_ms"] / row["torch_wall_ms"]
        summary.append(row)
        rows.append([key, (i.get("pick") or "")[:34], row["iree_device_us"], row["triton_same_config_device_us"],
                     row["torch_device_us"], row["iree_tflops_device"], row["torch_tflops_device"],
                     row.get("device_ratio_iree_over_torch"), row["iree_wall_ms"], row["torch_wall_ms"],
                     row["iree_tflops_wall"], row["torch_tflops_wall"], row.get("wall_ratio_iree_over_torch"), row["rel_err"]])
    print()
    print(C.table(["shape", "tuned variant", "IREE dev us", "Triton same cfg dev us", "cuBLAS dev us", "IREE TFLOP/s (dev)",
                   "cuBLAS TFLOP/s (dev)", "dev IREE/cuBLAS", "IREE wall ms", "torch wall ms", "IREE TFLOP/s (wall)",
                   "torch TFLOP/s (wall)", "wall IREE/torch", "rel err"], rows, title="fp16 matmul throughput"))
    report["summary"] = summary
    C.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
