"""Helpers of the factory library (examples/factory/kernels.py): a @triton.jit function and a
constexpr the factory's kernels read through this module (``helpers.bias``, ``helpers.SHIFT``)."""

import triton
import triton.language as tl

SHIFT = tl.constexpr(0.5)


@triton.jit
def bias(y):
    return y + SHIFT
