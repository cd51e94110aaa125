"""Warm rebuild of an example, this checkout against an earlier commit and against Triton's own
warm cache, side by side.

    python benchmarks/warm_rebuild_vs.py REV [--example matmul] [--emit vmfb] [--runs 9] [--json OUT]

The earlier commit is exported (``git archive REV``, nothing in the repository changes) into a
temporary folder and run by an interpreter whose ``sys.path`` holds that tree first and this
venv's site-packages after it (not the editable install of this checkout). Each side gets its
own variant cache, warmed by one build. For ``--example matmul`` a third side is Triton's warm
cache: ``benchmarks/compile_time.py``'s serial ``triton.compile`` loop over the same 18 variants
in a new process over its filled TRITON_CACHE_DIR (what compile_time.py's warm anchor runs).
Then the sides alternate ``--runs`` times (so drifting machine load hits all alike) and the wall
time of each process is recorded, in seconds. Prints the medians and the ratios new / old and
new / Triton (median of the per-round ratios, then the ratio of the medians), with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _old_interpreter(tree: pathlib.Path, work: pathlib.Path) -> pathlib.Path:
    """A venv without pip whose .pth puts ``tree`` before this venv's site-packages."""
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pth = next((venv / "lib").glob("python3*/site-packages")) / "old_tree.pth"
    pth.write_text("\n".join([str(tree), *site.getsitepackages()]) + "\n")
    return venv / "bin" / "python"


def _timed(cmd: list[str], env: dict, cwd: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev", help="the earlier commit (e.g. HEAD~5 or a hash)")
    ap.add_argument("--example", default="matmul")
    ap.add_argument("--emit", default="vmfb", choices=("mlir", "iree", "vmfb"))
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="warm-rebuild-"))
    tree = work / "old"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    try:
        old_python = _old_interpreter(tree, work)
        sides = {
            # The old tree's CLI module (autotune_export.cli before the package was layered).
            "old": ([str(old_python), "-c", "import runpy, sys; sys.argv[0] = 'autotune-export'; "
                     "m = 'autotune_export.tools.cli' if __import__('importlib').util.find_spec('autotune_export.tools') "
                     "else 'autotune_export.cli'; runpy.run_module(m, run_name='__main__')"], tree),
            "new": ([sys.executable, "-m", "autotune_export.tools.cli"], ROOT),
        }
        envs = {}
        for name in sides:
            env = dict(os.environ)
            env["AUTOTUNE_EXPORT_CACHE_DIR"] = str(work / f"cache-{name}")
            env["TRITON_CACHE_DIR"] = str(work / f"triton-{name}")
            env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
            env.pop("PYTHONPATH", None)
            envs[name] = env
        from autotune_export.cuda.targets import parse_target

        if args.example == "matmul":
            # Triton's warm cache over the same variants (compile_time.py's anchor).
            sides["triton"] = ([sys.executable, str(ROOT / "benchmarks" / "compile_time.py"), "--triton-worker",
                                "--space", "matmul", "--which", "all", "--arch", str(parse_target(args.target).capability)],
                               ROOT)
            envs["triton"] = dict(envs["new"], TRITON_CACHE_DIR=str(work / "triton-anchor"))
        times: dict[str, list[float]] = {name: [] for name in sides}
        loads: list[float] = []

        def build(name: str) -> float:
            cmd, tree_root = sides[name]
            if name == "triton":
                return _timed(cmd, envs[name], cwd=str(work))
            example = tree_root / "examples" / args.example / f"{args.example}.mlir"
            out = work / f"{name}.{'vmfb' if args.emit == 'vmfb' else 'mlir'}"
            return _timed(cmd + [str(example), "--emit", args.emit, "--target", args.target, "-q", "-o", str(out)],
                          envs[name], cwd=str(work))

        for name in sides:  # cold build: fills the caches
            build(name)
        for _ in range(args.runs):
            loads.append(os.getloadavg()[0])
            for name in sides:
                times[name].append(build(name))
        med = {k: statistics.median(v) for k, v in times.items()}

        def ratio(a: str, b: str) -> dict:
            return {"median_of_ratios": statistics.median(x / y for x, y in zip(times[a], times[b])),
                    "ratio_of_medians": med[a] / med[b]}

        result = {"rev": args.rev, "example": args.example, "emit": args.emit, "target": args.target,
                  "runs": args.runs, "seconds": times, "median_s": med, "load1": loads,
                  "ratio_new_over_old": med["new"] / med["old"], "new_over_old": ratio("new", "old")}
        if "triton" in sides:
            result["new_over_triton_warm"] = ratio("new", "triton")
        print(f"warm rebuild of examples/{args.example} (--emit {args.emit} --target {args.target}), {args.runs} runs each, "
              f"load average {min(loads):.1f}-{max(loads):.1f}:")
        r = result["new_over_old"]
        print(f"  {args.rev}: median {med['old']:.2f} s   this checkout: median {med['new']:.2f} s   "
              f"new / old {r['median_of_ratios']:.3f} (ratio of medians {r['ratio_of_medians']:.3f})")
        if "triton" in sides:
            r = result["new_over_triton_warm"]
            print(f"  Triton's warm cache, same 18 variants: median {med['triton']:.2f} s   "
                  f"new / Triton {r['median_of_ratios']:.3f} (ratio of medians {r['ratio_of_medians']:.3f})"
                  + ("" if args.emit == "mlir" else f"  [--emit {args.emit} includes iree-compile; Triton's loop has no such step]"))
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(result, indent=1))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
