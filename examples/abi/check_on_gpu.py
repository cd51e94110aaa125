"""Check the ABI on a GPU: every scalar type, global scratch, specializations, several targets.

    examples/abi/build.sh OUT                      # anywhere, no GPU needed
    python examples/abi/check_on_gpu.py --vmfb-dir OUT [--json results.json]
    ncu --csv --metrics launch__shared_mem_per_block_dynamic \\
        python examples/abi/check_on_gpu.py --vmfb-dir OUT --ncu-part > ncu.csv
    python examples/abi/check_on_gpu.py --parse-ncu ncu.csv

The first run checks results against numpy, for every variant of every group:

* scalars.vmfb: i1, i8, i16, i32, u32, i64, u64, fp16, bf16, fp32, fp64 scalars reach the kernel
  with their exact values (64-bit ones above 2**32, u32 above 2**31), and a vector + i64 offset;
* tma_scale.vmfb: device-side TMA descriptors on sm_90 live in global scratch (an extra binding
  sized at the dispatch from the grid); several shapes, ragged ones included;
* matmul.vmfb: the fp16 matmul example with ':16' / ':1' specializations, with K a multiple of
  16 (specialized exports) and not (unspecialized fallbacks);
* tma_multi.vmfb: PTX for sm_80 and sm_90a in two hal.executable.variants of one module.

The ``--ncu-part`` run launches few kernels under Nsight Compute: the matmul with K = 256 and
K = 250 (variant 0 selected) and tma_multi once; ``--parse-ncu`` then reports which export
ran for each (ncu's kernel name is the export name) and the dynamic shared memory of the
tma_multi launch (the sm_90a variant's object asks for shared memory, the sm_80 one does not).
Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from autotune_export.runtime.tuner import AutotunedModule  # noqa: E402

BIG = 2**40 + 12345  # i64 above 2**32
UBIG = 2**63 + 7  # u64 above 2**63 (passed as its i64 bit pattern)
UN = 2**32 - 16  # u32 above 2**31 (passed as its i32 bit pattern)
HALF = -2.71875  # exact in fp16
BHALF = 3.140625  # exact in bf16
SINGLE = 1.0e-3
DOUBLE = 1.0e300  # not representable in fp32


def _signed(x: int, bits: int) -> int:
    return x - (1 << bits) if x >= 1 << (bits - 1) else x


def _bits16(value: float, dtype) -> int:
    if dtype == "bf16":
        return int(np.array([value], np.float32).view(np.uint32)[0] >> 16)
    return int(np.array([value], np.float16).view(np.uint16)[0])


def load(path: str) -> AutotunedModule:
    return AutotunedModule(path, driver="cuda", cache=False)


def check_scalars(mod: AutotunedModule, report: list) -> int:
    (group,) = mod.groups.values()
    rng = np.random.default_rng(1)
    fails = 0
    for n in (1000, 70001):
        vec = rng.integers(-(2**31), 2**31 - 1, size=n, dtype=np.int32)
        for k, variant in enumerate(group.variants):
            mod.select(group.key, k)
            ints, floats, out = mod("scalars", vec, 1, -3, -300, _signed(UN, 32), BIG, _signed(UBIG, 64),
                                    _bits16(HALF, "fp16"), _bits16(BHALF, "bf16"), SINGLE, DOUBLE)
            want_ints = np.array([1, -3, -300, n, UN, BIG, _signed(UBIG, 64)], np.int64)
            want_floats = np.array([HALF, BHALF, float(np.float32(SINGLE)), DOUBLE], np.float64)
            ok = (np.array_equal(np.asarray(ints), want_ints) and np.array_equal(np.asarray(floats), want_floats)
                  and np.array_equal(np.asarray(out), vec.astype(np.int64) + BIG))
            fails += not ok
            report.append({"check": "scalars", "variant": variant, "n": n, "ok": bool(ok),
                           "ints": [int(v) for v in np.asarray(ints)], "floats": [float(v) for v in np.asarray(floats)]})
            print(f"scalars   {variant:28s} n={n:6d} {'ok' if ok else 'WRONG'} ints={list(np.asarray(ints))} "
                  f"floats={list(np.asarray(floats))}")
    return fails


def check_tma(mod: AutotunedModule, report: list, name: str) -> int:
    (group,) = mod.groups.values()
    rng = np.random.default_rng(2)
    fails = 0
    for shape in ((70, 100), (1000, 1024), (333, 260)):
        x = rng.standard_normal(shape).astype(np.float32)
        for k, variant in enumerate(group.variants):
            mod.select(group.key, k)
            out = np.asarray(mod("tma_scale", x))
            ok = np.array_equal(out, 2 * x)
            fails += not ok
            err = float(np.max(np.abs(out - 2 * x)))
            report.append({"check": name, "variant": variant, "shape": list(shape), "ok": bool(ok), "max_err": err})
            print(f"{name:9s} {variant:28s} {shape!s:12s} {'ok' if ok else 'WRONG'} max|err|={err:g}")
    return fails


def check_matmul(mod: AutotunedModule, report: list) -> int:
    (group,) = mod.groups.values()
    rng = np.random.default_rng(3)
    fails = 0
    for m, n, kdim in ((256, 256, 256), (256, 256, 250), (129, 65, 1031)):
        a = rng.standard_normal((m, kdim)).astype(np.float16)
        b = rng.standard_normal((kdim, n)).astype(np.float16)
        ref = a.astype(np.float32) @ b.astype(np.float32)
        for k, variant in enumerate(group.variants):
            mod.select(group.key, k)
            c = np.asarray(mod("matmul_host", a, b)).astype(np.float32)
            ok = bool(np.allclose(c, ref, rtol=2e-2, atol=5e-2))
            fails += not ok
            err = float(np.max(np.abs(c - ref)))
            report.append({"check": "matmul", "variant": variant, "shape": [m, n, kdim], "ok": ok, "max_err": err})
            print(f"matmul    {variant:28s} {(m, n, kdim)!s:16s} {'ok' if ok else 'WRONG'} max|err|={err:.3g}")
    return fails


def ncu_part(vmfb_dir: str) -> None:
    """Few launches, for Nsight Compute: matmul K=256, matmul K=250, tma_multi once."""
    mod = load(os.path.join(vmfb_dir, "matmul.vmfb"))
    (group,) = mod.groups.values()
    mod.select(group.key, 0)
    rng = np.random.default_rng(4)
    for kdim in (256, 250):
        a = rng.standard_normal((256, kdim)).astype(np.float16)
        b = rng.standard_normal((kdim, 256)).astype(np.float16)
        c = np.asarray(mod("matmul_host", a, b)).astype(np.float32)
        ok = np.allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2, atol=5e-2)
        print(f"ncu-part matmul K={kdim}: {'ok' if ok else 'WRONG'}", file=sys.stderr)
    multi = load(os.path.join(vmfb_dir, "tma_multi.vmfb"))
    (group,) = multi.groups.values()
    multi.select(group.key, 0)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    ok = np.array_equal(np.asarray(multi("tma_scale", x)), 2 * x)
    print(f"ncu-part tma_multi: {'ok' if ok else 'WRONG'}", file=sys.stderr)


def parse_ncu(path: str) -> int:
    """Report the kernels ncu saw; fail unless K=256 ran a _spec export and K=250 did not."""
    text = open(path, encoding="utf-8", errors="replace").read()
    start = text.find('"ID"')
    if start < 0:
        print("no ncu CSV table found")
        return 1
    lines = [ln for ln in text[start:].splitlines() if ln.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    launches: dict[str, dict] = {}
    for r in rows:
        if not (r.get("ID") or "").isdigit():
            continue
        launches.setdefault(r["ID"], {"kernel": r.get("Kernel Name", "?")})[r.get("Metric Name", "?")] = r.get("Metric Value")
    kernels = [launches[i] for i in sorted(launches, key=int)]
    for k in kernels:
        print("ncu:", json.dumps(k))
    mm = [k for k in kernels if k["kernel"].startswith("matmul")]
    tma = [k for k in kernels if k["kernel"].startswith("tma_scale")]
    ok = len(mm) >= 2 and mm[0]["kernel"].endswith("_spec") and not mm[1]["kernel"].endswith("_spec")
    print(f"specialization: K=256 ran {mm[0]['kernel'] if mm else '?'}, K=250 ran {mm[1]['kernel'] if len(mm) > 1 else '?'}: "
          f"{'as expected' if ok else 'UNEXPECTED'}")
    if tma:
        smem = tma[0].get("launch__shared_mem_per_block_dynamic")
        print(f"tma_multi: {tma[0]['kernel']} launched with {smem} bytes of dynamic shared memory "
              "(sm_90a variant: > 0; sm_80 variant: 0)")
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmfb-dir")
    ap.add_argument("--json")
    ap.add_argument("--ncu-part", action="store_true")
    ap.add_argument("--parse-ncu")
    args = ap.parse_args()
    if args.parse_ncu:
        return parse_ncu(args.parse_ncu)
    if args.ncu_part:
        ncu_part(args.vmfb_dir)
        return 0
    report: list = []
    fails = 0
    for name, fn in (("scalars", check_scalars), ("tma_scale", lambda m, r: check_tma(m, r, "tma_scale")),
                     ("matmul", check_matmul), ("tma_multi", lambda m, r: check_tma(m, r, "tma_multi"))):
        t0 = time.perf_counter()
        try:
            mod = load(os.path.join(args.vmfb_dir, f"{name}.vmfb"))
            print(f"== {name}: variants {list(mod.groups.values())[0].variants} (loaded in {time.perf_counter() - t0:.2f} s)")
            fails += fn(mod, report)
        except Exception as err:  # keep checking the other modules
            fails += 1
            traceback.print_exc()
            report.append({"check": name, "ok": False, "error": f"{type(err).__name__}: {err}"})
    print(f"{sum(1 for r in report if r.get('ok'))} checks passed, {fails} failed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
