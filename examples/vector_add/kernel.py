"""Element-wise fp32 addition out = x + y, written for autotune-export.

Launch: a 1-D grid of cdiv(n_elements, BLOCK_SIZE) programs; each adds one block of BLOCK_SIZE
(a power of two) consecutive elements, the tail block masked.
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
