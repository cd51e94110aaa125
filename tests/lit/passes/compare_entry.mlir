// The device-side cross-check (issue 24, item 1): @P.compare(refs..., results..., rtol, atol)
// counts per result the elements that differ, so no result is copied to the host. A 2-D f16
// result is counted in two reductions (over the last dimension, then over the rest), in f32:
// finite and |x - r| <= atol + rtol * |r|, or equal, or both NaN (numpy's isclose with
// equal_nan, the runtime's results_agree); a 1-D i32 result in one reduction, by inequality.
// Counts are i32 (IREE 3.13 cannot distribute an i64 reduction on CUDA), returned as i64.
// RUN: autotune-export %s -p verify-autotuning-groups,emit-autotune-initializer | FileCheck %s

// CHECK-LABEL: util.func public @__autotune.ex.k.compare(
// CHECK-SAME:    %[[R0:.+]]: tensor<?x8xf16>, %[[R1:.+]]: tensor<16xi32>, %[[X0:.+]]: tensor<?x8xf16>, %[[X1:.+]]: tensor<16xi32>, %[[RTOL:.+]]: f32, %[[ATOL:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32) -> (i64, i64)
// CHECK:         %[[M:.+]] = tensor.dim %[[R0]], %{{.+}} : tensor<?x8xf16>
// CHECK:         %[[ROWS:.+]] = flow.tensor.splat %{{.+}} : tensor<?xi32>{%[[M]]}
// CHECK:         %[[PART:.+]] = linalg.generic {indexing_maps = [#[[ID:.+]], #[[ID]], #[[KEEP:.+]]], iterator_types = ["parallel", "reduction"]} ins(%[[R0]], %[[X0]] : tensor<?x8xf16>, tensor<?x8xf16>) outs(%[[ROWS]] : tensor<?xi32>) {
// CHECK-NEXT:    ^bb0(%[[R:.+]]: f16, %[[X:.+]]: f16, %[[ACC:.+]]: i32):
// CHECK-NEXT:      %[[RF:.+]] = arith.extf %[[R]] : f16 to f32
// CHECK-NEXT:      %[[XF:.+]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:      %[[D:.+]] = arith.subf %[[XF]], %[[RF]] : f32
// CHECK-NEXT:      %[[AD:.+]] = math.absf %[[D]] : f32
// CHECK-NEXT:      %[[AR:.+]] = math.absf %[[RF]] : f32
// CHECK-NEXT:      %[[RT:.+]] = arith.mulf %[[RTOL]], %[[AR]] : f32
// CHECK-NEXT:      %[[BOUND:.+]] = arith.addf %[[ATOL]], %[[RT]] : f32
// CHECK-NEXT:      %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK:           %[[FIN:.+]] = arith.andi
// CHECK-NEXT:      %[[LE:.+]] = arith.cmpf ole, %[[AD]], %[[BOUND]] : f32
// CHECK-NEXT:      %[[CLOSE:.+]] = arith.andi %[[FIN]], %[[LE]] : i1
// CHECK-NEXT:      %[[EQ:.+]] = arith.cmpf oeq, %[[XF]], %[[RF]] : f32
// CHECK-NEXT:      %[[RN:.+]] = arith.cmpf uno, %[[RF]], %[[RF]] : f32
// CHECK-NEXT:      %[[XN:.+]] = arith.cmpf uno, %[[XF]], %[[XF]] : f32
// CHECK-NEXT:      %[[NANS:.+]] = arith.andi %[[RN]], %[[XN]] : i1
// CHECK-NEXT:      %[[EQN:.+]] = arith.ori %[[EQ]], %[[NANS]] : i1
// CHECK-NEXT:      %[[OK:.+]] = arith.ori %[[CLOSE]], %[[EQN]] : i1
// CHECK-NEXT:      %[[TRUE:.+]] = arith.constant true
// CHECK-NEXT:      %[[BAD:.+]] = arith.xori %[[OK]], %[[TRUE]] : i1
// CHECK-NEXT:      %[[ONE:.+]] = arith.extui %[[BAD]] : i1 to i32
// CHECK-NEXT:      %[[SUM:.+]] = arith.addi %[[ACC]], %[[ONE]] : i32
// CHECK-NEXT:      linalg.yield %[[SUM]] : i32
// CHECK-NEXT:    } -> tensor<?xi32>
// CHECK:         %[[ALL:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}], iterator_types = ["reduction"]} ins(%[[PART]] : tensor<?xi32>) outs(%{{.+}} : tensor<i32>)
// CHECK:         %[[C0:.+]] = tensor.extract %[[ALL]][] : tensor<i32>
// CHECK-NEXT:    %[[N0:.+]] = arith.extsi %[[C0]] : i32 to i64
// CHECK:         linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%[[R1]], %[[X1]] : tensor<16xi32>, tensor<16xi32>) outs(%{{.+}} : tensor<i32>) {
// CHECK-NEXT:    ^bb0(%[[RI:.+]]: i32, %[[XI:.+]]: i32, %[[ACCI:.+]]: i32):
// CHECK-NEXT:      %[[NE:.+]] = arith.cmpi ne, %[[XI]], %[[RI]] : i32
// CHECK-NEXT:      arith.extui %[[NE]] : i1 to i32
// CHECK:         %[[C1:.+]] = tensor.extract
// CHECK-NEXT:    %[[N1:.+]] = arith.extsi %[[C1]] : i32 to i64
// CHECK:         util.return %[[N0]], %[[N1]] : i64, i64
// The reflection names it.
// CHECK:       util.func public @__autotune() {{.+}}\22compare\22:\22__autotune.ex.k.compare\22

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 x, .param .u64 y, .param .u64 z, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry k_b(.param .u64 x, .param .u64 y, .param .u64 z, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a, @k_b]) tune_workload(tensor<64x8xf16>)
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @k_b ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<?x8xf16>) -> (tensor<?x8xf16>, tensor<16xi32>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x8xf16>
  %n32 = arith.index_cast %m : index to i32
  %r:2 = flow.dispatch @ex::@k[%m](%x, %n32) : (tensor<?x8xf16>{%m}, i32) -> (tensor<?x8xf16>{%m}, tensor<16xi32>)
  util.return %r#0, %r#1 : tensor<?x8xf16>, tensor<16xi32>
}
