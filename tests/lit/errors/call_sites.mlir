// Errors at call sites written as libraries write them (none parameters, dtype values,
// triton.heuristics that read the call's arguments), each at the user's line, found before
// anything compiles (the fast suite).
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --split-input-file --verify-diagnostics

hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, bias_ptr: none, out_ptr: *fp16 {output}, alpha: none, n: i32, flag: u1)
      // expected-error @+1 {{unknown Triton dtype 'tl.half' in configs(...); expected one of: tl.int1}}
      configs([{BLOCK = 128, OUT_DTYPE = tl.half}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, bias_ptr: none, out_ptr: *fp16 {output}, alpha: none, n: i32, flag: u1)
      configs([{BLOCK = 128, OUT_DTYPE = tl.float16}])
      // expected-error @+1 {{workload value 'bias_ptr' is none (the call passes None, so the dispatch does not pass it)}}
      workload(n, bias_ptr)
      grid(cdiv(n, BLOCK))
}

// -----

// A none parameter is still a parameter of the kernel: the signature lists every one, in order.
hal.executable.source private @ex {
  // At the first entry that differs, with the kernel's parameter there.
  // expected-error @+3 {{signature does not match kernel 'scale_bias_kernel': the signature declares (x_ptr, out_ptr, bias_ptr, alpha, n, flag) but the kernel's non-constexpr parameters are (x_ptr, bias_ptr, out_ptr, alpha, n, flag); parameter 1 is 'bias_ptr' in the kernel}}
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, out_ptr: *fp16 {output}, bias_ptr: none, alpha: none, n: i32, flag: u1)
      configs([{BLOCK = 128, OUT_DTYPE = tl.float16}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// A config cannot set a run-time parameter to none: that is the signature's job.
hal.executable.source private @ex {
  // expected-error @+4 {{config 0 sets 'bias_ptr', which is not a constexpr parameter of 'scale_bias_kernel' (constexprs: BLOCK, OUT_DTYPE, HAS_BIAS, CLAMP)}}
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "scale_bias_kernel")
      signature(x_ptr: *fp16, bias_ptr: *fp16, out_ptr: *fp16 {output}, alpha: fp32, n: i32, flag: u1)
      configs([{BLOCK = 128, OUT_DTYPE = tl.float16, bias_ptr = none}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// A triton.heuristics function that needs what only the call knows (a tensor's shape: no
// dispatch binds it a tensor of static shape).
hal.executable.source private @ex {
  // expected-error @+4 {{triton.heuristics for 'BLOCK' needs run-time argument 'x_ptr.shape' (a tensor's .shape, .numel() and .stride() are known where every dispatch binds it a tensor of the same static shape); give 'BLOCK' in every config}}
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "shape_heuristic_kernel")
      signature(x_ptr: *fp16, out_ptr: *fp16 {output}, n: i32)
      configs([{num_warps = 4}])
      workload(n)
      grid(cdiv(n, 128))
}

// -----

// A host-side TMA descriptor parameter, refused by name at its type.
hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("../Inputs/call_site_kernels.py", "shape_heuristic_kernel")
      // expected-error @+1 {{parameter 'x_desc' is a tensor descriptor (tensordesc<fp16[64, 64]>): on sm_90 Triton passes it as a by-value 128-byte CUtensorMap made on the host, which IREE's dispatch ABI (buffer pointers and 32-bit constants) cannot carry; build it in the kernel with tl.make_tensor_descriptor}}
      signature(x_desc: tensordesc<fp16[64, 64]>, out_ptr: *fp16 {output}, n: i32)
      configs([{BLOCK = 64}])
      workload(n)
      grid(cdiv(n, 64))
}
