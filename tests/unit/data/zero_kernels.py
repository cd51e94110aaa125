"""Triton kernels with several outputs for tests/unit/test_zero_outputs.py (jax-triton's
convention: the outputs are the last parameters)."""
import triton
import triton.language as tl


@triton.jit
def two_sums(x_ptr, n, s_ptr, t_ptr, copy_ptr, BLOCK: tl.constexpr):
    """s += sum(x), t += sum(2 x) (atomics into outputs that must start at zero), copy = x."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(s_ptr, tl.sum(x, axis=0))
    tl.atomic_add(t_ptr, tl.sum(2 * x, axis=0))
    tl.store(copy_ptr + offs, x, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"],
                 reset_to_zero=["s_ptr"], restore_value=["copy_ptr"])
@triton.jit
def tuned_sums(x_ptr, n, s_ptr, t_ptr, copy_ptr, BLOCK: tl.constexpr):
    """two_sums with the autotuner's own reset_to_zero / restore_value."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(s_ptr, tl.sum(x, axis=0))
    tl.atomic_add(t_ptr, tl.sum(2 * x, axis=0))
    tl.store(copy_ptr + offs, x, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"], reset_to_zero=["s_ptr"], restore_value=["copy_ptr"])
@triton.jit
def tuned_sums_inplace(x_ptr, n, y_ptr, s_ptr, t_ptr, copy_ptr, BLOCK: tl.constexpr):
    """s += sum(x), t += sum(2 x), copy = y + x (copy aliases y in the call)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(s_ptr, tl.sum(x, axis=0))
    tl.atomic_add(t_ptr, tl.sum(2 * x, axis=0))
    tl.store(copy_ptr + offs, tl.load(y_ptr + offs, mask=offs < n) + x, mask=offs < n)
