// --split-input-file with --emit vmfb: each split is a module of its own and a .vmfb holds
// one, so it is refused before anything is compiled (it used to fail inside iree-compile,
// blaming generated code: "redefinition of attribute alias").
// RUN: not autotune-export %s --split-input-file --emit vmfb -o %t.vmfb 2>&1 | FileCheck %s
// CHECK: error: --split-input-file with --emit vmfb: each '// -----' split is a module of its own and a .vmfb holds one; build one split per file, or emit text (--emit iree) and give it to iree-compile --split-input-file
// CHECK-NOT: iree-compile failed
// RUN: not test -e %t.vmfb
hal.executable.source private @ex {
  hal.executable.autotuning.export @g triton("Inputs/binding_kernels.py", "add_eps")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, eps: fp32, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @ex {
  hal.executable.autotuning.export @g triton("Inputs/binding_kernels.py", "add_eps")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, eps: fp32, n: i32)
      configs([{BLOCK = 256}])
      workload(n) grid(cdiv(n, BLOCK))
}
