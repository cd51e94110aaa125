// emit-autotune-initializer and lower-autotuning-dispatch on the RFC's explicit form.
// RUN: autotune-export %s -p verify-autotuning-groups,emit-autotune-initializer | FileCheck %s --check-prefix=INIT
// RUN: autotune-export %s -p verify-autotuning-groups,emit-autotune-initializer,lower-autotuning-dispatch | FileCheck %s --check-prefix=LOWER
// The lowered module is plain IREE input: iree-compile accepts it.
// RUN: autotune-export %s --emit iree -o %t.mlir
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vmfb

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry k_b(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry k_c(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a, @k_b, @k_c]) default(@k_b)
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

util.func public @host(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n_i32 = arith.constant 1024 : i32
  %y = flow.dispatch @ex::@k[%n](%x, %n_i32) : (tensor<1024xf32>, i32) -> tensor<1024xf32>
  util.return %y : tensor<1024xf32>
}

// The choice global starts at the default variant (@k_b is variant 1).
// INIT:       util.global private mutable @__autotune.ex.k.choice = 1 : i32
// INIT-LABEL: util.func public @__autotune.ex.k.select(
// INIT-SAME:      %[[V:.+]]: i32)
// INIT-NEXT:    util.global.store %[[V]], @__autotune.ex.k.choice : i32
// A benchmark entry per variant dispatches the group itself, fixed to that variant (never the
// host function: nothing of the user's code runs), once plus 8 times per loop iteration. The
// workload and scalars are cloned from the host's pure ops; the tensor operand is a fake buffer
// of its own (seeded, position-dependent values: a linalg.generic hashing the seed, behind a
// barrier so no two buffers merge, with the element's index; fake_data.mlir checks the
// values). One barrier at the top of each iteration gives every run its own copy of the input
// and of the workload (so the dispatches are neither hoisted nor merged, and no host op comes
// between two of them: bench_region.mlir checks they make one stream.cmd.execute);
// one-element slices of the results are carried so no dispatch is dead.
// INIT-LABEL: util.func public @__autotune.ex.k.bench.0(
// INIT-SAME:      %[[ITERS:.+]]: index) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
// INIT-NOT:     util.call
// INIT-DAG:     %[[N:.+]] = arith.constant 1024 : index
// INIT-DAG:     %[[N32:.+]] = arith.constant 1024 : i32
// INIT:         %[[SEED:.+]] = arith.constant -1947551523 : i32
// INIT-NEXT:    %[[OPAQUE:.+]] = util.optimization_barrier %[[SEED]] : i32
// INIT-NEXT:    %[[EMPTY:.+]] = tensor.empty() : tensor<1024xi32>
// INIT-NEXT:    %[[BITS:.+]] = linalg.generic {{.+}} outs(%[[EMPTY]] : tensor<1024xi32>)
// INIT:           arith.xori %[[OPAQUE]], %{{.+}} : i32
// INIT:         } -> tensor<1024xi32>
// INIT-NEXT:    %[[FAKE:.+]] = flow.tensor.bitcast %[[BITS]] : tensor<1024xi32> -> tensor<1024xf32>
// Every run is inside the loop (8 per iteration); its initial values are zeros, never returned.
// INIT-NEXT:    %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<1xf32>
// INIT-NEXT:    %[[C0:.+]] = arith.constant 0 : index
// INIT-NEXT:    %[[LAST:.+]]:8 = scf.for %[[I:.+]] = %[[C0]] to %[[ITERS]] step %{{.+}} iter_args(%{{.+}} = %[[Z]],
// INIT-NEXT:      %[[FENCED:.+]]:17 = util.optimization_barrier %[[FAKE]], %[[N]], %[[FAKE]], %[[N]], %[[FAKE]], %[[N]], %[[FAKE]], %[[N]], %[[FAKE]], %[[N]], %[[FAKE]], %[[N]], %[[FAKE]], %[[N]], %[[FAKE]], %[[N]], %[[I]] :
// INIT-NEXT:      %[[D0:.+]] = flow.dispatch @ex::@k[%[[FENCED]]#1](%[[FENCED]]#0, %[[N32]]) {autotune.choice = 0 : i32}
// INIT-NEXT:      tensor.extract_slice %[[D0]][0] [1] [1]
// INIT-NEXT:      %[[D1:.+]] = flow.dispatch @ex::@k[%[[FENCED]]#3](%[[FENCED]]#2, %[[N32]]) {autotune.choice = 0 : i32}
// INIT:           %[[D7:.+]] = flow.dispatch @ex::@k[%[[FENCED]]#15](%[[FENCED]]#14, %[[N32]]) {autotune.choice = 0 : i32}
// INIT-NEXT:      tensor.extract_slice %[[D7]][0] [1] [1]
// INIT-NEXT:      scf.yield
// INIT-NEXT:    }
// INIT-NEXT:    util.return %[[LAST]]#0, %[[LAST]]#1, %[[LAST]]#2, %[[LAST]]#3, %[[LAST]]#4, %[[LAST]]#5, %[[LAST]]#6, %[[LAST]]#7 :
// INIT:       util.func public @__autotune.ex.k.bench.1(
// INIT:         flow.dispatch @ex::@k[{{.+}}]({{.+}}) {autotune.choice = 1 : i32}
// INIT:       util.func public @__autotune.ex.k.bench.2(
// INIT:         flow.dispatch @ex::@k[{{.+}}]({{.+}}) {autotune.choice = 2 : i32}
// No fake data in globals, no copies of the host.
// INIT-NOT:   util.global private @__autotune.ex.k.fake
// INIT-NOT:   @__autotune.ex.k.host
// INIT-LABEL: util.func public @__autotune.flush_l2()
// INIT-LABEL: util.func public @__autotune()
// INIT-SAME:      iree.reflection = {autotune.groups = "[{{.*}}\22group\22:\22k\22{{.*}}\22variants\22:[\22k_a\22,\22k_b\22,\22k_c\22]{{.*}}"}
// INIT-NEXT:    %[[ONE:.+]] = arith.constant 1 : index
// INIT-NEXT:    %[[B0:.+]]:8 = util.call @__autotune.ex.k.bench.0(%[[ONE]])
// INIT-NEXT:    util.optimization_barrier %[[B0]]#0, %[[B0]]#1,
// INIT-NEXT:    %[[B1:.+]]:8 = util.call @__autotune.ex.k.bench.1(%[[ONE]])
// INIT-NEXT:    util.optimization_barrier %[[B1]]#0,
// INIT-NEXT:    %[[B2:.+]]:8 = util.call @__autotune.ex.k.bench.2(%[[ONE]])
// INIT-NEXT:    util.optimization_barrier %[[B2]]#0,
// INIT-NEXT:    util.return
// INIT-NOT:   @__autotune.ex.k.host

