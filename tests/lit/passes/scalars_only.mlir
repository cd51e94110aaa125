// REQUIRES: integration
// A kernel that writes its output from scalars only (an iota): its dispatch has no tensor
// operand, so every operand of a benchmark or check entry's dispatch is a constant. The
// workload goes through a barrier, else iree-compile's const-eval hoists the dispatch, JIT-compiles
// it for llvm-cpu and crashes on the CUDA-only executable (LLVMCPUAssignImportOrdinals); the
// fixed variant stays a constant (iree-compile folds the export chain to it) and the dispatch
// names that variant's export.
// RUN: autotune-export %s --emit iree --target sm_80 2>/dev/null | FileCheck %s
// RUN: autotune-export %s --emit vmfb --target sm_80 -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=VMFB

// CHECK-LABEL: util.func public @__autotune.ex.g.check.0(
// CHECK:         %[[N0:.+]] = arith.constant 1024 : index
// CHECK:         %[[OPAQUE0:.+]] = util.optimization_barrier %[[N0]] : index
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:    flow.dispatch @ex::@g_0_128_w4_s3[%[[OPAQUE0]], %[[ZERO]]](%{{.+}}, %{{.+}}) : (i32, i32) -> tensor<1024xf32>
// CHECK-LABEL: util.func public @__autotune.ex.g.check.1(
// CHECK:         %[[N:.+]] = arith.constant 1024 : index
// CHECK:         %[[OPAQUE:.+]] = util.optimization_barrier %[[N]] : index
// CHECK-NEXT:    %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:    flow.dispatch @ex::@g_1_256_w4_s3[%[[OPAQUE]], %[[ONE]]](%{{.+}}, %{{.+}}) : (i32, i32) -> tensor<1024xf32>
// VMFB: autotune-export: wrote {{.+}}.vmfb
hal.executable.source private @ex {
  hal.executable.autotuning.export @g triton("../errors/Inputs/binding_kernels.py", "iota")
      signature(out_ptr: *fp32 {output}, start: i32, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 256}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host() -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %s = arith.constant 3 : i32
  %r = flow.dispatch @ex::@g[%n](%s, %n32) : (i32, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}
