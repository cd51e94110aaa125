// Errors in input written in older IREE syntax: the rewrite keeps every line where it was,
// so IREE's own errors keep their lines (and columns on lines that were not rewritten);
// old spellings with no IREE 3.13 equivalent are reported where they are.
// RUN: autotune-export %s -p '' --split-input-file --verify-diagnostics
// RUN: not autotune-export %s -p '' --split-input-file 2> %t.err
// RUN: FileCheck %s < %t.err
// RUN: not grep -e Traceback -e "internal error" %t.err

hal.executable.source private @e attributes {
  objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx"}>]}>
} {
  hal.executable.export public @k ordinal(0)
      layout(#hal.pipeline.layout<push_constants = 0, sets = [
        <0, bindings = [<0, storage_buffer>]>
      ]>) attributes {
    workgroup_size = [64 : index, 1 : index, 1 : index]
  } {
  ^bb0(%device: !hal.device, %n: index):
    // CHECK: errors.mlir:[[# @LINE + 2]]:25: error: use of undeclared SSA value name
    // expected-error @+1 {{use of undeclared SSA value name}}
    %x = arith.addi %n, %m : index
    hal.return %x, %x, %x : index, index, index
  }
}

// -----

#layout = #hal.pipeline.layout<push_constants = 1, sets = [
  // CHECK: errors.mlir:[[# @LINE + 2]]:44: error: malformed pre-3.0 layout #hal.pipeline.layout<push_constants = N, sets = [...]>: expected ',' or '>', found 'Only'
  // expected-error @+1 {{malformed pre-3.0 layout}}
  <0, bindings = [<0, storage_buffer, Read Only>]>
]>

// -----

#layout = #hal.pipeline.layout<push_constants = 1, sets = [
  <0, bindings = [
    <0, storage_buffer>,
    // CHECK: errors.mlir:[[# @LINE + 2]]:5: error: malformed pre-3.0 layout {{.+}}: set 0 binding 0 is declared twice
    // expected-error @+1 {{set 0 binding 0 is declared twice}}
    <0, storage_buffer, ReadOnly>
  ]>
]>

// -----

// CHECK: errors.mlir:[[# @LINE + 2]]:98: error: malformed pre-3.0 layout {{.+}}: unknown binding flag 'WriteOnly'; expected ReadOnly or Indirect
// expected-error @+1 {{unknown binding flag 'WriteOnly'}}
#layout = #hal.executable.layout<push_constants = 1, sets = [<0, bindings = [<0, storage_buffer, WriteOnly>]>]>

// -----

// CHECK: errors.mlir:[[# @LINE + 2]]:80: error: malformed pre-3.0 layout {{.+}}: unknown descriptor type 'sampler'
// expected-error @+1 {{unknown descriptor type 'sampler'}}
#layout = #hal.pipeline.layout<push_constants = 1, sets = [<0, bindings = [<0, sampler>]>]>

// -----

#layout = #hal.pipeline.layout<push_constants = 0, sets = [<0, bindings = [<0, storage_buffer>, <1, storage_buffer>]>]>
hal.executable.source private @e {
  hal.executable.export public @k ordinal(0) layout(#layout) attributes {
    workgroup_size = [64 : index, 1 : index, 1 : index],
    // CHECK: errors.mlir:[[# @LINE + 2]]:5: error: hal.interface.bindings maps dispatch operands to bindings out of order; IREE 3.x binds them in the layout's order (<0, 0>, <0, 1>): reorder the layout's bindings instead
    // expected-error @+1 {{hal.interface.bindings maps dispatch operands to bindings out of order}}
    hal.interface.bindings = [#hal.interface.binding<0, 1>, #hal.interface.binding<0, 0>]
  } {
  ^bb0(%device: !hal.device, %n: index):
    hal.return %n, %n, %n : index, index, index
  }
}

// -----

// An error on the line after a rewritten layout keeps its line.
#layout = #hal.pipeline.layout<push_constants = 0, sets = [
  <0, bindings = [<0, storage_buffer>]>
]>
hal.executable.source private @e {
  // CHECK: errors.mlir:[[# @LINE + 2]]:62: error: undefined symbol alias id 'nolayout'
  // expected-error @+1 {{undefined symbol alias id 'nolayout'}}
  hal.executable.export public @k ordinal(0) layout(#nolayout)
}
