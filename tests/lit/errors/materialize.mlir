// REQUIRES: integration
// materialize-triton-variants: the kernel must exist and match the signature, and every
// config must set exactly the kernel's constexprs; a group whose configs are all pruned fails.
// Each is reported at the clause: the triton(...) path or kernel name, the signature entry, the
// config; paths as the user gives them (relative to the current directory).
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --split-input-file --verify-diagnostics

hal.executable.source private @e {
  // expected-error @+2 {{Inputs/no_such_kernels.py does not exist}}
  hal.executable.autotuning.export @g
      triton("../Inputs/no_such_kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  // expected-error @+2 {{kernels.py has no attribute 'sub_kernel'}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "sub_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  // expected-error @+2 {{'NOT_A_KERNEL' in}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "NOT_A_KERNEL")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  // expected-error @+3 {{signature does not match kernel 'add_kernel': the signature declares (x_ptr, y_ptr, out_ptr) but the kernel's non-constexpr parameters are (x_ptr, y_ptr, out_ptr, n); add 'n'}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output})
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  // expected-error @+3 {{signature does not match kernel 'add_kernel'}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(y_ptr: *fp32, x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  // expected-error @+4 {{config 0 sets 'BLOCK_SIZE', which is not a constexpr parameter of 'add_kernel' (constexprs: BLOCK); did you mean 'BLOCK'?}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128, BLOCK_SIZE = 3}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  // expected-error @+4 {{config 1 does not give constexpr parameter 'BLOCK' of 'add_kernel'}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}, {num_warps = 8}])
      workload(n)
      grid(cdiv(n, 128))
}

// -----

hal.executable.source private @e {
  // expected-error @+2 {{@g gives no configs([...]) and 'add_kernel' is not a triton.autotune kernel}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// A dispatch needs a result: one pointer must be {output} (every scalar type of the signature
// grammar is passed, i64 split into two constants: see tests/lit/abi).
hal.executable.source private @e {
  // expected-error @+1 {{the signature marks no pointer as {output}: a dispatch needs at least one result}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32, n: i64)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

// Every config fails to compile: the error, whose notes give each config's reason once (no remark
// per config besides): Triton's message at the kernel file's line and column (1-based).
hal.executable.source private @e {
  // expected-error @+3 {{every config of @g was pruned for sm_80}}
  // expected-note @+2 {{kernels.py:50:12: arange's range must be a power of 2}}
  // expected-note @+1 {{config 1 {BLOCK = 64, num_warps = 2}: compile error}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "broken_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 64, num_warps = 2}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
