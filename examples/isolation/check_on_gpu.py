"""Tuning survives a variant that faults and one that hangs, on a GPU (issue 24 item 5).

    python examples/isolation/check_on_gpu.py .gpu/isolation/isolation.vmfb     (iree-base-runtime, numpy)

The module (examples/isolation/isolation.mlir, built for sm_90) has four configs of out = 2 * x:
variant 1 stores 4 TiB out of bounds (a CUDA illegal address, which poisons the context of the
process that runs it) and variant 2 never terminates. Checked, in this order:

1. ``AutotunedModule(..., isolation="process").autotune()`` in this process: variants 1 and 2
   are dropped with their reasons (``m.drop_reasons``), the winner is variant 0 or 3, and this
   process goes on: the program's own call ``m("scale", x)`` returns 2 * x exactly, on the
   variant chosen, for sizes with and without a tail block.
2. The default ``isolation="auto"`` with the same tuning cache: the dropped variants are read
   from the cache (not run again), the same variant is chosen, and no worker is started.
3. ``autotune-export tune`` (``python -m autotune_export.tools.tune``) on a fresh cache: exit 0,
   the two variants marked dropped with their reasons in the table.

Prints what it sees (the reasons, the timings, the worker start times) and exits 1 when a step
does not hold.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from autotune_export.runtime import AutotunedModule  # noqa: E402
from autotune_export.tools import tune  # noqa: E402

GROUP = "isolation_ex::scale"
#: Limits: the healthy variants take microseconds; these only bound the two bad ones.
VARIANT_TIMEOUT_S = 20.0


def main() -> int:
    vmfb = sys.argv[1]
    driver = sys.argv[2] if len(sys.argv) > 2 else "cuda"
    failures: list[str] = []

    def expect(ok: bool, what: str) -> None:
        print(f"  {'OK ' if ok else 'BAD'} {what}")
        if not ok:
            failures.append(what)

    tmp = tempfile.mkdtemp(prefix="isolation-gpu-")
    cache = os.path.join(tmp, "tuning.json")

    print("1. tuning in a worker process (isolation='process')")
    m = AutotunedModule(vmfb, driver=driver, cache=cache, isolation="process", variant_timeout_s=VARIANT_TIMEOUT_S)
    variants = m.group(GROUP).variants
    t0 = time.perf_counter()
    m.autotune()
    wall = time.perf_counter() - t0
    reasons = m.drop_reasons.get(GROUP, {})
    for v, why in reasons.items():
        print(f"     dropped {v}: {why}")
    for t in m.timings.get(GROUP, {}).get(0, []):
        if t.times_ms:
            print(f"     {t.variant}: {t.median_ms:.4f} ms ({len(t.times_ms)} samples)")
    print(f"     chosen {m.chosen[GROUP]}; tuning took {wall:.2f} s; worker starts (s): {m.worker_starts}")
    expect(set(reasons) == {variants[1], variants[2]}, f"variants 1 and 2 dropped (dropped: {sorted(reasons)})")
    expect(reasons.get(variants[1], "").startswith("fault"), "variant 1 (out of bounds) dropped as a fault")
    if "illegal" not in reasons.get(variants[1], "").lower():
        print("     (note: the runtime's reason names no illegal address: IREE reports the failed device work as ABORTED)")
    expect(reasons.get(variants[2], "").startswith("hang"), "variant 2 (never terminates) dropped as a hang")
    expect(m.chosen[GROUP] in (variants[0], variants[3]), f"the winner is variant 0 or 3 ({m.chosen[GROUP]})")
    rng = np.random.default_rng(0)
    for n in (1048576, 1000003, 37):
        x = rng.standard_normal(n).astype(np.float32)
        y = np.asarray(m("scale", x))
        expect(np.array_equal(y, 2 * x), f"this process goes on: scale(x) == 2 * x for n={n} on {m.chosen[GROUP]}")
    del m

    print("2. the default isolation='auto' with the same cache")
    t0 = time.perf_counter()
    m2 = AutotunedModule(vmfb, driver=driver, cache=cache, variant_timeout_s=VARIANT_TIMEOUT_S)
    m2.autotune()
    wall = time.perf_counter() - t0
    print(f"     chosen {m2.chosen[GROUP]} in {wall:.2f} s (load included); worker starts: {m2.worker_starts}; "
          f"dropped: {m2.drop_reasons.get(GROUP, {})}")
    expect(set(m2.drop_reasons.get(GROUP, {})) == {variants[1], variants[2]}, "the cache remembers both drops")
    expect(m2.worker_starts == [], "nothing ran in a worker (the cache answered)")
    x = rng.standard_normal(4096).astype(np.float32)
    expect(np.array_equal(np.asarray(m2("scale", x)), 2 * x), "scale(x) == 2 * x")
    del m2

    print("3. autotune-export tune on a fresh cache")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = tune.main([vmfb, "--device", driver, "--results", os.path.join(tmp, "fresh.json"),
                        "--variant-timeout", str(VARIANT_TIMEOUT_S)])
    print(out.getvalue())
    table = out.getvalue().splitlines()
    dropped_rows = [line for line in table if "dropped" in line]
    expect(rc == 0, "tune exits 0")
    expect(len(dropped_rows) == 2 and any("fault" in r for r in dropped_rows) and any("hang" in r for r in dropped_rows),
           "the table marks the fault and the hang as dropped")
    expect(sum(line.endswith("<- winner") for line in table) == 1, "one winner")

    print(f"{'FAILED: ' + '; '.join(failures) if failures else 'all checks passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
