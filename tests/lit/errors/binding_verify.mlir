// verify-autotuning-groups checks what a group's dispatches bind against IREE's binding rule
// (autotune_export/ir/binding.py) before lower-autotuning-dispatch builds on it.
// RUN: autotune-export %s -p verify-autotuning-groups --split-input-file --verify-diagnostics

// A divisibility guard on a float constant: the guard would be `x & 15 == 0` built on an f32
// (invalid IR, issue 21.6). Refused at the dispatch.
#layout = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}\n.visible .entry a_s()\n{\nret;\n}"}>]}>}> {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g variants([@a]) specialized([@a_s], divisible_by_16 = [1])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @a_s ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%k: i32, %eps: f32) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  // expected-error @+1 {{specialized(..., divisible_by_16 = [...]) of @e::@g guards constant 1 of this dispatch, a f32 operand: the guard (divisible by 16, equal to 1) applies to integer operands only}}
  %r = flow.dispatch @e::@g[%n](%k, %eps) : (i32, f32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// equal_to_1 likewise.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}\n.visible .entry a_s()\n{\nret;\n}"}>]}>}> {
  // expected-note @+1 {{@g is defined here}}
  hal.executable.autotuning.export @g variants([@a]) specialized([@a_s], equal_to_1 = [0])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @a_s ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%eps: f16) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  // expected-error @+1 {{specialized(..., equal_to_1 = [...]) of @e::@g guards constant 0 of this dispatch, a f16 operand}}
  %r = flow.dispatch @e::@g[%n](%eps) : (f16) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}
