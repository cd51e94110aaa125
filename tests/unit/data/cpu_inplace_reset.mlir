// reset_to_zero on an accumulator written in place (issue 21, item 11), on the CPU (IREE
// compiles the variants for llvm-cpu): @a and @b do acc[i] += x[i] (@a with 32 extra square
// roots per element). The host passes the caller's %acc in place: as in Triton, whose
// autotuner zeroes reset_to_zero arguments only while benchmarking, real calls accumulate into
// it (acc + x); only the benchmark and check entries start it from zeros.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ip_ex {
  hal.executable.autotuning.export @acc variants([@a, @b]) reset_to_zero(0)
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
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %acc = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %reps = arith.constant 32 : index
      %zero = arith.constant 0.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %s = scf.for %r = %c0 to %reps step %c1 iter_args(%t = %zero) -> f32 {
          %av = math.absf %v : f32
          %q = math.sqrt %av : f32
          %u = arith.addf %t, %q : f32
          scf.yield %u : f32
        }
        %k = arith.mulf %s, %zero : f32
        %old = memref.load %acc[%i] : memref<?xf32>
        %w0 = arith.addf %old, %v : f32
        %w = arith.addf %w0, %k : f32
        memref.store %w, %acc[%i] : memref<?xf32>
      }
      return
    }
    func.func @b() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %acc = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %old = memref.load %acc[%i] : memref<?xf32>
        %w = arith.addf %old, %v : f32
        memref.store %w, %acc[%i] : memref<?xf32>
      }
      return
    }
  }
}
util.func public @step(%x: tensor<1024xf32>, %acc: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @ip_ex::@acc[%n](%x, %acc, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> %acc
  util.return %r : tensor<1024xf32>
}
