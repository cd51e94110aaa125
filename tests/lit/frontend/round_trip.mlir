// The front end reads both forms of the extension op and prints them back sugared;
// print -> parse -> print is a fixed point.
// RUN: autotune-export %s -p '' --split-input-file | FileCheck %s
// RUN: autotune-export %s -p '' --split-input-file > %t.1.mlir
// RUN: autotune-export %t.1.mlir -p '' --split-input-file > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// CHECK-LABEL: hal.executable.source private @explicit
// CHECK-NEXT:    hal.executable.autotuning.export @mm variants([@mm_32, @mm_64])
// CHECK-NEXT:    hal.executable.export public @mm_32 ordinal(0)
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @explicit {
  hal.executable.autotuning.export @mm variants([@mm_32, @mm_64])
  hal.executable.export public @mm_32 ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @mm_64 ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
}

// -----

// Clauses print one per line in a fixed order, configs keep their key order, grid
// expressions are normalized (spacing, redundant parentheses).
// CHECK-LABEL: hal.executable.source private @triton_form
// CHECK-NEXT:    hal.executable.autotuning.export @matmul
// CHECK-NEXT:        triton("kernel.py", "matmul_kernel")
// CHECK-NEXT:        signature(a: *fp16, b: *fp16, c: *fp16 {output}, M: i32, N: i32, K: i32)
// CHECK-NEXT:        configs([{BLOCK_M = 128, BLOCK_N = 64, num_warps = 8, num_stages = 3},
// CHECK-NEXT:                 {BLOCK_M = 64, BLOCK_N = 64, num_warps = 4, num_stages = 4}])
// CHECK-NEXT:        workload(M, N)
// CHECK-NEXT:        grid(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), (M + 1) // 2, max(N, 1))
// CHECK-NEXT:        tune_workload(tensor<64x64xf16>, 7 : i32)
// CHECK-NEXT:        default(@matmul_1)
// CHECK-NEXT:  }
hal.executable.source private @triton_form {
  hal.executable.autotuning.export @matmul
    triton("kernel.py", "matmul_kernel") signature(a: *fp16, b: *fp16,
       c: *fp16 {output}, M: i32, N: i32, K: i32)  // comments between clauses are fine
    configs([{BLOCK_M = 128, BLOCK_N = 64, num_warps = 8, num_stages = 3}, {BLOCK_M = 64, BLOCK_N = 64, num_warps = 4, num_stages = 4}])
    workload(M, N)
    grid(((cdiv(M,BLOCK_M)) * triton.cdiv(N , BLOCK_N)), (M + 1) // 2, max(N, 1))
    tune_workload(tensor<64x64xf16>, 7 : i32)
    default(@matmul_1)
}

// -----

// Symbols that are not bare identifiers are quoted; the rest of the file is IREE IR.
// CHECK-LABEL: hal.executable.source private @quoted
// CHECK-NEXT:    hal.executable.autotuning.export @"my group" variants([@"v 0"])
// CHECK:       util.func public @host
hal.executable.source private @quoted {
  hal.executable.autotuning.export @"my group" variants([@"v 0"])
}
util.func public @host(%arg0: i32) -> i32 {
  util.return %arg0 : i32
}

// -----

// Without configs([...]) the grid's constexprs come from the kernel's triton.autotune configs:
// names outside the workload are left to materialize-triton-variants, however many there are
// (two such names crashed the front end's check with an AttributeError after a refactoring).
// CHECK-LABEL: hal.executable.source private @kernel_configs
// CHECK-NEXT:    hal.executable.autotuning.export @mm
// CHECK-NEXT:        triton("kernel.py", "matmul_kernel")
// CHECK-NEXT:        signature(a: *fp16, b: *fp16, c: *fp16 {output}, M: i32, N: i32)
// CHECK-NEXT:        workload(M, N)
// CHECK-NEXT:        grid(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), min(NUM_SMS, M))
hal.executable.source private @kernel_configs {
  hal.executable.autotuning.export @mm
      triton("kernel.py", "matmul_kernel")
      signature(a: *fp16, b: *fp16, c: *fp16 {output}, M: i32, N: i32)
      workload(M, N)
      grid(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), min(NUM_SMS, M))
}
