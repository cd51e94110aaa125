// Generated config spaces: configs(product(...) where ...) expands to the product of the
// values (first name slowest) where the constraint holds; the op keeps the space, prints it
// back in canonical form, and the printed form reads back to itself.
// RUN: autotune-export %s -p '' | FileCheck %s
// RUN: autotune-export %s -p '' > %t.1.mlir
// RUN: autotune-export %t.1.mlir -p '' > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// CHECK-LABEL: hal.executable.autotuning.export @mm
// CHECK:       configs(product(BLOCK_M in [64, 128, 256],
// CHECK-NEXT:                  BLOCK_N in [64, 128],
// CHECK-NEXT:                  GROUP_M = 8,
// CHECK-NEXT:                  num_warps in [4, 8])
// CHECK-NEXT:          where BLOCK_M * BLOCK_N <= 16384 and (num_warps == 4 or BLOCK_M >= 128))
// CHECK-NEXT:  workload(M, N)
hal.executable.source private @e {
  hal.executable.autotuning.export @mm
      triton("k.py", "k")
      signature(c: *fp16 {output}, M: i32, N: i32)
      configs(product(BLOCK_M in [64, 128, 256], BLOCK_N in [64, 128], GROUP_M = 8, num_warps in [4, 8])
              where BLOCK_M*BLOCK_N <= 16384 and ((num_warps == 4) or BLOCK_M >= 128))   // 12 -> 8 configs (tests/unit/test_space.py)
      workload(M, N)
      grid(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N))
}

