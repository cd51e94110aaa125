// REQUIRES: integration
// materialize-triton-variants: one export per config, one linked PTX object, parameters in
// IREE's order, layout with ReadOnly inputs, count region from the grid.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --split-input-file 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.err

// CHECK: #[[LAYOUT:.+]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @add_ex
// CHECK-SAME:    #hal.executable.object<{path = "add_ex.ptx", data = "
// CHECK-SAME:    .version 8.6
// CHECK-SAME:    .target sm_80
// CHECK-SAME:    .visible .entry add_0_128_w4_s3(
// CHECK-SAME:    .visible .entry add_1_1024_w8_s3(
// CHECK-NEXT:    hal.executable.autotuning.export @add variants([@add_0_128_w4_s3, @add_1_1024_w8_s3])
// CHECK-NEXT:      hal.executable.export public @add_0_128_w4_s3 ordinal(0) layout(#[[LAYOUT]]) count(%{{.+}}: !hal.device, %[[N:.+]]: index) -> (index, index, index) {
// CHECK-NEXT:      %[[C128:.+]] = arith.constant 128 : index
// CHECK-NEXT:      %[[X:.+]] = arith.ceildivsi %[[N]], %[[C128]] : index
// CHECK-NEXT:      %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:      hal.return %[[X]], %[[C1]], %[[C1]] : index, index, index
// CHECK-NEXT:    } <workgroup_size = [128 : index, 1 : index, 1 : index]>
// CHECK:         hal.executable.export public @add_1_1024_w8_s3 ordinal(1) layout(#[[LAYOUT]])
// CHECK:         } <workgroup_size = [256 : index, 1 : index, 1 : index]>
// REMARK: materialize.mlir:[[# @LINE + 2]]:3: remark: @add: 2 variants for sm_80 ({{[0-9]+}} compiled, {{[0-9]+}} from cache), 0 pruned
hal.executable.source private @add_ex {
  hal.executable.autotuning.export @add
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128, num_warps = 4}, {BLOCK = 1024, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// The output pointer comes first in the kernel: it becomes the last binding; alpha (fp32) is
// a constant. A config with num_ctas = 2 is pruned with its reason.
// CHECK: #[[LAYOUT2:.+]] = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @scale_ex
// CHECK-SAME:    .visible .entry scale_0_256_w4_s3(
// CHECK-SAME:    .param .u64 .ptr .global .align 1 scale_0_256_w4_s3_param_0,
// CHECK-SAME:    .param .u64 .ptr .global .align 1 scale_0_256_w4_s3_param_1,
// CHECK-SAME:    .param .f32 scale_0_256_w4_s3_param_2,
// CHECK-SAME:    .param .u32 scale_0_256_w4_s3_param_3
// CHECK-SAME:    )
// CHECK-NEXT:    hal.executable.autotuning.export @scale variants([@scale_0_256_w4_s3])
// CHECK-NEXT:    hal.executable.export public @scale_0_256_w4_s3 ordinal(0) layout(#[[LAYOUT2]])
// REMARK: materialize.mlir:[[# @LINE + 2]]:3: remark: @scale: config 1 {BLOCK = 256, num_warps = 4, num_ctas = 2} pruned: num_ctas = 2: IREE launches no thread-block clusters
hal.executable.source private @scale_ex {
  hal.executable.autotuning.export @scale
      triton("../Inputs/kernels.py", "scale_kernel")
      signature(out_ptr: *fp32 {output}, x_ptr: *fp32, alpha: fp32, n: i32)
      configs([{BLOCK = 256, num_warps = 4}, {BLOCK = 256, num_warps = 4, num_ctas = 2}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// A triton.autotune kernel without configs([...]) takes the autotuner's configs.
// CHECK-LABEL: hal.executable.source private @auto_ex
// CHECK:         hal.executable.autotuning.export @add variants([@add_0_128_w4_s3, @add_1_512_w8_s3])
hal.executable.source private @auto_ex {
  hal.executable.autotuning.export @add
      triton("../Inputs/kernels.py", "add_autotuned")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))
}
