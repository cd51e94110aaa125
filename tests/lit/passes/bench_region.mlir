// A benchmark entry's BENCH_UNROLL (8) runs of an iteration are ONE stream.cmd.execute (one
// command buffer the GPU runs back to back), not one each: every host op of the iteration (the
// barrier fencing each run's inputs, workload and in-place sources) comes before its first
// dispatch, and lower-autotuning-dispatch adds no barrier between two of them. IREE's stream
// partitioning cannot put a dispatch into a region that starts before a host op its operands
// depend on, and on the CUDA HAL each dependent submission is issued by the host only when the
// previous one signals: with a barrier before every dispatch, the GPU idled between the runs
// and host jitter entered every timing (issue 24: 0.235-0.531 ms per run of a 0.192 ms matmul
// on the H200). The runs stay distinct: each its own operands, its own fills of the operands
// it writes in place (a seeded one and a reset_to_zero zero fill) and its one-element slice,
// all inside the region.
// RUN: autotune-export %s --emit iree -o %t.mlir
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 --compile-to=stream | FileCheck %s

// A matmul: two read-only inputs, an untied output.
// CHECK-LABEL: util.func public @__autotune.mm.mm.bench.0(
// CHECK:         cf.cond_br %{{.+}}, ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NOT:     stream.cmd.dispatch
// CHECK:         stream.cmd.execute
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @mm::@mm_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @mm::@mm_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @mm::@mm_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @mm::@mm_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @mm::@mm_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @mm::@mm_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @mm::@mm_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @mm::@mm_a
// CHECK-NOT:     {{stream.cmd.execute|stream.cmd.dispatch}}
// CHECK:         } => !stream.timepoint
// CHECK-NOT:     {{stream.cmd.execute|stream.cmd.dispatch}}
// CHECK:         cf.br ^bb
// CHECK-NEXT:  ^[[EXIT]]:

// reset_to_zero(1): a seeded fill of the output written in place and a zero fill of the other
// one before every run, inside the same region as the 8 dispatches.
// CHECK-LABEL: util.func public @__autotune.zr.k.bench.0(
// CHECK:         cf.cond_br %{{.+}}, ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NOT:     stream.cmd.dispatch
// CHECK:         stream.cmd.execute
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @__autotune.zr.k.bench.0_dispatch_0::
// CHECK-NEXT:      wo %[[O:.+]][%c0 for %c4096]
// CHECK:         stream.cmd.fill %{{.+}}, %[[Z:.+]][
// CHECK-NEXT:    stream.cmd.dispatch @zr::@k_a
// CHECK-NEXT:      ro
// CHECK-NEXT:      rw %[[O]][%c0 for %c4096]
// CHECK-NEXT:      rw %[[Z]][
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @zr::@k_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @zr::@k_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @zr::@k_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @zr::@k_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @zr::@k_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @zr::@k_a
// CHECK-NOT:     {{stream.cmd.execute|=> !stream.timepoint}}
// CHECK:         stream.cmd.dispatch @zr::@k_a
// CHECK-NOT:     {{stream.cmd.execute|stream.cmd.dispatch}}
// CHECK:         } => !stream.timepoint
// CHECK-NOT:     {{stream.cmd.execute|stream.cmd.dispatch}}
// CHECK:         cf.br ^bb
// CHECK-NEXT:  ^[[EXIT]]:

#mm_layout = #hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @mm <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "mm.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry mm_a(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 m, .param .u32 n, .param .u32 k)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @mm variants([@mm_a]) tune_workload(tensor<64x32xf16>, tensor<32x16xf16>)
  hal.executable.export public @mm_a ordinal(0) layout(#mm_layout) count(%device: !hal.device, %m: index, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %m, %n, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @matmul(%a: tensor<?x?xf16>, %b: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf16>
  %k = tensor.dim %a, %c1 : tensor<?x?xf16>
  %n = tensor.dim %b, %c1 : tensor<?x?xf16>
  %m32 = arith.index_cast %m : index to i32
  %n32 = arith.index_cast %n : index to i32
  %k32 = arith.index_cast %k : index to i32
  %r = flow.dispatch @mm::@mm[%m, %n](%a, %b, %m32, %n32, %k32) : (tensor<?x?xf16>{%m, %k}, tensor<?x?xf16>{%k, %n}, i32, i32, i32) -> tensor<?x?xf16>{%m, %n}
  util.return %r : tensor<?x?xf16>
}

#zr_layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @zr <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "zr.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 x, .param .u64 s, .param .u64 t, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a]) reset_to_zero(1)
  hal.executable.export public @k_a ordinal(0) layout(#zr_layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @zeroed(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n_i32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @zr::@k[%n](%x, %n_i32) : (tensor<1024xf32>, i32) -> (tensor<1024xf32>, tensor<1xf32>)
  util.return %r#0, %r#1 : tensor<1024xf32>, tensor<1xf32>
}
