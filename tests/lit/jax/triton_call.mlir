// REQUIRES: integration
// triton_call_to_mlir output: the sugared Triton-form group and host function, then the whole
// pipeline and iree-compile for CUDA.
//
// RUN: %python %S/Inputs/triton_call_scale_add.py autotuned | FileCheck %s --check-prefix=SUGAR
// RUN: %python %S/Inputs/triton_call_scale_add.py autotuned | autotune-export - --emit iree -o %t.mlir
// RUN: FileCheck %s --check-prefix=IREE < %t.mlir
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vmfb
// RUN: %python %S/Inputs/triton_call_scale_add.py zeroed | FileCheck %s --check-prefix=ZERO
// RUN: %python %S/Inputs/triton_call_scale_add.py zeroed | autotune-export - --emit vmfb -o %t.zeroed.vmfb

// SUGAR-LABEL: hal.executable.source private @scale_add_kernel_ex {
//  SUGAR-NEXT:   hal.executable.autotuning.export @scale_add_kernel
//  SUGAR-NEXT:       triton("{{.*}}fixtures/jax/kernels.py", "scale_add_kernel")
//  SUGAR-NEXT:       signature(x_ptr: *fp32, y_ptr: *fp32, n: i32, scale: fp32, out_ptr: *fp32 {output})
//  SUGAR-NEXT:       configs([{BLOCK = 128, num_warps = 4, num_stages = 2},
//  SUGAR-NEXT:                {BLOCK = 256, num_warps = 4, num_stages = 3},
//  SUGAR-NEXT:                {BLOCK = 512, num_warps = 8, num_stages = 3},
//  SUGAR-NEXT:                {BLOCK = 1024, num_warps = 8, num_stages = 4}])
//  SUGAR-NEXT:       workload()
//  SUGAR-NEXT:       grid((4096 + BLOCK - 1) // BLOCK)
//       SUGAR: util.func public @scale_add(%arg0: tensor<4096xf32>, %arg1: tensor<4096xf32>) -> tensor<4096xf32>
//       SUGAR:   %[[N:.+]] = arith.constant 4096 : i32
//       SUGAR:   %[[SCALE:.+]] = arith.constant 5.000000e-01 : f32
//       SUGAR:   flow.dispatch @scale_add_kernel_ex::@scale_add_kernel(%arg0, %arg1, %[[N]], %[[SCALE]])

// The grid expression, evaluated per config, gives 32, 16, 8 and 4 programs.
// IREE: hal.executable.export public @scale_add_kernel_0_128_w4_s2 ordinal(0)
// IREE:   hal.return %c32, %c1, %c1
// IREE: hal.executable.export public @scale_add_kernel_1_256_w4_s3 ordinal(1)
// IREE:   hal.return %c16, %c1, %c1
// IREE: hal.executable.export public @scale_add_kernel_2_512_w8_s3 ordinal(2)
// IREE:   hal.return %c8, %c1, %c1
// IREE: hal.executable.export public @scale_add_kernel_3_1024_w8_s4 ordinal(3)
// IREE:   hal.return %c4, %c1, %c1
// IREE-LABEL: util.func public @scale_add(
// IREE: flow.dispatch @scale_add_kernel_ex::@scale_add_kernel_0_128_w4_s2[%{{.*}}](%arg0, %arg1, %{{.*}}, %{{.*}}) : (tensor<4096xf32>, tensor<4096xf32>, i32, i32) -> tensor<4096xf32>

// ZERO-LABEL: util.func public @main(%arg0: tensor<4096xf32>) -> tensor<1xf32>
//      ZERO:   %[[N:.+]] = arith.constant 4096 : i32
//      ZERO:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//      ZERO:   %[[OUT:.+]] = flow.tensor.splat %[[ZERO]] : tensor<1xf32>
//      ZERO:   flow.dispatch @row_sum_kernel_ex::@row_sum_kernel(%arg0, %[[N]], %[[OUT]]) : (tensor<4096xf32>, i32, tensor<1xf32>) -> %[[OUT]]
