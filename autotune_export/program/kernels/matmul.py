"""Batched matrix multiplication C[z] = A[z] @ B[z] with fp32 accumulation: the project's Triton
matmul (examples/matmul/kernel.py: the same tiles, grouped launch order and masks) with a batch
grid dimension, for the dispatches of a whole program (docs/program.md, "Triton candidates").

Shapes: A[z] is M x K, B[z] is K x N, C[z] is M x N, for z in range(batch); every operand has
arbitrary strides in elements (batch, row, column), so transposed operands are read in place
(A stored K x M: ``stride_am = 1``, ``stride_ak = M``). A plain matmul is batch 1 with batch
strides 0. C's element type is C's pointer's (fp16 or bf16 here); the accumulation is fp32
and the result is rounded once to C's type, as IREE's own code for an fp16 ``linalg.matmul``
does (``convert_acc_gemm``) and as ``tl.dot`` does.

Launch: grid ``(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), batch)``; program ids of axis 0 map to
output tiles in groups of GROUP_M tile-rows (examples/matmul/kernel.py). Offsets are 32-bit:
every element offset must stay below 2**31 (the launch declines shapes where one can reach it:
``triton_candidates.int32_offset_overflow``).
"""

import triton
import triton.language as tl


@triton.jit
def bmm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_az,
    stride_am,
    stride_ak,
    stride_bz,
    stride_bk,
    stride_bn,
    stride_cz,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    z = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_M * tiles_n
    group = pid // tiles_per_group
    first_m = group * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % tiles_per_group) % rows_in_group
    tile_n = (pid % tiles_per_group) // rows_in_group

    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + z * stride_az + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + z * stride_bz + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    mask_m = offs_m[:, None] < M
    mask_n = offs_n[None, :] < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + z * stride_cz + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m & mask_n)


#: The configs of examples/matmul/kernel.py (sm_80 / sm_90 class GPUs, fp16), largest tiles
#: first (the ninth needs more shared memory than sm_80 has and is pruned there), then three
#: for skinny products.
CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 5},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 7},
    # Skinny outputs (N or M of 64-128, long K: 8192 x 128 x 8192): enough programs for the SMs.
    {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 32, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 5},
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
]

_META = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")

#: The kernel behind Triton's own autotuner, over :data:`CONFIGS`: what the program builder
#: launches (its configs become the candidates, in this order).
bmm_autotuned = triton.autotune(
    configs=[triton.Config({k: c[k] for k in _META}, num_warps=c["num_warps"], num_stages=c["num_stages"]) for c in CONFIGS],
    key=["M", "N", "K"],
)(bmm_kernel)
