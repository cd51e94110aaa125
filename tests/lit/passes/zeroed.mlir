// zero-fill-outputs on the RFC form: reset_to_zero(...) names result indices; every untied
// result of such a group's dispatch is tied to a new operand (a zero fill for a zeroed result,
// a flow.tensor.alloca for the others) placed after the last tensor operand, so each binding
// keeps its place (tensor operands first, then untied results); each zero sits behind a
// barrier of its own (IREE would merge identical splats, binding two outputs to one buffer).
// RUN: autotune-export %s -p zero-fill-outputs --split-input-file 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.err
// The rewrite is a fixed point, and its output reads back (the autotune.zeroed markers too).
// RUN: autotune-export %s -p zero-fill-outputs --split-input-file -o %t.1.mlir
// RUN: autotune-export %t.1.mlir -p zero-fill-outputs --split-input-file -o %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// The zeroed result first: its zero is binding 1, the others follow as before.
// CHECK-LABEL: util.func public @first(
// CHECK:         %[[C0:.+]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[B0:.+]] = util.optimization_barrier %[[C0]] : i32
// CHECK-NEXT:    %[[S0:.+]] = flow.tensor.splat %[[B0]] : tensor<16xi32>
// CHECK-NEXT:    %[[Z0:.+]] = flow.tensor.bitcast %[[S0]] : tensor<16xi32> -> tensor<16xf32> attributes {autotune.zeroed}
// CHECK-NEXT:    %[[A1:.+]] = flow.tensor.alloca : tensor<16xf32>
// CHECK-NEXT:    %[[A2:.+]] = flow.tensor.alloca : tensor<16xf32>
// CHECK-NEXT:    flow.dispatch @ex::@k[%{{.+}}](%arg0, %[[Z0]], %[[A1]], %[[A2]], %{{.+}}) : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, i32) -> (%[[Z0]], %[[A1]], %[[A2]])
hal.executable.source private @ex {
  hal.executable.autotuning.export @k variants([@a]) reset_to_zero(0)
}
util.func public @first(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %n = arith.constant 16 : index
  %n32 = arith.constant 16 : i32
  %r:3 = flow.dispatch @ex::@k[%n](%x, %n32) : (tensor<16xf32>, i32) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  util.return %r#0, %r#1, %r#2 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// The zeroed result last, between two input tensors and a scalar.
// CHECK-LABEL: util.func public @last(
// CHECK:         %[[A0:.+]] = flow.tensor.alloca : tensor<8xf32>
// CHECK:         %[[Z1:.+]] = flow.tensor.bitcast %{{.+}} : tensor<8xi32> -> tensor<8xf32> attributes {autotune.zeroed}
// CHECK-NEXT:    flow.dispatch @ex::@k[%{{.+}}](%arg0, %arg1, %[[A0]], %[[Z1]], %{{.+}}) : {{.+}} -> (%[[A0]], %[[Z1]])
hal.executable.source private @ex {
  hal.executable.autotuning.export @k variants([@a]) reset_to_zero(1)
}
util.func public @last(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %n = arith.constant 8 : index
  %n32 = arith.constant 8 : i32
  %r:2 = flow.dispatch @ex::@k[%n](%x, %y, %n32) : (tensor<8xf32>, tensor<8xf32>, i32) -> (tensor<8xf32>, tensor<8xf32>)
  util.return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Several zeroed results around one that is not, dynamic sizes: each new operand has the
// result's type and sizes; f16 is zeroed as i16 bits, i8 directly.
// CHECK-LABEL: util.func public @several(
// CHECK:         %[[C0:.+]] = arith.constant 0 : i16
// CHECK-NEXT:    %[[B0:.+]] = util.optimization_barrier %[[C0]] : i16
// CHECK-NEXT:    %[[S0:.+]] = flow.tensor.splat %[[B0]] : tensor<?xi16>{%[[N:.+]]}
// CHECK-NEXT:    %[[Z0:.+]] = flow.tensor.bitcast %[[S0]] : tensor<?xi16>{%[[N]]} -> tensor<?xf16>{%[[N]]} attributes {autotune.zeroed}
// CHECK-NEXT:    %[[A1:.+]] = flow.tensor.alloca : tensor<?xf32>{%[[N]]}
// CHECK-NEXT:    %[[C2:.+]] = arith.constant 0 : i8
// CHECK-NEXT:    %[[B2:.+]] = util.optimization_barrier %[[C2]] : i8
// CHECK-NEXT:    %[[Z2:.+]] = flow.tensor.splat %[[B2]] : tensor<?x4xi8>{%arg1} attributes {autotune.zeroed}
// CHECK-NEXT:    flow.dispatch @ex::@k[%[[N]]](%arg0, %[[Z0]], %[[A1]], %[[Z2]], %{{.+}}) : (tensor<?xf32>{%[[N]]}, tensor<?xf16>{%[[N]]}, tensor<?xf32>{%[[N]]}, tensor<?x4xi8>{%arg1}, i32) -> (%[[Z0]]{%[[N]]}, %[[A1]]{%[[N]]}, %[[Z2]]{%arg1})
hal.executable.source private @ex {
  hal.executable.autotuning.export @k variants([@a]) reset_to_zero(0, 2)
}
util.func public @several(%x: tensor<?xf32>, %m: index) -> (tensor<?xf16>, tensor<?xf32>, tensor<?x4xi8>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %r:3 = flow.dispatch @ex::@k[%n](%x, %n32) : (tensor<?xf32>{%n}, i32) -> (tensor<?xf16>{%n}, tensor<?xf32>{%n}, tensor<?x4xi8>{%m})
  util.return %r#0, %r#1, %r#2 : tensor<?xf16>, tensor<?xf32>, tensor<?x4xi8>
}

// -----

// A zeroed result written in place keeps its operand (as in Triton, which zeroes it only while
// benchmarking): no zero fill on real calls; the dispatch lists the operand in
// autotune.fake_zeros (zeros in the benchmark and check entries only) and a remark says so.
// The untied result gets an alloca after the tensor operands. restore_value(1) names a result
// tied to the alloca: accepted.
// CHECK-LABEL: util.func public @in_place(
// CHECK-NOT:     autotune.zeroed
// CHECK:         %[[A:.+]] = flow.tensor.alloca : tensor<4xf32>
// CHECK-NEXT:    flow.dispatch @ex::@k[%{{.+}}](%arg0, %arg1, %[[A]], %{{.+}}) {autotune.fake_zeros = array<i64: 1>} : {{.+}} -> (%arg1, %[[A]])
// REMARK: {{.*}}zeroed.mlir:[[# @LINE + 7]]:10: remark: reset_to_zero(0) of @ex::@k, which this dispatch writes in place (operand 1): as in Triton, whose autotuner zeroes reset_to_zero arguments only while benchmarking, result 0 is zeroed only in the benchmark and check entries; on real calls the kernel reads the operand's contents
hal.executable.source private @ex {
  hal.executable.autotuning.export @k variants([@a]) reset_to_zero(0)
}
util.func public @in_place(%x: tensor<4xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = arith.constant 4 : index
  %n32 = arith.constant 4 : i32
  %r:2 = flow.dispatch @ex::@k[%n](%x, %acc, %n32) : (tensor<4xf32>, tensor<4xf32>, i32) -> (%acc, tensor<4xf32>)
  util.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A zero splat the host already passes (jax-triton's zeroed_outputs) is replaced by a
// marked fill of its own, and the old splat erased: two identical splats would be merged.
// CHECK-LABEL: util.func public @given_zeros(
// CHECK-NOT:     arith.constant 0.000000e+00
// CHECK:         %[[Z0:.+]] = flow.tensor.bitcast %{{.+}} attributes {autotune.zeroed}
// CHECK:         %[[Z1:.+]] = flow.tensor.bitcast %{{.+}} attributes {autotune.zeroed}
// CHECK-NEXT:    flow.dispatch @ex::@k(%arg0, %[[Z0]], %[[Z1]]) : {{.+}} -> (%[[Z0]], %[[Z1]])
hal.executable.source private @ex {
  hal.executable.autotuning.export @k variants([@a]) reset_to_zero(0, 1)
}
util.func public @given_zeros(%x: tensor<4xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %z0 = flow.tensor.splat %zero : tensor<1xf32>
  %z1 = flow.tensor.splat %zero : tensor<1xf32>
  %r:2 = flow.dispatch @ex::@k(%x, %z0, %z1) : (tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> (%z0, %z1)
  util.return %r#0, %r#1 : tensor<1xf32>, tensor<1xf32>
}

// -----

// restore_value alone rewrites nothing (the benchmark entries already refill operands written
// in place); the group without reset_to_zero is not touched either.
// CHECK-LABEL: util.func public @restored(
// CHECK-NEXT:    %[[R:.+]] = flow.dispatch @ex::@k(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> %arg1
// CHECK-NEXT:    flow.dispatch @ex::@plain(%[[R]]) : (tensor<4xf32>) -> tensor<4xf32>
hal.executable.source private @ex {
  hal.executable.autotuning.export @k variants([@a]) restore_value(0)
  hal.executable.autotuning.export @plain variants([@b])
}
util.func public @restored(%x: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %r = flow.dispatch @ex::@k(%x, %acc) : (tensor<4xf32>, tensor<4xf32>) -> %acc
  %p = flow.dispatch @ex::@plain(%r) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %p : tensor<4xf32>
}
