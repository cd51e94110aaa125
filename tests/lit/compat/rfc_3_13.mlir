// REQUIRES: integration
// The RFC #13848 example in IREE 3.13's syntax (properties in <{...}>, named count regions,
// layouts without descriptor sets, util.func), with the RFC's dynamic host: it builds with
// --emit vmfb; the group has no benchmark or check entries (a warning says why). rfc.mlir (the RFC's
// syntax, static shapes) builds with --emit vmfb too (here for sm_90).
//
// RUN: autotune-export %s --emit vmfb -o %t.vmfb 2> %t.err
// RUN: FileCheck %s --check-prefix=REMARK < %t.err
// RUN: iree-dump-module %t.vmfb | FileCheck %s --check-prefix=VMFB
// RUN: autotune-export %S/rfc.mlir --emit vmfb --target sm_90 -o %t.rfc.vmfb
// RUN: iree-dump-module %t.rfc.vmfb | FileCheck %s --check-prefix=VMFB
//
// REMARK: rfc_3_13.mlir:[[# @LINE + 8]]:3: warning: @matmul cannot be tuned on fake data: argument 0 of host function @matmul is tensor<?x?xf32>
// VMFB-DAG: __autotune.executable.matmul.select
// VMFB-DAG: __autotune

#layout = #hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>

hal.executable.source private @executable <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "matmul.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A\0A.visible .entry matmul_tile_32x32(.param .u64 lhs, .param .u64 rhs, .param .u64 out, .param .u32 m, .param .u32 n, .param .u32 k)\0A.reqntid 64, 1, 1\0A{\0A\09ret;\0A}\0A\0A.visible .entry matmul_tile_64x64(.param .u64 lhs, .param .u64 rhs, .param .u64 out, .param .u32 m, .param .u32 n, .param .u32 k)\0A.reqntid 64, 1, 1\0A{\0A\09ret;\0A}\0A"}>]}>}> {
  // All variants must have the same layout
  hal.executable.autotuning.export @matmul variants([@matmul_tile_32x32, @matmul_tile_64x64])
  hal.executable.export public @matmul_tile_32x32 ordinal(0) layout(#layout) count(%device: !hal.device, %workload: index) -> (index, index, index) {
    %x = affine.apply affine_map<()[s0] -> (s0 ceildiv 1024)>()[%workload]
    %c1 = arith.constant 1 : index
    hal.return %x, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
  hal.executable.export public @matmul_tile_64x64 ordinal(1) layout(#layout) count(%device: !hal.device, %workload: index) -> (index, index, index) {
    %x = affine.apply affine_map<()[s0] -> (s0 ceildiv 4096)>()[%workload]
    %c1 = arith.constant 1 : index
    hal.return %x, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
}

util.func public @matmul(%lhs: tensor<?x?xf32>, %rhs: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %lhs, %c0 : tensor<?x?xf32>
  %k = tensor.dim %lhs, %c1 : tensor<?x?xf32>
  %n = tensor.dim %rhs, %c1 : tensor<?x?xf32>
  %workload = arith.muli %m, %n : index
  %m_i32 = arith.index_cast %m : index to i32
  %n_i32 = arith.index_cast %n : index to i32
  %k_i32 = arith.index_cast %k : index to i32
  %0 = flow.dispatch @executable::@matmul[%workload](%lhs, %rhs, %m_i32, %n_i32, %k_i32)
      : (tensor<?x?xf32>{%m, %k}, tensor<?x?xf32>{%k, %n}, i32, i32, i32) -> tensor<?x?xf32>{%m, %n}
  util.return %0 : tensor<?x?xf32>
}
