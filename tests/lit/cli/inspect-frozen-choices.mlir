// autotune-export inspect on a .vmfb built for the CPU (llvm-cpu, no Triton compile): the frozen
// choices(...) and default(@v) the module was built with, from the reflection metadata's
// frozen_choices and default_frozen (issue 21: inspect showed no frozen choices of a .vmfb, and
// its default without saying whether it was frozen).
// RUN: autotune-export %s --emit vmfb --backend llvm-cpu -q -o %t.vmfb
// RUN: autotune-export inspect %t.vmfb --no-resources | FileCheck %s
// RUN: autotune-export inspect %t.vmfb --no-resources --json | FileCheck %s --check-prefix=JSON

// CHECK:      group @cx::@g: 2 variants
// CHECK-NEXT:   host:        @run
// CHECK-NEXT:   default:     @twice (frozen by default(@v))
// CHECK-NEXT:   choices:     [8] = @thrice, [4096] = @twice (frozen per workload; any other workload: the default)

// JSON:      "default": "twice",
// JSON-NEXT: "frozen": true,
// JSON:      "choices": [
// JSON-NEXT:   {
// JSON-NEXT:     "workload": [
// JSON-NEXT:       8
// JSON-NEXT:     ],
// JSON-NEXT:     "variant": "thrice"
// JSON-NEXT:   },
// JSON-NEXT:   {
// JSON-NEXT:     "workload": [
// JSON-NEXT:       4096
// JSON-NEXT:     ],
// JSON-NEXT:     "variant": "twice"
// JSON-NEXT:   }
// JSON-NEXT: ],
// JSON-NOT:  malformed

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @cx {
  hal.executable.autotuning.export @g variants([@thrice, @twice])
      choices([8] = @thrice, [4096] = @twice) default(@twice)
  hal.executable.export public @thrice ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @twice ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @thrice() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %y = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %k = arith.constant 3.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %d = arith.mulf %v, %k : f32
        memref.store %d, %y[%i] : memref<?xf32>
      }
      return
    }
    func.func @twice() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %y = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %k = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %d = arith.mulf %v, %k : f32
        memref.store %d, %y[%i] : memref<?xf32>
      }
      return
    }
  }
}
util.func public @run(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %y = flow.dispatch @cx::@g[%n](%x, %n32) : (tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %y : tensor<?xf32>
}
