"""Every variant of examples/inplace/inplace.mlir against numpy, on a GPU, and tuning on its
fake data (which must not drift: in-place operands are refilled before every run).

    python examples/inplace/check_on_gpu.py out/inplace.vmfb     (needs iree-base-runtime, numpy)

Exit status 1 when a result is wrong or a step raises.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from autotune_export.runtime import AutotunedModule  # noqa: E402


def main() -> int:
    m = AutotunedModule(sys.argv[1], driver=sys.argv[2] if len(sys.argv) > 2 else "cuda", cache=None)
    rng = np.random.default_rng(0)
    ok = bad = 0

    def check(what, got, want):
        nonlocal ok, bad
        good = np.array_equal(np.asarray(got), want)
        ok, bad = ok + good, bad + (not good)
        print(f"  {'OK ' if good else 'BAD'} {what}")

    for n in (65536, 1000003, 37):
        x, y, b = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
        c = rng.standard_normal(n).astype(np.float32)
        for k in range(2):
            for g in ("first_ex::inc", "last_ex::inc", "two_ex::ax", "scalar_ex::add"):
                m.select(g, k)
            check(f"first n={n} variant {k}: x + y", m("first", x, y), x + y)
            check(f"last  n={n} variant {k}: x + y", m("last", y, x), x + y)
            ra, rc = m("two", x, b, c)
            check(f"two   n={n} variant {k}: a + b", ra, x + b)
            check(f"two   n={n} variant {k}: c * b", rc, c * b)
            # a = 2^33 + 5 as the kernel converts it (a.to(tl.float32): 2^33)
            check(f"scalar n={n} variant {k}: x + a (i64 before x)", m("scalar", x), x + np.float32(2**33 + 5))
    try:
        timings = m.autotune()
        for key, ts in timings.items():
            print(f"  tuned {key}: " + ", ".join(f"{t.variant}={t.median_ms:.4f}ms" for t in ts) + f" -> {m.chosen[key]}")
        for key, info in m.groups.items():
            # Fake buffers hold 0.5: x + y = 1.0, a + b = 1.0, c * b = 0.25 after any number of
            # runs when in-place operands are refilled (drifting data would grow without bound).
            want = {"two_ex::ax": [0.25, 1.0], "scalar_ex::add": [float(np.float32(0.5) + np.float32(2**33))]}.get(key, [1.0])
            for bench in info.bench:
                values = sorted({float(np.asarray(r.to_host()).ravel()[0]) for r in m.functions[bench](500)})
                check(f"{key} {bench}: fake data after 500 in-place runs gives {values}", values, want)
    except Exception as err:  # noqa: BLE001 - a failing step fails the check
        bad += 1
        print(f"  BAD tuning raised {type(err).__name__}: {err}")
    print(f"{ok} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
