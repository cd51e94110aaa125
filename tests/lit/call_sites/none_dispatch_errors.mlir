// REQUIRES: integration
// A `none` parameter is not passed by the dispatch: the operand checks count the kernel's
// parameters without it. A dispatch that passes a buffer or a scalar for one is an error at the
// dispatch, naming what the layout expects.
// RUN: autotune-export %s --emit iree --target sm_80 --split-input-file --verify-diagnostics -o %t.mlir

hal.executable.source private @ex {
  // expected-note @+2 {{@g is defined here}}
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, bias_ptr: none, out_ptr: *fp16 {output}, alpha: none, n: i32, flag: u1)
      configs([{BLOCK = 128, OUT_DTYPE = tl.float16}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

util.func public @f(%x: tensor<1024xf16>, %b: tensor<1024xf16>) -> tensor<1024xf16> {
  %len = arith.constant 1024 : index
  %n = arith.constant 1024 : i32
  %flag = arith.constant false
  // expected-error @+1 {{dispatch to @ex::@g has 2 tensor operands and 1 untied results (3 bindings), but the layout of its variants has 2 bindings}}
  %y = flow.dispatch @ex::@g[%len](%x, %b, %n, %flag) : (tensor<1024xf16>, tensor<1024xf16>, i32, i1) -> tensor<1024xf16>
  util.return %y : tensor<1024xf16>
}

// -----

hal.executable.source private @ex {
  // expected-note @+2 {{@g is defined here}}
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, bias_ptr: none, out_ptr: *fp16 {output}, alpha: none, n: i32, flag: u1)
      configs([{BLOCK = 128, OUT_DTYPE = tl.float16}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

util.func public @f(%x: tensor<1024xf16>) -> tensor<1024xf16> {
  %len = arith.constant 1024 : index
  %n = arith.constant 1024 : i32
  %alpha = arith.constant 2.0 : f32
  %flag = arith.constant false
  // expected-error @+1 {{dispatch to @ex::@g passes 3 scalar operands, but the layout of its variants has 2 constants}}
  %y = flow.dispatch @ex::@g[%len](%x, %alpha, %n, %flag) : (tensor<1024xf16>, f32, i32, i1) -> tensor<1024xf16>
  util.return %y : tensor<1024xf16>
}
