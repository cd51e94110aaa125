// The fake data of the benchmark and check entries (issue 21, items 10 and 12): per tensor
// argument a linalg.generic over linalg.index that hashes the argument's own seed (argument 0:
// -1947551523, argument 1: 1887391252; behind a barrier, so nothing folds or merges) with every
// index of the element, then makes the element from the hash's top bits: integers 0 or 1
// (bit 31), floats +-(1 + f/8) * 2^(e-1) as a bit pattern (sign: bit 31; exponent bias - 1 + e,
// e: bit 30; 3 mantissa bits from bits 27-29) bit-cast to the float type. An argument listed
// in autotune.fake_zeros (an in-place reset_to_zero operand, or one the kernel updates
// atomically: a lock) gets zeros instead, before every run. The check entries of the two
// variants build the same data from the same seeds.
// RUN: autotune-export %s -p verify-autotuning-groups,emit-autotune-initializer | FileCheck %s

// CHECK-LABEL: util.func public @__autotune.ex.k.bench.0(
// f16, 2-D, dynamic: both indices are hashed; exponent 14 (+ e), shifted by 10 mantissa bits.
// CHECK:         %[[S0:.+]] = arith.constant -1947551523 : i32
// CHECK-NEXT:    %[[B0:.+]] = util.optimization_barrier %[[S0]] : i32
// CHECK-NEXT:    %[[E0:.+]] = tensor.empty(%[[M:.+]]) : tensor<?x8xi16>
// CHECK-NEXT:    %[[G0:.+]] = linalg.generic {indexing_maps = [#[[MAP2:.+]]], iterator_types = ["parallel", "parallel"]} outs(%[[E0]] : tensor<?x8xi16>) {
// CHECK-NEXT:    ^bb0(%{{.+}}: i16):
// CHECK-NEXT:      %[[I0:.+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I0C:.+]] = arith.index_cast %[[I0]] : index to i32
// CHECK-NEXT:      %[[H0:.+]] = arith.xori %[[B0]], %[[I0C]] : i32
// CHECK-NEXT:      %[[GOLD:.+]] = arith.constant -1640531535 : i32
// CHECK-NEXT:      %[[H1:.+]] = arith.muli %[[H0]], %[[GOLD]] : i32
// CHECK-NEXT:      %[[I1:.+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[I1C:.+]] = arith.index_cast %[[I1]] : index to i32
// CHECK-NEXT:      %[[H2:.+]] = arith.xori %[[H1]], %[[I1C]] : i32
// CHECK-NEXT:      %[[H3:.+]] = arith.muli %[[H2]], %[[GOLD]] : i32
// CHECK:           %[[SIGN:.+]] = arith.trunci %{{.+}} : i32 to i16
// CHECK-NEXT:      %[[C15:.+]] = arith.constant 15 : i16
// CHECK-NEXT:      %[[SHIFTED:.+]] = arith.shli %[[SIGN]], %[[C15]] : i16
// CHECK:           %[[BIAS:.+]] = arith.constant 14 : i16
// CHECK-NEXT:      %[[EXP:.+]] = arith.addi %{{.+}}, %[[BIAS]] : i16
// CHECK-NEXT:      %[[C10:.+]] = arith.constant 10 : i16
// CHECK-NEXT:      arith.shli %[[EXP]], %[[C10]] : i16
// CHECK:           %[[C7:.+]] = arith.constant 7 : i16
// CHECK-NEXT:      %[[FRAC:.+]] = arith.shli %{{.+}}, %[[C7]] : i16
// CHECK-NEXT:      %[[OR:.+]] = arith.ori %[[SHIFTED]], %{{.+}} : i16
// CHECK-NEXT:      %[[VAL:.+]] = arith.ori %[[OR]], %[[FRAC]] : i16
// CHECK-NEXT:      linalg.yield %[[VAL]] : i16
// CHECK-NEXT:    } -> tensor<?x8xi16>
// CHECK-NEXT:    %[[X:.+]] = flow.tensor.bitcast %[[G0]] : tensor<?x8xi16>{%[[M]]} -> tensor<?x8xf16>{%[[M]]}
// i8: bit 31 of the hash, truncated.
// CHECK-NEXT:    %[[S1:.+]] = arith.constant 1887391252 : i32
// CHECK-NEXT:    %[[B1:.+]] = util.optimization_barrier %[[S1]] : i32
// CHECK-NEXT:    %[[E1:.+]] = tensor.empty() : tensor<16xi8>
// CHECK-NEXT:    %[[G1:.+]] = linalg.generic {indexing_maps = [#[[MAP1:.+]]], iterator_types = ["parallel"]} outs(%[[E1]] : tensor<16xi8>) {
// CHECK:           arith.xori %[[B1]], %{{.+}} : i32
// CHECK:           %[[C31:.+]] = arith.constant 31 : i32
// CHECK-NEXT:      %[[TOP:.+]] = arith.shrui %{{.+}}, %[[C31]] : i32
// CHECK-NEXT:      %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[BIT:.+]] = arith.andi %[[TOP]], %[[ONE]] : i32
// CHECK-NEXT:      %[[I8:.+]] = arith.trunci %[[BIT]] : i32 to i8
// CHECK-NEXT:      linalg.yield %[[I8]] : i8
// CHECK-NEXT:    } -> tensor<16xi8>
// The in-place operand listed in autotune.fake_zeros: zeros, refilled in every iteration.
// Its zero goes through the iteration's barrier (a copy per run, after those of the two inputs
// and of the workload).
// CHECK:         scf.for %[[I:.+]] = {{.+}} iter_args(
// CHECK-NEXT:      %[[ZC:.+]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[F:.+]]:33 = util.optimization_barrier %{{.+}}, %{{.+}}, %{{.+}}, %[[ZC]], {{.+}}, %[[I]] :
// CHECK-NEXT:      %[[Z:.+]] = flow.tensor.splat %[[F]]#3 : tensor<16xi32>
// CHECK-NEXT:      flow.dispatch @ex::@k[%[[F]]#2](%[[F]]#0, %[[F]]#1, %[[Z]], %{{.+}}) {autotune.choice = 0 : i32, autotune.fake_zeros = array<i64: 2>} : {{.+}} -> %[[Z]]
// CHECK-NOT:       linalg.generic
// CHECK:         util.return
// The check entries: one run, the same seeds for both variants.
// CHECK-LABEL: util.func public @__autotune.ex.k.check.0(
// CHECK:         arith.constant -1947551523 : i32
// CHECK:         arith.constant 1887391252 : i32
// CHECK:         flow.tensor.splat %{{.+}} : tensor<16xi32>
// CHECK:         {autotune.choice = 0 : i32
// CHECK-LABEL: util.func public @__autotune.ex.k.check.1(
// CHECK:         arith.constant -1947551523 : i32
// CHECK:         arith.constant 1887391252 : i32
// CHECK:         flow.tensor.splat %{{.+}} : tensor<16xi32>
// CHECK:         {autotune.choice = 1 : i32

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 x, .param .u64 i, .param .u64 l, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry k_b(.param .u64 x, .param .u64 i, .param .u64 l, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a, @k_b]) tune_workload(tensor<64x8xf16>, tensor<16xi8>, tensor<16xi32>)
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @k_b ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<?x8xf16>, %idx: tensor<16xi8>, %lock: tensor<16xi32>) -> tensor<16xi32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x8xf16>
  %n32 = arith.index_cast %m : index to i32
  %r = flow.dispatch @ex::@k[%m](%x, %idx, %lock, %n32) {autotune.fake_zeros = array<i64: 2>} : (tensor<?x8xf16>{%m}, tensor<16xi8>, tensor<16xi32>, i32) -> %lock
  util.return %r : tensor<16xi32>
}
