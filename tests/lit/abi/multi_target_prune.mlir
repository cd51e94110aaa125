// REQUIRES: integration
// With several targets, a config that cannot run on one of them is dropped for all (every
// target's object has the same exports): 196608 bytes of shared memory fit sm_90, not sm_80.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80,sm_90 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.err

hal.executable.source private @ex {
  hal.executable.autotuning.export @dot
      triton("../Inputs/kernels.py", "tile_dot_kernel")
      signature(a_ptr: *fp32, b_ptr: *fp32, c_ptr: *fp32 {output})
      configs([{BM = 16, BN = 16, BK = 16}, {BM = 256, BN = 128, BK = 128, num_warps = 8}])
      workload(n)
      grid(1)
}

// REMARK: remark: @dot: config 1 {BM = 256, BN = 128, BK = 128, num_warps = 8} pruned on sm_80: needs 196608 bytes of shared memory, sm_80 allows at most 166912
// REMARK: remark: @dot: 1 variant for sm_80,sm_90 ({{[0-9]+}} compiled, {{[0-9]+}} from cache), 1 pruned

// CHECK: variants([@dot_0_16x16x16_w4_s3])
// CHECK-NOT: hal.executable.export public @dot_1
