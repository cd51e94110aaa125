"""Dispatch overhead of a group (condition chain) vs a direct dispatch, and IREE vs Triton launch (GPU).

    python benchmarks/dispatch_overhead.py [--vmfb-dir .gpu_bench] [--n 4096] [--calls 200]
        [--rounds 2] [--no-ncu] [--json out.json]

Needs va_group.vmfb and va_direct.vmfb from benchmarks/build_gpu_inputs.py (examples/vector_add:
3 variants, fp32 out = x + y), iree.runtime; torch + triton and ncu for the anchors.

* IREE, per call: the host function ``add`` of va_group.vmfb (flow.dispatch to the group,
  lowered to the condition/fallback chain on the choice global; variant k selected) vs
  ``add_direct_k`` of va_direct.vmfb (the same export dispatched directly, no conditions).
  One call = one synchronous invocation with device-resident inputs (IREE's default ABI waits
  for the result). Both modules live in one process on one device and batches of ``--calls``
  calls alternate between them; per-call time = median over ``--batches`` batches, chain cost =
  median of the paired (group - direct) batch differences; ``--rounds`` processes per IREE flag
  set (``--flag-sets``: defaults, CUDA streams, CUDA graphs), minimum of the medians kept.
* Triton, per call: ``add_kernel[grid](...)`` with the same BLOCK_SIZE / num_warps on torch
  tensors, followed by torch.cuda.synchronize() (comparable with IREE's synchronous call), and
  without the synchronize (launch cost alone, the throughput of back-to-back launches).
* Device time: ``ncu --metrics gpu__time_duration.sum`` of the same kernel launched by IREE
  (group module) and by Triton (median of the launches).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

CONFIGS = [(256, 2), (1024, 4), (4096, 8)]  # (BLOCK_SIZE, num_warps) of examples/vector_add


def _per_call_us(fn, calls: int, batches: int) -> float:
    for _ in range(min(calls, 50)):
        fn()
    samples = []
    for _ in range(batches):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t) * 1e6 / calls)
    return statistics.median(samples)


def worker_iree(vmfb_dir: str, n: int, calls: int, batches: int, flags: str = "", ncu_calls: int = 0) -> dict:
    """Both modules in one process on one device; batches of group and direct calls alternate,
    so drift (clocks, other load) hits both alike; the chain's cost is the median of the
    paired differences."""
    import numpy as np

    import iree.runtime as rt

    if flags:
        rt.flags.parse_flags(*flags.split())
    mod = C.open_module(os.path.join(vmfb_dir, "va_group.vmfb"))
    (group,) = mod.groups.values()
    ctx = rt.SystemContext(config=mod.config)
    direct_vm = rt.VmModule.copy_buffer(ctx.instance, open(os.path.join(vmfb_dir, "va_direct.vmfb"), "rb").read())
    ctx.add_vm_module(direct_vm)
    direct = ctx.modules[direct_vm.name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    xd = rt.asdevicearray(mod.config.device, x)
    yd = rt.asdevicearray(mod.config.device, y)
    g = mod.functions["add"]
    out = {"flags": flags, "variants": group.variants, "group_us": {}, "direct_us": {}, "paired_diff_us": {}, "correct": {}}
    for k in range(len(group.variants)):
        mod.select(group.key, k)
        d = direct[f"add_direct_{k}"]
        out["correct"][k] = bool(np.array_equal(np.asarray(g(xd, yd).to_host()), x + y)
                                 and np.array_equal(np.asarray(d(xd, yd).to_host()), x + y))
        if ncu_calls:
            for _ in range(ncu_calls):
                g(xd, yd)
            for _ in range(ncu_calls):
                d(xd, yd)
            continue
        for _ in range(min(calls, 50)):
            g(xd, yd)
            d(xd, yd)
        gs, ds = [], []
        for _ in range(batches):
            for fn, acc in ((g, gs), (d, ds)):
                t = time.perf_counter()
                for _ in range(calls):
                    fn(xd, yd)
                acc.append((time.perf_counter() - t) * 1e6 / calls)
        out["group_us"][k] = statistics.median(gs)
        out["direct_us"][k] = statistics.median(ds)
        out["paired_diff_us"][k] = statistics.median(a - b for a, b in zip(gs, ds))
        out.setdefault("spread_us", {})[k] = {"group_p20_p80": _p20_p80(gs), "direct_p20_p80": _p20_p80(ds)}
    return out


def _p20_p80(xs):
    xs = sorted(xs)
    return [xs[int(0.2 * (len(xs) - 1))], xs[int(0.8 * (len(xs) - 1))]]


def worker_triton(n: int, calls: int, batches: int, ncu_calls: int = 0) -> dict:
    import importlib.util

    import torch
    import triton

    spec = importlib.util.spec_from_file_location("va_kernel_bench", C.VECTOR_ADD_KERNEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    o = torch.empty(n, device="cuda")
    out = {"sync_us": {}, "async_us": {}, "triton": triton.__version__}
    for k, (bs, nw) in enumerate(CONFIGS):
        grid = (triton.cdiv(n, bs),)
        launch = lambda: mod.add_kernel[grid](x, y, o, n, BLOCK_SIZE=bs, num_warps=nw)  # noqa: E731
        launch()
        torch.cuda.synchronize()
        if ncu_calls:
            for _ in range(ncu_calls):
                launch()
            torch.cuda.synchronize()
            continue

        def sync_call():
            launch()
            torch.cuda.synchronize()

        out["sync_us"][k] = _per_call_us(sync_call, calls, batches)
        out["async_us"][k] = _per_call_us(launch, calls, batches)
        torch.cuda.synchronize()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vmfb-dir", default=os.path.join(C.ROOT, ".gpu_bench"))
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--batches", type=int, default=25)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ncu-calls", type=int, default=5)
    ap.add_argument("--no-ncu", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--iree-flags", default="", help=argparse.SUPPRESS)
    ap.add_argument("--flag-sets", default=",--cuda_use_streams=true,--cuda_use_streams=false",
                    help="IREE runtime flag sets to measure, comma-separated ('' = defaults)")
    args = ap.parse_args()
    if args.worker == "iree":
        print(json.dumps(worker_iree(args.vmfb_dir, args.n, args.calls, args.batches, args.iree_flags)))
        return 0
    if args.worker == "triton":
        print(json.dumps(worker_triton(args.n, args.calls, args.batches)))
        return 0
    if args.worker == "ncu-iree":
        worker_iree(args.vmfb_dir, args.n, args.calls, args.batches, ncu_calls=args.ncu_calls)
        return 0
    if args.worker == "ncu-triton":
        worker_triton(args.n, args.calls, args.batches, ncu_calls=args.ncu_calls)
        return 0

    me = os.path.abspath(__file__)
    base = ["--n", str(args.n), "--calls", str(args.calls), "--batches", str(args.batches), "--vmfb-dir", args.vmfb_dir]
    report = {"env": C.environment(gpu=True), "n": args.n, "iree": {}}
    flag_sets = args.flag_sets.split(",")
    for _ in range(args.rounds):
        for flags in flag_sets:
            r = C.run_json_worker([me, "--worker", "iree", f"--iree-flags={flags}", *base])
            report["iree"].setdefault(flags, []).append(r)
            print(f"  iree [{flags or 'default flags'}]: {r}", flush=True)
    report["triton"] = C.run_json_worker([me, "--worker", "triton", *base])
    print(f"  triton: {report['triton']}", flush=True)
    ncu = {}
    if not args.no_ncu:
        ncu_base = [me, "--n", str(args.n), "--ncu-calls", str(args.ncu_calls), "--vmfb-dir", args.vmfb_dir]
        ncu["iree"] = C.ncu_kernel_times([*ncu_base, "--worker", "ncu-iree"])
        ncu["triton"] = C.ncu_kernel_times([*ncu_base, "--worker", "ncu-triton"])
        for side in ncu:
            print(f"  ncu {side}: {ncu[side].get('error') or [(k['name'], k['grid'], round(k['us'], 2)) for k in ncu[side]['kernels']]}", flush=True)
    report["ncu"] = {k: {kk: vv for kk, vv in v.items() if kk != "raw"} for k, v in ncu.items()}
    report["ncu_raw"] = {k: v.get("raw") for k, v in ncu.items()}

    rows, summary = [], []
    tri = report["triton"]
    for flags in flag_sets:
        runs = [r for r in report["iree"].get(flags, []) if "group_us" in r]
        if not runs:
            summary.append({"flags": flags, "error": (report["iree"].get(flags) or [{}])[0].get("error")})
            continue
        for k, v in enumerate(runs[0]["variants"]):
            g = min(r["group_us"][str(k)] for r in runs)
            d = min(r["direct_us"][str(k)] for r in runs)
            diff = statistics.median(r["paired_diff_us"][str(k)] for r in runs)
            bs, nw = CONFIGS[k]
            grid = -(-args.n // bs)
            iree_dev = [x["us"] for x in ncu.get("iree", {}).get("kernels", []) if x["name"] == v]
            tri_dev = [x["us"] for x in ncu.get("triton", {}).get("kernels", [])
                       if "add_kernel" in x["name"] and (x.get("grid") or "").startswith(f"({grid},")]
            row = {"flags": flags or "default", "variant": v, "group_us": g, "direct_us": d, "chain_cost_us": diff,
                   "conditions_evaluated": k, "triton_sync_us": tri.get("sync_us", {}).get(str(k)),
                   "triton_async_us": tri.get("async_us", {}).get(str(k)),
                   "ncu_iree_us": C.median(iree_dev), "ncu_triton_us": C.median(tri_dev),
                   "correct": all(r["correct"][str(k)] for r in runs)}
            summary.append(row)
            rows.append([row["flags"], v, k, g, d, diff, row["triton_sync_us"], row["triton_async_us"],
                         row["ncu_iree_us"], row["ncu_triton_us"], row["correct"]])
    print()
    print(C.table(["IREE flags", "variant", "conditions before it", "IREE group us/call", "IREE direct us/call",
                   "group - direct us (paired median)", "Triton launch+sync us", "Triton launch only us",
                   "device us (IREE, ncu)", "device us (Triton, ncu)", "result ok"], rows,
                  title=f"Dispatch overhead, vector_add n={args.n} fp32"))
    report["summary"] = summary
    C.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
