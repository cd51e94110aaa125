// Config values of every kind print back as they read: exponents, IEEE specials (inf, -inf,
// nan as Python spells them), booleans, strings, and a constexpr named like a special.
// RUN: autotune-export %s -p '' | FileCheck %s
// The printed form reads back to itself (a fixed point).
// RUN: autotune-export %s -p '' > %t.1.mlir
// RUN: autotune-export %t.1.mlir -p '' > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// CHECK-LABEL: hal.executable.autotuning.export @g
// CHECK:       configs([{LO = -inf, HI = inf, EPS = nan, S = 1.0e+16, T = 0.0025, F = false, M = "fast", inf = 1, num_warps = 4}])
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(x: *fp32 {output}, n: i32)
      configs([{LO = -inf, HI = +inf, EPS = nan, S = 1e+16, T = 2.5e-3, F = false, M = "fast", inf = 1, num_warps = 4}])
      workload(n)
      grid(n)
}
