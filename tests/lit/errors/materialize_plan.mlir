// materialize-triton-variants: errors found before any config compiles (this runs in the fast
// suite, where compiling would fail the test). Each reports at the user's line; none is an
// internal error.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --split-input-file --verify-diagnostics

// An export without an ordinal next to a triton(...) group (once a KeyError reported as
// "unknown pass").
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex {
  // expected-note @+1 {{the group @g is here}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128, num_warps = 4}])
      workload(n)
      grid(cdiv(n, BLOCK))
  // expected-error @+1 {{export @other has no ordinal; next to a triton(...) group every export of @ex needs ordinal(N)}}
  hal.executable.export public @other layout(#layout) count(%device: !hal.device) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
}

// -----

// A config naming no constexpr of the kernel.
hal.executable.source private @ex {
  // expected-error @+4 {{config 0 sets 'BLOK', which is not a constexpr parameter of 'add_kernel' (constexprs: BLOCK); did you mean 'BLOCK'?}}
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOK = 128}])
      workload(n)
      grid(cdiv(n, BLOK))
}

// -----

// An unsupported target is one line, not a traceback.
// RUN: not autotune-export %s -p materialize-triton-variants --target sm_75 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: unsupported CUDA target 'sm_75': supported are sm_80, sm_86, sm_89, sm_90, sm_100
// TARGET-NOT: Traceback
