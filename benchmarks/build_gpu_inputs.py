"""Build, on a machine with no GPU, every .vmfb the GPU benchmarks load.

    python benchmarks/build_gpu_inputs.py [--out .gpu_bench] [--target sm_90] [--wheel PATH]

Writes into OUT (ignored by git; carry it to the GPU machine):

* ``mm_<M>x<N>x<K>.vmfb``: examples/matmul/matmul.mlir with ``tune_workload`` set to that shape
  (2048^3, 4096^3, 8192^3, 8192x128x8192, 64x8192x8192), for benchmarks/tuning_vs_triton.py and
  matmul_tflops.py;
* ``s64_4096x4096x4096.vmfb``: benchmarks/configs/matmul_space64.mlir (64 configs of the same kernel,
  a generated space, tuned on 4096^3; 128 exports with the specializations), for benchmarks/tuning_vs_triton.py
  with cubin objects (PTX ones took 60.8 s to load cold on the H200: the driver's JIT of 128 exports)
  (``--only tune`` builds these, ``--only mm9`` the 9-config ones alone, ``--only s64`` this one alone;
  its iree-compile took 46 CPU-seconds, 6 minutes of wall time on the loaded 2-core development machine,
  after 13 minutes of cold Triton compiles: docs/limits.md, "Build time of large groups");
* ``va_group.vmfb``: examples/vector_add/vector_add.mlir as it is (the host dispatches the group,
  i.e. the condition chain keyed on the choice global);
* ``va_direct.vmfb``: the same module with every condition/fallback removed and one host function
  ``add_direct_<k>`` per variant that dispatches ``@vector_add_ex::@<variant k>`` directly (the
  plain-IREE anchor of benchmarks/dispatch_overhead.py);
* ``load_<8|32>_<ptx|cubin>.vmfb``: matmul modules of 4 and 16 configs of the 32-space (8 and 32
  exports with the specializations) with PTX or cubin objects, for benchmarks/module_load.py;
* ``whl/``: a copy of the IREE runtime wheel (``--wheel``, default .whl/iree_base_runtime-*.whl);
* ``mm_multi.vmfb``: the same with two tuning workloads, 4096^3 and 8192x128x8192 (one choice per
  workload), for benchmarks/workload_choices.py;
* ``pkg/autotune_export/``: the package as committed at git HEAD (the GPU runs put it first on
  PYTHONPATH, so that uncommitted edits in the checkout don't leak into the measurement);
* ``build.json``: what was built, sizes, build times and the git HEAD.

``--toolkit DIR`` builds with the autotune_export of DIR, e.g. a clean export of HEAD
(``git archive HEAD | tar -x -C DIR``) when the checkout holds others' uncommitted edits.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

TUNE_SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 128, 8192), (64, 8192, 8192)]
#: M x N x K of the two workloads of mm_multi.vmfb (benchmarks/workload_choices.py).
MULTI_SHAPES = [(4096, 4096, 4096), (8192, 128, 8192)]


# The --emit vmfb pipeline without verify-autotuning-groups: the fallback for cubin objects,
# whose verification failed at the time of writing (it parsed the hex form of the dense
# attribute as decimal digits; reported, not ours to fix).
NO_VERIFY = "materialize-triton-variants,pin-variants,emit-autotune-initializer,lower-autotuning-dispatch"
notes: list[str] = []


TOOLKIT = C.ROOT  # where autotune_export is imported from (--toolkit)


def cli(args: list[str], allow_no_verify: bool = False) -> float:
    t0 = time.perf_counter()
    env = dict(os.environ, TRITON_DEFAULT_FP_FUSION="1",
               PYTHONPATH=TOOLKIT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = lambda a: subprocess.run([sys.executable, "-m", "autotune_export.tools.cli", *a], capture_output=True,  # noqa: E731
                                   text=True, env=env, cwd=TOOLKIT)
    p = run(args)
    if p.returncode != 0 and allow_no_verify:
        notes.append(f"autotune-export {' '.join(args)} failed ({p.stderr.strip().splitlines()[-1][:200]}); "
                     "built again without verify-autotuning-groups")
        print(notes[-1], file=sys.stderr)
        t0 = time.perf_counter()
        p = run([*args, "-p", NO_VERIFY])
    if p.returncode != 0:
        raise SystemExit(f"autotune-export {' '.join(args)} failed:\n{p.stderr}")
    sys.stderr.write(p.stderr)
    return time.perf_counter() - t0


def direct_variant_text(iree_text: str) -> tuple[str, list[str]]:
    """From the plain IREE input of vector_add: drop every condition/fallback and add one
    ``@add_direct_<k>`` per export that dispatches that export with no chain."""
    text, n = re.subn(r"condition\([^)]*\) -> i1 \{[^{}]*\} fallback\(@\w+\) ", "", iree_text)
    exports = re.findall(r"hal\.executable\.export public @(\w+) ordinal\((\d+)\)", text)
    exports = [name for name, _ in sorted(exports, key=lambda e: int(e[1]))]
    assert n == len(exports) - 1, (n, exports)
    m = re.search(r"\n(\s*)util\.func public @add\(.*?\n\1\}\n", text, re.S)
    assert m, "no @add host function"
    host = m.group(0)
    funcs = []
    for k, name in enumerate(exports):
        f = host.replace("util.func public @add(", f"util.func public @add_direct_{k}(", 1)
        # The workload's last value is the choice (the per-workload table's select chain over the
        # choice global), unused by the count regions: a constant; iree-compile drops the
        # then-dead loads and compares.
        f, casts = re.subn(r"^(\s*)(%\w+) = arith\.index_cast %[\w.]+ : i32 to index$",
                           r"\1\2 = arith.constant 0 : index", f, flags=re.M)
        f, hits = re.subn(r"flow\.dispatch @vector_add_ex::@\w+\[", f"flow.dispatch @vector_add_ex::@{name}[", f)
        assert hits == 1 and casts == 1, f
        funcs.append(f)
    text = text[: m.end()] + "".join(funcs) + text[m.end():]
    return text, exports


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(C.ROOT, ".gpu_bench"))
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--wheel", default=None)
    ap.add_argument("--toolkit", default=None,
                    help="import autotune_export from this folder (e.g. a `git archive HEAD` export) instead of the checkout")
    ap.add_argument("--only", default=None, help="comma-separated subset: tune (= mm9 + the 64-config space),"
                    " mm9 (the 9-config matmul modules only), s64 (the 64-config space only), multi, vector_add, load, wheel, runtime")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else {"tune", "multi", "vector_add", "load", "wheel", "runtime"}
    global TOOLKIT
    if args.toolkit:
        TOOLKIT = os.path.abspath(args.toolkit)
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="bench-build-")
    built = {}
    try:
        if only & {"tune", "mm9"}:
            for shape in TUNE_SHAPES:
                src = os.path.join(tmp, f"mm_{'x'.join(map(str, shape))}.mlir")
                open(src, "w").write(C.render_matmul_mlir(tune_mnk=shape, kernel_path=C.MATMUL_KERNEL))
                out = os.path.join(args.out, os.path.basename(src).replace(".mlir", ".vmfb"))
                built[os.path.basename(out)] = {"s": cli([src, "--emit", "vmfb", "--target", args.target, "-o", out]),
                                                "tune_mnk": shape}
        if only & {"tune", "s64"}:
            # The 64-config space as its file spells it (a generated product space; its
            # tune_workload is 4096^3).
            # Cubin objects: with PTX the driver JIT-compiles all 128 exports when the module
            # loads (60.8 s cold on the H200, 475 ms per export; warm runs hit its JIT cache),
            # a cost Triton's own cubins never pay.
            out = os.path.join(args.out, "s64_4096x4096x4096.vmfb")
            built[os.path.basename(out)] = {"s": cli([C.SPACE64_MLIR, "--emit", "vmfb", "--target", args.target,
                                                      "--object-format", "cubin", "-o", out], allow_no_verify=True),
                                            "tune_mnk": (4096, 4096, 4096), "configs": 64, "object_format": "cubin"}
            # The same 64 configs as dicts, for the GPU machine's triton.autotune side: the
            # space's Python spelling imports the toolkit's IR layer (iree.compiler), which
            # only the iree-base-runtime wheel travels without (C.space64_configs reads this).
            C.write_json(os.path.join(args.out, C.SPACE64_JSON_NAME), C.space64_configs())
        if "multi" in only:
            # One module, one group, two tuning workloads: a choice per workload (issue 13).
            src = os.path.join(tmp, "mm_multi.mlir")
            open(src, "w").write(C.render_matmul_mlir(tune_shapes=MULTI_SHAPES, kernel_path=C.MATMUL_KERNEL))
            out = os.path.join(args.out, "mm_multi.vmfb")
            built["mm_multi.vmfb"] = {"s": cli([src, "--emit", "vmfb", "--target", args.target, "-o", out]),
                                      "tune_shapes": MULTI_SHAPES}
        if "vector_add" in only:
            out = os.path.join(args.out, "va_group.vmfb")
            built["va_group.vmfb"] = {"s": cli([C.VECTOR_ADD_MLIR, "--emit", "vmfb", "--target", args.target, "-o", out])}
            iree_src = os.path.join(tmp, "va.iree.mlir")
            cli([C.VECTOR_ADD_MLIR, "--emit", "iree", "--target", args.target, "-o", iree_src])
            text, exports = direct_variant_text(open(iree_src).read())
            direct_src = os.path.join(tmp, "va_direct.iree.mlir")
            open(direct_src, "w").write(text)
            sys.path.insert(0, TOOLKIT)
            from autotune_export.tools.cli import iree_compile

            t0 = time.perf_counter()
            iree_compile(text, args.target, os.path.join(args.out, "va_direct.vmfb"))
            built["va_direct.vmfb"] = {"s": time.perf_counter() - t0, "exports": exports}
            shutil.copy(direct_src, os.path.join(args.out, "va_direct.iree.mlir"))
        if "load" in only:
            for n_cfg, n_var in ((4, 8), (16, 32)):
                src = os.path.join(tmp, f"load_{n_var}.mlir")
                open(src, "w").write(C.render_matmul_mlir(C.load_subset(n_cfg), kernel_path=C.MATMUL_KERNEL))
                for fmt in ("ptx", "cubin"):
                    out = os.path.join(args.out, f"load_{n_var}_{fmt}.vmfb")
                    built[os.path.basename(out)] = {"s": cli([src, "--emit", "vmfb", "--target", args.target,
                                                              "--object-format", fmt, "-o", out],
                                                             allow_no_verify=(fmt == "cubin")),
                                                    "configs": n_cfg, "exports": n_var, "object_format": fmt}
        if "wheel" in only:
            wheel = args.wheel or next(iter(sorted(glob.glob(os.path.join(C.ROOT, ".whl", "iree_base_runtime-*.whl")))), None)
            if not wheel:
                raise SystemExit("no IREE runtime wheel: pass --wheel")
            os.makedirs(os.path.join(args.out, "whl"), exist_ok=True)
            for old in glob.glob(os.path.join(args.out, "whl", "*.whl")):
                os.unlink(old)
            shutil.copy(wheel, os.path.join(args.out, "whl"))
        if "runtime" in only:
            # The package as committed at HEAD (or of --toolkit): the GPU runs put it first on
            # PYTHONPATH, so uncommitted edits in the checkout don't leak into the measurement.
            pkg = os.path.join(args.out, "pkg")
            shutil.rmtree(os.path.join(pkg, "autotune_export"), ignore_errors=True)
            os.makedirs(pkg, exist_ok=True)
            if args.toolkit:
                shutil.copytree(os.path.join(TOOLKIT, "autotune_export"), os.path.join(pkg, "autotune_export"))
            else:
                archive = subprocess.run(["git", "-C", C.ROOT, "archive", "HEAD", "autotune_export"],
                                         capture_output=True, check=True).stdout
                subprocess.run(["tar", "-x", "-C", pkg], input=archive, check=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, info in built.items():
        info["bytes"] = os.path.getsize(os.path.join(args.out, name))
        print(f"{name:28} {info['bytes'] / 1e6:7.2f} MB  built in {info['s']:.1f} s")
    old = {}
    if os.path.exists(os.path.join(args.out, "build.json")):
        import json

        old = json.load(open(os.path.join(args.out, "build.json")))
    old.update(built)
    old.setdefault("notes", [])
    old["notes"] += notes
    try:
        head = subprocess.run(["git", "-C", C.ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", C.ROOT, "status", "--porcelain", "autotune_export", "dialects"],
                               capture_output=True, text=True).stdout.strip()
        old["git"] = {"head": head, "toolkit": TOOLKIT,
                      "checkout_dirty": dirty.splitlines() if TOOLKIT == C.ROOT else "n/a: built from --toolkit"}
    except OSError:
        pass
    C.write_json(os.path.join(args.out, "build.json"), old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
