// A group that takes a lock in an integer tensor passed in place (issue 21, item 10), on the
// CPU (IREE compiles the variants for llvm-cpu): @a and @b compute out = 2 * x under the lock
// (lock[0]: 0 free, 1 taken; taken, then released). A GPU kernel would spin on a taken lock
// forever; these write NaN instead, so a lock that held 1 when the kernel started shows in the
// results instead of hanging the test. The dispatch lists the lock in autotune.fake_zeros, as
// materialize-triton-variants does for a Triton kernel whose TTIR updates it atomically
// (tt.atomic_cas / tt.atomic_rmw), so the benchmark and check entries start it at 0.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @lock_ex {
  hal.executable.autotuning.export @locked variants([@a, @b])
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
      %lock = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<1xi32>
      %out = hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %free = arith.constant 0 : i32
      %taken = arith.constant 1 : i32
      %two = arith.constant 2.0 : f32
      %nan = arith.constant 0x7FC00000 : f32
      scf.for %i = %c0 to %n step %c1 {
        %held = memref.load %lock[%c0] : memref<1xi32>
        %is_free = arith.cmpi eq, %held, %free : i32
        scf.if %is_free {
          memref.store %taken, %lock[%c0] : memref<1xi32>
          %v = memref.load %x[%i] : memref<?xf32>
          %y = arith.mulf %v, %two : f32
          memref.store %y, %out[%i] : memref<?xf32>
          memref.store %free, %lock[%c0] : memref<1xi32>
        } else {
          memref.store %nan, %out[%i] : memref<?xf32>
        }
      }
      return
    }
    func.func @b() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %lock = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<1xi32>
      %out = hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %free = arith.constant 0 : i32
      %taken = arith.constant 1 : i32
      %two = arith.constant 2.0 : f32
      %nan = arith.constant 0x7FC00000 : f32
      %held = memref.load %lock[%c0] : memref<1xi32>
      %is_free = arith.cmpi eq, %held, %free : i32
      scf.if %is_free {
        memref.store %taken, %lock[%c0] : memref<1xi32>
        scf.for %i = %c0 to %n step %c1 {
          %v = memref.load %x[%i] : memref<?xf32>
          %y = arith.mulf %v, %two : f32
          memref.store %y, %out[%i] : memref<?xf32>
        }
        memref.store %free, %lock[%c0] : memref<1xi32>
      } else {
        scf.for %i = %c0 to %n step %c1 {
          memref.store %nan, %out[%i] : memref<?xf32>
        }
      }
      return
    }
  }
}
util.func public @locked(%x: tensor<1024xf32>, %lock: tensor<1xi32>) -> (tensor<1xi32>, tensor<1024xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @lock_ex::@locked[%n](%x, %lock, %n32) {autotune.fake_zeros = array<i64: 1>} : (tensor<1024xf32>, tensor<1xi32>, i32) -> (%lock, tensor<1024xf32>)
  util.return %r#0, %r#1 : tensor<1xi32>, tensor<1024xf32>
}
