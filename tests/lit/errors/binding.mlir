// IREE's dispatch binding rule (autotune_export/ir/binding.py): what a dispatch binds must be
// what the kernel's signature takes. Refused before anything compiles (fast suite).
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --split-input-file --verify-diagnostics

// A scalar whose operand type differs from the parameter's: an f32 for 'eps: i32' would be
// read as the float's bits (issue 21.7).
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/binding_kernels.py", "add_eps")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, eps: i32, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %eps: f32) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{dispatch to @ex::@g passes a f32 for parameter 'eps' (i32); expected an i32 operand: the kernel would read the f32's bits as i32 (convert it at the call site, e.g. with arith.fptosi)}}
  %r = flow.dispatch @ex::@g[%n](%x, %eps, %n32) : (tensor<1024xf32>, f32, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// The reverse: an i32 operand for 'eps: fp32'.
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/binding_kernels.py", "add_eps")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, eps: fp32, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %eps: i32) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{dispatch to @ex::@g passes a i32 for parameter 'eps' (fp32); expected an f32 operand: the kernel would read the i32's bits as fp32 (convert it at the call site, e.g. with arith.sitofp)}}
  %r = flow.dispatch @ex::@g[%n](%x, %eps, %n32) : (tensor<1024xf32>, i32, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// Widths: an i64 for 'n: i32' (half of it would be a second constant the kernel never reads).
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/binding_kernels.py", "add_eps")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, eps: fp32, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %eps: f32, %n64: i64) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  // expected-error @+1 {{dispatch to @ex::@g passes a i64 for parameter 'n' (i32); expected an i32 operand: the kernel would read the i64's bits as i32 (convert it at the call site, e.g. with arith.trunci)}}
  %r = flow.dispatch @ex::@g[%n](%x, %eps, %n64) : (tensor<1024xf32>, f32, i64) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// A ':16' hint on an integer given an f32 operand: the divisibility guard would be integer ops
// on a float (issue 21.6). Refused as the type mismatch it is, before the guard is built.
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/binding_kernels.py", "add_eps")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, eps: i32:16, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %eps: f32) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{dispatch to @ex::@g passes a f32 for parameter 'eps' (i32); expected an i32 operand}}
  %r = flow.dispatch @ex::@g[%n](%x, %eps, %n32) : (tensor<1024xf32>, f32, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}
