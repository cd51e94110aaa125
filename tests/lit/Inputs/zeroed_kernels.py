"""Accumulating Triton kernels for the reset_to_zero tests (tests/lit/passes/zeroed_triton.mlir)."""
import triton
import triton.language as tl


@triton.jit
def sums(a_ptr, x_ptr, b_ptr, y_ptr, c_ptr, n, BLOCK: tl.constexpr):
    """a += sum(x) (an atomic), b = x + y (a store), c += sum(y) (an atomic): three outputs
    around two inputs."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(a_ptr, tl.sum(x, axis=0))
    tl.store(b_ptr + offs, x + y, mask=mask)
    tl.atomic_add(c_ptr, tl.sum(y, axis=0))


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"],
                 reset_to_zero=["acc_ptr"], restore_value=["hist_ptr"])
@triton.jit
def tuned_sum(x_ptr, hist_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    """hist[0] += 1 (in place, restored by the autotuner), acc += sum(x) (an atomic, zeroed by
    the autotuner)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(acc_ptr, tl.sum(x, axis=0))
    tl.atomic_add(hist_ptr, 1.0)


@triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"], reset_to_zero=["x_ptr"])
@triton.jit
def zeroes_an_input(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    """The autotuner zeroes x_ptr, which the call passes as an input."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))
