"""One call of a function of one build, for a profiler to look at (ncu, nsys): no timing here.

    python3 benchmarks/program_h200/one_call.py out/program_h200 BUILD [FUNCTION] [--calls N]

Loads ``BUILD.vmfb`` of what build.py wrote (plain, iree_only, tuned, frozen or a flags
variant), on the tuned build selects the picks of ``tuning_results.json`` in the folder (what
frozen.vmfb was built from: ``AutotunedModule.apply_results``, the runtime's own rule), makes
the function's inputs as run.py does (manifest ``matrices``/``functions``), calls FUNCTION
(default ``main``) once untimed and then ``--calls`` times (default 1), and checks the last
call's outputs against numpy (exit 1 on a mismatch). Under ncu, e.g.::

    ncu -k regex:'bmm_kernel|matmul' --metrics gpu__time_duration.sum,launch__grid_size,\\
        launch__block_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static \\
        --csv python3 benchmarks/program_h200/one_call.py out/program_h200 frozen

gives per kernel launch its duration, grid, block and shared memory, to compare the kernels a
frozen build runs with those of the tuned build on the same picks.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import run  # noqa: E402  (run.py: inputs, references, load, outputs, host_array)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("build")
    ap.add_argument("function", nargs="?", default="main")
    ap.add_argument("--calls", type=int, default=1)
    args = ap.parse_args(argv)
    with open(os.path.join(args.folder, "manifest.json")) as fh:
        manifest = json.load(fh)
    m = run.load(os.path.join(args.folder, f"{args.build}.vmfb"), manifest["driver"])
    results = os.path.join(args.folder, "tuning_results.json")
    if m.groups and os.path.exists(results):
        picked = m.apply_results(results)
        print(f"{args.build}: {len(picked)} groups on the picks of {results}")
    mats = run.inputs(manifest, np.random.default_rng(0))
    refs = run.references(manifest, mats)[args.function]
    dev = [m.device_array(x) for x in mats[args.function]]
    fn = m.functions[args.function]
    fn(*dev)
    for _ in range(args.calls):
        outs = run.outputs(fn(*dev))
    errs = [float(np.max(np.abs(run.host_array(o).astype(np.float32) - r))) for o, r in zip(outs, refs)]
    print(f"{args.build} @{args.function}: {args.calls} call(s), max error {max(errs)}")
    return 0 if max(errs) <= 0.0625 else 1


if __name__ == "__main__":
    sys.exit(main())
