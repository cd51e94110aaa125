// One group, three CPU variants of y = 2 * x whose speed depends on the workload n, for the
// per-workload choices of issue 13 (IREE compiles the variants for llvm-cpu):
//   @per_elem  16 square roots per element, no fixed cost: fastest for small n;
//   @fixed     a fixed 16384 dependent square roots, then 1 op per element: fastest for large n;
//   @wrong     1 op per element, but computes 3 * x: fastest everywhere, and wrong (the
//              cross-check must drop it before it can win).
// The host takes any n; tune_workload gives two workloads, n = 1024 and n = 262144.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @wl_ex {
  hal.executable.autotuning.export @scale variants([@per_elem, @fixed, @wrong])
      tune_workload([tensor<1024xf32>], [tensor<262144xf32>])
  hal.executable.export public @per_elem ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @fixed ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @wrong ordinal(2) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @per_elem() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %y = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %reps = arith.constant 16 : index
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
        memref.store %w, %y[%i] : memref<?xf32>
      }
      return
    }
    func.func @fixed() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %y = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %reps = arith.constant 16384 : index
      %two = arith.constant 2.0 : f32
      %zero = arith.constant 0.0 : f32
      %v0 = memref.load %x[%c0] : memref<?xf32>
      %acc = scf.for %r = %c0 to %reps step %c1 iter_args(%s = %v0) -> f32 {
        %av = math.absf %s : f32
        %q = math.sqrt %av : f32
        %t = arith.addf %q, %two : f32
        scf.yield %t : f32
      }
      %k = arith.mulf %acc, %zero : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %d = arith.mulf %v, %two : f32
        %w = arith.addf %d, %k : f32
        memref.store %w, %y[%i] : memref<?xf32>
      }
      return
    }
    func.func @wrong() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %y = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %three = arith.constant 3.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %d = arith.mulf %v, %three : f32
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
  %y = flow.dispatch @wl_ex::@scale[%n](%x, %n32) : (tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %y : tensor<?xf32>
}
