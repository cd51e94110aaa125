// The benchmark entries of a group with reset_to_zero: the operand the host zero-fills (marked
// autotune.zeroed by zero-fill-outputs) gets zeros before every timed run, as Triton's
// autotuner zeroes its reset_to_zero arguments; the other operands get their seeded fake data
// (a linalg.generic per argument, seeds -1947551523 for argument 0, 1887391252 for argument 1),
// the input once per call, the operands written in place before every run (the tied alloca
// the host passes for the output that is not zeroed included).
// RUN: autotune-export %s -p zero-fill-outputs,verify-autotuning-groups,emit-autotune-initializer | FileCheck %s

// CHECK-LABEL: util.func public @__autotune.ex.k.bench.0(
// CHECK:         %[[XC:.+]] = arith.constant -1947551523 : i32
// CHECK-NEXT:    %[[XB:.+]] = util.optimization_barrier %[[XC]] : i32
// CHECK-NEXT:    %[[XE:.+]] = tensor.empty() : tensor<1024xi32>
// CHECK-NEXT:    %[[XS:.+]] = linalg.generic {{.+}} outs(%[[XE]] : tensor<1024xi32>)
// CHECK:         %[[X:.+]] = flow.tensor.bitcast %[[XS]]
// One barrier at the top of every iteration gives each run its copy of the input, of the
// workload and of the seed and the zero its in-place operands are made from (the loop variable
// last); each run then makes its fresh buffers from its own copies, right before its dispatch.
// CHECK:         scf.for %[[I:.+]] = {{.+}} iter_args(
// CHECK-NEXT:      %[[OC:.+]] = arith.constant 1887391252 : i32
// CHECK-NEXT:      %[[ZC:.+]] = arith.constant 0 : i32
// CHECK:           %[[F:.+]]:33 = util.optimization_barrier %[[X]], %[[N:.+]], %[[OC]], %[[ZC]], %[[X]], %[[N]], %[[OC]], %[[ZC]],
// CHECK-SAME:        %[[I]] :
// CHECK-NEXT:      %[[OE:.+]] = tensor.empty() : tensor<1024xi32>
// CHECK-NEXT:      %[[OS:.+]] = linalg.generic {{.+}} outs(%[[OE]] : tensor<1024xi32>)
// CHECK:             arith.xori %[[F]]#2,
// CHECK:           %[[O:.+]] = flow.tensor.bitcast %[[OS]] : tensor<1024xi32> -> tensor<1024xf32>
// CHECK-NEXT:      %[[ZS:.+]] = flow.tensor.splat %[[F]]#3 : tensor<1xi32>
// CHECK-NEXT:      %[[Z:.+]] = flow.tensor.bitcast %[[ZS]] : tensor<1xi32> -> tensor<1xf32>
// CHECK-NEXT:      flow.dispatch @ex::@k[%[[F]]#1](%[[F]]#0, %[[O]], %[[Z]], %{{.+}}) {autotune.choice = 0 : i32} : {{.+}} -> (%[[O]], %[[Z]])
// CHECK-NEXT:      tensor.extract_slice
// CHECK-NEXT:      tensor.empty() : tensor<1024xi32>
// CHECK:             arith.xori %[[F]]#6,
// CHECK:           flow.tensor.splat %[[F]]#7 : tensor<1xi32>
// CHECK:           flow.dispatch @ex::@k[%[[F]]#5](%[[F]]#4, %{{.+}}, %{{.+}}, %{{.+}}) {autotune.choice = 0 : i32}
// CHECK-NOT:       util.optimization_barrier
// CHECK:           scf.yield

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 x, .param .u64 s, .param .u64 t, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry k_b(.param .u64 x, .param .u64 s, .param .u64 t, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a, @k_b]) reset_to_zero(1)
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @k_b ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n_i32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @ex::@k[%n](%x, %n_i32) : (tensor<1024xf32>, i32) -> (tensor<1024xf32>, tensor<1xf32>)
  util.return %r#0, %r#1 : tensor<1024xf32>, tensor<1xf32>
}
