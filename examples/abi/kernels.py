"""Kernels that exercise every way a Triton parameter reaches a kernel launched by IREE.

* ``scalars_kernel`` takes one scalar of every type a signature may declare: ``i1``, ``i8``,
  ``i16``, ``i32``, ``u32``, ``i64``, ``u64``, ``fp16``, ``bf16``, ``fp32``, ``fp64``. It writes
  each value back (integers to an ``i64`` buffer, floats to an ``fp64`` buffer), so a check can
  compare what the kernel read with what the host passed, 64-bit values above 2**32 included,
  and adds the ``i64`` offset to every element of an ``i32`` vector (the realistic use: an offset that
  does not fit 32 bits).
* ``tma_scale_kernel`` scales a row-major M x N fp32 matrix by 2 through device-side tensor
  descriptors (``tl.make_tensor_descriptor``). On sm_90 Triton builds the TMA descriptors in
  global scratch memory (``global_scratch_size = 256`` bytes per program, aligned to 128), which
  autotune-export passes as an extra binding; on sm_80 the same code uses plain loads and
  needs no scratch. The row stride (N * 4 bytes) must be a multiple of 16.
"""
import triton
import triton.language as tl


@triton.jit
def scalars_kernel(ints_ptr, floats_ptr, vec_ptr, out_ptr, flag, small, mid, n, un, big, ubig, half, bhalf,
                   single, double, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(ints_ptr + 0, flag.to(tl.int64))
        tl.store(ints_ptr + 1, small.to(tl.int64))
        tl.store(ints_ptr + 2, mid.to(tl.int64))
        tl.store(ints_ptr + 3, n.to(tl.int64))
        tl.store(ints_ptr + 4, un.to(tl.int64))
        tl.store(ints_ptr + 5, big)
        tl.store(ints_ptr + 6, ubig.to(tl.int64, bitcast=True))
        tl.store(floats_ptr + 0, half.to(tl.float64))
        tl.store(floats_ptr + 1, bhalf.to(tl.float64))
        tl.store(floats_ptr + 2, single.to(tl.float64))
        tl.store(floats_ptr + 3, double)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(vec_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + big, mask=mask)


@triton.jit
def tma_scale_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tile = src.load([pid_m * BM, pid_n * BN])
    dst.store([pid_m * BM, pid_n * BN], tile * 2.0)
