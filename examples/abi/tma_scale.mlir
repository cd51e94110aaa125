// Device-side TMA descriptors (tl.make_tensor_descriptor): on sm_90 Triton keeps them in global
// scratch memory, 256 bytes per program aligned to 128, which its launcher allocates. Here the
// scratch is one more binding (the last), an extra result of the dispatch that
// lower-autotuning-dispatch sizes from the grid; on sm_80 the kernel needs no scratch.
//
//   autotune-export tma_scale.mlir --emit vmfb --target sm_90 -o tma_scale.vmfb
hal.executable.source private @tma_ex {
  hal.executable.autotuning.export @tma_scale
      triton("kernels.py", "tma_scale_kernel")
      signature(x_ptr: *fp32:16, out_ptr: *fp32:16 {output}, M: i32, N: i32)
      configs([{BM = 32, BN = 32, num_warps = 4}, {BM = 64, BN = 128, num_warps = 4}])
      workload(M, N)
      grid(cdiv(M, BM), cdiv(N, BN))
      tune_workload(tensor<1024x1024xf32>)
}

// out = 2 * x for a row-major M x N matrix (N * 4 bytes must be a multiple of 16).
util.func public @tma_scale(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %M = arith.index_cast %m : index to i32
  %N = arith.index_cast %n : index to i32
  %y = flow.dispatch @tma_ex::@tma_scale[%m, %n](%x, %M, %N) : (tensor<?x?xf32>{%m, %n}, i32, i32) -> tensor<?x?xf32>{%m, %n}
  util.return %y : tensor<?x?xf32>
}
