"""A kernel whose triton.autotune names an input in restore_value (as gemlite's GEMV kernels
do), for tests/lit/passes/restore_value_inputs.mlir."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"],
                 restore_value=["x_ptr"])
@triton.jit
def doubled(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """y = 2 * x; the autotuner restores x_ptr, which the kernel only reads."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)
