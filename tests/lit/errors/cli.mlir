// The CLI contract for user errors: MLIR-style `FILE:LINE:COL: error:` lines on stderr,
// exit status 1 (2 is reserved for internal errors), no Python traceback, and the -o file
// neither created nor truncated.
//
// A syntax error: status exactly 1, the diagnostic at the right place, nothing else.
// RUN: echo keep > %t.out
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode != 1)" autotune-export %s -o %t.out 2> %t.err
// RUN: FileCheck %s --check-prefix=SYNTAX --match-full-lines < %t.err
// RUN: not grep Traceback %t.err
// RUN: FileCheck %s --check-prefix=KEEP < %t.out
// No output file appears either.
// RUN: rm -f %t.new
// RUN: not autotune-export %s -o %t.new 2> %t.err
// RUN: not ls %t.new
//
// From stdin, the diagnostics name <stdin>.
// RUN: not autotune-export - -o %t.out < %s 2> %t.err
// RUN: FileCheck %s --check-prefix=STDIN < %t.err
// RUN: FileCheck %s --check-prefix=KEEP < %t.out
//
// With --split-input-file, one bad chunk fails the whole run: the good chunk is not written.
// RUN: not autotune-export %s --split-input-file -p '' -o %t.out 2> %t.err
// RUN: FileCheck %s --check-prefix=SYNTAX < %t.err
// RUN: FileCheck %s --check-prefix=KEEP < %t.out
//
// An error found by a pass, not by the parser, behaves the same.
// RUN: not autotune-export %S/verify.mlir --split-input-file -p verify-autotuning-groups -o %t.out 2> %t.err
// RUN: FileCheck %s --check-prefix=PASS < %t.err
// RUN: not grep Traceback %t.err
// RUN: FileCheck %s --check-prefix=KEEP < %t.out
//
// A missing input file: one line, no location, status 1.
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode != 1)" autotune-export %t.does-not-exist.mlir -o %t.out 2> %t.err
// RUN: FileCheck %s --check-prefix=MISSING < %t.err
// RUN: FileCheck %s --check-prefix=KEEP < %t.out
//
// An unknown pass: one line naming the known passes, reported before the input is read.
// RUN: not autotune-export %s --split-input-file -p materialize,verify-autotuning-groups -o %t.out 2> %t.err
// RUN: FileCheck %s --check-prefix=PASSNAME < %t.err
// RUN: FileCheck %s --check-prefix=KEEP < %t.out

// KEEP: keep

// SYNTAX: {{.*}}cli.mlir:[[# @LINE + 4]]:48: error: expected '[' in variants(...), found '@a'
// SYNTAX-NOT: {{.}}
// STDIN: <stdin>:[[# @LINE + 2]]:48: error: expected '[' in variants(...), found '@a'
hal.executable.source private @bad {
  hal.executable.autotuning.export @g variants(@a, @b)
}

// -----

hal.executable.source private @good {
  hal.executable.autotuning.export @g variants([@a, @b])
}

// PASS: verify.mlir:{{[0-9]+}}:3: error: variant @b is not an export of @e
// MISSING: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
// MISSING-NOT: {{.}}
// PASSNAME: error: unknown pass 'materialize'; known passes: {{.*}}materialize-triton-variants{{.*}}
// PASSNAME-NOT: {{.}}

// --list-passes needs no input; no input at all is a one-line error.
// RUN: autotune-export --list-passes | FileCheck %s --check-prefix=PASSES
// PASSES: emit-autotune-initializer
// PASSES: lower-autotuning-dispatch
// PASSES: materialize-triton-variants
// PASSES: pin-variants
// PASSES: verify-autotuning-groups
// RUN: not autotune-export 2> %t.noinput
// RUN: FileCheck %s --check-prefix=NOINPUT < %t.noinput
// NOINPUT: error: no input file (give IN.mlir, or '-' for stdin)
