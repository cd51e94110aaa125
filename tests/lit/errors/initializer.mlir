// emit-autotune-initializer: a group must be dispatched by a host function that can be
// called on fake data (static argument types, or a matching tune_workload(...)).
// RUN: autotune-export %s -p verify-autotuning-groups,emit-autotune-initializer,lower-autotuning-dispatch --split-input-file --verify-diagnostics

// A group that no host function dispatches cannot be tuned (nothing to measure).
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{@g is never dispatched: add a flow.dispatch @e::@g[...] in a host function}}
  hal.executable.autotuning.export @g variants([@a])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// The host takes dynamic shapes and no tune_workload(...) says which to measure: it builds
// without benchmark and check entries; a remark for a group of one variant (nothing to check).
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-remark @+1 {{@g cannot be tuned on fake data: argument 0 of host function @host is tensor<?xf32> and no tune_workload(...) gives a static type or value per argument; it is built without benchmark entries}}
  hal.executable.autotuning.export @g variants([@a])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<?xf32>, %n: i32) -> tensor<?xf32> {
  %c = arith.index_cast %n : i32 to index
  %r = flow.dispatch @e::@g[%c](%x, %n) : (tensor<?xf32>{%c}, i32) -> tensor<?xf32>{%c}
  util.return %r : tensor<?xf32>
}

// -----

// The same with two variants: a warning, since neither can be checked against the other before
// it runs on live data (issue 21, item 1: round-robin used to run them unchecked).
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}\n.visible .entry b()\n{\nret;\n}"}>]}>}> {
  // expected-warning @+1 {{@g cannot be tuned on fake data: argument 0 of host function @host is tensor<?xf32> and no tune_workload(...) gives a static type or value per argument; it is built without benchmark entries and without check entries, so no variant can be checked against the default before it runs: strategy "round-robin" leaves it on its default variant unless the runtime is told allow_unchecked=True (unchecked variants then run on live data); give tune_workload(...) to tune and check it}}
  hal.executable.autotuning.export @g variants([@a, @b])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  hal.executable.export public @b ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<?xf32>, %n: i32) -> tensor<?xf32> {
  %c = arith.index_cast %n : i32 to index
  %r = flow.dispatch @e::@g[%c](%x, %n) : (tensor<?xf32>{%c}, i32) -> tensor<?xf32>{%c}
  util.return %r : tensor<?xf32>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{tune_workload gives 1 value, but host function @host takes 2 arguments}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(tensor<64xf32>)
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<?xf32>, %n: i32) -> tensor<?xf32> {
  %c = arith.index_cast %n : i32 to index
  %r = flow.dispatch @e::@g[%c](%x, %n) : (tensor<?xf32>{%c}, i32) -> tensor<?xf32>{%c}
  util.return %r : tensor<?xf32>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{tune_workload value 0 is tensor<64xf16>, which does not fit argument 0 of @host (tensor<?xf32>)}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(tensor<64xf16>, 64 : i32)
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<?xf32>, %n: i32) -> tensor<?xf32> {
  %c = arith.index_cast %n : i32 to index
  %r = flow.dispatch @e::@g[%c](%x, %n) : (tensor<?xf32>{%c}, i32) -> tensor<?xf32>{%c}
  util.return %r : tensor<?xf32>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{tune_workload value 0 is tensor<64x2xf32>, which does not fit argument 0 of @host (tensor<?xf32>)}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(tensor<64x2xf32>, 64 : i32)
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<?xf32>, %n: i32) -> tensor<?xf32> {
  %c = arith.index_cast %n : i32 to index
  %r = flow.dispatch @e::@g[%c](%x, %n) : (tensor<?xf32>{%c}, i32) -> tensor<?xf32>{%c}
  util.return %r : tensor<?xf32>
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{tune_workload value 1 is 64 : i64, but argument 1 of @host is i32}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(tensor<64xf32>, 64 : i64)
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<?xf32>, %n: i32) -> tensor<?xf32> {
  %c = arith.index_cast %n : i32 to index
  %r = flow.dispatch @e::@g[%c](%x, %n) : (tensor<?xf32>{%c}, i32) -> tensor<?xf32>{%c}
  util.return %r : tensor<?xf32>
}

// -----

// A frozen choices(...) key has one value per workload value of the group's dispatches.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a(.param .u64 a, .param .u64 b, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-error @+1 {{choices(...) entry [8, 2] = @k_a gives 2 workload values, but the variants of @k take 1}}
  hal.executable.autotuning.export @k variants([@k_a]) choices([8, 2] = @k_a)
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [32 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n_i32 = arith.constant 1024 : i32
  %y = flow.dispatch @ex::@k[%n](%x, %n_i32) : (tensor<1024xf32>, i32) -> tensor<1024xf32>
  util.return %y : tensor<1024xf32>
}

// -----

// A scalar read from a tensor (tensor.extract) cannot be made on fake data: refused, with the way
// around it (a function of its own that takes the scalar as an argument).
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{(it depends on 'tensor.extract', which is not a side-effect-free value computation); move the dispatch into a function of its own that takes that value as an argument (docs/limits.md)}}
  hal.executable.autotuning.export @g variants([@a])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<16xf32>, %s: tensor<i32>) -> tensor<16xf32> {
  %n = tensor.extract %s[] : tensor<i32>
  %c = arith.index_cast %n : i32 to index
  %r = flow.dispatch @e::@g[%c](%x, %n) : (tensor<16xf32>, i32) -> tensor<16xf32>
  util.return %r : tensor<16xf32>
}

// -----

// A dispatch in a loop whose workload is the loop's induction variable (issue 21, Consistency): the
// tuning entries cannot know the index, so the group is refused for tuning on fake data with the way
// around it (docs/limits.md: a function of its own, util.call'ed from the loop, taking the index).
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\nret;\n}"}>]}>}> {
  // expected-error @+1 {{(it depends on argument 0 of a block other than the host's entry block); move the dispatch into a function of its own that takes that value as an argument (docs/limits.md)}}
  hal.executable.autotuning.export @g variants([@a])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
util.func public @host(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c1 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<16xf32>) {
    %i32 = arith.index_cast %i : index to i32
    %y = flow.dispatch @e::@g[%i](%acc, %i32) : (tensor<16xf32>, i32) -> tensor<16xf32>
    scf.yield %y : tensor<16xf32>
  }
  util.return %r : tensor<16xf32>
}
