// verify-autotuning-groups with --target: every PTX or cubin object must be able to run on the
// target architecture (IREE embeds objects verbatim and checks nothing; the driver would fail
// to load them). PTX for sm_XY runs on X.Y and later (JIT), sm_XYa PTX only on X.Y, a cubin
// on X.Y up to X.9. The error is at the executable source, which holds the objects.
// RUN: autotune-export %s -p verify-autotuning-groups --target sm_80 --split-input-file --verify-diagnostics

// Triton's sm_90 PTX is arch-specific (.target sm_90a): it runs on sm_90 only.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{object 'k.ptx' of @ex is PTX for sm_90a, which runs on sm_90 only; it cannot run on sm_80 (--target sm_80); build it for sm_80}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\0A.target sm_90a\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// PTX for a later architecture: the driver cannot JIT it for an older one.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{object 'k.ptx' of @ex is PTX for sm_90, which runs on sm_90 and later; it cannot run on sm_80 (--target sm_80)}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\0A.target sm_90\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// PTX for sm_86 needs 8.6.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{is PTX for sm_86, which runs on sm_86 and later; it cannot run on sm_80}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\0A.target sm_86\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// PTX for an older architecture is JIT-compiled by the driver: accepted.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\0A.target sm_75\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// A cubin (ELF e_flags) for sm_90a.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{object 'k.cubin' of @ex is a cubin for sm_90a, which runs on sm_90 only; it cannot run on sm_80}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.cubin", data = dense<[127, 69, 76, 70, 2, 1, 1, 51, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 90, 8, 90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 107, 95, 97, 0]> : vector<68xi8>}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// A cubin for sm_86 runs on 8.6 to 8.9, not on 8.0.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{is a cubin for sm_86, which runs on sm_86 to sm_89; it cannot run on sm_80}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.cubin", data = dense<[127, 69, 76, 70, 2, 1, 1, 51, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 86, 0, 86, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 107, 95, 97, 0]> : vector<68xi8>}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// A cubin of the newer ELF ABI (CUDA 12.8+, sm_100a).
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{is a cubin for sm_100a, which runs on sm_100 only; it cannot run on sm_80}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.cubin", data = dense<[127, 69, 76, 70, 2, 1, 1, 65, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 100, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 107, 95, 97, 0]> : vector<68xi8>}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// A cubin for sm_80: accepted.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.cubin", data = dense<[127, 69, 76, 70, 2, 1, 1, 51, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 80, 0, 80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 107, 95, 97, 0]> : vector<68xi8>}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// An object keyed for one architecture must hold code that runs there.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{object 'k.ptx' of @ex is keyed for sm_80 but is PTX for sm_90a, which runs on sm_90 only}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_80"}> = [#hal.executable.object<{path = "k.ptx", data = ".version 8.6\0A.target sm_90a\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// Objects keyed per architecture, none for the target: sm_90a code only.
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
// expected-error @+1 {{@ex has no object for sm_80 (--target sm_80): its objects are keyed for sm_90a}}
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_90a"}> = [#hal.executable.object<{path = "k.sm_90a.ptx", data = ".version 8.6\0A.target sm_90a\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  // expected-note @+1 {{the variants of @k are in this object}}
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}

// -----

// Keyed objects for sm_80 and sm_90a: sm_80 is served (split-architectures picks per device).
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_80"}> = [#hal.executable.object<{path = "k.sm_80.ptx", data = ".version 8.6\0A.target sm_80\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>], #hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_90a"}> = [#hal.executable.object<{path = "k.sm_90a.ptx", data = ".version 8.6\0A.target sm_90a\0A.address_size 64\0A.visible .entry k_a()\0A{\0Aret;\0A}\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
}
