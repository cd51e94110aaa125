// pin-variants freezes the tuned choice: the group's default, hence the choice global's start.
// RUN: echo '{"format": "autotune-export.tuning-results/1", "results": [{"executable": "ex", "group": "k", "variant": "k_b", "device": "test", "median_ms": {"k_a": 2.0, "k_b": 1.0}}]}' > %t.json
// RUN: autotune-export %s --tuning-results %t.json -p pin-variants,verify-autotuning-groups,emit-autotune-initializer | FileCheck %s
// A results file that names another build's variant is an error at the group.
// RUN: echo '{"format": "autotune-export.tuning-results/1", "results": [{"executable": "ex", "group": "k", "variant": "k_z"}]}' > %t.bad.json
// RUN: not autotune-export %s --tuning-results %t.bad.json -p pin-variants 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: echo '{"results": []}' > %t.notours.json
// RUN: not autotune-export %s --tuning-results %t.notours.json -p pin-variants 2>&1 | FileCheck %s --check-prefix=FORMAT
// A results file of another module (no group matches) is said so, not applied silently (tester
// finding 03); one that also holds other groups' results gets a remark naming them.
// RUN: echo '{"format": "autotune-export.tuning-results/1", "results": [{"executable": "other_ex", "group": "mm", "variant": "mm_1"}]}' > %t.other.json
// RUN: autotune-export %s --tuning-results %t.other.json -p pin-variants -o %t.other.mlir 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: FileCheck %s --check-prefix=UNPINNED < %t.other.mlir
// RUN: echo '{"format": "autotune-export.tuning-results/1", "results": [{"executable": "ex", "group": "k", "variant": "k_b"}, {"executable": "other_ex", "group": "mm", "variant": "mm_1"}]}' > %t.mixed.json
// RUN: autotune-export %s --tuning-results %t.mixed.json -p pin-variants -o %t.mixed.mlir 2>&1 | FileCheck %s --check-prefix=MIXED

// OTHER: other.json:1:1: warning: tuning results '{{.*}}other.json' match no group of this module, so nothing is pinned: the file holds results for @other_ex::@mm; the module's groups are @ex::@k (results of another module or build?)
// UNPINNED: variants([@k_a, @k_b])
// UNPINNED-NOT: default(
// MIXED: mixed.json:1:1: remark: tuning results '{{.*}}mixed.json' also hold results for @other_ex::@mm, which this module has no group for
// CHECK: hal.executable.autotuning.export @k
// CHECK-NEXT: variants([@k_a, @k_b])
// CHECK-NEXT: default(@k_b)
// CHECK: util.global private mutable @__autotune.ex.k.choice = 1 : i32
// BAD: pin_variants.mlir:[[# @LINE + 5]]:3: error: tuning results pick @k_z for @k, which is not one of its variants
// FORMAT: error: not a tuning-results file

#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A.visible .entry k_b()\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a, @k_b])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  } <{workgroup_size = [32 : index, 1 : index, 1 : index]}>
  hal.executable.export public @k_b ordinal(1) layout(#layout) count(%device: !hal.device) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
}
util.func public @host() -> tensor<4xf32> {
  %y = flow.dispatch @ex::@k() : () -> tensor<4xf32>
  util.return %y : tensor<4xf32>
}
