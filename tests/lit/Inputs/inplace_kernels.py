"""In-place Triton kernels for the tied-binding tests (tests/lit/passes/tied.mlir)."""
import triton
import triton.language as tl


@triton.jit
def add_into_first(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """x += y."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def add_into_last(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    """x += y, the in-place pointer last."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def axpy_two(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    """a += b; c *= b: two pointers written in place around a read-only one."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(a_ptr + offs, tl.load(a_ptr + offs, mask=mask) + b, mask=mask)
    tl.store(c_ptr + offs, tl.load(c_ptr + offs, mask=mask) * b, mask=mask)


@triton.jit
def add_scalar_into(a, x_ptr, n, BLOCK: tl.constexpr):
    """x += a, an i64 scalar ahead of the in-place pointer (two 32-bit constants in IREE)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + a.to(tl.float32), mask=mask)
