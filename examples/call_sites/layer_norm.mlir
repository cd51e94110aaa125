// Layer norm and RMS norm through tritonlib's layer_norm_fwd, called the way the library's
// Python wrapper calls it: optional weight/bias passed as None, the output dtype a constexpr.
//
//   autotune-export layer_norm.mlir --emit vmfb --target sm_90 -o layer_norm.vmfb
//
// `B: none` (and `W: none`) is what Triton does with a None argument: a constexpr None, not a
// kernel parameter, so the dispatch does not pass it; the kernel's triton.heuristics see
// args["B"] is None and compile HAS_BIAS = False. OUT_DTYPE = tl.float16 reaches Triton as
// the dtype object; IS_RMS_NORM keeps its default (False) unless a config gives it.
hal.executable.source private @ln_ex {
  hal.executable.autotuning.export @layer_norm
      triton("tritonlib/ops/layer_norm.py", "layer_norm_fwd")
      signature(X: *fp16, Y: *fp16 {output}, W: *fp16, B: none, stride: i32, N: i32, eps: fp32)
      configs([{BLOCK_N = 1024, OUT_DTYPE = tl.float16, num_warps = 4},
               {BLOCK_N = 1024, OUT_DTYPE = tl.float16, num_warps = 8}])
      workload(M)
      grid(M)
      tune_workload(tensor<4096x1024xf16>, tensor<1024xf16>)
}

hal.executable.source private @rms_ex {
  hal.executable.autotuning.export @rms_norm
      triton("tritonlib/ops/layer_norm.py", "layer_norm_fwd")
      signature(X: *fp16, Y: *fp32 {output}, W: none, B: none, stride: i32, N: i32, eps: fp32)
      configs([{BLOCK_N = 1024, OUT_DTYPE = tl.float32, IS_RMS_NORM = true, num_warps = 4},
               {BLOCK_N = 1024, OUT_DTYPE = tl.float32, IS_RMS_NORM = true, num_warps = 2}])
      workload(M)
      grid(M)
      tune_workload(tensor<4096x1024xf16>)
}

// x: M x 1024 rows, w: the weight; y = (x - mean) / sqrt(var + 1e-5) * w, in fp16.
util.func public @layer_norm(%x: tensor<?x1024xf16>, %w: tensor<1024xf16>) -> tensor<?x1024xf16> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x1024xf16>
  %n = arith.constant 1024 : i32
  %eps = arith.constant 1.0e-05 : f32
  %y = flow.dispatch @ln_ex::@layer_norm[%m](%x, %w, %n, %n, %eps)
      : (tensor<?x1024xf16>{%m}, tensor<1024xf16>, i32, i32, f32) -> tensor<?x1024xf16>{%m}
  util.return %y : tensor<?x1024xf16>
}

// y = x / sqrt(mean(x^2) + 1e-5), in fp32 (no weight, no bias).
util.func public @rms_norm(%x: tensor<?x1024xf16>) -> tensor<?x1024xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x1024xf16>
  %n = arith.constant 1024 : i32
  %eps = arith.constant 1.0e-05 : f32
  %y = flow.dispatch @rms_ex::@rms_norm[%m](%x, %n, %n, %eps)
      : (tensor<?x1024xf16>{%m}, i32, i32, f32) -> tensor<?x1024xf32>{%m}
  util.return %y : tensor<?x1024xf32>
}
