// REQUIRES: integration
// IREE's CUDA custom-dispatch sample as of 2023 (samples/custom_dispatch/cuda/kernels/
// example.mlir at iree-org/iree@9461d3b0cf; written out again here with shorter comments): a
// module-level hal.device.targets naming the executable targets in the pre-3.0 way
// (executable_targets = [...] in a config dictionary, legacy_sync), objects keyed per
// architecture (sm_52, sm_80) and given as paths from IREE's source root, pre-3.0 layouts
// written as bare <...>, attributes dictionaries before a ^bb0 count region, a dispatch with
// hal.interface.bindings, an in-place dispatch, and an elementwise op IREE generates code for.
// It builds with --emit vmfb: compat drops the module's device targets (the command line picks
// the device) and the in-order hal.interface.bindings; the two objects become executable
// variants chosen by compute capability (split-architectures).
//
// For sm_90 the arith.addf's dispatch, which IREE generates, is compiled for sm_89 (IREE 3.13
// has no sm_90 code-generation target); the PTX objects are embedded as they are.
// RUN: cd %S/Inputs && autotune-export %s --emit vmfb --target sm_90 -o %t.vmfb
// RUN: iree-dump-module %t.vmfb | FileCheck %s --check-prefix=VMFB
// RUN: cd %S/Inputs && autotune-export %s --emit iree -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: not grep -e hal.device.targets -e hal.interface.binding %t.mlir
//
// CHECK-LABEL: hal.executable private @executable
// CHECK:   hal.executable.variant public @sm_80 {{.*}}kernels_sm_80.ptx
// CHECK:     hal.executable.condition(
// CHECK:   hal.executable.variant public @sm_52 {{.*}}kernels_sm_52.ptx
// CHECK-LABEL: func.func @mixed_invocation(
// CHECK:   flow.dispatch {@executable::@sm_80::@simple_mul, @executable::@sm_52::@simple_mul}[%{{.+}}](%{{.+}}, %arg0, %arg1) : (i32,
// CHECK:   arith.addf
// CHECK:   flow.dispatch {@executable::@sm_80::@simple_mul_inplace, @executable::@sm_52::@simple_mul_inplace}[{{.+}} -> %{{.+}}{%
// VMFB: mixed_invocation

// Executable targets: one per architecture the objects are built for.
#nvptx_sm_52_target = #hal.executable.target<"cuda", "cuda-nvptx-fb", {
  target_arch = "sm_52"
}>
#nvptx_sm_80_target = #hal.executable.target<"cuda", "cuda-nvptx-fb", {
  target_arch = "sm_80"
}>

// The device the program runs on, with the executable targets it supports.
#cuda_target = #hal.device.target<"cuda", {
  executable_targets = [
    #nvptx_sm_52_target,
    #nvptx_sm_80_target
  ],
  // The CUDA target of the time used the synchronous execution model.
  legacy_sync
}>

module @example attributes {hal.device.targets = [#cuda_target]} {

  // Hand-authored kernels, one PTX object per architecture.
  hal.executable.source private @executable attributes {
    objects = #hal.executable.objects<{
      #nvptx_sm_52_target = [
        #hal.executable.object<{
          // A path from the source root (the data could be embedded instead).
          path = "samples/custom_dispatch/cuda/kernels/kernels_sm_52.ptx"
        }>
      ],
      #nvptx_sm_80_target = [
        #hal.executable.object<{
          path = "samples/custom_dispatch/cuda/kernels/kernels_sm_80.ptx"
        }>
      ]
    }>
  } {

    // `out = lhs * rhs`: the C name of the kernel, a user-assigned ordinal, the layout as the
    // kernel's signature (bindings, then push constants).
    hal.executable.export public @simple_mul ordinal(0)
        layout(#hal.pipeline.layout<push_constants = 1, sets = [
          <0, bindings = [
              <0, storage_buffer, ReadOnly>,
              <1, storage_buffer, ReadOnly>,
              <2, storage_buffer>
          ]>
        ]>) attributes {
      // CUDA needs the block size ahead of time.
      workgroup_size = [64 : index, 1 : index, 1 : index]
    } {
    ^bb0(%device: !hal.device, %workload: index):
      // The number of blocks for the dispatch's workload.
      %x = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%workload]
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    }

    // `rhs *= lhs`, in place through a read/write binding.
    hal.executable.export public @simple_mul_inplace ordinal(1)
        layout(#hal.pipeline.layout<push_constants = 1, sets = [
          <0, bindings = [
              <0, storage_buffer, ReadOnly>,
              <1, storage_buffer>
          ]>
        ]>) attributes {
      workgroup_size = [64 : index, 1 : index, 1 : index]
    } {
    ^bb0(%device: !hal.device, %workload: index):
      %x = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%workload]
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    }

  }  // hal.executable.source

  // Hand-authored dispatches mixed with code IREE generates.
  func.func @mixed_invocation(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
    // Scalars passed to hand-authored kernels are i32 (or bitcast to it).
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?xf32>
    %dim_i32 = arith.index_cast %dim : index to i32

    // `ret = lhs * rhs`, its tensors mapped to the layout's bindings explicitly.
    %0 = flow.dispatch @executable::@simple_mul[%dim](%dim_i32, %arg0, %arg1) {
      hal.interface.bindings = [
        #hal.interface.binding<0, 0>,
        #hal.interface.binding<0, 1>,
        #hal.interface.binding<0, 2>
      ]
    } : (i32, tensor<?xf32>{%dim}, tensor<?xf32>{%dim}) -> tensor<?xf32>{%dim}

    // Generated code, between the hand-authored dispatches.
    %1 = arith.addf %0, %arg1 : tensor<?xf32>

    // `rhs *= lhs` in place, bindings inferred.
    %2 = flow.dispatch @executable::@simple_mul_inplace[%dim](%dim_i32, %0, %1) : (i32, tensor<?xf32>{%dim}, tensor<?xf32>{%dim}) -> %1{%dim}

    return %2 : tensor<?xf32>
  }

}  // module
