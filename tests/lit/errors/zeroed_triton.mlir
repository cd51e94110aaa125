// REQUIRES: integration
// reset_to_zero / restore_value of the triton(...) form that IREE cannot honour, refused before
// anything compiles: the kernel's triton.autotune zeroes an input (IREE's dispatch operands are
// immutable), and a restore_value output that the dispatch does not pass in place.
// RUN: autotune-export %s -p zero-fill-outputs,materialize-triton-variants --split-input-file --verify-diagnostics

hal.executable.source private @e {
  // expected-error @+1 {{the triton.autotune of 'zeroes_an_input' names 'x_ptr' in reset_to_zero, which is not an {output} pointer of @g: IREE treats dispatch operands as immutable, so only what the dispatch returns can be zero-filled; mark it {output}, or give reset_to_zero(...) on the op to override the kernel's}}
  hal.executable.autotuning.export @g
      triton("../Inputs/zeroed_kernels.py", "zeroes_an_input")
      signature(x_ptr: *fp32, acc_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> tensor<1xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @e::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> tensor<1xf32>
  util.return %r : tensor<1xf32>
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{restore_value names 'hist_ptr' of @g, but the dispatch does not pass it in place: IREE allocates an untied result per call with undefined contents, so there is nothing to restore}}
  hal.executable.autotuning.export @g
      triton("../Inputs/zeroed_kernels.py", "tuned_sum")
      signature(x_ptr: *fp32, hist_ptr: *fp32 {output}, acc_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-note @+1 {{'hist_ptr' is an untied result of this dispatch}}
  %r:2 = flow.dispatch @e::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> (tensor<1xf32>, tensor<1xf32>)
  util.return %r#0, %r#1 : tensor<1xf32>, tensor<1xf32>
}
