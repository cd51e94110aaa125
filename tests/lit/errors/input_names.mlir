// A diagnostic names the input as the user gave it, and standard input `<stdin>` (as MLIR
// tools do), also where a pass writes a position into its message (here the dispatch's),
// never `-`, the name MLIR's parser gives its buffer. (verify-autotuning-groups would refuse the
// entry first, without a position in its message: it is left out.)
// RUN: not autotune-export %s -p emit-autotune-initializer,lower-autotuning-dispatch 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: not autotune-export - -p emit-autotune-initializer,lower-autotuning-dispatch < %s 2>&1 | FileCheck %s --check-prefix=STDIN
// FILE: input_names.mlir:[[# @LINE + 6]]:3: error: choices(...) of @k gives 2 workload values, but its dispatch at {{.*}}input_names.mlir:[[# @LINE + 15]]:8 has 1
// STDIN: <stdin>:[[# @LINE + 5]]:3: error: choices(...) of @k gives 2 workload values, but its dispatch at <stdin>:[[# @LINE + 14]]:8 has 1
// STDIN-NOT: -:

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a]) choices([8, 2] = @k_a)
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
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
