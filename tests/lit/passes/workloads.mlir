// Choices per workload (issue 13, point 5): several tune_workloads, the run-time table of
// per-workload choices, frozen choices(...), and the entries the runtime uses (workload values
// of each tuning workload and of a live call, check entries for cross-checking variants).
// RUN: autotune-export %s -p '' | FileCheck %s --check-prefix=SUGAR
// RUN: autotune-export %s -p '' > %t.1.mlir
// RUN: autotune-export %t.1.mlir -p '' | diff %t.1.mlir -
// RUN: autotune-export %s -p verify-autotuning-groups,emit-autotune-initializer | FileCheck %s --check-prefix=INIT
// RUN: autotune-export %s -p verify-autotuning-groups,emit-autotune-initializer,lower-autotuning-dispatch | FileCheck %s --check-prefix=LOWER
// RUN: autotune-export %s --emit iree -o %t.iree.mlir
// --tuning-results freezes per-workload results (those with workload_values) into choices(...):
// RUN: echo '{"format": "autotune-export.tuning-results/1", "results": [{"executable": "ex", "group": "k", "variant": "k_a", "workload_values": [1024]}, {"executable": "ex", "group": "k", "variant": "k_b", "workload_values": [65536]}, {"executable": "ex", "group": "k", "variant": "k_a", "workload_values": [65536]}, {"executable": "ex", "group": "k", "variant": "k_b", "workload_values": [65536]}]}' > %t.json
// RUN: autotune-export %s --tuning-results %t.json -p pin-variants | FileCheck %s --check-prefix=PIN
// RUN: echo '{"format": "autotune-export.tuning-results/1", "results": [{"executable": "ex", "group": "k", "variant": "k_a", "workload_values": [1024]}, {"executable": "ex", "group": "k", "variant": "k_b", "workload_values": [65536]}, {"executable": "ex", "group": "k", "variant": "k_b", "workload_values": [8]}, {"executable": "ex", "group": "k", "variant": "k_a", "workload_values": [4]}, {"executable": "ex", "group": "k", "variant": "k_b", "workload_values": [4]}]}' > %t.2.json
// RUN: autotune-export %s --tuning-results %t.2.json -p pin-variants | FileCheck %s --check-prefix=PIN2

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry k_b(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a, @k_b])
      tune_workload([tensor<1024xf32>], [tensor<65536xf32>])
      choices([4096] = @k_b, [8] = @k_a)
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @k_b ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
}

