// verify-autotuning-groups: the variants of a group must be exports of its executable with
// one layout and one workload arity, and their entries must be in the executable's object.
// RUN: autotune-export %s -p verify-autotuning-groups --split-input-file --verify-diagnostics

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{variant @b is not an export of @e}}
  hal.executable.autotuning.export @g variants([@a, @b])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{variant @b is not an export of @e; it is an export of @f}}
  hal.executable.autotuning.export @g variants([@a, @b])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
hal.executable.source private @f {
  hal.executable.export public @b ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// A group is not a variant.
hal.executable.source private @e {
  // expected-error @+1 {{variant @g is not an export of @e}}
  hal.executable.autotuning.export @h variants([@g])
  hal.executable.autotuning.export @g variants([@a])
}

// -----

// Layouts differ: the error is at the variant that differs, with a note at the first one.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
#layout2 = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e {
  hal.executable.autotuning.export @g variants([@a, @b])
  // expected-note @+1 {{@a is defined here}}
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  // expected-error @+1 {{variant @b of @g has layout #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>, but @a has #hal.pipeline.layout<constants = 1}}
  hal.executable.export public @b ordinal(1) layout(#layout2) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e {
  hal.executable.autotuning.export @g variants([@a, @b])
  // expected-note @+1 {{@a is defined here}}
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  // expected-error @+1 {{variant @b of @g takes 2 workload values, but @a takes 1}}
  hal.executable.export public @b ordinal(1) layout(#layout) count(%device: !hal.device, %n: index, %m: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %m, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e {
  // expected-error @+1 {{@e has no objects, so the variants of @g have no code}}
  hal.executable.autotuning.export @g variants([@a])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{object file 'missing.ptx' not found (looked in}}
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "missing.ptx"}>]}>}> {
  hal.executable.autotuning.export @g variants([@a])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// An object path that cannot be read (here: a directory).
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{cannot read object '.': Is a directory}}
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "."}>]}>}> {
  hal.executable.autotuning.export @g variants([@a])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// The embedded PTX defines entry k0 only.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry k0()\n{\nret;\n}"}>]}>}> {
  hal.executable.autotuning.export @g variants([@a])
  // expected-error @+1 {{variant @a has no entry 'a' in the objects of @e (k.ptx)}}
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// The triton(...) form needs materialize-triton-variants first.
hal.executable.source private @e {
  // expected-error @+1 {{@g still has the triton(...) form; run materialize-triton-variants first}}
  hal.executable.autotuning.export @g triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
