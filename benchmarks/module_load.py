"""Module load time: PTX vs cubin objects, 8 and 32 exports, driver JIT cache disabled (GPU).

    python benchmarks/module_load.py [--vmfb-dir .gpu_bench] [--repeat 3] [--no-jit-cache-rows]
        [--json out.json]

Needs load_{8,32}_{ptx,cubin}.vmfb from benchmarks/build_gpu_inputs.py (the fp16 matmul kernel,
4 and 16 configs of benchmarks/configs/matmul_space32.mlir, each a plain and a specialized
export) and iree.runtime. Each sample is a fresh process with CUDA_CACHE_DISABLE=1 (the driver
compiles PTX every time) that times, in order: creating the CUDA device (rt.Config), creating
the module in a context (VmModule.mmap + add_vm_module: IREE creates the executables, i.e. loads
the CUDA module, here), the first call of the host function (256x256x256 matmul, host inputs)
and the second call. With the JIT cache rows, the PTX modules are also loaded with the driver's
cache enabled (a fresh CUDA_CACHE_PATH, filled by one untimed load first).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

MODULES = [("load_8_ptx", 8, "ptx"), ("load_8_cubin", 8, "cubin"), ("load_32_ptx", 32, "ptx"), ("load_32_cubin", 32, "cubin")]


def worker(vmfb: str) -> dict:
    t0 = time.perf_counter()
    import numpy as np

    import iree.runtime as rt

    t_import = time.perf_counter() - t0
    t = time.perf_counter()
    config = rt.Config("cuda")
    t_device = time.perf_counter() - t
    t = time.perf_counter()
    ctx = rt.SystemContext(config=config)
    vm = rt.VmModule.mmap(ctx.instance, vmfb)
    ctx.add_vm_module(vm)
    fn = ctx.modules[vm.name]["matmul_host"]
    t_module = time.perf_counter() - t
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float16)
    b = rng.standard_normal((256, 256)).astype(np.float16)
    t = time.perf_counter()
    c = fn(a, b).to_host()
    t_first = time.perf_counter() - t
    t = time.perf_counter()
    fn(a, b).to_host()
    t_second = time.perf_counter() - t
    ok = bool(np.allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2, atol=5e-2))
    return {"import_ms": t_import * 1e3, "device_ms": t_device * 1e3, "module_ms": t_module * 1e3,
            "first_call_ms": t_first * 1e3, "second_call_ms": t_second * 1e3, "correct": ok}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vmfb-dir", default=os.path.join(C.ROOT, ".gpu_bench"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-jit-cache-rows", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return 0
    me = os.path.abspath(__file__)
    samples = {}
    for _ in range(args.repeat):
        for name, n, fmt in MODULES:
            r = C.run_json_worker([me, "--worker", os.path.join(args.vmfb_dir, name + ".vmfb")], env={"CUDA_CACHE_DISABLE": "1"})
            samples.setdefault((name, "disabled"), []).append(r)
            print(f"  {name} jit-cache=off {r}", flush=True)
    if not args.no_jit_cache_rows:
        for name, n, fmt in MODULES:
            if fmt != "ptx":
                continue
            env = {"CUDA_CACHE_PATH": tempfile.mkdtemp(prefix="cuda-cache-"), "CUDA_CACHE_DISABLE": "0"}
            C.run_json_worker([me, "--worker", os.path.join(args.vmfb_dir, name + ".vmfb")], env=env)  # fill
            for _ in range(args.repeat):
                r = C.run_json_worker([me, "--worker", os.path.join(args.vmfb_dir, name + ".vmfb")], env=env)
                samples.setdefault((name, "filled"), []).append(r)
                print(f"  {name} jit-cache=filled {r}", flush=True)
    rows, summary = [], []
    for (name, cache), rs in samples.items():
        ok = [r for r in rs if "module_ms" in r]
        if not ok:
            summary.append({"module": name, "jit_cache": cache, "error": rs[0].get("error")})
            continue
        n, fmt = next((m[1], m[2]) for m in MODULES if m[0] == name)
        med = {k: statistics.median(r[k] for r in ok) for k in ("device_ms", "module_ms", "first_call_ms", "second_call_ms")}
        size = os.path.getsize(os.path.join(args.vmfb_dir, name + ".vmfb"))
        row = {"module": name, "exports": n, "object": fmt, "jit_cache": cache, "vmfb_mb": size / 1e6, **med,
               "load_plus_first_ms": med["module_ms"] + med["first_call_ms"], "correct": all(r["correct"] for r in ok),
               "samples": ok}
        summary.append(row)
        rows.append([n, fmt, cache, f"{size / 1e6:.2f}", med["device_ms"], med["module_ms"], med["first_call_ms"],
                     med["second_call_ms"], row["load_plus_first_ms"], row["correct"]])
    for n in (8, 32):
        p = next((r for r in summary if r.get("exports") == n and r.get("object") == "ptx" and r["jit_cache"] == "disabled"), None)
        c = next((r for r in summary if r.get("exports") == n and r.get("object") == "cubin" and r["jit_cache"] == "disabled"), None)
        if p and c:
            print(f"{n} exports: PTX / cubin (module + first call) = {p['load_plus_first_ms'] / c['load_plus_first_ms']:.1f}x")
    print()
    print(C.table(["exports", "object", "driver JIT cache", "vmfb MB", "device create ms", "module create ms",
                   "first call ms", "second call ms", "module + first call ms", "result ok"], rows,
                  title="Module load (median of fresh processes)"))
    C.write_json(args.json, {"env": C.environment(gpu=True), "summary": summary})
    return 0


if __name__ == "__main__":
    sys.exit(main())
