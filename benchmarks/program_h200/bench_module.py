"""Per-call time of the H200 program's functions by IREE's own ruler, iree-benchmark-module.

    PYTHONPATH=/tmp/site:. python3 benchmarks/program_h200/bench_module.py out/program_h200 [--builds plain,frozen] [--json OUT.json]

run.py times calls from Python through iree.runtime (what a user's call costs, host work
included); this runs the same functions of the same ``.vmfb`` files under
``iree-benchmark-module`` (the runtime wheel's tool, run as ``python -m
iree._runtime.scripts.iree_benchmark_module``), an independent ruler without Python in the loop.
Only builds whose every choice is fixed are timed here (``plain``: IREE's own code;
``frozen``: the tuned program with its picks built in; any other name the manifest lists), because
a build with groups runs each group's default until something tunes it, and
iree-benchmark-module does not tune.

Inputs are those of run.py (``run.inputs``: entries in {-0.5, ..., 0.5}, fp16) written as
``.npy`` files to a temporary folder; each function is timed with ``--benchmark_repetitions``
(default 10) and its median real time per call is reported in ms, then for ``main`` (and each
single-matmul function) the ratio plain / each other build. Exit 1 if a build or the tool fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402  (run.py: inputs)


def median_ms(vmfb: str, driver: str, function: str, files: list[str], reps: int, flags: tuple[str, ...] = ()) -> float:
    """The median real time (ms) of one call of ``function`` over ``reps`` repetitions, as
    iree-benchmark-module reports it (google-benchmark's ``real_time`` aggregate ``median``).
    Raises RuntimeError with the tool's output when it fails."""
    cmd = [sys.executable, "-m", "iree._runtime.scripts.iree_benchmark_module", f"--module={vmfb}",
           f"--device={driver}", f"--function={function}", *[f"--input=@{f}" for f in files],
           *flags, f"--benchmark_repetitions={reps}", "--benchmark_format=json", "--benchmark_report_aggregates_only=true"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    report = json.loads(proc.stdout)
    for bench in report["benchmarks"]:
        if bench.get("aggregate_name") == "median":
            scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[bench["time_unit"]]
            return bench["real_time"] * scale
    raise RuntimeError(f"no median in iree-benchmark-module's report for {function}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="what build.py wrote")
    ap.add_argument("--builds", default="", help="comma-separated builds (default: plain and every build with no groups)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--tool-flag", action="append", default=[], metavar="FLAG",
                    help="a flag for iree-benchmark-module (repeatable), e.g. --tool-flag=--device_allocator=caching "
                         "or --tool-flag=--cuda_async_allocations=false")
    ap.add_argument("--functions", default="", help="comma-separated functions (default: all of the manifest's)")
    ap.add_argument("--json", help="write the table here too")
    args = ap.parse_args(argv)
    with open(os.path.join(args.folder, "manifest.json")) as fh:
        manifest = json.load(fh)
    builds = [b for b in args.builds.split(",") if b] or [
        name for name, info in manifest["builds"].items() if name == "plain" or (not info.get("groups") and info.get("frozen"))
    ]
    mats = run.inputs(manifest, np.random.default_rng(0))
    if args.functions:
        mats = {f: mats[f] for f in args.functions.split(",")}
    table: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for function, arrays in mats.items():
            files[function] = []
            for i, array in enumerate(arrays):
                path = os.path.join(tmp, f"{function}_{i}.npy")
                np.save(path, array)
                files[function].append(path)
        for build in builds:
            vmfb = os.path.join(args.folder, f"{build}.vmfb")
            table[build] = {f: median_ms(vmfb, manifest["driver"], f, files[f], args.reps, tuple(args.tool_flag)) for f in mats}
    functions = list(mats)
    flags = f", {' '.join(args.tool_flag)}" if args.tool_flag else ""
    print(f"== per call by iree-benchmark-module (ms, median of {args.reps} repetitions{flags}) ==")
    print("  build        " + "".join(f"{f:>12}" for f in functions))
    for build, row in table.items():
        print(f"  {build:12s} " + "".join(f"{row[f]:12.3f}" for f in functions))
    if "plain" in table:
        for build, row in table.items():
            if build != "plain":
                ratios = ", ".join(f"{f} {table['plain'][f] / row[f]:.2f}x" for f in functions if f != "call_floor")
                print(f"  plain / {build}: {ratios}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"reps": args.reps, "tool_flags": args.tool_flag, "median_ms": table}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
