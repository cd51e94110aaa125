// REQUIRES: integration
// An {output} the kernel loads from before it stores through it reads what the buffer held;
// IREE gives an untied result (or a flow.tensor.empty operand) undefined contents, so the
// build warns at the dispatch (issue 21.9: a library's backward kernel accumulated into its
// gradient this way). Read from the variants' TTIR (autotune_export.cuda.ttir.read_before_written).
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --split-input-file --verify-diagnostics

// out += x into an untied result: warned.
hal.executable.source private @ex {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g triton("../errors/Inputs/binding_kernels.py", "accumulate")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-warning @+1 {{kernel 'accumulate' of @g loads from {output} 'out_ptr' before it stores through it, but this dispatch binds result 0 (tensor<1024xf32>) to it, a new buffer of undefined contents in IREE: pass the tensor whose contents the kernel reads in place (as an operand with the result tied to it, -> %x), or zero it with reset_to_zero(out_ptr) if it accumulates from zero}}
  %r = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// The same kernel with its output passed in place: what it reads is the caller's. No warning.
hal.executable.source private @ex {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g triton("../errors/Inputs/binding_kernels.py", "accumulate")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %o: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @ex::@g[%n](%x, %o, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> %o
  util.return %r : tensor<1024xf32>
}

// -----

// A kernel that stores its output before reading it back: no warning.
hal.executable.source private @ex {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g triton("../errors/Inputs/binding_kernels.py", "store_then_load")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// Two outputs, result 1 (out_ptr) in place, acc_ptr (read first) an untied result: warned.
hal.executable.source private @ex {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g triton("../errors/Inputs/binding_kernels.py", "acc_and_out")
      signature(x_ptr: *fp32, acc_ptr: *fp32 {output}, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %a: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-warning @+1 {{kernel 'acc_and_out' of @g loads from {output} 'acc_ptr' before it stores through it, but this dispatch binds result 0 (tensor<1024xf32>) to it}}
  %r:2 = flow.dispatch @ex::@g[%n](%x, %a, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> (tensor<1024xf32>, %a)
  util.return %r#0, %r#1 : tensor<1024xf32>, tensor<1024xf32>
}
