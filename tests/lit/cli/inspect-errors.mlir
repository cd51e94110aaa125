// autotune-export inspect reports errors as the compile command does: MLIR-style diagnostics,
// exit status 1, no traceback.
// RUN: not autotune-export inspect %s 2> %t.err
// RUN: FileCheck %s --check-prefix=SYNTAX < %t.err
// RUN: not grep Traceback %t.err
// RUN: echo "not a module" > %t.vmfb
// RUN: not autotune-export inspect %t.vmfb 2> %t.vmfb.err
// RUN: FileCheck %s --check-prefix=VMFB < %t.vmfb.err
// RUN: not autotune-export inspect %t.missing.mlir 2> %t.missing.err
// RUN: FileCheck %s --check-prefix=MISSING < %t.missing.err

// SYNTAX: inspect-errors.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error:
hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("../Inputs/kernels.py", "add_kernel"
}

// VMFB: error: cannot load '{{.*}}.vmfb' as an IREE module:
// MISSING: error: cannot read '{{.*}}.missing.mlir': No such file or directory
