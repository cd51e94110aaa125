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
            # Fake data is seeded and position-dependent (docs/runtime.md); an in-place operand is
            # refilled before every run, so 500 runs leave what one run leaves (drifting data
            # would grow without bound). Every element is compared, not only the first.
            for bench in info.bench:
                once = [np.asarray(r.to_host()).copy() for r in m.functions[bench](1)]
                many = [np.asarray(r.to_host()) for r in m.functions[bench](500)]
                same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(once, many)) and len(once) == len(many)
                check(f"{key} {bench}: fake data after 500 in-place runs equals after 1 run", same, True)
    except Exception as err:  # noqa: BLE001 - a failing step fails the check
        bad += 1
        print(f"  BAD tuning raised {type(err).__name__}: {err}")
    print(f"{ok} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
