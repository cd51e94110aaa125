// Dispatches to a group must match its variants: workload arity, bindings, constants.
// RUN: autotune-export %s -p verify-autotuning-groups --split-input-file --verify-diagnostics

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{@k is defined here}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<16xf32>) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  %n_i32 = arith.constant 16 : i32
  // expected-error @+1 {{dispatch to @ex::@k passes 2 workload values, but its variants take 1}}
  %y = flow.dispatch @ex::@k[%n, %n](%x, %n_i32) : (tensor<16xf32>, i32) -> tensor<16xf32>
  util.return %y : tensor<16xf32>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{@k is defined here}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<16xf32>, %z: tensor<16xf32>) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  %n_i32 = arith.constant 16 : i32
  // expected-error @+1 {{dispatch to @ex::@k has 2 tensor operands and 1 untied results (3 bindings), but the layout of its variants has 2 bindings}}
  %y = flow.dispatch @ex::@k[%n](%x, %z, %n_i32) : (tensor<16xf32>, tensor<16xf32>, i32) -> tensor<16xf32>
  util.return %y : tensor<16xf32>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{@k is defined here}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<16xf32>) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  %n_i32 = arith.constant 16 : i32
  // expected-error @+1 {{dispatch to @ex::@k passes 2 scalar operands, but the layout of its variants has 1 constants}}
  %y = flow.dispatch @ex::@k[%n](%x, %n_i32, %n_i32) : (tensor<16xf32>, i32, i32) -> tensor<16xf32>
  util.return %y : tensor<16xf32>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{@k is defined here}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<16xf32>) -> tensor<16xf32> {
  %n = arith.constant 16 : index
  // expected-error @+1 {{dispatch to @ex::@k passes a index operand; IREE constants are 32-bit values}}
  %y = flow.dispatch @ex::@k[%n](%x, %n) : (tensor<16xf32>, index) -> tensor<16xf32>
  util.return %y : tensor<16xf32>
}

// -----

// One tensor tied to two results: IREE would bind both outputs to one buffer.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{@k is defined here}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %n = arith.constant 16 : index
  // expected-error @+1 {{dispatch to @ex::@k ties 2 results to one tensor (operand 0): IREE would bind those outputs to one buffer; give each tied result a tensor of its own}}
  %y:2 = flow.dispatch @ex::@k[%n](%x, %x) : (tensor<16xf32>, tensor<16xf32>) -> (%x, %x)
  util.return %y#0, %y#1 : tensor<16xf32>, tensor<16xf32>
}
