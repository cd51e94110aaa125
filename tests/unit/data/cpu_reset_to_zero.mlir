// An accumulating group on the CPU (IREE compiles the variants for llvm-cpu), for
// reset_to_zero: per element, @a and @b do out0[i] += x[i] (a read-modify-write, as an atomic
// add is), out1[i] = 3 * x[i] (a plain store) and out2[i] += 2 * x[i]; @a does 32 extra square
// roots per element (so tuning picks @b). reset_to_zero(0, 2) zero-fills results 0 and 2 at
// every dispatch (zero-fill-outputs) and before every timed run (the benchmark entries).
//   @acc        every result untied: IREE gives them fresh buffers of undefined contents.
//   @acc_state  result 0 written in place into the mutable global @state: without the clause it
//               accumulates from call to call (x, 2x, 3x, ...); with it, it is zero-filled first.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @acc_ex {
  hal.executable.autotuning.export @acc variants([@a, @b]) reset_to_zero(0, 2) tune_workload(tensor<4096xf32>)
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
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %o0 = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %o1 = hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %o2 = hal.interface.binding.subspan layout(#layout) binding(3) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %reps = arith.constant 32 : index
      %two = arith.constant 2.0 : f32
      %three = arith.constant 3.0 : f32
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
        %w = arith.addf %v, %k : f32
        %a0 = memref.load %o0[%i] : memref<?xf32>
        %s0 = arith.addf %a0, %w : f32
        memref.store %s0, %o0[%i] : memref<?xf32>
        %s1 = arith.mulf %w, %three : f32
        memref.store %s1, %o1[%i] : memref<?xf32>
        %a2 = memref.load %o2[%i] : memref<?xf32>
        %d2 = arith.mulf %w, %two : f32
        %s2 = arith.addf %a2, %d2 : f32
        memref.store %s2, %o2[%i] : memref<?xf32>
      }
      return
    }
    func.func @b() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %o0 = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %o1 = hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %o2 = hal.interface.binding.subspan layout(#layout) binding(3) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      %three = arith.constant 3.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %a0 = memref.load %o0[%i] : memref<?xf32>
        %s0 = arith.addf %a0, %v : f32
        memref.store %s0, %o0[%i] : memref<?xf32>
        %s1 = arith.mulf %v, %three : f32
        memref.store %s1, %o1[%i] : memref<?xf32>
        %a2 = memref.load %o2[%i] : memref<?xf32>
        %d2 = arith.mulf %v, %two : f32
        %s2 = arith.addf %a2, %d2 : f32
        memref.store %s2, %o2[%i] : memref<?xf32>
      }
      return
    }
  }
}
util.func public @acc(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %r:3 = flow.dispatch @acc_ex::@acc[%n](%x, %n32) : (tensor<?xf32>{%n}, i32) -> (tensor<?xf32>{%n}, tensor<?xf32>{%n}, tensor<?xf32>{%n})
  util.return %r#0, %r#1, %r#2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
util.global private mutable @state = dense<0.0> : tensor<777xf32>
util.func public @acc_state(%x: tensor<777xf32>) -> (tensor<777xf32>, tensor<777xf32>, tensor<777xf32>) {
  %n = arith.constant 777 : index
  %n32 = arith.constant 777 : i32
  %s = util.global.load @state : tensor<777xf32>
  %r:3 = flow.dispatch @acc_ex::@acc[%n](%x, %s, %n32) : (tensor<777xf32>, tensor<777xf32>, i32) -> (%s, tensor<777xf32>, tensor<777xf32>)
  util.global.store %r#0, @state : tensor<777xf32>
  util.return %r#0, %r#1, %r#2 : tensor<777xf32>, tensor<777xf32>, tensor<777xf32>
}
