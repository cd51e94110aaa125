// REQUIRES: integration
// Dispatch operands must carry the kernel's scalar types: each one needs the MLIR type of
// its parameter (an i64 parameter takes an i64 operand, split into two constants).
// RUN: autotune-export %s -p materialize-triton-variants,verify-autotuning-groups --target sm_80 --split-input-file --verify-diagnostics

hal.executable.source private @scalars_ex {
  hal.executable.autotuning.export @add
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i64)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  %n_i32 = arith.constant 16 : i32
  // expected-error @+1 {{dispatch to @scalars_ex::@add passes a i32 for parameter 'n' (i64); expected an i64 operand: the kernel would read the i32's bits as i64}}
  %z = flow.dispatch @scalars_ex::@add[%n](%x, %y, %n_i32) : (tensor<16xf32>, tensor<16xf32>, i32) -> tensor<16xf32>
  util.return %z : tensor<16xf32>
}

// -----

hal.executable.source private @scalars_ex {
  hal.executable.autotuning.export @scale
      triton("../Inputs/kernels.py", "scale_kernel")
      signature(out_ptr: *fp32 {output}, x_ptr: *fp32, alpha: fp32, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<16xf32>, %alpha: f16) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  %n_i32 = arith.constant 16 : i32
  // expected-error @+1 {{dispatch to @scalars_ex::@scale passes a f16 for parameter 'alpha' (fp32); expected an f32 operand: the kernel would read the f16's bits as fp32}}
  %z = flow.dispatch @scalars_ex::@scale[%n](%x, %alpha, %n_i32) : (tensor<16xf32>, f16, i32) -> tensor<16xf32>
  util.return %z : tensor<16xf32>
}

// -----

// The i64 parameter passed correctly: the layout has two constants for it.
hal.executable.source private @scalars_ex {
  // expected-remark @+1 {{@add: 1 variant for sm_80}}
  hal.executable.autotuning.export @add
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i64)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<16xf32>, %y: tensor<16xf32>, %n_i64: i64) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  %z = flow.dispatch @scalars_ex::@add[%n](%x, %y, %n_i64) : (tensor<16xf32>, tensor<16xf32>, i64) -> tensor<16xf32>
  util.return %z : tensor<16xf32>
}

// -----

// verify-autotuning-groups counts an i64 operand as two constants.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{@k is defined here}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<16xf32>) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  %n_i64 = arith.constant 16 : i64
  // expected-error @+1 {{dispatch to @ex::@k passes 1 scalar operands, but the layout of its variants has 1 constants (the operands make 2 32-bit constants: i64/f64 take two)}}
  %y = flow.dispatch @ex::@k[%n](%x, %n_i64) : (tensor<16xf32>, i64) -> tensor<16xf32>
  util.return %y : tensor<16xf32>
}
