"""Triton kernels launched with strided tensors, as libraries launch them (issue 23, item 1).

Every kernel takes its tensors' strides in elements and addresses ``ptr + i * stride_i``, so
that a launch may pass any view: a transposed GEMM operand (``b.t()``), column-major scales of
a group quantization, a column-major output, an expanded bias (stride 0), a slice of a wider
buffer at a storage offset. ``build.py`` exports the launches (docs/call-sites.md, "Strided
tensors"); ``check_on_gpu.py`` runs every variant against numpy.
"""

import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=4),
                          triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4),
                          triton.Config({"BM": 128, "BN": 64, "BK": 64}, num_warps=8)], key=["M", "N", "K"])
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C (M x N) = A (M x K) @ B (K x N), fp16 in, fp32 accumulation, C's dtype out."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.autotune(configs=[triton.Config({"BLOCK_M": 1}, num_warps=1), triton.Config({"BLOCK_M": 8}, num_warps=4)],
                 key=["M"])
@triton.jit
def group_quant(x_ptr, q_ptr, s_ptr, M, stride_xm, stride_qm, stride_sm, stride_sg, GROUP: tl.constexpr,
                BLOCK_M: tl.constexpr):
    """Per-token-group int8 quantization: for each row and group of GROUP columns, scale =
    max|x| / 127 (at least 1e-10), q = trunc(x / scale); the scales (M x K/GROUP) are written
    through their strides (column-major in the launch of build.py, as fp8 GEMMs want them)."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    g = tl.program_id(1)
    rk = g * GROUP + tl.arange(0, GROUP)
    mask = rm[:, None] < M
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :], mask=mask, other=0.0).to(tl.float32)
    scale = tl.maximum(tl.max(tl.abs(x), axis=1), 1e-10) / 127.0
    q = (x / scale[:, None]).to(tl.int8)
    tl.store(q_ptr + rm[:, None] * stride_qm + rk[None, :], q, mask=mask)
    tl.store(s_ptr + rm * stride_sm + g * stride_sg, scale, mask=rm < M)


@triton.autotune(configs=[triton.Config({"BM": 16, "BN": 64}, num_warps=2), triton.Config({"BM": 64, "BN": 32}, num_warps=4)],
                 key=["M", "N"])
@triton.jit
def add2d(x_ptr, y_ptr, out_ptr, M, N, alpha, sxm, sxn, sym, syn, som, son, BM: tl.constexpr, BN: tl.constexpr):
    """out = alpha * x + y (M x N), each through its own strides."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
    y = tl.load(y_ptr + rm[:, None] * sym + rn[None, :] * syn, mask=mask)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, alpha * x + y, mask=mask)


@triton.autotune(configs=[triton.Config({"BM": 16, "BN": 64}, num_warps=2), triton.Config({"BM": 64, "BN": 32}, num_warps=4)],
                 key=["M", "N"])
@triton.jit
def axpy_(x_ptr, y_ptr, M, N, alpha, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr):
    """y += alpha * x (M x N) in place, each through its own strides."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
    y_ptrs = y_ptr + rm[:, None] * sym + rn[None, :] * syn
    tl.store(y_ptrs, tl.load(y_ptrs, mask=mask) + alpha * x, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)],
                 key=["n"])
@triton.jit
def locked_sum(x_ptr, out_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    """out[0] += sum(x), each program adding its block's sum under a spin lock in an int32
    tensor (taken with tl.atomic_cas, released with tl.atomic_xchg; issue 21, item 10): a
    lock holding anything but 0 when the kernel starts is never released."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(out_ptr, tl.load(out_ptr) + s)
    tl.atomic_xchg(lock_ptr, 0)
