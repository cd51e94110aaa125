"""Kernels for the tests of mistakes about the kernel (tests/lit/errors/kernel_clauses.mlir),
written for these tests."""

import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.jit
def scaled_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr):
    # The autotune config gives BLOCK but not SCALE, which has no default.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)
