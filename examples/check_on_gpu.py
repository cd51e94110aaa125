"""Run every variant of every example on a GPU and compare with numpy.

    .venv/bin/python examples/check_on_gpu.py --vmfb-dir out/ [--driver cuda] [--json results.json]

(any Python with iree-base-runtime and numpy: the Quick start's ``.venv`` on a GPU machine, or
one with ``pip install iree-base-runtime==3.13.* numpy`` where the modules are copied to).
Expects out/matmul.vmfb, out/vector_add.vmfb and out/softmax.vmfb built by
``autotune-export EXAMPLE.mlir --emit vmfb --target sm_90 -o out/NAME.vmfb``. For each
example, each variant (selected through the module's select entry) and each problem size
(three per example, some not multiples of any tile), the result must equal numpy's
(fp16 tolerance for matmul). Then @__autotune runs and the runtime tunes every group.
Exit status 1 when any result is wrong or any step raises (a module that does not load, a
variant that fails to run, tuning that fails: each is a failed check, and the run goes on).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from autotune_export.runtime.tuner import AutotunedModule  # noqa: E402


def softmax_ref(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


CASES = {
    "matmul": {
        "function": "matmul_host",
        "sizes": [(512, 512, 512), (1000, 777, 333), (129, 65, 1031)],
        "make": lambda rng, s: (
            rng.standard_normal((s[0], s[2])).astype(np.float16),
            rng.standard_normal((s[2], s[1])).astype(np.float16),
        ),
        "ref": lambda a, b: (a.astype(np.float32) @ b.astype(np.float32)),
        "tol": dict(rtol=2e-2, atol=5e-2),
    },
    "vector_add": {
        "function": "add",
        "sizes": [(1 << 20,), (1000003,), (37,)],
        "make": lambda rng, s: (rng.standard_normal(s).astype(np.float32), rng.standard_normal(s).astype(np.float32)),
        "ref": lambda x, y: x + y,
        "tol": dict(rtol=0, atol=0),
    },
    "softmax": {
        "function": "softmax",
        "sizes": [(4096, 1024), (1000, 781), (7, 3)],
        "make": lambda rng, s: (rng.standard_normal(s).astype(np.float32),),
        "ref": softmax_ref,
        "tol": dict(rtol=1e-5, atol=1e-6),
    },
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmfb-dir", required=True)
    ap.add_argument("--driver", default="cuda")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    report = {"checks": [], "tuning": {}, "errors": []}

    def error(example: str, stage: str, err: BaseException) -> None:
        """An exception: a failed check, with its traceback in the report."""
        report["errors"].append({"example": example, "stage": stage, "error": f"{type(err).__name__}: {err}",
                                 "traceback": traceback.format_exc()[-4000:]})
        report["checks"].append({"example": example, "stage": stage, "ok": False, "error": f"{type(err).__name__}: {err}"})
        print(f"  FAIL {stage}: {type(err).__name__}: {err}")

    for name, case in CASES.items():
        t0 = time.perf_counter()
        try:
            mod = AutotunedModule(os.path.join(args.vmfb_dir, f"{name}.vmfb"), driver=args.driver, cache=None,
                                  warmup_ms=10, rep_ms=50)
        except Exception as err:  # noqa: BLE001 - reported as a failed check
            print(f"== {name}")
            error(name, "load", err)
            continue
        load_s = time.perf_counter() - t0
        (group,) = mod.groups.values()
        print(f"== {name}: {len(group.variants)} variants, loaded in {load_s:.2f} s")
        for size in case["sizes"]:
            inputs = case["make"](rng, size)
            ref = case["ref"](*inputs)
            for k, variant in enumerate(group.variants):
                try:
                    mod.select(group.key, k)
                    out = np.asarray(mod(case["function"], *inputs))
                except Exception as err:  # noqa: BLE001
                    error(name, f"run {variant} size={size}", err)
                    continue
                ok = out.shape == ref.shape and np.allclose(out.astype(np.float32), ref, **case["tol"])
                err = float(np.max(np.abs(out.astype(np.float32) - ref))) if out.shape == ref.shape else float("inf")
                report["checks"].append({"example": name, "size": size, "variant": variant, "ok": bool(ok), "max_abs_err": err})
                print(f"  {'OK  ' if ok else 'FAIL'} size={size!s:20} variant={variant:40} max|err|={err:.3g}")
        try:
            mod.functions["__autotune"]()
            timings = mod.autotune()
            for key, ts in timings.items():
                best = min(ts, key=lambda t: t.median_ms)
                report["tuning"][key] = {t.variant: t.median_ms for t in ts}
                print(f"  tuned {key}: " + ", ".join(f"{t.variant}={t.median_ms:.3f}ms" for t in ts) + f" -> {best.variant}")
        except Exception as err:  # noqa: BLE001
            error(name, "tune", err)
    failures = sum(1 for c in report["checks"] if not c["ok"])
    report["passed"], report["failed"] = len(report["checks"]) - failures, failures
    print(f"{report['passed']} passed, {failures} failed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
