// REQUIRES: integration
// When iree-compile fails, the error points at the user's input (the module is compiled once
// more with its locations to find out where), with the known hint: IREE 3.13 has no sm_90
// code-generation target for the dispatches it generates itself (here the arith.addf; the
// CLI picks sm_89 for them unless an --iree-compile-arg overrides it, as this test does).
// RUN: not autotune-export %s --emit vmfb --target sm_90 --iree-compile-arg=--iree-cuda-target=sm_90 -o %t.vmfb 2> %t.err
// RUN: FileCheck %s < %t.err
// RUN: not ls %t.vmfb
// CHECK: iree_compile.mlir:[[# @LINE + 19]]:8: error: iree-compile failed: missing GPU target in #hal.executable.target
// CHECK-NEXT: iree_compile.mlir:[[# @LINE + 14]]:1: note: called from
// CHECK-NEXT: note: IREE 3.13 has no code-generation target for sm_90: the dispatches IREE generates itself (not the Triton variants) need one it knows
// CHECK-NOT: <stdin>
// Without the override the same module builds (its own dispatch generated for sm_89), as
// compat/custom_dispatch_2023.mlir does for sm_90.

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 x, .param .u64 y, .param .u32 n)\0A.reqntid 128, 1, 1\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 8 : index
  %n32 = arith.constant 1024 : i32
  %y = flow.dispatch @ex::@k[%n](%x, %n32) : (tensor<1024xf32>, i32) -> tensor<1024xf32>
  %z = arith.addf %y, %x : tensor<1024xf32>
  util.return %z : tensor<1024xf32>
}
