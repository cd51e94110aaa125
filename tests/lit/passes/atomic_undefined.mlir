// REQUIRES: integration
// A kernel that updates an output atomically (tl.atomic_add) depends on what the buffer held:
// bound to a new buffer of undefined contents (an untied result, or a tied flow.tensor.empty /
// alloca), materialize-triton-variants warns once per pointer at the dispatch. Zeroed outputs
// (reset_to_zero) and contents passed in place get no warning; nor does a plain store (b_ptr).
// RUN: autotune-export %s -p zero-fill-outputs,materialize-triton-variants --target sm_80 --split-input-file --verify-diagnostics
// -q silences remarks, not warnings:
// RUN: autotune-export %s -p zero-fill-outputs,materialize-triton-variants --target sm_80 --split-input-file -q -o %t.mlir 2>&1 | FileCheck %s
// CHECK-COUNT-3: warning: kernel 'sums' of @g updates '{{[ac]}}_ptr' atomically
// CHECK-NOT: warning

hal.executable.source private @e {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g
      triton("../Inputs/zeroed_kernels.py", "sums")
      signature(a_ptr: *fp32 {output}, x_ptr: *fp32, b_ptr: *fp32 {output}, y_ptr: *fp32, c_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @fresh(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-warning @+2 {{kernel 'sums' of @g updates 'a_ptr' atomically (what it leaves depends on what the buffer held), but this dispatch binds it to a new buffer of undefined contents: zero it with reset_to_zero(a_ptr), or pass its contents in place (a result tied to the operand holding them, -> %x)}}
  // expected-warning @+1 {{updates 'c_ptr' atomically}}
  %r:3 = flow.dispatch @e::@g[%n](%x, %y, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>)
  // once per pointer: no warning here
  %s:3 = flow.dispatch @e::@g[%n](%x, %y, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>)
  util.return %r#0, %r#1, %s#2 : tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>
}

// -----

// Zeroed, and in place: no warning.
hal.executable.source private @e {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g
      triton("../Inputs/zeroed_kernels.py", "sums")
      signature(a_ptr: *fp32 {output}, x_ptr: *fp32, b_ptr: *fp32 {output}, y_ptr: *fp32, c_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
      reset_to_zero(a_ptr, c_ptr)
}
util.func public @zeroed(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:3 = flow.dispatch @e::@g[%n](%x, %y, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>)
  util.return %r#0, %r#1, %r#2 : tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>
}

// -----

// a in place (its contents passed by the host), c tied to a flow.tensor.empty: one warning, for c.
// Both get zeros as fake data in the benchmark and check entries (a remark).
hal.executable.source private @e {
  // expected-remark @+2 {{@g: 1 variant for sm_80}}
  // expected-remark @+1 {{@g: kernel 'sums' updates 'a_ptr', 'c_ptr' atomically (tt.atomic_rmw / tt.atomic_cas in its TTIR): the benchmark and check entries give them zeros}}
  hal.executable.autotuning.export @g
      triton("../Inputs/zeroed_kernels.py", "sums")
      signature(a_ptr: *fp32 {output}, x_ptr: *fp32, b_ptr: *fp32 {output}, y_ptr: *fp32, c_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @in_place(%a: tensor<1xf32>, %x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %b = flow.tensor.empty : tensor<1024xf32>
  %c = flow.tensor.empty : tensor<1xf32>
  // expected-warning @+1 {{kernel 'sums' of @g updates 'c_ptr' atomically}}
  %r:3 = flow.dispatch @e::@g[%n](%a, %x, %b, %y, %c, %n32) : (tensor<1xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1xf32>, i32) -> (%a, %b, %c)
  util.return %r#0, %r#1, %r#2 : tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>
}
