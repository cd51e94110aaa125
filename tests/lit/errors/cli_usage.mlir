// Command-line mistakes are one-line diagnostics (status 1, no traceback), found before any
// work: an -o that cannot be written, a misspelt subcommand, the wrong kind of input for a
// subcommand, input that is not UTF-8, an --emit vmfb that has nothing to compile or a backend
// that cannot run the groups, and --target values outside the supported architectures.
//
// -o naming a directory: refused before the Triton group below is compiled (the fast suite
// forbids compiling, so reaching materialize would fail differently).
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: not autotune-export %s -o %t.dir 2> %t.err
// RUN: FileCheck %s --check-prefix=OUTDIR < %t.err
// OUTDIR: error: -o {{.*}}.dir is a directory; give a file name (e.g. {{.*}}.dir/out.mlir)
// OUTDIR-NOT: Traceback
//
// -o under a regular file.
// RUN: echo x > %t.file
// RUN: not autotune-export %s -o %t.file/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTFILE
// OUTFILE: error: cannot write -o {{.*}}.file/out.mlir: {{.*}}.file is not a directory
//
// --emit vmfb to stdout.
// RUN: not autotune-export %s --emit vmfb 2>&1 | FileCheck %s --check-prefix=VMFBSTDOUT
// VMFBSTDOUT: error: --emit vmfb needs -o FILE.vmfb
//
// A misspelt subcommand gets a suggestion, not "unrecognized arguments".
// RUN: not autotune-export tnue x.vmfb 2>&1 | FileCheck %s --check-prefix=TNUE
// TNUE: error: unknown subcommand 'tnue'; did you mean 'tune'? (subcommands: inspect, tune{{.*}}; anything else is the input file)
// TNUE-NOT: unrecognized
//
// tune takes a .vmfb: an .mlir file is named as such (not "FlatBuffer length prefix out of bounds").
// RUN: not autotune-export tune %s 2>&1 | FileCheck %s --check-prefix=TUNEMLIR
// TUNEMLIR: cli_usage.mlir: error: not a .vmfb (an IREE module); tune takes what `autotune-export IN.mlir --emit vmfb -o OUT.vmfb` builds
// TUNEMLIR-NOT: FlatBuffer
//
// inspect takes .mlir or .vmfb, not the kernel's Python file (not "empty operation name is invalid").
// RUN: not autotune-export inspect %S/Inputs/refusal_kernels.py 2>&1 | FileCheck %s --check-prefix=INSPECTPY
// INSPECTPY: error: '{{.*}}refusal_kernels.py' is a Python file; inspect takes a .mlir file with autotuning groups
// INSPECTPY-NOT: operation name
//
// Input that is not UTF-8: the line and column of the first bad byte (file and stdin).
// RUN: %python -c "open('%t.latin1.mlir', 'wb').write(b'module {\n}\n// caf\xe9\n')"
// RUN: not autotune-export %t.latin1.mlir 2>&1 | FileCheck %s --check-prefix=UTF8
// UTF8: latin1.mlir:3:7: error: invalid UTF-8 (byte 0xE9); autotune-export reads MLIR as UTF-8 text
// RUN: not autotune-export - < %t.latin1.mlir 2>&1 | FileCheck %s --check-prefix=UTF8STDIN
// UTF8STDIN: <stdin>:3:7: error: invalid UTF-8 (byte 0xE9)
// UTF8STDIN-NOT: internal error
//
// An empty module has nothing to compile into a .vmfb (not "outer module does not contain a vm.module op").
// RUN: printf '' > %t.empty.mlir
// RUN: not autotune-export %t.empty.mlir --emit vmfb -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: empty.mlir:1:1: error: the module has nothing to compile: it defines no public function
// EMPTY-NOT: vm.module
//
// --backend llvm-cpu cannot run a Triton group (CUDA code): refused before anything compiles.
// RUN: not autotune-export %s --emit vmfb --backend llvm-cpu -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: cli_usage.mlir:[[# @LINE + 20]]:3: error: @g is a triton(...) group: its variants are CUDA code (PTX), which --backend llvm-cpu cannot run; build it with --backend cuda
// ... nor the CUDA objects of an executable source.
// RUN: not autotune-export %S/../compat/rfc.mlir --emit vmfb --backend llvm-cpu -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=CPUOBJ
// CPUOBJ: rfc.mlir:{{[0-9]+}}:3: error: @executable holds CUDA objects, which --backend llvm-cpu cannot run
//
// --target: the supported architectures are named (sm_75 and sm_70 are older than Triton's
// sm_80 minimum here, sm_120 is not a target of this toolkit).
// RUN: not autotune-export %s --target sm_75 2>&1 | FileCheck %s --check-prefix=SM75
// SM75: error: unsupported CUDA target 'sm_75': supported are sm_80, sm_86, sm_89, sm_90, sm_100
// SM75-NOT: Traceback
// RUN: not autotune-export %s --target sm_70 2>&1 | FileCheck %s --check-prefix=SM70
// SM70: error: unsupported CUDA target 'sm_70': supported are sm_80, sm_86, sm_89, sm_90, sm_100
// RUN: not autotune-export %s --target sm_120 --emit vmfb -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=SM120
// SM120: error: unsupported CUDA target 'sm_120': supported are sm_80, sm_86, sm_89, sm_90, sm_100
// RUN: not autotune-export %s --target gfx90a 2>&1 | FileCheck %s --check-prefix=GFX
// GFX: error: unknown CUDA target 'gfx90a' (expected sm_XY, e.g. sm_80 or sm_90)
// RUN: not autotune-export %s --target sm_80,sm_80 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: target sm_80 is given twice in --target sm_80,sm_80

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
