"""Kernels written like those of public Triton libraries, for the call-site lit tests: optional
(None) tensors and scalars decided by triton.heuristics, a dtype constexpr, a bool flag."""

import triton
import triton.language as tl


@triton.heuristics({"HAS_BIAS": lambda args: args["bias_ptr"] is not None})
@triton.jit
def scale_bias_kernel(x_ptr, bias_ptr, out_ptr, alpha, n, flag, BLOCK: tl.constexpr, OUT_DTYPE: tl.constexpr,
                      HAS_BIAS: tl.constexpr, CLAMP: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if alpha is not None:
        x = x * alpha
    if HAS_BIAS:
        x = x + tl.load(bias_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if flag:
        x = -x
    if CLAMP:
        x = tl.minimum(tl.maximum(x, -1.0), 1.0)
    tl.store(out_ptr + offs, x.to(OUT_DTYPE), mask=mask)


# A heuristic that needs what only the call knows (a tensor's shape).
@triton.heuristics({"BLOCK": lambda args: 128 if args["x_ptr"].shape[0] > 4096 else 64})
@triton.jit
def shape_heuristic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


# A heuristic on a tensor's dtype, which the signature gives (*fp16: BLOCK 128, else 64).
@triton.heuristics({"BLOCK": lambda args: 128 if args["x_ptr"].dtype.itemsize == 2 else 64,
                    "WIDE": lambda args: args["out_ptr"].element_size() == 4})
@triton.jit
def dtype_heuristic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


# Gathers rows by int64 indices (labels, token ids).
@triton.jit
def gather_rows_kernel(table_ptr, idx_ptr, out_ptr, n, D: tl.constexpr):
    row = tl.program_id(0)
    i = tl.load(idx_ptr + row)
    cols = tl.arange(0, D)
    tl.store(out_ptr + row * D + cols, tl.load(table_ptr + i * D + cols))


# fp8 e5m2 in, fp16 out, the output dtype a constexpr of the call.
@triton.jit
def fp8_upcast_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, OUT_DTYPE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(OUT_DTYPE), mask=mask)


# Triton's JIT does not specialize n (fla's kernels mark their sequence lengths so).
@triton.jit(do_not_specialize=["n"])
def unspecialized_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
