"""jax-triton bridge: ``triton_call``-style invocations and exported JAX programs as IREE input.

Two entry points:

:func:`triton_call_to_mlir`
    Takes the arguments of ``jax_triton.triton_call`` (0.3.x calling convention) and returns
    the text of a module holding a Triton-form ``hal.executable.autotuning.export`` group and a
    public host function that dispatches it. ``autotune-export - --emit iree`` (or ``vmfb``)
    compiles it like any hand-written input. Works without jax, jax-triton or a GPU: array
    arguments are anything with ``.shape`` and ``.dtype`` (``jax.ShapeDtypeStruct``, numpy
    arrays, jax arrays).

:func:`convert_stablehlo`
    Takes what ``jax.export`` wrote for a program calling jax-triton kernels (StableHLO text, or
    MLIR bytecode) and returns IREE input: each ``stablehlo.custom_call @triton_kernel_call``
    (0.3.x: ``backend_config = "..."``) or ``@triton_kernel_call_ffi`` (0.4.x:
    ``mhlo.backend_config = {opaque = "..."}``) becomes a ``flow.dispatch`` of the PTX that
    jax-triton compiled, reused as is (no recompilation). An autotuned call becomes a group of
    one export per config, tuned at run time by the module's ``@__autotune``.

Calling conventions bridged (notes/jax-triton-facts.md, notes/iree-hal-facts.md):

* jax-triton kernel parameters are the call's inputs (arrays as pointers, Python scalars in
  place) then one pointer per output; constexpr metaparameters are baked into the code.
  IREE's CUDA HAL passes one pointer per binding (tensor operands, then untied results) and
  then one 32-bit value per constant: the PTX parameters are reordered by
  :func:`autotune_export.cuda.ptx.link`, Triton's hidden scratch pointers dropped.
* ``zeroed_outputs`` / ``bytes_to_zero``: the output is a zero-filled tensor passed as an
  operand, and the result is tied to it (``-> %zeros``); the group says so with
  ``reset_to_zero(...)`` (output names, or result indices for a converted autotuned call), so
  zero-fill-outputs keeps the fills distinct and the benchmark entries zero the output
  before every timed run.
* ``input_output_aliases``: jax-triton 0.3.x gives the aliased output its own kernel
  parameter; we pass a clone of the aliased input as a tied operand (the kernel reads the input
  through its input pointer, writes the clone, which becomes the result; IREE removes the copy
  when the input is dead). When the descriptor has no parameter for the aliased output (0.4.x),
  the result is tied to the input operand itself.
* Read-only bindings: an input binding is ``ReadOnly`` unless the kernel may store through it,
  which :func:`convert_stablehlo` learns from the kernel's TTIR in the descriptor
  (:mod:`autotune_export.cuda.ttir`); without an answer every pointer counts as written.
* Static scalars: i32/u32/f32 become IREE constants (f32 as its bits). Scalars the IREE ABI
  cannot carry (bool, 64-bit ints, f64: jax-triton 0.3.x types a Python ``float`` as fp64)
  are baked into the PTX of :func:`convert_stablehlo` (each ``ld.param`` of the parameter
  becomes a ``mov`` of the value); :func:`triton_call_to_mlir` types a Python float as fp32
  when it is exactly representable (as jax-triton 0.4 does), and leaves other unsupported
  types to the ABI check of materialize-triton-variants.
"""

from __future__ import annotations

import sys
from typing import Sequence

from autotune_export.cuda import ptx as ptx_mod
from autotune_export.support.diagnostics import DiagnosticError

from autotune_export.interop.jax_triton_call import triton_call_to_mlir
from autotune_export.interop.jax_triton_kernel import locate_kernel
from autotune_export.interop.jax_triton_stablehlo import TRITON_CALL_TARGETS, convert_stablehlo
from autotune_export.interop.jax_triton_types import JaxTritonError, KernelNotImportableError
from autotune_export.support.arguments import ArgumentParser

__all__ = [
    "JaxTritonError",
    "KernelNotImportableError",
    "triton_call_to_mlir",
    "convert_stablehlo",
    "locate_kernel",
    "TRITON_CALL_TARGETS",
]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m autotune_export.interop.jax_triton convert IN.mlir [-o OUT] [--target sm_80] ...``"""

    ap = ArgumentParser(prog="python -m autotune_export.interop.jax_triton", description="jax-triton bridge")
    sub = ap.add_subparsers(dest="command", required=True)
    conv = sub.add_parser("convert", help="jax.export StableHLO with jax-triton calls -> IREE input")
    conv.add_argument("input", help="StableHLO text or MLIR bytecode ('-' for stdin)")
    conv.add_argument("-o", "--output", default="-")
    conv.add_argument("--target", default=None, help="GPU the result runs on (e.g. sm_80): prunes configs over its shared memory")
    conv.add_argument("--no-lower", action="store_true", help="keep the groups in the sugared form (autotune-export's input)")
    conv.add_argument("--object-format", choices=("ptx", "cubin"), default="ptx")
    conv.add_argument(
        "--ptx-version",
        type=ptx_mod.parse_ptx_version,
        default=None,
        metavar="VERSION",
        help="rewrite the linked PTX's .version: 86 or 8.6 (default: keep jax-triton's)",
    )
    args = ap.parse_args(argv)
    data = sys.stdin.buffer.read() if args.input == "-" else open(args.input, "rb").read()
    if not data.startswith(b"ML\xefR"):
        data = data.decode()
    try:
        out = convert_stablehlo(
            data,
            target=args.target,
            lower=not args.no_lower,
            object_format=args.object_format,
            ptx_version=args.ptx_version,
            filename="<stdin>" if args.input == "-" else args.input,
        )
    except (JaxTritonError, DiagnosticError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(out)
    else:
        with open(args.output, "w") as f:
            f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
