// A generated space of 64 configs of examples/matmul's kernel for the 4096^3 fp16 matmul
// (issue 24: tuning a space of at least 64 configs against triton.autotune over the same 64).
// 3 x 3 tile shapes less 256x256 (BLOCK_M * BLOCK_N <= 32768: 8 shapes) x BLOCK_K 2 x
// num_warps 2 x num_stages 2 = 64 configs. All fit sm_90's shared memory (at most
// (128 + 256) * 64 * 2 B * 4 stages = 196608 B of 232448); none is pruned there. The same
// space from Python, for triton.autotune: benchmarks/configs/matmul_space64.py.
//
//   autotune-export benchmarks/configs/matmul_space64.mlir --emit vmfb --target sm_90 -o out/matmul_space64.vmfb
hal.executable.source private @matmul_ex {
  hal.executable.autotuning.export @matmul
      triton("../../examples/matmul/kernel.py", "matmul_kernel")
      signature(a_ptr: *fp16:16, b_ptr: *fp16:16, c_ptr: *fp16:16 {output}, M: i32:16, N: i32:16, K: i32:16,
                stride_am: i32:16, stride_ak: i32:1, stride_bk: i32:16, stride_bn: i32:1,
                stride_cm: i32:16, stride_cn: i32:1)
      configs(product(BLOCK_M in [64, 128, 256], BLOCK_N in [64, 128, 256], BLOCK_K in [32, 64], GROUP_M = 8,
                      num_warps in [4, 8], num_stages in [3, 4])
              where BLOCK_M * BLOCK_N <= 32768)
      workload(M, N)
      grid(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N))
      tune_workload(tensor<4096x4096xf16>, tensor<4096x4096xf16>)
}

// Row-major A (MxK) and B (KxN); returns C (MxN).
util.func public @matmul_host(%a: tensor<?x?xf16>, %b: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf16>
  %k = tensor.dim %a, %c1 : tensor<?x?xf16>
  %n = tensor.dim %b, %c1 : tensor<?x?xf16>
  %M = arith.index_cast %m : index to i32
  %N = arith.index_cast %n : index to i32
  %K = arith.index_cast %k : index to i32
  %one = arith.constant 1 : i32
  %c = flow.dispatch @matmul_ex::@matmul[%m, %n](%a, %b, %M, %N, %K, %K, %one, %N, %one, %N, %one)
      : (tensor<?x?xf16>{%m, %k}, tensor<?x?xf16>{%k, %n}, i32, i32, i32, i32, i32, i32, i32, i32, i32)
      -> tensor<?x?xf16>{%m, %n}
  util.return %c : tensor<?x?xf16>
}
