// Older IREE spellings of executable sources, exports and layouts, each rewritten into IREE
// 3.13's (printed here by the installed IREE); print -> parse -> print is a fixed point.
// RUN: autotune-export %s -p '' --split-input-file | FileCheck %s
// RUN: autotune-export %s -p verify-autotuning-groups --split-input-file > %t.1.mlir
// RUN: autotune-export %t.1.mlir -p '' --split-input-file > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// The pre-3.0 layout as IREE's samples wrote it (set and binding attributes as bare <...>),
// the 3.4 to 3.12 export (count region, then `attributes {...}`) and an export without a
// count region. Discardable attributes stay in `attributes {...}`.
// CHECK:       #[[L:.+]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @mid_3x <objects = <{
// CHECK-SAME:      attributes {owner = "me"} {
// CHECK-NEXT:    hal.executable.export public @a ordinal(0) layout(#[[L]]) count(
// CHECK:         } <workgroup_size = [32 : index, 1 : index, 1 : index], workgroup_local_memory = 4096> attributes {note = "kept"}
// CHECK-NEXT:    hal.executable.export public @b ordinal(1) layout(#[[L]]) <workgroup_size = [32 : index, 1 : index, 1 : index], subgroup_size = 32>{{$}}
#layout = #hal.pipeline.layout<push_constants = 1, sets = [
  <0, bindings = [
    <0, storage_buffer, ReadOnly>,
    <1, storage_buffer>
  ]>
]>
hal.executable.source private @mid_3x attributes {owner = "me", objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "k.ptx"}>]}>} {
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } attributes {workgroup_size = [32 : index, 1 : index, 1 : index], note = "kept", workgroup_local_memory = 4096 : index}
  hal.executable.export public @b ordinal(1) layout(#layout) attributes {workgroup_size = [32 : index, 1 : index, 1 : index], subgroup_size = 32 : index}
}

// -----

// 2022's names (#hal.executable.layout, #hal.descriptor_set.layout/.binding written out),
// several descriptor sets (bindings flattened in set, binding order), binding flags and an
// Indirect set; the pre-3.4 unnamed count region with a multi-line dictionary before it.
// CHECK:       #[[L:.+]] = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<uniform_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>, #hal.pipeline.binding<storage_buffer>], flags = Indirect>
// CHECK-LABEL: hal.executable.source private @old_2022
// CHECK-NEXT:    hal.executable.export public @k ordinal(0) layout(#[[L]]) count(%{{.+}}: !hal.device, %[[X:.+]]: index, %{{.+}}: index) -> (index, index, index) {
// CHECK-NEXT:      %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:      hal.return %[[X]], %[[C1]], %[[C1]] : index, index, index
// CHECK-NEXT:    } <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 1024>
hal.executable.source private @old_2022 {
  hal.executable.export public @k ordinal(0)
      layout(#hal.executable.layout<push_constants = 2, sets = [
        #hal.descriptor_set.layout<1, bindings = [
          #hal.descriptor_set.binding<0, storage_buffer>
        ]>,
        #hal.descriptor_set.layout<0, bindings = [
          #hal.descriptor_set.binding<3, storage_buffer, Indirect>,
          #hal.descriptor_set.binding<0, storage_buffer, ReadOnly>,
          #hal.descriptor_set.binding<1, uniform_buffer, "ReadOnly|Indirect">
        ], flags = Indirect>
      ]>) attributes {
    // Comments inside the dictionary are fine.
    workgroup_size = [128 : index, 1 : index, 1 : index],
    workgroup_local_memory = 1024 : index
  } {
  ^bb0(%device: !hal.device,
       %x: index, %y: index):
    %c1 = arith.constant 1 : index
    hal.return %x, %c1, %c1 : index, index, index
  }
}

// -----

// hal.interface.bindings that bind the dispatch operands in the layout's order (the only
// mapping IREE 3.x has) are dropped; other attributes of the dictionary move with it.
// CHECK-LABEL: hal.executable.source private @interface_bindings
// CHECK-NEXT:    hal.executable.export public @k ordinal(0) layout(#{{.+}}) count(
// CHECK:         } <workgroup_size = [64 : index, 1 : index, 1 : index]> attributes {tag = 1 : i64}{{$}}
// CHECK-NOT:     hal.interface
hal.executable.source private @interface_bindings {
  hal.executable.export public @k ordinal(0)
      layout(#hal.pipeline.layout<push_constants = 0, sets = [<0, bindings = [<0, storage_buffer, ReadOnly>, <1, storage_buffer>]>]>)
      attributes {
    workgroup_size = [64 : index, 1 : index, 1 : index],
    hal.interface.bindings = [#hal.interface.binding<0, 0>, #hal.interface.binding<0, 1>],
    tag = 1
  } {
  ^bb0(%device: !hal.device, %n: index):
    hal.return %n, %n, %n : index, index, index
  }
}

// -----

// The RFC's group op next to old-style exports: verify-autotuning-groups sees one layout.
// CHECK-LABEL: hal.executable.source private @group
// CHECK-NEXT:    hal.executable.autotuning.export @g
// CHECK-NEXT:        variants([@g_0, @g_1])
// CHECK-NEXT:        default(@g_1)
// CHECK-NEXT:    hal.executable.export public @g_0 ordinal(0) layout(#[[L:.+]]) count(
// CHECK:         hal.executable.export public @g_1 ordinal(1) layout(#[[L]]) count(
hal.executable.source private @group attributes {
  objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [
    #hal.executable.object<{path = "g.ptx", data = ".visible .entry g_0(.param .u64 a, .param .u32 n)\0A{\0Aret;\0A}\0A.visible .entry g_1(.param .u64 a, .param .u32 n)\0A{\0Aret;\0A}\0A"}>]}>
} {
  hal.executable.autotuning.export @g variants([@g_0, @g_1]) default(@g_1)
  hal.executable.export public @g_0 ordinal(0) layout(#hal.pipeline.layout<push_constants = 1, sets = [<0, bindings = [<0, storage_buffer>]>]>) attributes {workgroup_size = [32 : index, 1 : index, 1 : index]} {
  ^bb0(%device: !hal.device, %n: index):
    hal.return %n, %n, %n : index, index, index
  }
  hal.executable.export public @g_1 ordinal(1) layout(#hal.pipeline.layout<push_constants = 1, sets = [<0, bindings = [<0, storage_buffer>]>]>) attributes {workgroup_size = [64 : index, 1 : index, 1 : index]} {
  ^bb0(%device: !hal.device, %n: index):
    hal.return %n, %n, %n : index, index, index
  }
}

// -----

// Text that only looks like the old syntax is left alone: strings, comments, and the
// current syntax.
// CHECK-LABEL: util.func public @untouched
// CHECK-NEXT:    util.buffer.constant : !util.buffer = "attributes {workgroup_size = [1]} push_constants = 1, sets = []"
util.func public @untouched() -> !util.buffer {
  // attributes {workgroup_size = [1]} { ^bb0(%device: !hal.device): }
  %s = util.buffer.constant : !util.buffer = "attributes {workgroup_size = [1]} push_constants = 1, sets = []"
  util.return %s : !util.buffer
}