// Lowered: the group op is gone; each variant but the last has a condition on the extra
// workload value (the choice) and falls back to the next one.
// LOWER-NOT:  hal.executable.autotuning.export
// LOWER:      hal.executable.export public @k_a ordinal(0) layout(#{{.+}}) condition(%{{.+}}: !hal.device, %{{.+}}: index, %[[CH:.+]]: index) -> i1 {
// LOWER-NEXT:   %[[K:.+]] = arith.constant 0 : index
// LOWER-NEXT:   %[[EQ:.+]] = arith.cmpi eq, %[[CH]], %[[K]] : index
// LOWER-NEXT:   hal.return %[[EQ]] : i1
// LOWER-NEXT: } fallback(@k_b) count(%{{.+}}: !hal.device, %{{.+}}: index, %{{.+}}: index) -> (index, index, index) {
// LOWER:      hal.executable.export public @k_b ordinal(1) layout(#{{.+}}) condition(
// LOWER:        arith.constant 1 : index
// LOWER:      } fallback(@k_c) count(
// LOWER:      hal.executable.export public @k_c ordinal(2) layout(#{{.+}}) count(%{{.+}}: !hal.device, %{{.+}}: index, %{{.+}}: index) -> (index, index, index) {
// The host dispatch names the head of the chain and passes the choice as a workload value:
// the choice of the first filled slot of the per-workload table whose key is the dispatch's
// workload (slot 0 wins: it is selected last), else the group's choice global.
// LOWER-LABEL: util.func public @host(
// LOWER:        %[[G:.+]] = util.global.load @__autotune.ex.k.choice : i32
// LOWER-NEXT:   %[[W:.+]] = arith.index_cast %{{.+}} : index to i64
// LOWER-NEXT:   %[[Z:.+]] = arith.constant 0 : i32
// LOWER-NEXT:   %[[S7:.+]] = util.global.load @__autotune.ex.k.slot.7.choice : i32
// LOWER-NEXT:   %[[K7:.+]] = util.global.load @__autotune.ex.k.slot.7.w0 : i64
// LOWER-NEXT:   %[[F7:.+]] = arith.cmpi sge, %[[S7]], %[[Z]] : i32
// LOWER-NEXT:   %[[E7:.+]] = arith.cmpi eq, %[[W]], %[[K7]] : i64
// LOWER-NEXT:   %[[H7:.+]] = arith.andi %[[F7]], %[[E7]] : i1
// LOWER-NEXT:   %[[C7:.+]] = arith.select %[[H7]], %[[S7]], %[[G]] : i32
// LOWER:        %[[S0:.+]] = util.global.load @__autotune.ex.k.slot.0.choice : i32
// LOWER:        %[[C0:.+]] = arith.select %{{.+}}, %[[S0]], %{{.+}} : i32
// LOWER-NEXT:   %[[GI:.+]] = arith.index_cast %[[C0]] : i32 to index
// LOWER-NEXT:   flow.dispatch @ex::@k_a[%{{.+}}, %[[GI]]](
// The benchmarks name their fixed variant's export (its chain starts there) and pass the
// variant as a plain constant (here variant 2, @k_c), so iree-compile folds the chain to that
// export: chained from the head on an opaque value, every fixed dispatch of a group of N
// variants would keep N comparisons. The workload must be opaque instead (else iree-compile's
// const-eval may hoist a dispatch of constants and JIT it for the CPU): the benchmark entry's
// barrier at the top of the iteration made it so, and no barrier of the lowering's own comes
// between two dispatches (it would split the iteration's command buffer). The check entry's
// dispatch (its workload a plain constant) gets one.
// LOWER-LABEL: util.func public @__autotune.ex.k.bench.0(
// LOWER:        %[[OPAQUE0:.+]]:17 = util.optimization_barrier
// LOWER-NEXT:   %[[ZERO:.+]] = arith.constant 0 : index
// LOWER-NEXT:   flow.dispatch @ex::@k_a[%[[OPAQUE0]]#1, %[[ZERO]]](%[[OPAQUE0]]#0,
// LOWER-NEXT:   tensor.extract_slice
// LOWER-NEXT:   %[[ZERO1:.+]] = arith.constant 0 : index
// LOWER-NEXT:   flow.dispatch @ex::@k_a[%[[OPAQUE0]]#3, %[[ZERO1]]](%[[OPAQUE0]]#2,
// LOWER-NOT:    util.optimization_barrier
// LOWER:        util.return
// LOWER-LABEL: util.func public @__autotune.ex.k.bench.1(
// LOWER:        %[[OPAQUE1:.+]]:17 = util.optimization_barrier
// LOWER-NEXT:   %[[ONE:.+]] = arith.constant 1 : index
// LOWER-NEXT:   flow.dispatch @ex::@k_b[%[[OPAQUE1]]#1, %[[ONE]]](
// LOWER-LABEL: util.func public @__autotune.ex.k.bench.2(
// LOWER:        %[[OPAQUE:.+]]:17 = util.optimization_barrier
// LOWER-NEXT:   %[[TWO:.+]] = arith.constant 2 : index
// LOWER-NEXT:   flow.dispatch @ex::@k_c[%[[OPAQUE]]#1, %[[TWO]]](
// LOWER-LABEL: util.func public @__autotune.ex.k.check.0(
// LOWER:        %[[OPAQUEC:.+]] = util.optimization_barrier %{{.+}} : index
// LOWER-NEXT:   %[[ZEROC:.+]] = arith.constant 0 : index
// LOWER-NEXT:   flow.dispatch @ex::@k_a[%[[OPAQUEC]], %[[ZEROC]]](
