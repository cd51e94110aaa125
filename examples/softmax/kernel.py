"""Row-wise fp32 softmax, written for autotune-export.

out[r, :] = exp(x[r, :] - max(x[r, :])) / sum(exp(x[r, :] - max(x[r, :]))) for each row r.

Launch: one program per row (grid = number of rows). BLOCK_SIZE is a power of two >= n_cols;
the columns beyond n_cols are masked (read as -inf, so they add exp(-inf) = 0 to the sum).
Row strides are in elements. The output pointer comes FIRST in the parameter list, unlike the
order of the operands in the computation.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: rows * stride may exceed 2**31 elements
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    # Subtracting the row maximum keeps exp() in range: every exponent is <= 0.
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=mask)
