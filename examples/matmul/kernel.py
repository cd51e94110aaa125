"""fp16 matrix multiplication C = A @ B with fp32 accumulation, written for autotune-export.

Shapes: A is M x K, B is K x N, C is M x N, all fp16, with arbitrary strides (in elements).
M, N and K need not be multiples of the tile sizes: loads and stores are masked.

Launch: a 1-D grid of cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs. Program ids are mapped to
output tiles in groups of GROUP_M tile-rows ("super-grouping"): consecutive programs walk down a
column of GROUP_M tiles before moving right, so the A rows and B columns they read stay in L2.
Element offsets are computed in 32 bits: every row * stride + column must stay below 2**31.

Performance needs specialization: with the inner strides (stride_ak, stride_bn, stride_cn) as
runtime values Triton must assume them arbitrary and emits scalar 2-byte loads with no
software pipeline. Compile fast variants with those strides fixed to 1 and the other parameters declared
divisible by 16 (what Triton's JIT does for contiguous, aligned tensors).
"""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Grouped launch order: a group is GROUP_M tile-rows wide (fewer in the last group).
    tiles_per_group = GROUP_M * tiles_n
    group = pid // tiles_per_group
    first_m = group * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % tiles_per_group) % rows_in_group
    tile_n = (pid % tiles_per_group) // rows_in_group

    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
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

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=mask_m & mask_n)


# Tile configurations for A100 (sm_80) and H100 (sm_90) class GPUs, fp16 inputs.
# Shared memory is what the software pipeline buffers: about (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes
# per stage, with num_stages - 1 buffers on sm_80 and num_stages on sm_90 (wgmma) when Triton can
# vectorize the loads. The last config needs 196608 bytes on sm_80, above its 166912-byte limit,
# and 229376 bytes on sm_90, within 232448: it exists for H100 only and is pruned for A100.
# These figures hold for variants specialized the way Triton's JIT specializes contiguous, aligned
# matrices: stride_ak = stride_bn = stride_cn = 1 as constants and tt.divisibility 16 on the other
# parameters. Without them Triton cannot prove the loads contiguous, cannot use cp.async (sm_80)
# or the wgmma pipeline (sm_90), does not pipeline, and every config needs at most 65536 bytes.
CONFIGS = [
    # Large tiles: compute-bound shapes.
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4},
    # Medium tiles.
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    # Small tiles: small or skinny problems, where occupancy matters more than reuse.
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 5},
    # Deep pipeline for H100: too much shared memory for sm_80.
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 7},
]

_META = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")

# The same kernel behind Triton's own autotuner: its configs become the default variants when
# autotune-export is pointed at this name. `matmul_kernel` above stays the plain JIT function.
matmul_autotuned = triton.autotune(
    configs=[
        triton.Config({k: c[k] for k in _META}, num_warps=c["num_warps"], num_stages=c["num_stages"])
        for c in CONFIGS
    ],
    key=["M", "N", "K"],
)(matmul_kernel)
