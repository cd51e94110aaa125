"""A kernel file that writes to standard output: when it is imported (as some libraries do)
and, through tl.static_print, when Triton compiles the kernel (written for these tests)."""

import triton
import triton.language as tl

print("noisy_kernels.py: imported")


@triton.jit
def noisy_add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_print("noisy_add: BLOCK =", BLOCK)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)
