"""Layer norm / RMS norm forward, one row per program, with optional weight and bias (None),
the output dtype a constexpr (as flash-attn's and Liger's layer norms)."""

import triton
import triton.language as tl

from ..registry import register


@triton.heuristics({
    "HAS_WEIGHT": lambda args: args["W"] is not None,
    "HAS_BIAS": lambda args: args["B"] is not None,
})
@triton.jit
def layer_norm_fwd(X, Y, W, B, stride, N, eps,
                   BLOCK_N: tl.constexpr, OUT_DTYPE: tl.constexpr,
                   HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, IS_RMS_NORM: tl.constexpr = False):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    if IS_RMS_NORM:
        xbar = tl.where(mask, x, 0.0)
    else:
        xbar = tl.where(mask, x - tl.sum(x, axis=0) / N, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xbar * xbar, axis=0) / N + eps)
    y = xbar * rstd
    if HAS_WEIGHT:
        y = y * tl.load(W + cols, mask=mask, other=1.0).to(tl.float32)
    if HAS_BIAS:
        y = y + tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride + cols, y.to(OUT_DTYPE), mask=mask)


register("layer_norm_fwd", layer_norm_fwd)
