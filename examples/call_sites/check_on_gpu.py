"""Run every variant of the call-site examples on a GPU and compare with numpy.

    for e in layer_norm cross_entropy fp8; do
        autotune-export examples/call_sites/$e.mlir --emit vmfb --target sm_90 -o out/call_sites/$e.vmfb
    done
    python examples/call_sites/check_on_gpu.py --vmfb-dir out/call_sites [--json results.json]

Needs numpy and iree-base-runtime (no Triton, no torch). For each host function, each variant
of its group (chosen through the module's select entry) and each problem size (some rows and
lengths that are not multiples of any block), the result must match numpy's: layer norm with
a weight and no bias (fp16), RMS norm with neither (fp32), cross entropy over int64 labels
with ignore_index (with and without a softcap), fp8 e4m3 to bf16. Then the module's
``@__autotune`` runs (tuning on its fake data: int64 and fp8 fills). Exit status 1 when any
result is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from autotune_export.runtime.tuner import AutotunedModule  # noqa: E402

EPS = 1e-5


def layer_norm_ref(x, w):
    x = x.astype(np.float32)
    xbar = x - x.mean(axis=1, keepdims=True)
    return xbar / np.sqrt((xbar * xbar).mean(axis=1, keepdims=True) + EPS) * w.astype(np.float32)


def rms_norm_ref(x):
    x = x.astype(np.float32)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS)


def cross_entropy_ref(logits, labels, softcap=None):
    x = logits.astype(np.float64)
    if softcap is not None:
        x = softcap * np.tanh(x / softcap)
    m = x.max(axis=1, keepdims=True)
    lse = (np.log(np.exp(x - m).sum(axis=1, keepdims=True)) + m)[:, 0]
    safe = np.where(labels == -100, 0, labels)
    loss = lse - x[np.arange(len(labels)), safe]
    return np.where(labels == -100, 0.0, loss).astype(np.float32)


def e4m3fn_to_float(bits: np.ndarray) -> np.ndarray:
    """fp8 e4m3fn (bias 7, no infinities, 0x7f/0xff NaN) bytes -> float32."""
    b = bits.astype(np.uint8).astype(np.int32)
    sign = np.where(b & 0x80, -1.0, 1.0)
    exp, man = (b >> 3) & 0xF, b & 0x7
    value = np.where(exp == 0, man / 8.0 * 2.0 ** -6, (1 + man / 8.0) * 2.0 ** (exp - 7.0))
    return (sign * value).astype(np.float32)


def bf16_bits_to_float(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint16).astype(np.uint32) << 16).view(np.float32)


def _labels(rng, rows, vocab):
    labels = rng.integers(0, vocab, size=rows).astype(np.int64)
    labels[rng.random(rows) < 0.1] = -100
    return labels


def _fp8_bytes(rng, n):
    b = rng.integers(0, 256, size=n).astype(np.uint8)
    b[(b & 0x7F) == 0x7F] = 0x38  # no NaN patterns: 1.0 instead
    return b.view(np.int8)


CASES = {
    "layer_norm": [
        {"function": "layer_norm", "sizes": [(4096,), (300,), (1,)],
         "make": lambda rng, s: (rng.standard_normal((s[0], 1024)).astype(np.float16),
                                 rng.standard_normal(1024).astype(np.float16)),
         "ref": layer_norm_ref, "tol": dict(rtol=1e-2, atol=2e-2)},
        {"function": "rms_norm", "sizes": [(4096,), (300,), (1,)],
         "make": lambda rng, s: (rng.standard_normal((s[0], 1024)).astype(np.float16),),
         "ref": rms_norm_ref, "tol": dict(rtol=1e-4, atol=1e-4)},
    ],
    "cross_entropy": [
        {"function": "cross_entropy", "sizes": [(256, 32000), (77, 5001), (3, 100)],
         "make": lambda rng, s: (rng.standard_normal(s).astype(np.float32) * 3, _labels(rng, s[0], s[1])),
         "ref": cross_entropy_ref, "tol": dict(rtol=1e-4, atol=1e-4)},
        {"function": "cross_entropy_softcap", "sizes": [(256, 32000), (77, 5001)],
         "make": lambda rng, s: (rng.standard_normal(s).astype(np.float32) * 30, _labels(rng, s[0], s[1]), 30.0),
         "ref": lambda x, y, c: cross_entropy_ref(x, y, float(c)), "tol": dict(rtol=1e-4, atol=1e-3)},
    ],
    "fp8": [
        {"function": "dequant", "sizes": [(1 << 22,), (1000003,), (5,)],
         "make": lambda rng, s: (_fp8_bytes(rng, s[0]), 0.5),
         "ref": lambda b, scale: e4m3fn_to_float(b) * scale,
         "post": bf16_bits_to_float, "tol": dict(rtol=1e-2, atol=1e-6)},
    ],
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmfb-dir", required=True)
    ap.add_argument("--driver", default="cuda")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    report = {"checks": [], "tuning": {}, "errors": []}

    def error(example, stage, err):
        report["errors"].append({"example": example, "stage": stage, "error": f"{type(err).__name__}: {err}",
                                 "traceback": traceback.format_exc()[-4000:]})
        report["checks"].append({"example": example, "stage": stage, "ok": False, "error": f"{type(err).__name__}: {err}"})
        print(f"  FAIL {stage}: {type(err).__name__}: {err}")

    for name, cases in CASES.items():
        t0 = time.perf_counter()
        try:
            mod = AutotunedModule(os.path.join(args.vmfb_dir, f"{name}.vmfb"), driver=args.driver, cache=None,
                                  warmup_ms=10, rep_ms=50)
        except Exception as err:  # noqa: BLE001 - reported as a failed check
            print(f"== {name}")
            error(name, "load", err)
            continue
        print(f"== {name}: {', '.join(f'{k} ({len(g.variants)} variants)' for k, g in mod.groups.items())}, "
              f"loaded in {time.perf_counter() - t0:.2f} s")
        for case in cases:
            (group,) = [g for g in mod.groups.values() if g.host == case["function"]]
            for size in case["sizes"]:
                inputs = case["make"](rng, size)
                ref = case["ref"](*inputs)
                for k, variant in enumerate(group.variants):
                    try:
                        mod.select(group.key, k)
                        out = np.asarray(mod(case["function"], *inputs))
                        out = case.get("post", lambda o: o)(out)
                    except Exception as err:  # noqa: BLE001
                        error(name, f"run {variant} size={size}", err)
                        continue
                    same = out.shape == ref.shape
                    ok = same and np.allclose(out.astype(np.float32), ref, **case["tol"])
                    err = float(np.max(np.abs(out.astype(np.float32) - ref))) if same and out.size else (0.0 if same else float("inf"))
                    report["checks"].append({"example": name, "function": case["function"], "size": list(size),
                                             "variant": variant, "ok": bool(ok), "max_abs_err": err})
                    print(f"  {'OK  ' if ok else 'FAIL'} {case['function']:22} size={size!s:14} variant={variant:40} max|err|={err:.3g}")
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
