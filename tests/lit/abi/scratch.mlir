// REQUIRES: integration
// Triton's global scratch (device-side TMA descriptors on sm_90: 256 bytes per program, align
// 128) becomes the last binding: an extra untied result of the dispatch, sized from the grid at
// the dispatch site; the kernel rounds the pointer up to the alignment. On sm_80 the same
// kernel needs no scratch and gets no extra binding.
// RUN: autotune-export %s -p materialize-triton-variants,verify-autotuning-groups --target sm_90 2> %t.err | FileCheck %s --check-prefix=MAT
// RUN: FileCheck %s --check-prefix=REMARK < %t.err
// RUN: autotune-export %s --emit iree --target sm_90 2>/dev/null | FileCheck %s --check-prefix=LOWER
// RUN: autotune-export %s --emit iree --target sm_90 -o %t.mlir 2>/dev/null
// IREE compiles the dispatches it generates itself (the tuning entries' fake data) for sm_89: it has no sm_90 code generation.
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_89 -o %t.vmfb
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 2>/dev/null | FileCheck %s --check-prefix=SM80

hal.executable.source private @tma_ex {
  hal.executable.autotuning.export @tma_scale
      triton("../../../examples/abi/kernels.py", "tma_scale_kernel")
      signature(x_ptr: *fp32:16, out_ptr: *fp32:16 {output}, M: i32, N: i32)
      configs([{BM = 32, BN = 32, num_warps = 4}, {BM = 64, BN = 128, num_warps = 4}])
      workload(M, N)
      grid(cdiv(M, BM), cdiv(N, BN))
      tune_workload(tensor<256x256xf32>)
}

util.func public @tma_scale(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %M = arith.index_cast %m : index to i32
  %N = arith.index_cast %n : index to i32
  %y = flow.dispatch @tma_ex::@tma_scale[%m, %n](%x, %M, %N) : (tensor<?x?xf32>{%m, %n}, i32, i32) -> tensor<?x?xf32>{%m, %n}
  util.return %y : tensor<?x?xf32>
}

// REMARK: remark: @tma_scale: global scratch per program: @tma_scale_0_32x32_w4_s3 256 B (align 128), @tma_scale_1_64x128_w4_s3 256 B (align 128); passed as the last binding, allocated at the dispatch

// Three bindings: x (only read, as on sm_80: its TTIR stores through out only), out, then the
// scratch; the hidden global_scratch parameter is the third one in the PTX, its load rounded
// up to 128 bytes.
// MAT: #pipeline_layout = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
// MAT: ld.param.b64 %rd[[P:[0-9]+]], [tma_scale_0_32x32_w4_s3_param_2]; add.s64 %rd[[P]], %rd[[P]], 127; and.b64 %rd[[P]], %rd[[P]], -128;
// MAT: hal.executable.export public @tma_scale_0_32x32_w4_s3
// MAT: } <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = {{[0-9]+}}> attributes {autotune.config = [{{.+}}], autotune.global_scratch = [256, 128]}

// The dispatch gets a tensor<?xi8> result of max over variants (gx * gy * gz * 256 + 128) bytes.
// LOWER-NOT: autotune.global_scratch
// LOWER-LABEL: util.func public @tma_scale(
// LOWER:      %[[C32:.+]] = arith.constant 32 : index
// LOWER-NEXT: %[[GX:.+]] = arith.ceildivsi %{{.+}}, %[[C32]] : index
// LOWER-NEXT: %[[GY:.+]] = arith.ceildivsi %{{.+}}, %[[C32]] : index
// LOWER:      %[[XY:.+]] = arith.muli %[[GX]], %[[GY]] : index
// LOWER-NEXT: %[[XYZ:.+]] = arith.muli %[[XY]], %{{.+}} : index
// LOWER-NEXT: %[[C256:.+]] = arith.constant 256 : index
// LOWER-NEXT: %[[B0:.+]] = arith.muli %[[XYZ]], %[[C256]] : index
// LOWER-NEXT: %[[C128:.+]] = arith.constant 128 : index
// LOWER-NEXT: %[[S0:.+]] = arith.addi %[[B0]], %[[C128]] : index
// LOWER:      %[[S1:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// LOWER-NEXT: %[[SIZE:.+]] = arith.maxui %[[S0]], %[[S1]] : index
// LOWER-NEXT: %{{.+}}:2 = flow.dispatch @tma_ex::@tma_scale_0_32x32_w4_s3[%{{.+}}, %{{.+}}, %{{.+}}](%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<?x?xf32>{%{{.+}}, %{{.+}}}, i32, i32) -> (tensor<?x?xf32>{%{{.+}}, %{{.+}}}, tensor<?xi8>{%[[SIZE]]})

// SM80: #pipeline_layout = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// SM80-NOT: autotune.global_scratch
