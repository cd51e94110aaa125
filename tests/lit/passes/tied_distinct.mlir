// lower-autotuning-dispatch gives every tensor a result is tied to a buffer of its own. IREE's
// CSE makes one value of two flow.tensor.empty of a type (or of two splats of one scalar), and
// a dispatch with one value tied to two results binds both outputs to one range of one buffer:
// the kernel writes both into it and the second output is read from past it (IREE 3.13). So a
// tied flow.tensor.empty becomes a flow.tensor.alloca, and a splat identical to an earlier
// tied one takes its scalar through a barrier. The tied indices follow the operands when an
// i64 scalar before them becomes two 32-bit constants.
// RUN: autotune-export %s -p verify-autotuning-groups,lower-autotuning-dispatch | FileCheck %s --check-prefix=LOWER
// RUN: autotune-export %s --emit iree -o %t.mlir
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 --compile-to=stream | FileCheck %s --check-prefix=STREAM

#layout = #hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n, .param .u32 lo, .param .u32 hi)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// LOWER-LABEL: util.func public @empties(
// LOWER:         %[[A:.+]] = flow.tensor.alloca : tensor<16xf32>
// LOWER-NEXT:    %[[B:.+]] = flow.tensor.alloca : tensor<16xf32>
// LOWER-NOT:     flow.tensor.empty
// LOWER:         %[[LO:.+]] = arith.trunci %{{.+}} : i64 to i32
// LOWER:         %[[HI:.+]] = arith.trunci %{{.+}} : i64 to i32
// LOWER-NEXT:    flow.dispatch @ex::@k_a[%{{.+}}, %{{.+}}](%arg0, %{{.+}}, %[[LO]], %[[HI]], %[[A]], %[[B]]) : (tensor<16xf32>, i32, i32, i32, tensor<16xf32>, tensor<16xf32>) -> (%[[A]], %[[B]])
// STREAM-LABEL: util.func public @empties(
// STREAM:         stream.cmd.dispatch @ex::@k_a
// STREAM-NEXT:      ro %{{.+}}[%c0 for %c64]
// STREAM-NEXT:      rw %[[R:.+]][%c0 for %c64]
// STREAM-NEXT:      rw %[[R]][%c64 for %c64]
util.func public @empties(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %n = arith.constant 16 : index
  %n32 = arith.constant 16 : i32
  %s = arith.constant 7 : i64
  %a = flow.tensor.empty : tensor<16xf32>
  %b = flow.tensor.empty : tensor<16xf32>
  %r:2 = flow.dispatch @ex::@k[%n](%x, %n32, %s, %a, %b) : (tensor<16xf32>, i32, i64, tensor<16xf32>, tensor<16xf32>) -> (%a, %b)
  util.return %r#0, %r#1 : tensor<16xf32>, tensor<16xf32>
}

// LOWER-LABEL: util.func public @splats(
// LOWER:         %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// LOWER-NEXT:    %[[S0:.+]] = flow.tensor.splat %[[Z]] : tensor<16xf32>
// LOWER-NEXT:    %[[Z1:.+]] = util.optimization_barrier %[[Z]] : f32
// LOWER-NEXT:    %[[S1:.+]] = flow.tensor.splat %[[Z1]] : tensor<16xf32>
// LOWER:         flow.dispatch @ex::@k_a[%{{.+}}](%arg0, %{{.+}}, %{{.+}}, %{{.+}}, %[[S0]], %[[S1]]) : {{.+}} -> (%[[S0]], %[[S1]])
// STREAM-LABEL: util.func public @splats(
// STREAM:         stream.cmd.dispatch @ex::@k_a
// STREAM-NEXT:      ro %{{.+}}[%c0 for %c64]
// STREAM-NEXT:      rw %[[R:.+]][%c0 for %c64]
// STREAM-NEXT:      rw %[[R]][%c64 for %c64]
util.func public @splats(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %n = arith.constant 16 : index
  %n32 = arith.constant 16 : i32
  %s = arith.constant 7 : i64
  %zero = arith.constant 0.0 : f32
  %a = flow.tensor.splat %zero : tensor<16xf32>
  %b = flow.tensor.splat %zero : tensor<16xf32>
  %r:2 = flow.dispatch @ex::@k[%n](%x, %n32, %s, %a, %b) : (tensor<16xf32>, i32, i64, tensor<16xf32>, tensor<16xf32>) -> (%a, %b)
  util.return %r#0, %r#1 : tensor<16xf32>, tensor<16xf32>
}
