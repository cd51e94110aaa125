// reset_to_zero(...) and restore_value(...) read and print back in both forms: {output}
// parameter names in the triton(...) form, result indices in the variants([...]) form, `()`
// (none: overrides the kernel's triton.autotune). print -> parse -> print is a fixed point,
// also from the generic op.
// RUN: autotune-export %s -p '' --split-input-file | FileCheck %s
// RUN: autotune-export %s -p '' --split-input-file > %t.1.mlir
// RUN: autotune-export %t.1.mlir -p '' --split-input-file > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// CHECK-LABEL: hal.executable.source private @triton_form
// CHECK-NEXT:    hal.executable.autotuning.export @acc
// CHECK-NEXT:        triton("kernel.py", "acc_kernel")
// CHECK-NEXT:        signature(x_ptr: *fp32, acc_ptr: *fp32 {output}, hist_ptr: *i32 {output}, n: i32)
// CHECK-NEXT:        configs([{BLOCK = 128}])
// CHECK-NEXT:        workload(n)
// CHECK-NEXT:        grid(cdiv(n, BLOCK))
// CHECK-NEXT:        reset_to_zero(acc_ptr)
// CHECK-NEXT:        restore_value(hist_ptr)
// CHECK-NEXT:        tune_workload(tensor<4096xf32>)
// CHECK-NEXT:  }
hal.executable.source private @triton_form {
  hal.executable.autotuning.export @acc
    triton("kernel.py", "acc_kernel")
    signature(x_ptr: *fp32, acc_ptr: *fp32 {output}, hist_ptr: *i32 {output}, n: i32)
    restore_value(hist_ptr)   // the clauses may come in any order
    configs([{BLOCK = 128}]) workload(n) grid(cdiv(n, BLOCK))
    tune_workload(tensor<4096xf32>)
    reset_to_zero(acc_ptr)
}

// -----

// CHECK-LABEL: hal.executable.source private @rfc_form
// CHECK-NEXT:    hal.executable.autotuning.export @acc
// CHECK-NEXT:        variants([@a, @b])
// CHECK-NEXT:        reset_to_zero(0, 2)
// CHECK-NEXT:        restore_value()
// CHECK-NEXT:        default(@b)
hal.executable.source private @rfc_form {
  hal.executable.autotuning.export @acc variants([@a, @b]) default(@b) reset_to_zero(0, 2) restore_value()
}

// -----

// The generic op (names as strings, indices as integers) reads back into the sugared clauses.
// CHECK-LABEL: hal.executable.source private @generic
// CHECK-NEXT:    hal.executable.autotuning.export @g
// CHECK-NEXT:        variants([@a])
// CHECK-NEXT:        reset_to_zero(1)
hal.executable.source private @generic {
  "autotune.export"() {sym_name = "g", variants = [@a], reset_to_zero = [1 : i64]} : () -> ()
}

// -----

// CHECK-LABEL: hal.executable.source private @generic_names
// CHECK:             reset_to_zero(o)
hal.executable.source private @generic_names {
  "autotune.export"() {sym_name = "g", triton = ["k.py", "k"], signature = [["o", "*fp32", "output"], ["n", "i32"]], workload = ["n"], grid = ["n"], reset_to_zero = ["o"]} : () -> ()
}
