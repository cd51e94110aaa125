"""Run every variant of the strided, in-place and lock examples on a GPU and compare with numpy.

    python examples/strided/build.py --vmfb-dir out/strided --target sm_90     # here, no GPU
    python examples/strided/check_on_gpu.py --vmfb-dir out/strided [--json results.json]

Needs numpy and iree-base-runtime (no Triton, no torch). For each launch of launches.py (a GEMM
with a transposed operand ``b.t()``, a GEMM writing a column-major output, a group quantization
writing column-major scales, an expanded (stride-0) bias with a transposed input, a column-major
tensor updated in place, a slice at a storage offset updated in place, a spin lock in an int32
tensor passed in place), each variant of its group (chosen through the module's select entry)
is called with seeded data: the host passes each tensor's storage span and gets the spans the
kernel wrote (docs/call-sites.md, "Strided tensors"); the results must match numpy's. The lock
must be 0 again after each call. Then the module's ``@__autotune`` runs (tuning on fake data:
the lock gets zeros, autotune.fake_zeros) and the module is called once more with the chosen
variant. Exit status 1 when any result is wrong or a step raises.
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
from launches import LAUNCHES, tolerance  # noqa: E402


def host_data(spec, rng):
    out = []
    for shape, dtype in spec["host"]:
        if np.issubdtype(dtype, np.integer):
            out.append(np.zeros(shape, dtype))  # the lock: free
        elif shape == (1,):
            out.append(rng.standard_normal(shape).astype(dtype))
        else:
            out.append((rng.random(shape) * 2 - 1).astype(dtype))
    return out


def compare(spec, results, refs):
    """(ok, max abs error, why)."""
    worst = 0.0
    if len(results) != len(refs):
        return False, float("inf"), f"{len(results)} results, numpy {len(refs)}"
    for j, (got, want) in enumerate(zip(results, refs)):
        rtol, atol = tolerance(spec, j)
        got = np.asarray(got)
        if got.shape != want.shape or got.dtype != want.dtype:
            return False, float("inf"), f"result {j}: {got.dtype}{list(got.shape)}, numpy {want.dtype}{list(want.shape)}"
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
        if not np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol):
            i = int(np.argmax(diff - atol - rtol * np.abs(want.astype(np.float64))))
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
        print(f"  {'OK  ' if ok else 'FAIL'} {name:22} {stage:48} max|err|={err:.3g} {why}")

    for name, spec in LAUNCHES.items():
        rng = np.random.default_rng(sorted(LAUNCHES).index(name))
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
                data = host_data(spec, rng)
                try:
                    mod.select(group.key, k)
                    got = mod(name, *[d.copy() for d in data])
                    got = list(got) if isinstance(got, (list, tuple)) else [got]
                    ok, err, why = compare(spec, got, spec["ref"](*data))
                except Exception as e:  # noqa: BLE001
                    ok, err, why = False, 0.0, f"{type(e).__name__}: {e} {traceback.format_exc()[-800:]}"
                record(name, f"{variant} call {rep}", ok, why, err)
        try:
            timings = mod.autotune()
            for key, ts in timings.items():
                print(f"  tuned {key}: " + ", ".join(f"{t.variant}={t.median_ms:.4f}ms" for t in ts) + f" -> {mod.chosen[key]}")
            data = host_data(spec, rng)
            got = mod(name, *[d.copy() for d in data])
            got = list(got) if isinstance(got, (list, tuple)) else [got]
            ok, err, why = compare(spec, got, spec["ref"](*data))
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
