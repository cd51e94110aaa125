// REQUIRES: integration
// A kernel's triton.autotune(restore_value=[...]) naming a pointer the dispatch only reads: Triton
// copies it back unchanged after every timed run, so there is nothing to restore; the name is
// left out with a remark and the variants materialize (before: an error, "not an {output}
// pointer", which refused gemlite's GEMV kernels).
// RUN: autotune-export %s -p materialize-triton-variants,verify-autotuning-groups --verify-diagnostics
// RUN: autotune-export %s -p materialize-triton-variants,verify-autotuning-groups 2>/dev/null | FileCheck %s

// CHECK:       hal.executable.autotuning.export @g variants([@g_0_128_w4_s3, @g_1_256_w4_s3]){{$}}
// CHECK-NOT:   restore_value
// CHECK:       util.func public @host
hal.executable.source private @e {
  // expected-remark @+2 {{@g: 2 variants for sm_80}}
  // expected-remark @+1 {{@g: the triton.autotune of 'doubled' names 'x_ptr' in restore_value, which the dispatch only reads (not an {output} pointer): restoring it changes nothing, left out}}
  hal.executable.autotuning.export @g
      triton("../Inputs/restored_inputs.py", "doubled")
      signature(x_ptr: *fp32, y_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @e::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}