util.func public @host(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n_i32 = arith.index_cast %n : index to i32
  %y = flow.dispatch @ex::@k[%n](%x, %n_i32) : (tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %y : tensor<?xf32>
}

// SUGAR:      hal.executable.autotuning.export @k
// SUGAR-NEXT:     variants([@k_a, @k_b])
// SUGAR-NEXT:     tune_workload([tensor<1024xf32>], [tensor<65536xf32>])
// SUGAR-NEXT:     choices([4096] = @k_b, [8] = @k_a)

// The last result per workload wins; the group's default is the variant most workloads chose
// (contract.choose_result), a tie going to the lower variant index: one workload each, @k_a.
// PIN:      tune_workload([tensor<1024xf32>], [tensor<65536xf32>])
// PIN-NEXT: choices([1024] = @k_a, [65536] = @k_b)
// PIN-NEXT: default(@k_a)
// Three workloads of four chose @k_b ([4]'s last result is @k_b): the default is @k_b.
// PIN2:      choices([1024] = @k_a, [65536] = @k_b, [8] = @k_b, [4] = @k_b)
// PIN2-NEXT: default(@k_b)

// One set of benchmark entries per tuning workload (workload 0 keeps the plain names).
// INIT-LABEL: util.func public @__autotune.ex.k.bench.0(
// INIT:         linalg.generic {{.+}} outs(%{{.+}} : tensor<?xi32>)
// INIT-LABEL: util.func public @__autotune.ex.k.bench.1(
// Check entries: one run on fresh fake data, whole results.
// INIT-LABEL: util.func public @__autotune.ex.k.check.0() -> tensor<?xf32>
// INIT:         %[[R0:.+]] = flow.dispatch @ex::@k[%{{.+}}](%{{.+}}, %{{.+}}) {autotune.choice = 0 : i32}
// INIT:         util.return %[[R0]] : tensor<?xf32>
// INIT-LABEL: util.func public @__autotune.ex.k.check.1() -> tensor<?xf32>
// INIT:         {autotune.choice = 1 : i32}
// The workload values of tuning workload 0 (n = 1024), computed from its fake argument.
// INIT-LABEL: util.func public @__autotune.ex.k.workload.0() -> i64
// INIT:         %[[E:.+]] = tensor.empty() : tensor<1024xf32>
// INIT:         %[[D:.+]] = tensor.dim
// INIT:         %[[D64:.+]] = arith.index_cast %[[D]] : index to i64
// INIT:         util.return %[[D64]] : i64
// INIT-LABEL: util.func public @__autotune.ex.k.bench.w1.0(
// INIT-LABEL: util.func public @__autotune.ex.k.bench.w1.1(
// INIT-LABEL: util.func public @__autotune.ex.k.workload.1() -> i64
// INIT:         tensor.empty() : tensor<65536xf32>
// The workload of a live call: the host's signature, only the ops that compute it.
// INIT-LABEL: util.func public @__autotune.ex.k.workload_of(
// INIT-SAME:      %[[X:.+]]: tensor<?xf32>) -> i64
// INIT-NEXT:    %[[C0:.+]] = arith.constant 0 : index
// INIT-NEXT:    %[[DIM:.+]] = tensor.dim %[[X]], %[[C0]] : tensor<?xf32>
// INIT-NEXT:    %[[DIM64:.+]] = arith.index_cast %[[DIM]] : index to i64
// INIT-NEXT:    util.return %[[DIM64]] : i64
// INIT-NOT:     flow.dispatch
// The run-time table: 8 slots, empty (-1) until tuning fills them.
// INIT:       util.global private mutable @__autotune.ex.k.slot.0.choice = -1 : i32
// INIT-NEXT:  util.global private mutable @__autotune.ex.k.slot.0.w0 = 0 : i64
// INIT-LABEL: util.func public @__autotune.ex.k.slot.0.set(
// INIT-SAME:      %[[CH:.+]]: i32, %[[W0:.+]]: i64)
// INIT-NEXT:    util.global.store %[[W0]], @__autotune.ex.k.slot.0.w0 : i64
// INIT-NEXT:    util.global.store %[[CH]], @__autotune.ex.k.slot.0.choice : i32
// INIT:       util.func public @__autotune.ex.k.slot.7.set(
// INIT-LABEL: util.func public @__autotune()
// INIT-SAME:      \22arity\22:1
// INIT-SAME:      \22check\22:[\22__autotune.ex.k.check.0\22,\22__autotune.ex.k.check.1\22]
// INIT-SAME:      \22fingerprints\22:[\22[[FP0:[0-9a-f]{32}]]\22,\22[[FP1:[0-9a-f]{32}]]\22]
// INIT-SAME:      \22slots\22:[\22__autotune.ex.k.slot.0.set\22,
// INIT-SAME:      \22workload_of\22:\22__autotune.ex.k.workload_of\22
// INIT-SAME:      \22workloads\22:[{\22bench\22:[\22__autotune.ex.k.bench.0\22,\22__autotune.ex.k.bench.1\22],\22tune_args\22:[\22tensor<1024xf32>\22],\22workload\22:\22__autotune.ex.k.workload.0\22},{\22bench\22:[\22__autotune.ex.k.bench.w1.0\22,\22__autotune.ex.k.bench.w1.1\22],\22tune_args\22:[\22tensor<65536xf32>\22],\22workload\22:\22__autotune.ex.k.workload.1\22}]

// At the dispatch site: run-time slots first, then the frozen choices (first listed wins),
// then the choice global.
// LOWER-LABEL: util.func public @host(
// LOWER:        %[[G:.+]] = util.global.load @__autotune.ex.k.choice : i32
// LOWER-NEXT:   %[[W:.+]] = arith.index_cast %{{.+}} : index to i64
// LOWER-NEXT:   %[[K8:.+]] = arith.constant 8 : i64
// LOWER-NEXT:   %[[E8:.+]] = arith.cmpi eq, %[[W]], %[[K8]] : i64
// LOWER-NEXT:   %[[V0:.+]] = arith.constant 0 : i32
// LOWER-NEXT:   %[[C8:.+]] = arith.select %[[E8]], %[[V0]], %[[G]] : i32
// LOWER-NEXT:   %[[K4096:.+]] = arith.constant 4096 : i64
// LOWER-NEXT:   %[[E4096:.+]] = arith.cmpi eq, %[[W]], %[[K4096]] : i64
// LOWER-NEXT:   %[[V1:.+]] = arith.constant 1 : i32
// LOWER-NEXT:   %[[C4096:.+]] = arith.select %[[E4096]], %[[V1]], %[[C8]] : i32
// LOWER:        util.global.load @__autotune.ex.k.slot.7.choice : i32
// LOWER:        arith.select %{{.+}}, %{{.+}}, %[[C4096]] : i32
// LOWER:        flow.dispatch @ex::@k_a[%{{.+}}, %{{.+}}](
