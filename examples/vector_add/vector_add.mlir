// out = x + y (fp32) through a Triton kernel with three block sizes tuned at run time.
//
//   autotune-export vector_add.mlir --emit vmfb -o vector_add.vmfb
hal.executable.source private @vector_add_ex {
  hal.executable.autotuning.export @add
      triton("kernel.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n_elements: i32)
      configs([{BLOCK_SIZE = 256, num_warps = 2},
               {BLOCK_SIZE = 1024, num_warps = 4},
               {BLOCK_SIZE = 4096, num_warps = 8}])
      workload(n_elements)
      grid(cdiv(n_elements, BLOCK_SIZE))
      tune_workload(tensor<16777216xf32>, tensor<16777216xf32>)
}

util.func public @add(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n_i32 = arith.index_cast %n : index to i32
  %out = flow.dispatch @vector_add_ex::@add[%n](%x, %y, %n_i32)
      : (tensor<?xf32>{%n}, tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %out : tensor<?xf32>
}
