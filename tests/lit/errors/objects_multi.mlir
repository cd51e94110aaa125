// verify-autotuning-groups --target sm_80,sm_90: an object keyed for every CUDA target must
// run on both architectures.
// RUN: autotune-export %s -p verify-autotuning-groups --target sm_80,sm_90 --split-input-file --verify-diagnostics

// One object for every CUDA target must run on each of them: sm_90a PTX cannot serve sm_80.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{is PTX for sm_90a, which runs on sm_90 only; it cannot run on sm_80 (--target sm_80,sm_90)}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\0A.target sm_90a\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// sm_80 PTX serves both.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// Keyed objects for both targets: accepted.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_80"}> = [#hal.executable.object<{path = "k.sm_80.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>], #hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_90a"}> = [#hal.executable.object<{path = "k.sm_90a.ptx", data = ".version 8.6\0A.target sm_90a\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// A key's code for a later architecture than the key says.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{object 'k.sm_80.ptx' of @ex is keyed for sm_80 but is PTX for sm_86, which runs on sm_86 and later}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_80"}> = [#hal.executable.object<{path = "k.sm_80.ptx", data = ".version 8.6\0A.target sm_86\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>], #hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_90a"}> = [#hal.executable.object<{path = "k.sm_90a.ptx", data = ".version 8.6\0A.target sm_90a\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
