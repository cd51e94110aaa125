"""Export the launches of examples/factory/launches.py (kernels made at run time) with
``launch_to_mlir`` from the kernel objects, ``NAME.mlir`` next to this file (each carries its
kernel's source: ``kernel_source(...)``), and, with ``--vmfb-dir``, build each for a target::

    python examples/factory/build.py                                  # the .mlir files only
    python examples/factory/build.py --vmfb-dir out/factory --target sm_90

Needs torch (CPU) and Triton; no GPU. The build reads only the .mlir (not kernels.py). Exit
status 1 when an export or a build fails.
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

    from autotune_export.interop.launch import launch_to_mlir
    from launches import LAUNCHES

    kernel, grid, args, kwargs, outputs = LAUNCHES[name]["args"](torch)
    path = os.path.join(folder, f"{name}.mlir")
    launch_to_mlir(kernel, grid, *args, outputs=outputs, name=name, output=path, target="sm_90", **kwargs)
    return path


def main(argv=None) -> int:
    from launches import LAUNCHES

    ap = argparse.ArgumentParser()
    ap.add_argument("--vmfb-dir", default=None)
    ap.add_argument("--target", default="sm_90")
    args = ap.parse_args(argv)
    failed = 0
    for name in LAUNCHES:
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
