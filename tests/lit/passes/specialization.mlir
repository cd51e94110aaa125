// REQUIRES: integration
// Specializations as Triton's JIT makes them: ':16' (divisible by 16) and ':1' (equal to 1)
// hints in the signature give each config a specialized variant, taken at run time only when
// the dispatch's constants satisfy the hints.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 2>/dev/null | FileCheck %s --check-prefix=MAT
// RUN: autotune-export %s --emit iree --target sm_80 2>/dev/null | FileCheck %s --check-prefix=LOWER
// RUN: autotune-export %s --emit iree --target sm_80 -o %t.mlir 2>/dev/null
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vmfb

hal.executable.source private @scale_ex {
  hal.executable.autotuning.export @scale
      triton("../Inputs/kernels.py", "scale_kernel")
      signature(out_ptr: *fp32:16 {output}, x_ptr: *fp32:16, alpha: fp32, n: i32:16)
      configs([{BLOCK = 256, num_warps = 4}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<1024xf32>, 2.0 : f32)
}

util.func public @scale(%x: tensor<1024xf32>, %alpha: f32) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n_i32 = arith.constant 1024 : i32
  %y = flow.dispatch @scale_ex::@scale[%n](%x, %alpha, %n_i32) : (tensor<1024xf32>, f32, i32) -> tensor<1024xf32>
  util.return %y : tensor<1024xf32>
}

// The hint on n (constant 1 of the dispatch: alpha is constant 0) makes a second export.
// MAT:      hal.executable.autotuning.export @scale
// MAT-NEXT:     variants([@scale_0_256_w4_s3])
// MAT-NEXT:     tune_workload(tensor<1024xf32>, 2.000000e+00 : f32)
// MAT-NEXT:     specialized([@scale_0_256_w4_s3_spec], divisible_by_16 = [1])
// MAT:      hal.executable.export public @scale_0_256_w4_s3 ordinal(0)
// MAT:      hal.executable.export public @scale_0_256_w4_s3_spec ordinal(1)

// The chain tries the specialization first (choice == 0 and the guard holds), then the
// unspecialized variant, which ends the chain.
// LOWER:      hal.executable.export public @scale_0_256_w4_s3 ordinal(0) layout(#{{.+}}) count(%{{.+}}: !hal.device, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index)
// LOWER:      hal.executable.export public @scale_0_256_w4_s3_spec ordinal(1) layout(#{{.+}}) condition(%{{.+}}: !hal.device, %{{.+}}: index, %[[CHOICE:.+]]: index, %[[OK:.+]]: index) -> i1 {
// LOWER-NEXT:   %[[C0:.+]] = arith.constant 0 : index
// LOWER-NEXT:   %[[SAME:.+]] = arith.cmpi eq, %[[CHOICE]], %[[C0]] : index
// LOWER-NEXT:   %[[Z:.+]] = arith.constant 0 : index
// LOWER-NEXT:   %[[GUARD:.+]] = arith.cmpi ne, %[[OK]], %[[Z]] : index
// LOWER-NEXT:   %[[BOTH:.+]] = arith.andi %[[SAME]], %[[GUARD]] : i1
// LOWER-NEXT:   hal.return %[[BOTH]] : i1
// LOWER-NEXT: } fallback(@scale_0_256_w4_s3)
// The host computes the guard from the dispatch constant: n & 15 == 0; alpha is bitcast.
// LOWER-LABEL: util.func public @scale(
// LOWER:        %[[BITS:.+]] = arith.bitcast %{{.+}} : f32 to i32
// LOWER:        %[[LOW:.+]] = arith.andi %{{.+}}, %{{.+}} : i32
// LOWER-NEXT:   %[[DIV:.+]] = arith.cmpi eq, %[[LOW]], %{{.+}} : i32
// LOWER:        %[[FLAG:.+]] = arith.select %[[DIV]], %{{.+}}, %{{.+}} : index
// LOWER-NEXT:   flow.dispatch @scale_ex::@scale_0_256_w4_s3_spec[%{{.+}}, %{{.+}}, %[[FLAG]]](%{{.+}}, %[[BITS]], %{{.+}})
