// REQUIRES: integration
// `-o -` of a build whose kernel file prints when imported and whose kernel prints while
// Triton compiles it (tl.static_print, also in a compile worker): standard output is the IR
// alone, which reads back; the prints go to standard error.
// RUN: autotune-export %s -p materialize-triton-variants --no-cache -j 2 -o - > %t.out 2> %t.err
// RUN: autotune-export %t.out -p '' | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// RUN: not grep -e 'noisy_kernels.py: imported' -e 'noisy_add: BLOCK' %t.out
// CHECK: hal.executable.autotuning.export @g variants([@g_0_128_w4_s3, @g_1_256_w4_s3])
// ERR-DAG: noisy_kernels.py: imported
// ERR-DAG: noisy_add: BLOCK = 128
// ERR-DAG: noisy_add: BLOCK = 256

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("Inputs/noisy_kernels.py", "noisy_add")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 256}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
