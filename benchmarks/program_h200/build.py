"""Build, on a machine with no GPU, the modules of the H200 whole-program benchmark.

    python benchmarks/program_h200/build.py [--out out/program_h200] [--max-candidates 6] [--max-triton-configs 12] [--jobs 2]
                                            [--tuning-results R.json] [--only frozen] [--flags-variant NAME=FLAG,...]

From benchmarks/program_h200/program.mlir (StableHLO, fp16 matmuls; docs/program.md):

* ``plain.vmfb``: plain ``iree-compile --iree-hal-target-device=cuda --iree-cuda-target=sm_89``
  (IREE 3.13 has no sm_90 code generation; the driver JIT-compiles the PTX on the H200);
* ``tuned.vmfb``: ``autotune-export program --backend cuda --target sm_90``: IREE's default,
  up to 5 generated IREE candidates and the 12 configs of the bundled Triton matmul per
  dispatch (Triton objects as sm_90 cubins: no JIT at module load);
* ``iree_only.vmfb``: the same with ``--no-triton``;
* ``frozen.vmfb`` (with ``--tuning-results R.json``): what the tuned program becomes, ``autotune-export
  program --tuning-results R.json`` with the tuned build's options: every group with a result
  is its chosen variant's dispatch alone (no choice global, no ``scf.if``: one execution region
  per function, IREE's command-buffer memoization back). R.json is a tuning-results file
  (the runtime's format); run.py ``--tuning-results`` writes one from its own tuning, and
  ``picks_to_results.py`` converts an earlier run.py report. A copy goes into OUT as
  ``tuning_results.json``;
* ``manifest.json``: what run.py needs (driver, functions, inputs, outputs), the groups and
  their variants, the remarks and build times, each module's sha256.

``--only NAME,...`` builds only those modules and keeps the others (and their manifest
entries) from the OUT folder already there, e.g. ``--only frozen --tuning-results R.json`` adds
the frozen build to a folder built before (the same options: variant names must match).

``--flags-variant NAME=FLAG[,FLAG...]`` (repeatable) also builds ``NAME.vmfb``: ``plain`` or
``frozen`` (NAME's prefix before ``_``) with these iree-compile flags added, e.g.
``frozen_serial=--iree-stream-partitioning-favor=debug`` (IREE's dispatches of one region in
order, no ``stream.cmd.concurrent``) or ``frozen_nomemo=--iree-hal-memoization=false``: the same
program and choices, for run.py to time side by side (its flags are in the manifest).

``--small`` builds a 1/16-scale program for llvm-cpu instead (every matmul dimension / 16, no
Triton: ``tuned.vmfb`` is ``iree_only.vmfb``), to try run.py on this machine:
``python benchmarks/program_h200/run.py OUT``.
The GPU machine then runs ``benchmarks/program_h200/run.py OUT`` (see its docstring).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)

from autotune_export.program import build_program  # noqa: E402
from autotune_export.program.cuda import cuda_args  # noqa: E402

MATRICES = {
    "a": (4096, 4096),
    "b": (4096, 4096),
    "c": (8192, 8192),
    "d": (8192, 128),
    "e": (8, 2048, 2048),
    "f": (8, 2048, 2048),
    "z": (128,),
}
# Per function: its inputs (names of MATRICES) and its outputs in order, each ``[op, i, j]``:
# ``matmul`` of inputs i and j, or ``add`` (elementwise i + j); run.py computes them with numpy.
FUNCTIONS = {
    "main": {"inputs": list("abcdef"), "outputs": [["matmul", 0, 1], ["matmul", 2, 3], ["matmul", 4, 5]]},
    "mm_4096": {"inputs": ["a", "b"], "outputs": [["matmul", 0, 1]]},
    "mm_skinny": {"inputs": ["c", "d"], "outputs": [["matmul", 0, 1]]},
    "bmm": {"inputs": ["e", "f"], "outputs": [["matmul", 0, 1]]},
    "call_floor": {"inputs": ["z"], "outputs": [["add", 0, 0]]},
}
BUILDS = ("plain", "iree_only", "tuned", "frozen")
DISPATCHES = {"mm_4096": "matmul 4096x4096x4096", "mm_skinny": "matmul 8192x128x8192", "bmm": "batch_matmul 8x2048^3"}


def _scaled(text: str, factor: int) -> str:
    """program.mlir with every dimension divided by ``factor`` (the batch of 8 kept)."""

    def dims(m):
        parts = m.group(1).split("x")
        return "tensor<" + "x".join(p if p == "8" else str(int(p) // factor) for p in parts[:-1]) + "x" + parts[-1] + ">"

    return re.sub(r"tensor<([0-9x]+xf16)>", dims, text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "program_h200"))
    ap.add_argument("--max-candidates", type=int, default=6, help="variants of IREE's code per dispatch, its default included")
    ap.add_argument("--max-triton-configs", type=int, default=12, help="configs of the Triton matmul per dispatch")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--small", action="store_true", help="1/16 scale for llvm-cpu (run.py on this machine)")
    ap.add_argument("--tuning-results", metavar="R.json", help="also build frozen.vmfb with these choices")
    ap.add_argument("--only", help=f"comma-separated modules to build ({', '.join(BUILDS)}, flags variants); the others are kept from OUT")
    ap.add_argument("--flags-variant", action="append", default=[], metavar="NAME=FLAG[,FLAG...]", help="also build NAME.vmfb: plain or frozen (NAME's prefix) with these flags")
    args = ap.parse_args(argv)
    variants = {}
    for spec in args.flags_variant:
        name, _, flags = spec.partition("=")
        if not re.fullmatch(r"(plain|frozen)_\w+", name) or not flags:
            ap.error(f"--flags-variant {spec}: expected plain_SUFFIX=FLAG[,FLAG...] or frozen_SUFFIX=...")
        variants[name] = flags.split(",")
    names = (*BUILDS, *variants)
    only = set(args.only.split(",")) if args.only else set(names)
    if not only <= set(names):
        ap.error(f"--only takes {', '.join(names)}, not {', '.join(sorted(only - set(names)))}")
    if args.tuning_results is None:
        frozen = sorted(n for n in only if n.startswith("frozen"))
        if args.only and frozen:
            ap.error(f"--only {','.join(frozen)} needs --tuning-results")
        only -= set(frozen)
    # Everything is written into OUT.partial and moved to OUT at the end: a folder copied while
    # a build runs is never a mix of two builds (manifest.json also holds each file's sha256,
    # which run.py checks).
    final, args.out = args.out, args.out.rstrip("/") + ".partial"
    shutil.rmtree(args.out, ignore_errors=True)
    kept = {}
    if args.only:
        # Modules not rebuilt come from the folder there (and must be of these options).
        try:
            with open(os.path.join(final, "manifest.json")) as f:
                kept = json.load(f)
        except OSError:
            ap.error(f"--only {args.only}: no earlier build in {final} to keep the other modules from")
        shutil.copytree(final, args.out)
        if kept.get("options", {}).get("small", False) != args.small:
            ap.error(f"--only: {final} was built {'with' if args.small else 'without'} --small")
    else:
        os.makedirs(args.out)
    with open(os.path.join(HERE, "program.mlir")) as f:
        text = f.read()
    matrices = dict(MATRICES)
    if args.small:
        text = _scaled(text, 16)
        matrices = {k: tuple(d if d == 8 else d // 16 for d in s) for k, s in matrices.items()}
        backend, plain_args, driver = "llvm-cpu", ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"], "local-task"
    else:
        backend, plain_args, driver = "cuda", cuda_args("sm_90"), "cuda"
    options = {"small": args.small, "max_candidates": args.max_candidates, "max_triton_configs": args.max_triton_configs}
    if kept and kept.get("options", options) != options:
        ap.error(f"--only: {final} was built with other options ({kept.get('options')}): its variant names may differ")
    manifest = {
        "driver": driver,
        "matrices": matrices,
        "functions": FUNCTIONS,
        "dispatches": DISPATCHES,
        "flops": {fn: 2 * _macs(matrices, FUNCTIONS[fn]) for fn in DISPATCHES},
        "options": options,
        "builds": {k: v for k, v in kept.get("builds", {}).items() if k not in only},
    }
    from iree.compiler.tools import compile_str

    for name in [n for n in names if n.startswith("plain") and n in only]:
        t0 = time.perf_counter()
        flags = [*plain_args, *variants.get(name, [])]
        with open(os.path.join(args.out, f"{name}.vmfb"), "wb") as f:
            f.write(compile_str(text, extra_args=[*flags, "--iree-input-type=stablehlo"]))
        manifest["builds"][name] = {"seconds": round(time.perf_counter() - t0, 1), "command": "iree-compile " + " ".join(flags), "flags": variants.get(name, [])}
        print(f"{name}.vmfb: {manifest['builds'][name]['seconds']} s", flush=True)
    results = None
    if any(n.startswith("frozen") for n in only):
        from autotune_export.passes.pin_variants import load_results

        results = load_results(args.tuning_results)
        shutil.copyfile(args.tuning_results, os.path.join(args.out, "tuning_results.json"))
    for name in [n for n in names if not n.startswith("plain")]:
        if name not in only or (args.small and name == "tuned"):
            continue
        t0 = time.perf_counter()
        remarks = []
        built = build_program(
            text,
            backend=backend,
            max_candidates=args.max_candidates,
            iree_args=["--iree-input-type=stablehlo", *variants.get(name, [])],
            remark=lambda d: (remarks.append(d.format()), print(d.format(), flush=True)),
            target="sm_90",
            triton=name != "iree_only" and not args.small,
            jobs=args.jobs,
            object_format="cubin",
            max_triton=args.max_triton_configs,
            tuning_results=results if name.startswith("frozen") else None,
        )
        with open(os.path.join(args.out, f"{name}.vmfb"), "wb") as f:
            f.write(built.vmfb)
        manifest["builds"][name] = {
            "seconds": round(time.perf_counter() - t0, 1),
            "bytes": len(built.vmfb),
            "remarks": remarks,
            "groups": {g.group: {"host": g.host, "variants": g.variants, "configs": g.configs} for g in built.groups},
            "flags": variants.get(name, []),
        }
        if name.startswith("frozen"):
            names = {d.key: [v.name for v in d.variants()] for d in built.dispatches}
            manifest["builds"][name]["frozen"] = {key: names[key][k] for key, k in sorted(built.frozen.items())}
        counts = {g.group: len(g.variants) for g in built.groups}
        print(f"{name}.vmfb: {manifest['builds'][name]['seconds']} s, {len(built.vmfb)} bytes, variants {counts}", flush=True)
    if args.small and "iree_only" in only:
        # No Triton on llvm-cpu: the tuned build is the IREE-only one.
        shutil.copyfile(os.path.join(args.out, "iree_only.vmfb"), os.path.join(args.out, "tuned.vmfb"))
        manifest["builds"]["tuned"] = manifest["builds"]["iree_only"]
    manifest["sha256"] = {}
    for name in manifest["builds"]:
        path = os.path.join(args.out, f"{name}.vmfb")
        if os.path.exists(path) and name in manifest["builds"]:
            with open(path, "rb") as f:
                manifest["sha256"][name] = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(args.out, final)
    print(f"wrote {final}")
    return 0


def _macs(matrices, spec) -> int:
    total = 0
    for op, i, j in spec["outputs"]:
        if op != "matmul":
            continue
        a, b = matrices[spec["inputs"][i]], matrices[spec["inputs"][j]]
        batch = a[0] if len(a) == 3 else 1
        total += batch * a[-2] * a[-1] * b[-1]
    return total


if __name__ == "__main__":
    sys.exit(main())
