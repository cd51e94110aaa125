// A group whose variants IREE compiles itself for llvm-cpu: the CPU path of run-time tuning.
// @slow computes the same result as @fast (2 * x) with 64 extra square roots per element, so
// tuning must pick @fast; @slow is the default (variant 0) until tuned.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @cpu_ex {
  hal.executable.autotuning.export @scale variants([@slow, @fast]) tune_workload(tensor<65536xf32>)
  hal.executable.export public @fast ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @slow ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @fast() {
      %c0 = arith.constant 0 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %c1 = arith.constant 1 : index
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      return
    }
    func.func @slow() {
      %c0 = arith.constant 0 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %c1 = arith.constant 1 : index
      %reps = arith.constant 64 : index
      %two = arith.constant 2.0 : f32
      %zero = arith.constant 0.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %acc = scf.for %r = %c0 to %reps step %c1 iter_args(%a = %zero) -> f32 {
          %ax = math.absf %x : f32
          %s = math.sqrt %ax : f32
          %t = arith.addf %a, %s : f32
          scf.yield %t : f32
        }
        %k = arith.mulf %acc, %zero : f32
        %y0 = arith.mulf %x, %two : f32
        %y = arith.addf %y0, %k : f32
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
  %y = flow.dispatch @cpu_ex::@scale[%n](%x, %n32) : (tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %y : tensor<?xf32>
}
