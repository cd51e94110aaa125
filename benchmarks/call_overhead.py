"""What AutotunedModule adds to a call: its overhead over a raw iree.runtime invoke (issue 15,
goal 3: at most 2 us per call, 5 us on the round-robin path). Runs on the GPU machine (or
``--driver local-task`` with a CPU module).

    python benchmarks/call_overhead.py [--vmfb .gpu_bench/va_group.vmfb] [--function add]
        [--n 4096] [--calls 2000] [--batches 15] [--json out.json]

The module's host function is called with device-resident inputs (``DeviceArray``s made once)
four ways, batches of ``--calls`` calls interleaved so that drift affects all alike:

* ``raw``: ``ctx.modules[name][function](x, y)``, iree.runtime alone (the anchor);
* ``wrapped``: ``AutotunedModule(...)(function, x, y, device=True)`` (strategy "request");
* ``host``: the same, returning numpy (copy to the host: what a call costs with host results);
* ``round-robin``: an AutotunedModule with strategy "round-robin" whose workload is locked
  (the per-workload lookup of each call).

Per way: the median over batches of (batch time / calls), in us; overhead = median of the
paired (way - raw) batch differences.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vmfb", default=os.path.join(C.ROOT, ".gpu_bench", "va_group.vmfb"))
    ap.add_argument("--driver", default="cuda")
    ap.add_argument("--function", default="add")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--inputs", type=int, default=2, help="number of f32[n] inputs of the function (default 2)")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import numpy as np

    if C.ROOT not in sys.path:
        sys.path.insert(0, C.ROOT)
    from autotune_export.runtime.tuner import AutotunedModule

    host = [np.arange(args.n, dtype=np.float32) + i for i in range(args.inputs)]
    wrapped = AutotunedModule(args.vmfb, driver=args.driver, cache=None, device_results=True)
    rr = AutotunedModule(args.vmfb, driver=args.driver, cache=None, strategy="round-robin", min_rounds=2, max_rounds=3)
    xs = [wrapped.device_array(a) for a in host]
    rs = [rr.device_array(a) for a in host]
    for _ in range(50):  # lock the round-robin module on this workload
        rr(args.function, *rs, device=True)
    (info,) = rr.groups.values()
    assert rr.sources[info.key] == "round-robin", rr.sources
    locked = next(iter(rr.per_workload.get(info.key, {}).values()), rr.chosen[info.key])
    wrapped.select(info.key, locked)  # the same variant on every path: only the call costs differ
    raw = wrapped.functions[args.function]
    np.testing.assert_array_equal(np.asarray(wrapped(args.function, *xs)), np.asarray(raw(*xs).to_host()))
    ways = {
        "raw": lambda: raw(*xs),
        "wrapped": lambda: wrapped(args.function, *xs, device=True),
        "host": lambda: wrapped(args.function, *xs, device=False),
        "round-robin": lambda: rr(args.function, *rs, device=True),
    }
    for fn in ways.values():
        for _ in range(100):
            fn()
    per_call = {k: [] for k in ways}
    for _ in range(args.batches):
        for k, fn in ways.items():
            t0 = time.perf_counter()
            for _ in range(args.calls):
                fn()
            per_call[k].append((time.perf_counter() - t0) / args.calls * 1e6)
    rows = []
    report = {"env": C.environment(gpu=args.driver == "cuda"), "args": vars(args), "us": per_call, "overhead_us": {}}
    for k in ways:
        med = statistics.median(per_call[k])
        over = statistics.median(a - b for a, b in zip(per_call[k], per_call["raw"])) if k != "raw" else 0.0
        report["overhead_us"][k] = over
        rows.append([k, f"{med:.2f}", f"{over:+.2f}"])
    print(C.table(["call", "us per call (median)", "over raw (paired median)"], rows,
                  f"{args.function}, n = {args.n}, {args.driver}, {args.calls} calls x {args.batches} batches"))
    C.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
