hal.executable.source private @ex {
  hal.executable.autotuning.export @g triton("../../tests/lit/errors/Inputs/refusal_kernels.py", "scale_and_clear_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 256, num_warps = 8}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @inplace(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> (%x, tensor<1024xf32>)
  util.return %r#0, %r#1 : tensor<1024xf32>, tensor<1024xf32>
}
hal.executable.source private @bx {
  hal.executable.autotuning.export @m triton("../../tests/lit/errors/Inputs/refusal_kernels.py", "bool_mask_kernel")
      signature(x_ptr: *fp32, keep_ptr: *i1, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @mask_i8(%x: tensor<1024xf32>, %k: tensor<1024xi8>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @bx::@m[%n](%x, %k, %n32) : (tensor<1024xf32>, tensor<1024xi8>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}
util.func public @mask_i1(%x: tensor<1024xf32>, %k: tensor<1024xi1>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @bx::@m[%n](%x, %k, %n32) : (tensor<1024xf32>, tensor<1024xi1>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}
