// reset_to_zero(...) / restore_value(...): what each form can name (front end), and what the
// dispatches of a variants([...]) group allow (zero-fill-outputs).
// RUN: autotune-export %s -p zero-fill-outputs --split-input-file --verify-diagnostics

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("k.py", "k") signature(x: *fp32, o: *fp32 {output}, n: i32)
      // expected-error @+1 {{reset_to_zero(...) names 'x', which is not an {output} pointer: IREE treats dispatch operands as immutable, so only what the dispatch returns can be zero-filled; mark it 'x: *fp32 {output}'}}
      workload(n) grid(n) reset_to_zero(x)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("k.py", "k") signature(x: *fp32, o: *fp32 {output}, n: i32)
      // expected-error @+1 {{restore_value(...) names 'n', which is not an {output} pointer}}
      workload(n) grid(n) restore_value(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("k.py", "k") signature(x: *fp32, o: *fp32 {output}, n: i32)
      // expected-error @+1 {{reset_to_zero(...) names 'out', which is not a parameter of the signature (x, o, n)}}
      workload(n) grid(n) reset_to_zero(out)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("k.py", "k") signature(x: *fp32, o: *fp32 {output}, n: i32)
      // expected-error @+1 {{in the triton(...) form reset_to_zero(...) names {output} parameters of the signature, not result indices; 0 is an index}}
      workload(n) grid(n) reset_to_zero(0)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{in the variants([...]) form restore_value(...) takes result indices of the group's dispatches (0, 1, ...), not names; 'o' is a name}}
  hal.executable.autotuning.export @g variants([@a]) restore_value(o)
}

// -----

hal.executable.source private @e {
  // expected-error @+2 {{'1' appears twice in reset_to_zero(...)}}
  // expected-note @+1 {{first given here}}
  hal.executable.autotuning.export @g variants([@a]) reset_to_zero(1, 1)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected a name, an integer or ')' in reset_to_zero(...), found '@a'}}
  hal.executable.autotuning.export @g variants([@a]) reset_to_zero(@a)
}

// -----

hal.executable.source private @e {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g variants([@a]) reset_to_zero(2)
}
util.func public @host(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{reset_to_zero(2) of @e::@g names result 2, but this dispatch has 2 results}}
  %r:2 = flow.dispatch @e::@g(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  util.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// restore_value of a result that is not written in place: nothing to restore.
hal.executable.source private @e {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g variants([@a]) restore_value(1)
}
util.func public @host(%x: tensor<4xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{restore_value(1) of @e::@g: result 1 of this dispatch is not written in place: IREE allocates an untied result per call with undefined contents, so there is nothing to restore; tie it to the operand whose contents the kernel reads (-> %operand), or declare it reset_to_zero}}
  %r:2 = flow.dispatch @e::@g(%x, %acc) : (tensor<4xf32>, tensor<4xf32>) -> (%acc, tensor<4xf32>)
  util.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A zeroed result of an element type with no zero.
hal.executable.source private @e {
  hal.executable.autotuning.export @g variants([@a]) reset_to_zero(0)
}
util.func public @host(%x: tensor<4xf32>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{reset_to_zero of @g: no zero of element type complex<f32>}}
  %r = flow.dispatch @e::@g(%x) : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
  util.return %r : tensor<4xcomplex<f32>>
}
