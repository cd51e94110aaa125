// Options of the variant compilation that cannot work are refused with one line naming the
// problem, before anything compiles (this file runs in the fast suite, where compiling fails
// the test): -j 0 and jobs=0, a PTX ISA older than the target needs (LLVM would end the process),
// a cache folder that cannot be written (not "every config of @g was pruned").
//
// RUN: not autotune-export %s -j 0 -o %t.out 2>&1 | FileCheck %s --check-prefix=JOBS
// JOBS: autotune-export: error: argument -j/--jobs: 0: at least 1 process compiles (leave it out for one per core
// RUN: not autotune-export %s -p 'materialize-triton-variants{jobs=0}' -o %t.out 2>&1 | FileCheck %s --check-prefix=PASSJOBS
// PASSJOBS: error: option 'jobs' of pass 'materialize-triton-variants': jobs = 0: at least 1 process compiles
// PASSJOBS-NOT: internal error
//
// RUN: not autotune-export %s --target sm_90 --ptx-version 7.0 -o %t.out 2>&1 | FileCheck %s --check-prefix=PTX90
// PTX90: error: PTX ISA 7.0 cannot target sm_90 (Triton compiles it as sm_90a): the minimum is 8.0 (--ptx-version 8.0 or later)
// PTX90-NOT: LLVM ERROR
// RUN: not autotune-export %s --target sm_80,sm_100 --ptx-version 8.5 -o %t.out 2>&1 | FileCheck %s --check-prefix=PTX100
// PTX100: error: PTX ISA 8.5 cannot target sm_100 (Triton compiles it as sm_100a): the minimum is 8.6
//
// RUN: echo x > %t.file
// RUN: not autotune-export %s --cache-dir %t.file -o %t.out 2>&1 | FileCheck %s --check-prefix=CACHE
// CACHE: error: the variant cache folder {{.*}}.file cannot be written (Not a directory): give a writable one (--cache-dir, AUTOTUNE_EXPORT_CACHE_DIR) or build without the cache (--no-cache)
// CACHE-NOT: pruned

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_autotuned")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 64, num_warps = 2}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
