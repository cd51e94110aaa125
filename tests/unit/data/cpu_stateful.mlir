// A stateful host and an in-place group, on the CPU (IREE compiles the variants for llvm-cpu):
// @step doubles %x in place (the dispatch's result is tied to %x) and counts its calls in the
// mutable global @calls, returning both. @a and @b compute the same (@a with 32 extra square
// roots per element, so tuning picks @b). Tuning must neither change @calls nor let the
// in-place data drift (after n runs on one buffer it would be 0.5 * 2^n).
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ip_ex {
  hal.executable.autotuning.export @double variants([@a, @b]) tune_workload(tensor<4096xf32>)
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @b ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @a() {
      %c0 = arith.constant 0 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %c1 = arith.constant 1 : index
      %reps = arith.constant 32 : index
      %two = arith.constant 2.0 : f32
      %zero = arith.constant 0.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %acc = scf.for %r = %c0 to %reps step %c1 iter_args(%s = %zero) -> f32 {
          %av = math.absf %v : f32
          %q = math.sqrt %av : f32
          %t = arith.addf %s, %q : f32
          scf.yield %t : f32
        }
        %k = arith.mulf %acc, %zero : f32
        %d = arith.mulf %v, %two : f32
        %w = arith.addf %d, %k : f32
        memref.store %w, %x[%i] : memref<?xf32>
      }
      return
    }
    func.func @b() {
      %c0 = arith.constant 0 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %c1 = arith.constant 1 : index
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %d = arith.mulf %v, %two : f32
        memref.store %d, %x[%i] : memref<?xf32>
      }
      return
    }
  }
}
util.global private mutable @calls = 0 : i32
util.func public @step(%x: tensor<?xf32>) -> (tensor<?xf32>, i32) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %y = flow.dispatch @ip_ex::@double[%n](%x, %n32) : (tensor<?xf32>{%n}, i32) -> %x{%n}
  %old = util.global.load @calls : i32
  %one = arith.constant 1 : i32
  %new = arith.addi %old, %one : i32
  util.global.store %new, @calls : i32
  util.return %y, %new : tensor<?xf32>, i32
}
