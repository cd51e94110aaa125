// REQUIRES: integration
// A generated space pruned when it is built: the constraint excludes configs before anything
// compiles; then what each compiled variant reports prunes: its shared memory over the
// target's limit (sm_80: 166912 bytes), its spills over --max-spills, and --max-variants caps
// what is left (the fewest spills first, spread over the config order). inspect shows the
// space, the counts, and each pruned config with its reason.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --max-spills 0 --max-variants 2 -o %t.mlir 2>&1 | FileCheck %s
// RUN: autotune-export inspect %s --target sm_80 --max-spills 0 --max-variants 2 | FileCheck %s --check-prefix=INSPECT
// RUN: autotune-export inspect %s --target sm_80 --max-spills 0 --max-variants 2 --json | FileCheck %s --check-prefix=JSON
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 -o %t.all.mlir 2>&1 | FileCheck %s --check-prefix=ALL

// 3 x 2 x 2 = 12 configs, 6 where BM >= BN and BK <= BM (the constraint excludes 6), in
// product order: 0 {32, 32, 32}, 1 {256, 32, 32}, 2 {256, 32, 256}, 3 {256, 256, 32},
// 4 {256, 256, 256}, 5 {64, 32, 32}. 4 needs 262144 bytes of shared memory; 2 and 3 spill
// (a 256-row fp32 accumulator in 128 threads); of 0, 1 and 5 the cap keeps two, spread: 0, 1.
// CHECK-DAG: remark: @dot: config 4 {BM = 256, BN = 256, BK = 256, num_warps = 4, num_stages = 2} pruned: needs 262144 bytes of shared memory, sm_80 allows at most 166912
// CHECK-DAG: remark: @dot: config 2 {BM = 256, BN = 32, BK = 256, num_warps = 4, num_stages = 2} pruned: spills {{[1-9][0-9]*}} registers (n_spills: local memory bytes per thread / 4), more than --max-spills 0
// CHECK-DAG: remark: @dot: config 3 {BM = 256, BN = 256, BK = 32, num_warps = 4, num_stages = 2} pruned: spills {{[1-9][0-9]*}} registers (n_spills: local memory bytes per thread / 4), more than --max-spills 0
// CHECK-DAG: remark: @dot: config 5 {BM = 64, BN = 32, BK = 32, num_warps = 4, num_stages = 2} pruned: over --max-variants 2 (3 configs can run; kept: the fewest spills, then spread over the config order; this one spills 0)
// CHECK: remark: @dot: 2 variants for sm_80 ({{.*}}), 4 pruned

// INSPECT: group @dot_ex::@dot: 2 variants
// INSPECT:   space:       product(BM in [32, 256, 64], BN in [32, 256], BK in [32, 256], num_warps = 4, num_stages = 2) where BM >= BN and BK <= BM
// INSPECT-NEXT:               12 generated, 6 excluded by the constraint, 6 compiled, 4 pruned when built, 2 kept
// INSPECT-NEXT:               pruned for: spills 2, shared memory 1, --max-variants 1
// INSPECT:   *  dot_0_32x32x32_w4_s2
// INSPECT-NEXT: dot_1_256x32x32_w4_s2
// INSPECT-DAG:   pruned:      config 4 {{.*}} needs 262144 bytes of shared memory
// INSPECT-DAG:   pruned:      config 2 {{.*}} more than --max-spills 0
// INSPECT-DAG:   pruned:      config 3 {{.*}} more than --max-spills 0
// INSPECT-DAG:   pruned:      config 5 {{.*}} over --max-variants 2

// JSON:      "space": {
// JSON-NEXT:   "product": "product(BM in [32, 256, 64], BN in [32, 256], BK in [32, 256], num_warps = 4, num_stages = 2)",
// JSON-NEXT:   "where": "BM >= BN and BK <= BM",
// JSON-NEXT:   "generated": 12,
// JSON-NEXT:   "excluded": 6,
// JSON-NEXT:   "configs": 6
// JSON-NEXT: }

// Without the options the spilling config stays; the one over the shared memory limit does not.
// ALL: remark: @dot: config 4 {{.*}} pruned: needs
// ALL: remark: @dot: 5 variants for sm_80 ({{.*}}), 1 pruned

hal.executable.source private @dot_ex {
  hal.executable.autotuning.export @dot
      triton("../Inputs/kernels.py", "tile_dot_kernel")
      signature(a_ptr: *fp16, b_ptr: *fp16, c_ptr: *fp32 {output})
      configs(product(BM in [32, 256, 64], BN in [32, 256], BK in [32, 256], num_warps = 4, num_stages = 2)
              where BM >= BN and BK <= BM)
      workload()
      grid(1)
}
