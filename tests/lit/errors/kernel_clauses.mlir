// Mistakes about the kernel are reported at the clause that makes them, not at the op's first
// line: the kernel's name in triton(...), the signature(...) entry, the configs(...) entry, the
// name in grid(...) (also when the configs come from the kernel's triton.autotune, before
// anything compiles), each with a "did you mean" when a name is close to one that exists.
// RUN: autotune-export %s -p materialize-triton-variants --split-input-file --verify-diagnostics
//
// Columns, and paths as the user gives them (relative to the current directory, not absolute),
// from a file and from standard input (whose relative kernel paths resolve in the current directory).
// RUN: cd %S && not autotune-export kernel_clauses.mlir -p materialize-triton-variants --split-input-file 2> %t.err
// RUN: FileCheck %s --check-prefix=COL < %t.err
// RUN: cd %S && not autotune-export - -p materialize-triton-variants --split-input-file < kernel_clauses.mlir 2> %t.stdin.err
// RUN: FileCheck %s --check-prefix=STDIN < %t.stdin.err
// RUN: not grep -E '(^| )/' %t.err %t.stdin.err

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      // expected-error @+2 {{kernels.py has no attribute 'add_kernal'; did you mean 'add_kernel'?}}
      // COL: kernel_clauses.mlir:[[# @LINE + 1]]:38: error: ../Inputs/kernels.py has no attribute 'add_kernal'; did you mean 'add_kernel'?
      triton("../Inputs/kernels.py", "add_kernal")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      // expected-error @+3 {{Inputs/kernel.py does not exist; did you mean 'kernels.py'?}}
      // COL: kernel_clauses.mlir:[[# @LINE + 2]]:14: error: kernel file ../Inputs/kernel.py does not exist; did you mean 'kernels.py'?
      // STDIN: <stdin>:[[# @LINE + 1]]:14: error: kernel file ../Inputs/kernel.py does not exist; did you mean 'kernels.py'?
      triton("../Inputs/kernel.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// A misspelt parameter: at its entry.
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      // expected-error @+2 {{signature does not match kernel 'add_kernel': the signature declares (x_ptr, y_prt, out_ptr, n) but the kernel's non-constexpr parameters are (x_ptr, y_ptr, out_ptr, n); did you mean 'y_ptr'?}}
      // COL: kernel_clauses.mlir:[[# @LINE + 1]]:31: error: signature does not match kernel 'add_kernel'
      signature(x_ptr: *fp32, y_prt: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// A missing parameter: at the signature's ')'.
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      // expected-error @+2 {{the signature declares (x_ptr, y_ptr, out_ptr) but the kernel's non-constexpr parameters are (x_ptr, y_ptr, out_ptr, n); add 'n'}}
      // COL: kernel_clauses.mlir:[[# @LINE + 1]]:68: error: signature does not match kernel 'add_kernel'
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output})
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, 128))
}

// -----

// A constexpr listed as a run-time parameter.
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      // expected-error @+1 {{'BLOCK' is a constexpr of the kernel: give it in configs([...]), not in signature(...)}}
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32, BLOCK: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, 128))
}

// -----

// A config that misses a constexpr: at that config, on its own line.
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128},
               // expected-error @+2 {{config 1 does not give constexpr parameter 'BLOCK' of 'add_kernel'}}
               // COL: kernel_clauses.mlir:[[# @LINE + 1]]:16: error: config 1 does not give constexpr parameter 'BLOCK' of 'add_kernel'
               {num_warps = 8}])
      workload(n)
      grid(cdiv(n, 128))
}

// -----

// A misspelt config key: at the key.
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      // expected-error @+2 {{config 1 sets 'BLOKC', which is not a constexpr parameter of 'add_kernel' (constexprs: BLOCK); did you mean 'BLOCK'?}}
      // COL: kernel_clauses.mlir:[[# @LINE + 1]]:45: error: config 1 sets 'BLOKC'
      configs([{BLOCK = 128}, {BLOCK = 256, BLOKC = 1}])
      workload(n)
      grid(cdiv(n, 128))
}

// -----

// The configs come from triton.autotune: a name the grid uses that they do not give is
// reported at the name, before any config compiles (the fast suite forbids compiling).
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_autotuned")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(n)
      // expected-error @+2 {{grid uses unknown name 'BLOCKS'; names in a grid are workload values (n), the configs' constexprs (BLOCK; from the triton.autotune of 'add_autotuned') and num_warps, num_stages, num_ctas, maxnreg; did you mean 'BLOCK'?}}
      // COL: kernel_clauses.mlir:[[# @LINE + 1]]:20: error: grid uses unknown name 'BLOCKS'
      grid(cdiv(n, BLOCKS))
}

// -----

// A triton.autotune config that misses a constexpr: at the kernel's name (the configs are there).
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      // expected-error @+1 {{config 0 (a config of the triton.autotune of 'scaled_copy') does not give constexpr parameter 'SCALE' of 'scaled_copy'}}
      triton("Inputs/clause_kernels.py", "scaled_copy")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// Front-end names get a suggestion too: a misspelt output in reset_to_zero(...), a grid name.
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
      // expected-error @+1 {{reset_to_zero(...) names 'out_prt', which is not a parameter of the signature (x_ptr, y_ptr, out_ptr, n); did you mean 'out_ptr'?}}
      reset_to_zero(out_prt)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      // expected-error @+1 {{grid uses unknown name 'BLOKC'; names in a grid are workload values, config constants and num_warps, num_stages, num_ctas, maxnreg; did you mean 'BLOCK'?}}
      grid(cdiv(n, BLOKC))
}
