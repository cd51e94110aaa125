// A group with variants that must never take the tuning process down (issue 24 item 5), on the
// CPU (IREE compiles the variants for llvm-cpu). Every variant computes out = 2 * x when it
// finishes: @ok (the default) and @fast; @oob also stores far out of bounds (element 2^40 of the
// output, 4 TiB past its start: unmapped memory, a segmentation fault, the CPU counterpart of a
// CUDA illegal address); @spin never terminates (an scf.while whose condition, x == x on the
// loaded input, holds for every value the fake data has: no NaN); @greedy asks for 128 KiB of
// workgroup local memory, more than IREE's CPU executor gives a workgroup when its runtime flag
// --task_worker_local_memory=65536 is set, so IREE refuses to run it ("RESOURCE_EXHAUSTED;
// dispatch requires 131072b of local memory but only 65536b is available per-worker"): a
// variant the runtime cannot launch, as CUDA refuses a kernel that asks for more than the GPU has.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @faulty_ex {
  hal.executable.autotuning.export @scale variants([@ok, @oob, @spin, @greedy, @fast]) tune_workload(tensor<4096xf32>)
  hal.executable.export public @ok ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @oob ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @spin ordinal(2) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @greedy ordinal(3) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  } attributes {workgroup_local_memory = 131072 : index}
  hal.executable.export public @fast ordinal(4) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @ok() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      return
    }
    func.func @oob() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %far = arith.constant 1099511627776 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i] : memref<?xf32>
        %j = arith.addi %i, %far : index
        memref.store %y, %out[%j] : memref<?xf32>
      }
      return
    }
    func.func @spin() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      scf.while : () -> () {
        %x = memref.load %in[%c0] : memref<?xf32>
        %go = arith.cmpf oeq, %x, %x : f32
        scf.condition(%go)
      } do {
        %x = memref.load %in[%c0] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%c0] : memref<?xf32>
        scf.yield
      }
      return
    }
    func.func @greedy() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      return
    }
    func.func @fast() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      return
    }
  }
}
util.func public @scale(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %y = flow.dispatch @faulty_ex::@scale[%n](%x, %n32) : (tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %y : tensor<?xf32>
}
