// REQUIRES: integration
// A None argument is Triton's constexpr None: `bias_ptr: none` / `alpha: none` are neither
// bindings nor constants (the dispatch does not pass them) and the kernel is compiled with them
// None (its heuristics see args["bias_ptr"] is None: HAS_BIAS = False; `if alpha is not None`
// is decided at compile time). OUT_DTYPE = tl.bfloat16 reaches Triton as the dtype; CLAMP keeps
// the def's default; `flag: u1` (a Python bool, as Triton names it) is one 32-bit constant.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_90 2>/dev/null | FileCheck %s
// RUN: autotune-export %s --emit vmfb --target sm_90 -o %t.vmfb

// CHECK: #[[NONE:.+]] = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK: #[[BIAS:.+]] = #hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>

// The PTX entry takes x, out, n, flag: no bias, no alpha.
// CHECK-LABEL: hal.executable.source private @no_bias_ex
// CHECK-SAME:  .visible .entry no_bias_0_128xbf16_w4_s3(\0A\09.param .u64 .ptr .global .align 1 no_bias_0_128xbf16_w4_s3_param_0,\0A\09.param .u64 .ptr .global .align 1 no_bias_0_128xbf16_w4_s3_param_1,\0A\09.param .u32 no_bias_0_128xbf16_w4_s3_param_2,\0A\09.param .u32 no_bias_0_128xbf16_w4_s3_param_3\0A)
// The bf16 result: a bf16 conversion, 2-byte stores.
// CHECK-SAME:  cvt.rn.bf16.f32
// CHECK:       hal.executable.autotuning.export @no_bias variants([@no_bias_0_128xbf16_w4_s3])
// CHECK:       hal.executable.export public @no_bias_0_128xbf16_w4_s3 ordinal(0) layout(#[[NONE]])
hal.executable.source private @no_bias_ex {
  hal.executable.autotuning.export @no_bias
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, bias_ptr: none, out_ptr: *bf16 {output}, alpha: none, n: i32, flag: u1)
      configs([{BLOCK = 128, OUT_DTYPE = tl.bfloat16, num_warps = 4}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// CHECK-LABEL: hal.executable.source private @bias_ex
// CHECK:       hal.executable.autotuning.export @bias variants([@bias_0_256xfp16xTrue_w8_s3])
// CHECK:       hal.executable.export public @bias_0_256xfp16xTrue_w8_s3 ordinal(0) layout(#[[BIAS]])
hal.executable.source private @bias_ex {
  hal.executable.autotuning.export @bias
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, bias_ptr: *fp16, out_ptr: *fp16 {output}, alpha: fp32, n: i32, flag: u1)
      configs([{BLOCK = 256, OUT_DTYPE = tl.float16, CLAMP = true, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// CHECK-LABEL: util.func public @no_bias
// CHECK:       flow.dispatch @no_bias_ex::@no_bias[%{{.+}}](%arg0, %{{.+}}, %{{.+}}) : (tensor<?xf16>{%{{.+}}}, i32, i1) -> tensor<?xbf16>
util.func public @no_bias(%x: tensor<?xf16>, %flag: i1) -> tensor<?xbf16> {
  %c0 = arith.constant 0 : index
  %len = tensor.dim %x, %c0 : tensor<?xf16>
  %n = arith.index_cast %len : index to i32
  %y = flow.dispatch @no_bias_ex::@no_bias[%len](%x, %n, %flag) : (tensor<?xf16>{%len}, i32, i1) -> tensor<?xbf16>{%len}
  util.return %y : tensor<?xbf16>
}

util.func public @bias(%x: tensor<?xf16>, %b: tensor<?xf16>, %alpha: f32, %flag: i1) -> tensor<?xf16> {
  %c0 = arith.constant 0 : index
  %len = tensor.dim %x, %c0 : tensor<?xf16>
  %n = arith.index_cast %len : index to i32
  %y = flow.dispatch @bias_ex::@bias[%len](%x, %b, %alpha, %n, %flag)
      : (tensor<?xf16>{%len}, tensor<?xf16>{%len}, f32, i32, i1) -> tensor<?xf16>{%len}
  util.return %y : tensor<?xf16>
}

// triton.heuristics on the tensors' dtypes (`x.dtype.itemsize == 2`, `out.element_size() == 4`)
// read them from the signature: *fp16 -> BLOCK = 128, WIDE = False; *fp32 -> BLOCK = 64, WIDE = True.
// The program's offset is pid * BLOCK: a shift by 7 (128) for fp16, by 6 (64) for fp32.
// CHECK-LABEL: hal.executable.source private @dt16_ex
// CHECK-SAME:  shl.b32 \09%r{{[0-9]+}}, %r{{[0-9]+}}, 7;
// CHECK-LABEL: hal.executable.source private @dt32_ex
// CHECK-SAME:  shl.b32 \09%r{{[0-9]+}}, %r{{[0-9]+}}, 6;
hal.executable.source private @dt16_ex {
  hal.executable.autotuning.export @dt16
      triton("../Inputs/call_site_kernels.py", "dtype_heuristic_kernel")
      signature(x_ptr: *fp16, out_ptr: *fp16 {output}, n: i32)
      configs([{num_warps = 4}])
      workload(n)
      grid(cdiv(n, 128))
}
hal.executable.source private @dt32_ex {
  hal.executable.autotuning.export @dt32
      triton("../Inputs/call_site_kernels.py", "dtype_heuristic_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{num_warps = 4}])
      workload(n)
      grid(cdiv(n, 64))
}
util.func public @dt16(%x: tensor<4096xf16>) -> tensor<4096xf16> {
  %len = arith.constant 4096 : index
  %n = arith.constant 4096 : i32
  %y = flow.dispatch @dt16_ex::@dt16[%len](%x, %n) : (tensor<4096xf16>, i32) -> tensor<4096xf16>
  util.return %y : tensor<4096xf16>
}
util.func public @dt32(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %len = arith.constant 4096 : index
  %n = arith.constant 4096 : i32
  %y = flow.dispatch @dt32_ex::@dt32[%len](%x, %n) : (tensor<4096xf32>, i32) -> tensor<4096xf32>
  util.return %y : tensor<4096xf32>
}
