// REQUIRES: integration
// convert_stablehlo on the jax-triton 0.3.1 fixtures: custom calls become flow.dispatches of
// the PTX jax-triton compiled, the autotuned call a condition/fallback chain; iree-compile takes
// the result as StableHLO input.
//
// RUN: %python -m autotune_export.interop.jax_triton convert %S/../../fixtures/jax/two_kernels.stablehlo.mlir --target sm_80 -o %t.two.mlir
// RUN: FileCheck %s --check-prefix=TWO < %t.two.mlir
// RUN: iree-compile %t.two.mlir --iree-input-type=stablehlo --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.two.vmfb
// RUN: %python -m autotune_export.interop.jax_triton convert %S/../../fixtures/jax/two_kernels_ffi.stablehlo.mlir -o %t.ffi.mlir
// RUN: FileCheck %s --check-prefix=TWO < %t.ffi.mlir
// RUN: %python -m autotune_export.interop.jax_triton convert %S/../../fixtures/jax/aliases_zeroed.stablehlo.mlir -o %t.alias.mlir
// RUN: FileCheck %s --check-prefix=ALIAS < %t.alias.mlir
// RUN: iree-compile %t.alias.mlir --iree-input-type=stablehlo --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.alias.vmfb
// RUN: %python -m autotune_export.interop.jax_triton convert %S/../../fixtures/jax/two_kernels.stablehlo.mlir --no-lower | FileCheck %s --check-prefix=SUGAR
// RUN: not %python -m autotune_export.interop.jax_triton convert %S/../../fixtures/jax/h200_jax0.11.2/two_kernels.stablehlo.mlir --target sm_80 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not %python -m autotune_export.interop.jax_triton convert %S/../../fixtures/jax/two_kernels.stablehlo.mlir --target sm_75 2>&1 | FileCheck %s --check-prefix=BADTARGET

// TWO-NOT: stablehlo.custom_call
//     TWO: hal.executable.source private @add_kernel_ex0 {{.*}}path = "add_kernel_ex0.ptx", data = "{{.*}}.visible .entry add_kernel(
//     TWO:   hal.executable.export public @add_kernel ordinal(0) layout(#pipeline_layout) count(%arg0: !hal.device)
//     TWO:     hal.return %c16, %c1, %c1
//     TWO: hal.executable.source private @scale_add_kernel_ex1 {{.*}}.entry scale_add_kernel_0_128_w4_s2({{.*}}.entry scale_add_kernel_3_1024_w8_s4(
//     TWO:   hal.executable.export public @scale_add_kernel_0_128_w4_s2 ordinal(0) layout(#pipeline_layout1) condition(
//     TWO:   } fallback(@scale_add_kernel_1_256_w4_s3) count(
//     TWO:   hal.executable.export public @scale_add_kernel_3_1024_w8_s4 ordinal(3)
//     TWO:     hal.return %c4, %c1, %c1
//     TWO:   } <workgroup_size = [256 : index, 1 : index, 1 : index]>
//     TWO-LABEL: func.func public @main(
//     TWO:   %[[Z:.*]] = flow.dispatch @add_kernel_ex0::@add_kernel(%arg0, %arg1, %c4096_i32) : (tensor<4096xf32>, tensor<4096xf32>, i32) -> tensor<4096xf32>
//     TWO:   flow.dispatch @scale_add_kernel_ex1::@scale_add_kernel_0_128_w4_s2[%{{.*}}](%[[Z]], %arg1, %c4096_i32_0, %c1056964608_i32)
//     TWO:   util.func public @__autotune()

//     ALIAS: %[[ZERO:.*]] = flow.tensor.splat %cst : tensor<1xf32>
//     ALIAS: flow.dispatch @row_sum_kernel_ex0::@row_sum_kernel(%arg0, %[[ZERO]], %c4096_i32) : (tensor<4096xf32>, tensor<1xf32>, i32) -> %[[ZERO]]
//     ALIAS: %[[CLONE:.*]] = flow.tensor.clone %arg0 : tensor<4096xf32>
//     ALIAS: %[[UPD:.*]] = flow.dispatch @add_inplace_kernel_ex1::@add_inplace_kernel(%arg0, %arg1, %[[CLONE]], %{{.*}}) : (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, i32) -> %[[CLONE]]
//     ALIAS: flow.dispatch @masked_copy_kernel_ex2::@masked_copy_kernel(%[[UPD]], %{{.*}}) : (tensor<4096xf32>, i32) -> tensor<4096xf32>

// SUGAR: hal.executable.autotuning.export @scale_add_kernel variants([@scale_add_kernel_0_128_w4_s2, @scale_add_kernel_1_256_w4_s3, @scale_add_kernel_2_512_w8_s3, @scale_add_kernel_3_1024_w8_s4])
// SUGAR: flow.dispatch @scale_add_kernel_ex1::@scale_add_kernel(

// Arch-specific PTX (jax-triton on an H200 compiles for sm_90a) runs on sm_90 only.
// ARCH: error: triton call 0 ('add_kernel'), config 0: the PTX targets sm_90a, which does not run on sm_80

// Targets are read by autotune_export.cuda.targets.
// BADTARGET: error: unsupported CUDA target 'sm_75': supported are sm_80,
