// REQUIRES: integration
// @triton.jit(do_not_specialize=["n"]): Triton's JIT never assumes n divisible by 16 nor makes it
// a constexpr 1, so the ':16' hint on n is dropped with a remark: one variant per config, no
// specialized sibling.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_90 -o %t.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --input-file %t.mlir
// RUN: autotune-export %s --emit vmfb --target sm_90 -o %t.vmfb
// REMARK: do_not_specialize.mlir:[[# @LINE + 5]]:3: remark: @g: 'n' is in the do_not_specialize of 'unspecialized_kernel': its ':16' hint is dropped (Triton's JIT does not specialize it)
// CHECK:      hal.executable.autotuning.export @g variants([@g_0_128_w4_s3, @g_1_256_w4_s3])
// CHECK-NOT:  _spec
// CHECK-NOT:  specialized(
hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "unspecialized_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32:16)
      configs([{BLOCK = 128}, {BLOCK = 256}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %len = arith.constant 4096 : index
  %n = arith.constant 4096 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<4096xf32>, i32) -> tensor<4096xf32>
  util.return %y : tensor<4096xf32>
}
