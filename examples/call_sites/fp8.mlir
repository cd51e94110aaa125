// fp8 (e4m3) to bf16 with a scale through tritonlib's fp8_dequant_tuned: a persistent kernel
// whose configs carry NUM_PROGRAMS, the SM count the library read from Triton's driver when it
// was imported (132 for --target sm_90: see docs/call-sites.md), and OUT_DTYPE = tl.bfloat16.
//
//   autotune-export fp8.mlir --emit vmfb --target sm_90 -o fp8.vmfb
//
// The host takes the fp8 values as bytes (i8) and returns the bf16 results as their bits (i16),
// which numpy can hold.
hal.executable.source private @fp8_ex {
  hal.executable.autotuning.export @dequant
      triton("tritonlib/ops/fp8.py", "fp8_dequant_tuned")
      signature(x_ptr: *fp8e4nv, y_ptr: *bf16 {output}, scale: fp32, n: i32)
      workload(n)
      grid(min(NUM_PROGRAMS, cdiv(n, BLOCK)))
      tune_workload(tensor<16777216xi8>, 0.5 : f32)
}

util.func public @dequant(%bytes: tensor<?xi8>, %scale: f32) -> tensor<?xi16> {
  %c0 = arith.constant 0 : index
  %len = tensor.dim %bytes, %c0 : tensor<?xi8>
  %x = flow.tensor.bitcast %bytes : tensor<?xi8>{%len} -> tensor<?xf8E4M3FN>{%len}
  %n = arith.index_cast %len : index to i32
  %y = flow.dispatch @fp8_ex::@dequant[%len](%x, %scale, %n)
      : (tensor<?xf8E4M3FN>{%len}, f32, i32) -> tensor<?xbf16>{%len}
  %bits = flow.tensor.bitcast %y : tensor<?xbf16>{%len} -> tensor<?xi16>{%len}
  util.return %bits : tensor<?xi16>
}
