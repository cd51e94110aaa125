"""Run every variant of the factory examples (kernels made at run time) on a GPU and compare
with numpy.

    python examples/factory/build.py --vmfb-dir out/factory --target sm_90     # here, no GPU
    python examples/factory/check_on_gpu.py --vmfb-dir out/factory [--json results.json]

Needs numpy and iree-base-runtime (no Triton, no torch). For each launch of launches.py, each
variant of its group (chosen through the module's select entry) is called twice with seeded
data and must match numpy; then ``@__autotune`` runs and the module is called once more with
the chosen variant. Exit status 1 when any result is wrong or a step raises.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
from autotune_export.runtime.tuner import AutotunedModule  # noqa: E402
from launches import LAUNCHES  # noqa: E402


def compare(spec, results, refs):
    """(ok, max abs error, why)."""
    rtol, atol = spec["tol"]
    worst = 0.0
    if len(results) != len(refs):
        return False, float("inf"), f"{len(results)} results, numpy {len(refs)}"
    for j, (got, want) in enumerate(zip(results, refs)):
        got = np.asarray(got)
        if got.shape != want.shape or got.dtype != want.dtype:
            return False, float("inf"), f"result {j}: {got.dtype}{list(got.shape)}, numpy {want.dtype}{list(want.shape)}"
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
        if not np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol):
            i = int(np.argmax(diff))
            return False, worst, f"result {j} element {i}: {got.ravel()[i]!r}, numpy {want.ravel()[i]!r}"
    return True, worst, ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmfb-dir", required=True)
    ap.add_argument("--driver", default="cuda")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    report = {"checks": []}

    def record(name, stage, ok, why="", err=0.0):
        report["checks"].append({"launch": name, "stage": stage, "ok": bool(ok), "why": why, "max_abs_err": err})
        print(f"  {'OK  ' if ok else 'FAIL'} {name:12} {stage:40} max|err|={err:.3g} {why}")

    for name, spec in LAUNCHES.items():
        rng = np.random.default_rng(sorted(LAUNCHES).index(name))
        data = lambda: [(rng.random(shape) * 2 - 1).astype(dtype) for shape, dtype in spec["host"]]  # noqa: E731
        try:
            t0 = time.perf_counter()
            mod = AutotunedModule(os.path.join(args.vmfb_dir, f"{name}.vmfb"), driver=args.driver, cache=None,
                                  warmup_ms=5, rep_ms=20)
            (group,) = mod.groups.values()
            print(f"== {name}: {group.key} ({len(group.variants)} variants), loaded in {time.perf_counter() - t0:.2f} s")
        except Exception as err:  # noqa: BLE001 - a failed check
            record(name, "load", False, f"{type(err).__name__}: {err}")
            continue
        for k, variant in enumerate(group.variants):
            for rep in range(2):
                given = data()
                try:
                    mod.select(group.key, k)
                    got = mod(name, *[d.copy() for d in given])
                    got = list(got) if isinstance(got, (list, tuple)) else [got]
                    ok, err, why = compare(spec, got, spec["ref"](*given))
                except Exception as e:  # noqa: BLE001
                    ok, err, why = False, 0.0, f"{type(e).__name__}: {e} {traceback.format_exc()[-800:]}"
                record(name, f"{variant} call {rep}", ok, why, err)
        try:
            timings = mod.autotune()
            for key, ts in timings.items():
                print(f"  tuned {key}: " + ", ".join(f"{t.variant}={t.median_ms:.4f}ms" for t in ts) + f" -> {mod.chosen[key]}")
            given = data()
            got = mod(name, *[d.copy() for d in given])
            got = list(got) if isinstance(got, (list, tuple)) else [got]
            ok, err, why = compare(spec, got, spec["ref"](*given))
            record(name, f"tuned: {mod.chosen[group.key]}", ok, why, err)
        except Exception as e:  # noqa: BLE001
            record(name, "tune", False, f"{type(e).__name__}: {e}")
    failed = sum(not c["ok"] for c in report["checks"])
    report["passed"], report["failed"] = len(report["checks"]) - failed, failed
    print(f"{report['passed']} passed, {failed} failed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
