// REQUIRES: integration
// The example of IREE's RFC #13848 as its author wrote it: the syntax of mid-2023 (see rfc.mlir)
// and a host function of dynamic shapes without tune_workload(...). It builds: the group gets
// no benchmark or check entries (a warning says so: round-robin leaves it on its default unless
// told allow_unchecked=True), and --emit vmfb
// compiles (for sm_90 too: rfc_3_13.mlir).
//
// RUN: autotune-export %s --emit vmfb -o %t.vmfb 2> %t.err
// RUN: FileCheck %s --check-prefix=REMARK < %t.err
// RUN: iree-dump-module %t.vmfb | FileCheck %s --check-prefix=VMFB
// RUN: autotune-export %s --emit iree -o %t.mlir
// RUN: FileCheck %s --check-prefix=IREE < %t.mlir
//
// REMARK: rfc_dynamic.mlir:[[# @LINE + 25]]:5: warning: @matmul cannot be tuned on fake data: argument 0 of host function @matmul is tensor<?x?xf32> and no tune_workload(...) gives a static type or value per argument; it is built without benchmark entries and without check entries
// REMARK-NOT: error
// VMFB-DAG: __autotune.executable.matmul.select
// VMFB-DAG: __autotune
// IREE: util.func public @__autotune.executable.matmul.select
// IREE-NOT: __autotune.executable.matmul.bench
// IREE: autotune.groups = "[{{{.*}}\22bench\22:[],

#nvptx_sm_80_target = #hal.executable.target<"cuda", "cuda-nvptx-fb">

module @example {

  hal.executable.source private @executable attributes {
    objects = #hal.executable.objects<{
      #nvptx_sm_80_target = [
        #hal.executable.object<{
          // One PTX module with every Triton kernel (hand-written here: the entries only).
          path = "matmul.ptx",
          data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A\0A.visible .entry matmul_tile_32x32(.param .u64 lhs, .param .u64 rhs, .param .u64 out, .param .u32 m, .param .u32 n, .param .u32 k)\0A.reqntid 64, 1, 1\0A{\0A\09ret;\0A}\0A\0A.visible .entry matmul_tile_64x64(.param .u64 lhs, .param .u64 rhs, .param .u64 out, .param .u32 m, .param .u32 n, .param .u32 k)\0A.reqntid 64, 1, 1\0A{\0A\09ret;\0A}\0A"
        }>
      ]
    }>
  } {

    // All variants must have the same layout
    hal.executable.autotuning.export @matmul
      variants([@matmul_tile_32x32, @matmul_tile_64x64])

    hal.executable.export public @matmul_tile_32x32 ordinal(0)
        layout(#hal.pipeline.layout<push_constants = 3, sets = [
          #hal.descriptor_set.layout<0, bindings = [
            #hal.descriptor_set.binding<0, storage_buffer, ReadOnly>,
            #hal.descriptor_set.binding<1, storage_buffer, ReadOnly>,
            #hal.descriptor_set.binding<2, storage_buffer>
          ]>
        ]>) attributes { workgroup_size = [64 : index, 1 : index, 1 : index] } {
    ^bb0(%device: !hal.device, %workload: index):
      %grid_for_32x32_tiling = affine.apply affine_map<()[s0] -> (s0 ceildiv 1024)>()[%workload]
      %c1 = arith.constant 1 : index
      hal.return %grid_for_32x32_tiling, %c1, %c1 : index, index, index
    }

    hal.executable.export public @matmul_tile_64x64 ordinal(1)
        layout(#hal.pipeline.layout<push_constants = 3, sets = [
          #hal.descriptor_set.layout<0, bindings = [
            #hal.descriptor_set.binding<0, storage_buffer, ReadOnly>,
            #hal.descriptor_set.binding<1, storage_buffer, ReadOnly>,
            #hal.descriptor_set.binding<2, storage_buffer>
          ]>
        ]>) attributes { workgroup_size = [64 : index, 1 : index, 1 : index] } {
    ^bb0(%device: !hal.device, %workload: index):
      %grid_for_64x64_tiling = affine.apply affine_map<()[s0] -> (s0 ceildiv 4096)>()[%workload]
      %c1 = arith.constant 1 : index
      hal.return %grid_for_64x64_tiling, %c1, %c1 : index, index, index
    }

  }

  // The host dispatches to the group as if it were one export. As in the RFC, the shapes are
  // dynamic: nothing says which workload to tune on, so the group cannot be tuned on fake data.
  func.func @matmul(%lhs: tensor<?x?xf32>, %rhs: tensor<?x?xf32>) -> tensor<?x?xf32> {
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
    return %0 : tensor<?x?xf32>
  }
}
