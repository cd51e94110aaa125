// Call sites of libraries as written: `none` parameters (the call passes None) and config
// values, Triton dtypes (tl.float16, every tl.* dtype), Triton's bool names u1 / *u1. They
// print back as written, and the printed form reads back to itself.
// RUN: autotune-export %s -p '' | FileCheck %s
// RUN: autotune-export %s -p '' > %t.1.mlir
// RUN: autotune-export %t.1.mlir -p '' > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// CHECK-LABEL: hal.executable.autotuning.export @ln
// CHECK:       signature(x: *fp16, w: none, b: *fp16, mask: *u1, y: *bf16 {output}, n: i32, flag: u1, softcap: none)
// CHECK:       configs([{BLOCK = 128, OUT = tl.bfloat16, ACC = tl.float32, ACT = none, S = "none", num_warps = 4},
// CHECK-NEXT:           {BLOCK = 256, OUT = tl.float8e4nv, ACC = tl.float64, ACT = "gelu", S = "tl.float16", num_warps = 8}])
hal.executable.source private @e {
  hal.executable.autotuning.export @ln
      triton("k.py", "ln")
      signature(x: *fp16, w: none, b: *fp16, mask: *u1, y: *bf16 {output}, n: i32, flag: u1, softcap: none)
      configs([{BLOCK = 128, OUT = tl.bfloat16, ACC = tl.float32, ACT = none, S = "none", num_warps = 4},
               {BLOCK = 256, OUT = tl.float8e4nv, ACC = tl.float64, ACT = "gelu", S = "tl.float16", num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// Every Triton dtype.
// CHECK-LABEL: hal.executable.autotuning.export @dtypes
// CHECK:       configs([{A = tl.int1, B = tl.int8, C = tl.int16, D = tl.int32, E = tl.int64, F = tl.uint8, G = tl.uint16, H = tl.uint32, I = tl.uint64, J = tl.float8e5, K = tl.float8e5b16, L = tl.float8e4nv, M = tl.float8e4b8, N = tl.float8e4b15, O = tl.float16, P = tl.bfloat16, Q = tl.float32, R = tl.float64, S = tl.void}])
hal.executable.source private @e2 {
  hal.executable.autotuning.export @dtypes
      triton("k.py", "k")
      signature(x: *fp32 {output})
      configs([{A = tl.int1, B = tl.int8, C = tl.int16, D = tl.int32, E = tl.int64, F = tl.uint8, G = tl.uint16, H = tl.uint32, I = tl.uint64, J = tl.float8e5, K = tl.float8e5b16, L = tl.float8e4nv, M = tl.float8e4b8, N = tl.float8e4b15, O = tl.float16, P = tl.bfloat16, Q = tl.float32, R = tl.float64, S = tl.void}])
      workload()
      grid(1)
}

// The generic form of the op, written by hand: none and dtypes are #autotune attributes.
// CHECK-LABEL: hal.executable.autotuning.export @generic
// CHECK:       signature(x: *fp32 {output}, w: none)
// CHECK:       configs([{OUT = tl.float16, B = none}])
hal.executable.source private @e3 {
  "autotune.export"() {sym_name = "generic", triton = ["k.py", "k"], signature = [["x", "*fp32", "output"], ["w", "none"]],
                       configs = [[["OUT", #autotune.dtype<float16>], ["B", #autotune.none]]], workload = [], grid = ["1"]} : () -> ()
}
