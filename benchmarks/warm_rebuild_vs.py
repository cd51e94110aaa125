"""Warm rebuild of an example, this checkout against an earlier commit, side by side.

    python benchmarks/warm_rebuild_vs.py REV [--example matmul] [--emit vmfb] [--runs 9] [--json OUT]

The earlier commit is checked out into a temporary git worktree and run by an interpreter whose
``sys.path`` holds that tree first and this venv's site-packages after it (not the editable
install of this checkout). Each side gets its own variant cache, warmed by one build; then the
two builds alternate ``--runs`` times (so drifting machine load hits both alike) and the wall
time of each process is recorded, in seconds. Prints the medians and the ratio new / old.
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
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), args.rev], check=True)
    try:
        old_python = _old_interpreter(tree, work)
        sides = {
            # The old tree's CLI module (autotune_export.cli before the package was layered).
            "old": ([str(old_python), "-c", "import runpy, sys; sys.argv[0] = 'autotune-export'; "
                     "m = 'autotune_export.tools.cli' if __import__('importlib').util.find_spec('autotune_export.tools') "
                     "else 'autotune_export.cli'; runpy.run_module(m, run_name='__main__')"], tree),
            "new": ([sys.executable, "-m", "autotune_export.tools.cli"], ROOT),
        }
        times: dict[str, list[float]] = {"old": [], "new": []}
        envs = {}
        for name in sides:
            env = dict(os.environ)
            env["AUTOTUNE_EXPORT_CACHE_DIR"] = str(work / f"cache-{name}")
            env["TRITON_CACHE_DIR"] = str(work / f"triton-{name}")
            env.pop("PYTHONPATH", None)
            envs[name] = env

        def build(name: str) -> float:
            cmd, tree_root = sides[name]
            example = tree_root / "examples" / args.example / f"{args.example}.mlir"
            out = work / f"{name}.{'vmfb' if args.emit == 'vmfb' else 'mlir'}"
            return _timed(cmd + [str(example), "--emit", args.emit, "--target", args.target, "-q", "-o", str(out)],
                          envs[name], cwd=str(work))

        for name in sides:  # cold build: fills the caches
            build(name)
        for _ in range(args.runs):
            for name in sides:
                times[name].append(build(name))
        med = {k: statistics.median(v) for k, v in times.items()}
        result = {"rev": args.rev, "example": args.example, "emit": args.emit, "target": args.target,
                  "runs": args.runs, "seconds": times, "median_s": med, "ratio_new_over_old": med["new"] / med["old"]}
        print(f"warm rebuild of examples/{args.example} (--emit {args.emit} --target {args.target}), {args.runs} runs each:")
        print(f"  {args.rev}: median {med['old']:.2f} s   this checkout: median {med['new']:.2f} s   "
              f"ratio {result['ratio_new_over_old']:.3f}")
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(result, indent=1))
        return 0
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
