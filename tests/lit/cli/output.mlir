// Where the command writes. `-o -`: standard output gets the IR and nothing else (what a
// kernel file, Triton or a compile worker prints goes to standard error), and nothing at all
// when the build fails. `-o /dev/null` (any existing device or FIFO) is written in place; a
// .vmfb given to the compile command is named as such.
//
// A kernel file printing when it is imported, and an error after: stdout stays empty.
// RUN: not autotune-export %s -o - > %t.out 2> %t.err
// RUN: %python -c "import sys; data = open(sys.argv[1]).read(); sys.exit(data != '' and 'stdout: %%r' %% data)" %t.out
// RUN: FileCheck %s --check-prefix=NOISY < %t.err
// NOISY: noisy_kernels.py: imported
// NOISY: output.mlir:[[# @LINE + 29]]:41: error: {{.*}}noisy_kernels.py has no attribute 'noisy_ad'; did you mean 'noisy_add'?
//
// -o /dev/null: written (exit 0), and /dev/null is still the device.
// RUN: autotune-export %S/../passes/pin_variants.mlir -p pin-variants -o /dev/null
// RUN: test -c /dev/null
//
// A .vmfb (by its name, or by IREE's FlatBuffer identifier on standard input).
// RUN: %python -c "open('%t.vmfb', 'wb').write(b'\x08\x00\x00\x00IREE' + bytes(64))"
// RUN: not autotune-export %t.vmfb -o %t.mlir 2>&1 | FileCheck %s --check-prefix=VMFB
// RUN: not autotune-export - < %t.vmfb 2>&1 | FileCheck %s --check-prefix=VMFBSTDIN
// RUN: not ls %t.mlir
// VMFB: error: {{.*}}.vmfb is a compiled module (.vmfb); use autotune-export inspect/tune (this command compiles .mlir)
// VMFB-NOT: UTF-8
// VMFBSTDIN: error: <stdin> is a compiled module (.vmfb); use autotune-export inspect/tune
//
// Misspelt options, passes and pass options get a suggestion; a usage error is exit status 1
// (2 is an internal error).
// RUN: not autotune-export %s --taget sm_90 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: autotune-export: error: unrecognized arguments: --taget sm_90; did you mean '--target'? (autotune-export --help lists the options)
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:], capture_output=True).returncode != 1)" autotune-export %s --emit vmfd
// RUN: not autotune-export %s --emit vmfd 2>&1 | FileCheck %s --check-prefix=CHOICE
// CHOICE: autotune-export: error: argument --emit: invalid choice: 'vmfd' (choose from 'mlir', 'iree', 'vmfb'); did you mean 'vmfb'?
// RUN: not autotune-export %s -p materialise-triton-variants 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: error: unknown pass 'materialise-triton-variants'; known passes: {{.*}}; did you mean 'materialize-triton-variants'?
// RUN: not autotune-export %s -p 'materialize-triton-variants{targt=sm_90}' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: pass 'materialize-triton-variants' has no option 'targt' (its options: {{.*}}); did you mean 'target'?

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("Inputs/noisy_kernels.py", "noisy_ad")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
