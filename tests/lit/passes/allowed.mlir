// Issue 21.5: each dispatch runs only the variants its own prune_configs_by keeps (Triton prunes
// at every launch with that launch's arguments). materialize-triton-variants records them on the
// dispatch as autotune.allowed = [@first, ...] (Triton's order for its arguments) when they are
// fewer than the group's; lower-autotuning-dispatch maps any other choice (the group's tuned or
// default choice, a per-workload slot, a frozen choices(...) entry) to the first of them, before
// the condition chain. Here @small's pruner kept @k_b then @k_a, @tiny's only @k_c.
// RUN: autotune-export %s -p 'verify-autotuning-groups,emit-autotune-initializer{workload_slots=0},lower-autotuning-dispatch' 2>&1 | FileCheck %s
// The attribute is the only state between the passes: one run and three give the same bytes.
// RUN: autotune-export %s -p 'verify-autotuning-groups,emit-autotune-initializer{workload_slots=0},lower-autotuning-dispatch' -o %t.one.mlir
// RUN: autotune-export %s -p verify-autotuning-groups | autotune-export - -p 'emit-autotune-initializer{workload_slots=0}' | autotune-export - -p lower-autotuning-dispatch -o %t.three.mlir
// RUN: diff %t.one.mlir %t.three.mlir
// The reflection records each narrowed site (contract.GroupReflection.allowed), for the runtime and inspect.
// RUN: autotune-export %s -p 'verify-autotuning-groups,emit-autotune-initializer{workload_slots=0}' | FileCheck %s --check-prefix=REFL
// Without the initializer the choice is the constant default (0): @tiny's becomes 2.
// RUN: autotune-export %s -p lower-autotuning-dispatch | FileCheck %s --check-prefix=CONST
// A frozen choice a dispatch's pruning rejects: a warning at choices(...), and the guard maps it.
// RUN: sed 's/variants(\[@k_a, @k_b, @k_c\])/variants([@k_a, @k_b, @k_c]) choices([256] = @k_c)/' %s > %t.frozen.mlir
// RUN: autotune-export %t.frozen.mlir -p 'verify-autotuning-groups,emit-autotune-initializer{workload_slots=0},lower-autotuning-dispatch' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FROZEN
// An attribute that names no variant of the group is an error at the dispatch.
// RUN: sed 's/autotune.allowed = \[@k_c\]/autotune.allowed = [@k_z]/' %s > %t.bad.mlir
// RUN: not autotune-export %t.bad.mlir -p lower-autotuning-dispatch 2>&1 | FileCheck %s --check-prefix=BAD

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry k_b(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry k_c(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a, @k_b, @k_c])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @k_b ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
  hal.executable.export public @k_c ordinal(2) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [32 : index, 1 : index, 1 : index]}>
}

util.func public @big(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %n = arith.constant 65536 : index
  %n_i32 = arith.constant 65536 : i32
  %y = flow.dispatch @ex::@k[%n](%x, %n_i32) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %y : tensor<65536xf32>
}

util.func public @small(%x: tensor<256xf32>) -> tensor<256xf32> {
  %n = arith.constant 256 : index
  %n_i32 = arith.constant 256 : i32
  %y = flow.dispatch @ex::@k[%n](%x, %n_i32) {autotune.allowed = [@k_b, @k_a]} : (tensor<256xf32>, i32) -> tensor<256xf32>
  util.return %y : tensor<256xf32>
}

util.func public @tiny(%x: tensor<16xf32>) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  %n_i32 = arith.constant 16 : i32
  %y = flow.dispatch @ex::@k[%n](%x, %n_i32) {autotune.allowed = [@k_c]} : (tensor<16xf32>, i32) -> tensor<16xf32>
  util.return %y : tensor<16xf32>
}

// @big may run every variant: the group's choice as it is.
// CHECK-LABEL: util.func public @big(
// CHECK:         %[[G:.+]] = util.global.load @__autotune.ex.k.choice : i32
// CHECK-NEXT:    %[[I:.+]] = arith.index_cast %[[G]] : i32 to index
// CHECK-NEXT:    flow.dispatch @ex::@k_a[%{{.+}}, %[[I]]](
// @small: a choice other than 1 (@k_b) or 0 (@k_a) becomes 1.
// CHECK-LABEL: util.func public @small(
// CHECK:         %[[G:.+]] = util.global.load @__autotune.ex.k.choice : i32
// CHECK-NEXT:    %[[B:.+]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[IS_B:.+]] = arith.cmpi eq, %[[G]], %[[B]] : i32
// CHECK-NEXT:    %[[A:.+]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[IS_A:.+]] = arith.cmpi eq, %[[G]], %[[A]] : i32
// CHECK-NEXT:    %[[OK:.+]] = arith.ori %[[IS_B]], %[[IS_A]] : i1
// CHECK-NEXT:    %[[FIRST:.+]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[C:.+]] = arith.select %[[OK]], %[[G]], %[[FIRST]] : i32
// CHECK-NEXT:    %[[I:.+]] = arith.index_cast %[[C]] : i32 to index
// CHECK-NEXT:    flow.dispatch @ex::@k_a[%{{.+}}, %[[I]]](%{{.+}}, %{{.+}}) : (tensor<256xf32>, i32) -> tensor<256xf32>
// CHECK-LABEL: util.func public @tiny(
// CHECK:         %[[G:.+]] = util.global.load @__autotune.ex.k.choice : i32
// CHECK-NEXT:    %[[K:.+]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[IS:.+]] = arith.cmpi eq, %[[G]], %[[K]] : i32
// CHECK-NEXT:    %[[FIRST:.+]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[C:.+]] = arith.select %[[IS]], %[[G]], %[[FIRST]] : i32
// CHECK-NEXT:    %[[I:.+]] = arith.index_cast %[[C]] : i32 to index
// CHECK-NEXT:    flow.dispatch @ex::@k_a[%{{.+}}, %[[I]]](%{{.+}}, %{{.+}}) : (tensor<16xf32>, i32) -> tensor<16xf32>
// CHECK-NOT:   autotune.allowed

// REFL: autotune.groups = "[{{.*}}\22allowed\22:[{\22host\22:\22small\22,\22site\22:\22dispatch 1 in @small\22,\22tuned\22:false,\22variants\22:[1,0]},{\22host\22:\22tiny\22,\22site\22:\22dispatch 2 in @tiny\22,\22tuned\22:false,\22variants\22:[2]}]

// CONST-LABEL: util.func public @small(
// CONST:         arith.constant 0 : index
// CONST:         flow.dispatch @ex::@k_a[
// CONST-LABEL: util.func public @tiny(
// CONST:         %[[K:.+]] = arith.constant 2 : index
// CONST:         flow.dispatch @ex::@k_a[%{{.+}}, %[[K]]](
// CONST-NOT:   autotune.allowed

// FROZEN: .frozen.mlir:{{[0-9]+}}:{{[0-9]+}}: warning: choices(...) of @k picks @k_c for workload [256], which the prune_configs_by of a dispatch with that workload rejects: it runs @k_b there, the first variant its own pruning keeps (Triton prunes at every launch)
// FROZEN-NEXT: note: the dispatch is here
// FROZEN-NOT: warning:

// BAD: .bad.mlir:{{[0-9]+}}:{{[0-9]+}}: error: this dispatch of @ex::@k: autotune.allowed names @k_z, which is not a variant of the group
