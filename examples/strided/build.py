"""Export the launches of examples/strided/launches.py with ``launch_to_mlir`` (the modules are
kept next to this file, ``NAME.mlir``) and, with ``--vmfb-dir``, build each for a target::

    python examples/strided/build.py                                  # the .mlir files only
    python examples/strided/build.py --vmfb-dir out/strided --target sm_90

Needs torch (CPU) and Triton; no GPU (nothing runs: only the tensors' shapes, dtypes and strides
are read). Exit status 1 when an export or a build fails.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))


def export(name: str, folder: str = HERE) -> str:
    """Write ``folder/NAME.mlir`` for launch ``name``; returns its path."""
    import torch

    import kernels
    from autotune_export.interop.launch import launch_to_mlir
    from launches import LAUNCHES

    spec = LAUNCHES[name]
    grid, args, *kw = spec["args"](torch)
    path = os.path.join(folder, f"{name}.mlir")
    launch_to_mlir(getattr(kernels, spec["kernel"]), grid, *args, outputs=spec["outputs"], inplace=spec["inplace"],
                   name=name, output=path, target="sm_90", kernel_source=(os.path.join(HERE, "kernels.py"), spec["kernel"]),
                   **(kw[0] if kw else {}))
    return path


def main(argv=None) -> int:
    from launches import LAUNCHES

    ap = argparse.ArgumentParser()
    ap.add_argument("--vmfb-dir", default=None)
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--only", default=None, help="comma-separated launch names")
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else list(LAUNCHES)
    failed = 0
    for name in names:
        path = export(name)
        print(f"wrote {os.path.relpath(path)}")
        if args.vmfb_dir:
            os.makedirs(args.vmfb_dir, exist_ok=True)
            cmd = [sys.executable, "-m", "autotune_export.tools.cli", path, "--emit", "vmfb", "--target", args.target,
                   "-o", os.path.join(args.vmfb_dir, f"{name}.vmfb")]
            failed += subprocess.run(cmd).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
