// REQUIRES: integration
// The example of IREE's RFC #13848 ("Export multiple executables as a part of auto-tune
// group?"), written in the IREE syntax of its time (mid-2023): the objects and the workgroup
// size in `attributes {...}` dictionaries, the count region as an unnamed `^bb0` region after
// the export, and the pre-3.0 pipeline layout with descriptor sets. The front end rewrites it
// into IREE 3.13's syntax and it goes through the whole pipeline and iree-compile.
//
// RUN: autotune-export %s -p '' | FileCheck %s
// RUN: autotune-export %s --emit iree -o %t.mlir
// RUN: FileCheck %s --check-prefix=IREE < %t.mlir
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vmfb
// RUN: iree-dump-module %t.vmfb | FileCheck %s --check-prefix=VMFB
// Normalizing is idempotent: the printed module reads back to the same text.
// RUN: autotune-export %s -p '' -o %t.1.mlir
// RUN: autotune-export %t.1.mlir -p '' -o %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

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

  // The host dispatches to the group as if it were one export.
  func.func @matmul(%lhs: tensor<1024x512xf32>, %rhs: tensor<512x2048xf32>) -> tensor<1024x2048xf32> {
    %workload = arith.constant 2097152 : index
    %m = arith.constant 1024 : i32
    %n = arith.constant 2048 : i32
    %k = arith.constant 512 : i32
    %0 = flow.dispatch @executable::@matmul[%workload](%lhs, %rhs, %m, %n, %k)
        : (tensor<1024x512xf32>, tensor<512x2048xf32>, i32, i32, i32) -> tensor<1024x2048xf32>
    return %0 : tensor<1024x2048xf32>
  }
}

// The source and its exports in IREE 3.13's syntax: properties in <{...}>, the count region
// named, the layout without descriptor sets (bindings in set/binding order).
// CHECK:       #[[LAYOUT:.+]] = #hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @executable
// CHECK-SAME:      objects = <{#{{.+}} = [#hal.executable.object<{path = "matmul.ptx", data = ".version 8.6
// CHECK-NEXT:    hal.executable.autotuning.export @matmul variants([@matmul_tile_32x32, @matmul_tile_64x64])
// CHECK-NEXT:    hal.executable.export public @matmul_tile_32x32 ordinal(0) layout(#[[LAYOUT]]) count(%{{.+}}: !hal.device, %[[W:.+]]: index) -> (index, index, index) {
// CHECK-NEXT:      affine.apply #{{.+}}()[%[[W]]]
// CHECK:           hal.return
// CHECK-NEXT:    } <workgroup_size = [64 : index, 1 : index, 1 : index]>
// CHECK-NEXT:    hal.executable.export public @matmul_tile_64x64 ordinal(1) layout(#[[LAYOUT]]) count(
// CHECK:         } <workgroup_size = [64 : index, 1 : index, 1 : index]>
// CHECK-NEXT:  }
// CHECK:       func.func @matmul(
// CHECK:         flow.dispatch @executable::@matmul[%{{.+}}](

// Lowered for iree-compile: no group op, the variants chained on the run-time choice.
// IREE-NOT:   autotuning
// IREE:       hal.executable.export public @matmul_tile_32x32 ordinal(0) layout(#{{.+}}) condition(
// IREE:       } fallback(@matmul_tile_64x64) count(
// IREE:       hal.executable.export public @matmul_tile_64x64 ordinal(1) layout(
// IREE:       flow.dispatch @executable::@matmul_tile_32x32[
// IREE:       util.global private mutable @__autotune.executable.matmul.choice = 0 : i32

// VMFB-DAG: matmul
// VMFB-DAG: __autotune
// VMFB-DAG: __autotune.executable.matmul.select
