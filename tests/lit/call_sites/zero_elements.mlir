// REQUIRES: integration
// Zero-element tensors (issue 23 item 5): an empty optional input, `bias_ptr` given
// torch.empty(0) (tensor<0xf16>) while HAS_BIAS = false (the kernel never reads it), builds for
// sm_90 with benchmark entries: its fake buffer is a plain tensor.empty (no fill, no barrier:
// a barrier over a zero-size fill made iree-compile fail in iree-stream-refine-usage), and the
// kernel gets the binding of an empty buffer as its pointer, never dereferenced.
// RUN: autotune-export %s --emit iree --target sm_90 2>/dev/null | FileCheck %s
// RUN: autotune-export %s --emit vmfb --target sm_90 -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=VMFB

// CHECK-LABEL: util.func public @__autotune.ex.k.bench.0(
// CHECK:         flow.tensor.bitcast %{{.+}} : tensor<64xi16> -> tensor<64xf16>
// CHECK-NEXT:    %[[NONE:.+]] = tensor.empty() : tensor<0xf16>
// CHECK:         scf.for
// CHECK-NEXT:      util.optimization_barrier {{.*}} : tensor<64xf16>, index, tensor<64xf16>, index, tensor<64xf16>, index, tensor<64xf16>, index, tensor<64xf16>, index, tensor<64xf16>, index, tensor<64xf16>, index, tensor<64xf16>, index, index{{$}}
// CHECK:           flow.dispatch @ex::@k_0_128xfp16xFalse_w4_s3[{{.+}}](%{{.+}}, %[[NONE]], %{{.+}}) : (tensor<64xf16>, tensor<0xf16>, i32, i32, i32) -> tensor<64xf16>
// VMFB: autotune-export: wrote {{.+}}.vmfb
hal.executable.source private @ex {
  hal.executable.autotuning.export @k
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, bias_ptr: *fp16, out_ptr: *fp16 {output}, alpha: fp32, n: i32, flag: u1)
      configs([{BLOCK = 128, OUT_DTYPE = tl.float16, HAS_BIAS = false, num_warps = 4}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<64xf16>, tensor<0xf16>, 1.5 : f32, 1 : i1)
}
util.func public @f(%x: tensor<64xf16>, %b: tensor<0xf16>, %alpha: f32, %flag: i1) -> tensor<64xf16> {
  %n = arith.constant 64 : i32
  %c64 = arith.constant 64 : index
  %y = flow.dispatch @ex::@k[%c64](%x, %b, %alpha, %n, %flag)
      : (tensor<64xf16>, tensor<0xf16>, f32, i32, i1) -> tensor<64xf16>
  util.return %y : tensor<64xf16>
}
