"""Tuning quality on a GPU: does the runtime's pick match an exhaustive measurement?

    python benchmarks/tuning_accuracy.py --vmfb out/matmul.vmfb [--vmfb out/matmul_skinny.vmfb]
        [--runs 3] [--json results.json] [--triton-kernel examples/matmul/kernel.py]

For each module (one group each): every variant is timed exhaustively (10x Triton's
do_bench budgets: warmup 250 ms, rep 1000 ms), then AutotunedModule.autotune() runs ``--runs``
times with the default budgets (25/100 ms); each pick's exhaustive time is compared with the
best. With --triton-kernel (needs torch and triton on the GPU machine), triton.autotune tunes the
same configs on the same shape with torch tensors, for the tuning wall time side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from autotune_export.runtime.tuner import AutotunedModule  # noqa: E402


def tune_module(path: str, runs: int) -> dict:
    mod = AutotunedModule(path, driver="cuda", cache=None)
    (group,) = mod.groups.values()
    exhaustive = {}
    for k, v in enumerate(group.variants):
        exhaustive[v] = mod.bench(group.key, k, warmup_ms=250, rep_ms=1000).median_ms
    best = min(exhaustive, key=exhaustive.get)
    picks = []
    for _ in range(runs):
        t0 = time.perf_counter()
        timings = mod.autotune()[group.key]
        wall = time.perf_counter() - t0
        pick = min(timings, key=lambda t: t.median_ms).variant
        picks.append({"variant": pick, "wall_s": wall, "ratio_to_best": exhaustive[pick] / exhaustive[best]})
    # The tuning cache: a first load tunes and stores, a second load of the same module is
    # answered from the cache (no timing at all).
    import tempfile

    cache = os.path.join(tempfile.mkdtemp(), "tuning.json")
    first = AutotunedModule(path, driver="cuda", cache=cache, strategy="load")
    t0 = time.perf_counter()
    second = AutotunedModule(path, driver="cuda", cache=cache, strategy="load")
    cached = {"first_pick": first.chosen[group.key], "second_pick": second.chosen[group.key],
              "second_source": second.sources[group.key], "second_load_s": time.perf_counter() - t0}
    return {"module": path, "tune_args": group.tune_args, "exhaustive_ms": exhaustive, "best": best, "picks": picks,
            "cache": cached}


def triton_autotune(kernel_file: str, shape: tuple[int, int, int]) -> dict:
    import importlib.util

    import torch
    import triton

    spec = importlib.util.spec_from_file_location("mm_kernel", kernel_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    M, N, K = shape
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16)
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    kernel = mod.matmul_autotuned
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    kernel[grid](*args)
    torch.cuda.synchronize()
    first_call = time.perf_counter() - t0
    best = kernel.best_config
    ms = triton.testing.do_bench(lambda: kernel[grid](*args))
    ref = (a.float() @ b.float()).half()
    ok = torch.allclose(c, ref, rtol=2e-2, atol=5e-2)
    return {"shape": shape, "first_call_s": first_call, "best_config": str(best), "best_ms": ms, "correct": bool(ok),
            "bench_time_s": getattr(kernel, "bench_time", None), "triton": triton.__version__}


def _tensor_shape(text: str) -> list[int]:
    """The static shape of a ranked tensor type's text: ``tensor<8192x128xf16>`` -> [8192, 128]
    (the element type, whose name may hold digits, is the last ``x``-separated part)."""
    return [int(d) for d in text[text.index("<") + 1 : text.rindex(">")].split("x")[:-1]]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmfb", action="append", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", default=None)
    ap.add_argument("--triton-kernel", default=None)
    args = ap.parse_args()
    report = {"modules": [], "triton": []}
    for path in args.vmfb:
        r = tune_module(path, args.runs)
        report["modules"].append(r)
        print(f"== {path} tune_args={r['tune_args']}")
        for v, ms in sorted(r["exhaustive_ms"].items(), key=lambda kv: kv[1]):
            print(f"   {v:40} {ms:.4f} ms")
        for p in r["picks"]:
            print(f"   pick {p['variant']:35} {p['ratio_to_best']:.4f} x best, tuning wall {p['wall_s']:.2f} s")
        print(f"   cache: {r['cache']}")
        if args.triton_kernel:
            (m, k), (_, n) = (_tensor_shape(t) for t in r["tune_args"][:2])
            shape = (m, n, k)
            try:
                t = triton_autotune(args.triton_kernel, shape)
            except Exception as err:  # report and go on: the IREE figures stand alone
                t = {"shape": shape, "error": f"{type(err).__name__}: {err}"}
            report["triton"].append(t)
            print(f"   triton.autotune {t}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
