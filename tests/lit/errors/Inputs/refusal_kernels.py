"""Kernels for the refusal tests in tests/lit/errors (written for these tests)."""

import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


# Writes through x_ptr as well as out_ptr: x_ptr must be {output} or tied to a result.
@triton.jit
def scale_and_clear_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 2, mask=mask)
    tl.store(x_ptr + offs, tl.zeros_like(x), mask=mask)


# Counts into a histogram with atomics: hist_ptr is written.
@triton.jit
def histogram_kernel(x_ptr, hist_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.atomic_add(hist_ptr + (x & 15), 1, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def many_pointers_kernel(p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(p0 + offs))


@triton.jit
def many_scalars_kernel(x_ptr, out_ptr, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17,
                        s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + s0 + s32)


@triton.jit
def bool_mask_kernel(x_ptr, keep_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keep = tl.load(keep_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.where(keep, tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


@triton.jit
def rows_by_address_kernel(addrs_ptr, out_ptr, BLOCK: tl.constexpr):
    """Grouped-GEMM style: each program reads a row at a device address the host wrote into
    addrs (a tensor of data_ptr() values)."""
    i = tl.program_id(0)
    row = tl.load(addrs_ptr + i).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + i * BLOCK + offs, tl.load(row + offs))
