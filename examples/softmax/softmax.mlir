// Row softmax (fp32), one Triton program per row: the grid is the number of rows, a workload
// value that is not a kernel parameter. The kernel's output pointer comes first in its
// signature; autotune-export reorders parameters to IREE's order (inputs, results, constants).
//
//   autotune-export softmax.mlir --emit vmfb -o softmax.vmfb
hal.executable.source private @softmax_ex {
  hal.executable.autotuning.export @softmax
      triton("kernel.py", "softmax_kernel")
      signature(out_ptr: *fp32 {output}, in_ptr: *fp32, in_row_stride: i32, out_row_stride: i32, n_cols: i32)
      configs([{BLOCK_SIZE = 1024, num_warps = 1},
               {BLOCK_SIZE = 1024, num_warps = 4},
               {BLOCK_SIZE = 1024, num_warps = 8},
               {BLOCK_SIZE = 2048, num_warps = 8}])
      workload(n_rows)
      grid(n_rows)
      tune_workload(tensor<8192x1024xf32>)
}

// Softmax over each row of %x; rows may hold up to 1024 columns (the smallest BLOCK_SIZE).
util.func public @softmax(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = tensor.dim %x, %c0 : tensor<?x?xf32>
  %cols = tensor.dim %x, %c1 : tensor<?x?xf32>
  %cols_i32 = arith.index_cast %cols : index to i32
  %y = flow.dispatch @softmax_ex::@softmax[%rows](%x, %cols_i32, %cols_i32, %cols_i32)
      : (tensor<?x?xf32>{%rows, %cols}, i32, i32, i32) -> tensor<?x?xf32>{%rows, %cols}
  util.return %y : tensor<?x?xf32>
}
