// materialize-triton-variants refuses what cannot run before anything compiles (this file runs
// in the fast suite, where compiling would fail the test): tensors whose element type is not
// the pointer's, more bindings or
// constants than IREE's CUDA HAL allows, configs with more threads than a block may have.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --split-input-file --verify-diagnostics

// A pointer whose element type differs from the tensor bound to it (item: *fp16 for tensor<?xf32>)
// would read the f32 data as f16: refused at the dispatch.
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *fp16, out_ptr: *fp16 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> (tensor<1024xf16>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{dispatch to @ex::@g binds tensor operand 0 (tensor<1024xf32>) to pointer 'x_ptr' (*fp16); expected a tensor of f16}}
  %r = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> tensor<1024xf16>
  util.return %r : tensor<1024xf16>
}

// -----

// The result bound to an {output} pointer is checked too.
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> (tensor<1024xbf16>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{dispatch to @ex::@g binds result 0 (tensor<1024xbf16>) to pointer 'out_ptr' (*fp32); expected a tensor of f32}}
  %r = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> tensor<1024xbf16>
  util.return %r : tensor<1024xbf16>
}

// -----

// bf16 and f16 are both 16-bit, but not the same numbers.
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *bf16, out_ptr: *bf16 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf16>) -> (tensor<1024xbf16>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{binds tensor operand 0 (tensor<1024xf16>) to pointer 'x_ptr' (*bf16); expected a tensor of bf16}}
  %r = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf16>, i32) -> tensor<1024xbf16>
  util.return %r : tensor<1024xbf16>
}

// -----

// Signedness is not part of MLIR's integer types, width is: *u32 takes i32, not i64.
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *u32, out_ptr: *u32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xi64>) -> (tensor<1024xi32>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{binds tensor operand 0 (tensor<1024xi64>) to pointer 'x_ptr' (*u32); expected a tensor of i32}}
  %r = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xi64>, i32) -> tensor<1024xi32>
  util.return %r : tensor<1024xi32>
}

// -----

// FP8 pointers name their format: fp8e4nv is f8E4M3FN, not f8E5M2.
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *fp8e4nv, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf8E5M2>) -> (tensor<1024xf32>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{binds tensor operand 0 (tensor<1024xf8E5M2>) to pointer 'x_ptr' (*fp8e4nv); expected a tensor of f8E4M3FN}}
  %r = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf8E5M2>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// A bool pointer (*i1, one byte per element in Triton) takes i1 or i8 tensors, not i32 ones.
hal.executable.source private @ex {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "bool_mask_kernel")
      signature(x_ptr: *fp32, keep_ptr: *i1, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %k: tensor<1024xi32>) -> (tensor<1024xf32>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-error @+1 {{binds tensor operand 1 (tensor<1024xi32>) to pointer 'keep_ptr' (*i1); expected a tensor of i1 or i8}}
  %r = flow.dispatch @ex::@g[%n](%x, %k, %n32) : (tensor<1024xf32>, tensor<1024xi32>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// 17 pointers are 17 bindings: IREE 3.13's CUDA HAL allows 16 per export (refused before
// anything compiles).
hal.executable.source private @ex {
  // expected-error @+1 {{@g has 17 bindings (one per pointer parameter), more than the 16 that IREE's CUDA HAL allows per export}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "many_pointers_kernel")
      signature(p0: *fp32, p1: *fp32, p2: *fp32, p3: *fp32, p4: *fp32, p5: *fp32, p6: *fp32, p7: *fp32, p8: *fp32, p9: *fp32, p10: *fp32, p11: *fp32, p12: *fp32, p13: *fp32, p14: *fp32, p15: *fp32, out: *fp32 {output})
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}

// -----

// 33 i64 scalars are 66 32-bit constants: more than the 64 the HAL allows.
hal.executable.source private @ex {
  // expected-error @+1 {{@g has 66 32-bit constants (33 scalar parameters; i64/u64/fp64 take two), more than the 64 that IREE's CUDA HAL allows per export}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "many_scalars_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, s0: i64, s1: i64, s2: i64, s3: i64, s4: i64, s5: i64, s6: i64, s7: i64, s8: i64, s9: i64, s10: i64, s11: i64, s12: i64, s13: i64, s14: i64, s15: i64, s16: i64, s17: i64, s18: i64, s19: i64, s20: i64, s21: i64, s22: i64, s23: i64, s24: i64, s25: i64, s26: i64, s27: i64, s28: i64, s29: i64, s30: i64, s31: i64, s32: i64)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}

// -----

// num_warps = 64 is 2048 threads: more than a block may have. With every config pruned the
// error's notes say why for each, once (no remark per config besides; nothing was compiled).
hal.executable.source private @ex {
  // expected-error @+3 {{every config of @g was pruned for sm_80}}
  // expected-note @+2 {{config 0 {BLOCK = 128, num_warps = 64}: num_warps = 64 is 2048 threads per block; CUDA allows at most 1024 (num_warps <= 32)}}
  // expected-note @+1 {{config 1 {BLOCK = 256, num_warps = 128}: num_warps = 128 is 4096 threads per block; CUDA allows at most 1024}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128, num_warps = 64}, {BLOCK = 256, num_warps = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}

