// fp16 matmul C = A @ B through a Triton kernel tuned at run time.
//
//   autotune-export matmul.mlir --emit vmfb --target sm_90 -o matmul.vmfb
//
// The group @matmul is made of one export per config below; @matmul_host dispatches to the
// group as if it were one export. Config 8 needs more shared memory than sm_80 has and is
// pruned there.
hal.executable.source private @matmul_ex {
  hal.executable.autotuning.export @matmul
      triton("kernel.py", "matmul_kernel")
      signature(a_ptr: *fp16:16, b_ptr: *fp16:16, c_ptr: *fp16:16 {output}, M: i32:16, N: i32:16, K: i32:16,
                stride_am: i32:16, stride_ak: i32:1, stride_bk: i32:16, stride_bn: i32:1,
                stride_cm: i32:16, stride_cn: i32:1)
      configs([{BLOCK_M = 128, BLOCK_N = 256, BLOCK_K = 64, GROUP_M = 8, num_warps = 8, num_stages = 3},
               {BLOCK_M = 256, BLOCK_N = 128, BLOCK_K = 64, GROUP_M = 8, num_warps = 8, num_stages = 3},
               {BLOCK_M = 128, BLOCK_N = 256, BLOCK_K = 64, GROUP_M = 8, num_warps = 8, num_stages = 4},
               {BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 32, GROUP_M = 8, num_warps = 4, num_stages = 4},
               {BLOCK_M = 64, BLOCK_N = 256, BLOCK_K = 32, GROUP_M = 8, num_warps = 4, num_stages = 4},
               {BLOCK_M = 128, BLOCK_N = 64, BLOCK_K = 32, GROUP_M = 8, num_warps = 4, num_stages = 4},
               {BLOCK_M = 64, BLOCK_N = 128, BLOCK_K = 32, GROUP_M = 8, num_warps = 4, num_stages = 4},
               {BLOCK_M = 64, BLOCK_N = 64, BLOCK_K = 32, GROUP_M = 8, num_warps = 4, num_stages = 5},
               {BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 64, GROUP_M = 8, num_warps = 8, num_stages = 7}])
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
