// Errors in the ordinary IREE IR around extension ops keep their exact line and column: the
// front end replaces each op by a generic op on the same line (a multi-line op is padded
// with its newlines) and maps columns after it back to the input's.
// RUN: autotune-export %s -p '' --split-input-file --verify-diagnostics
// RUN: not autotune-export %s -p '' --split-input-file 2> %t.err
// RUN: FileCheck %s < %t.err
// RUN: not grep Traceback %t.err

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("kernel.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128},
               {BLOCK = 256}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%n: i32) -> i32 {
  // CHECK: ir.mlir:[[# @LINE + 2]]:23: error: use of undeclared SSA value name
  // expected-error @+1 {{use of undeclared SSA value name}}
  %x = arith.addi %n, %m : i32
  util.return %x : i32
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g variants([@a])
  // CHECK: ir.mlir:[[# @LINE + 2]]:62: error: undefined symbol alias id 'nolayout'
  // expected-error @+1 {{undefined symbol alias id 'nolayout'}}
  hal.executable.export public @a ordinal(0) layout(#nolayout)
}

// -----

// Text after the op on its own line: the column is the input's, not the generic op's.
hal.executable.source private @e {
  // CHECK: ir.mlir:[[# @LINE + 2]]:53: error: expected operation name in quotes
  // expected-error @+1 {{expected operation name in quotes}}
  hal.executable.autotuning.export @g variants([@a]), @b
}

// -----

hal.executable.source private @e {
  // CHECK: ir.mlir:[[# @LINE + 3]]:27: error: expected '(' to start operand list
  // expected-error @+2 {{expected '(' to start operand list}}
  hal.executable.autotuning.export @g
      variants([@a]) "foo" {
}

// -----

// A comment that looks like a clause does not extend the op; the IR after it is checked.
hal.executable.source private @e {
  hal.executable.autotuning.export @g variants([@a])  // default(@a)
  // CHECK: ir.mlir:[[# @LINE + 2]]:3: error: custom op 'hal.executable.bogus' is unknown
  // expected-error @+1 {{custom op 'hal.executable.bogus' is unknown}}
  hal.executable.bogus
}
