"""Build IREE modules from jax-triton style calls, with no jax and no GPU.

    python examples/jax_triton/build.py [--out out/jax_triton] [--target sm_80]

1. ``axpy``: ``triton_call_to_mlir`` turns the ``jax_triton.triton_call`` invocation below into
   a Triton-form group + host function (``axpy.mlir``); the autotune-export pipeline compiles
   the three configs and lowers the group (``axpy.iree.mlir``); iree-compile makes
   ``axpy.vmfb``.
2. ``two_kernels`` and ``aliases_zeroed``: ``convert_stablehlo`` turns the committed
   ``jax.export`` fixtures (tests/fixtures/jax, written by jax-triton 0.3.1) into IREE input,
   reusing jax-triton's PTX, and iree-compile makes ``NAME.vmfb``.

The .vmfb files are what check_on_gpu.py runs on a GPU machine.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from autotune_export.frontend.reader import SourceFile, parse_source, print_module  # noqa: E402
from autotune_export.interop.jax_triton import convert_stablehlo, triton_call_to_mlir  # noqa: E402
from autotune_export.passes import DEFAULT_PIPELINES, PassContext, run_pipeline  # noqa: E402
from autotune_export.cuda.targets import iree_codegen_target, parse_target  # noqa: E402

N = 1 << 20


class ShapeDtype:
    """What jax.ShapeDtypeStruct is to jax-triton: a shape and a dtype (no jax needed)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def iree_compile(src: str, out: str, target: str, stablehlo: bool = False) -> None:
    exe = os.path.join(os.path.dirname(sys.executable), "iree-compile")
    # IREE generates its own dispatches' code for the nearest target it supports (sm_90 -> sm_89):
    # the one rule in autotune_export.cuda.targets; the Triton objects keep their own target.
    args = [exe if os.path.exists(exe) else "iree-compile", src, "--iree-hal-target-device=cuda",
            f"--iree-cuda-target={iree_codegen_target(parse_target(target))}", "-o", out]
    if stablehlo:
        args.append("--iree-input-type=stablehlo")
    subprocess.run(args, check=True)


def build_axpy(out_dir: str, target: str) -> str:
    import kernels

    x = ShapeDtype((N,), "float32")
    # Exactly the arguments of jax_triton.triton_call(x, y, 2.0, N, kernel=..., out_shape=..., grid=...):
    # x and y arrays, alpha and n static scalars, one output; the grid is a function of the config.
    # output= writes the module and names the kernel relative to it (relocatable together).
    src = os.path.join(out_dir, "axpy.mlir")
    text = triton_call_to_mlir(
        x, x, 2.0, N,
        kernel=kernels.axpy_kernel,
        out_shape=ShapeDtype((N,), "float32"),
        grid=lambda meta: (triton_cdiv(N, meta["BLOCK"]),),
        name="axpy",
        target=target,
        output=src,
    )
    source = SourceFile(text, src, out_dir)
    module = parse_source(source)
    run_pipeline(DEFAULT_PIPELINES["iree"], PassContext(source=source, remark=lambda d: None), module, target=target)
    lowered = os.path.join(out_dir, "axpy.iree.mlir")
    with open(lowered, "w") as f:
        f.write(print_module(module))
    vmfb = os.path.join(out_dir, "axpy.vmfb")
    iree_compile(lowered, vmfb, target)
    return vmfb


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def build_fixture(name: str, out_dir: str, target: str) -> str:
    with open(os.path.join(ROOT, "tests", "fixtures", "jax", f"{name}.stablehlo.mlir")) as f:
        text = convert_stablehlo(f.read(), target=target)
    src = os.path.join(out_dir, f"{name}.iree.mlir")
    with open(src, "w") as f:
        f.write(text)
    vmfb = os.path.join(out_dir, f"{name}.vmfb")
    iree_compile(src, vmfb, target, stablehlo=True)
    return vmfb


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "jax_triton"))
    ap.add_argument("--target", default="sm_80")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    print("built", build_axpy(args.out, args.target))
    for name in ("two_kernels", "aliases_zeroed"):
        print("built", build_fixture(name, args.out, args.target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
