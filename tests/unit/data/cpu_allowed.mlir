// Issue 21.5: one group, two CPU variants of y = 2 * x, dispatched by two hosts. @short_ok
// stands for the config an unmasked kernel's prune_configs_by rejects for a small n (a block
// larger than n): it computes 2 * x for n >= 1024 only, and 3 * x below (what reading past n
// would give). The @small host's dispatch carries autotune.allowed = [@plain], as
// materialize-triton-variants writes it when the kernel's pruner keeps only @plain for that
// dispatch's arguments; the @big host's (the one tuning measures) may run both.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @al_ex {
  hal.executable.autotuning.export @scale variants([@plain, @short_ok])
  hal.executable.export public @plain ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @short_ok ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @plain() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %y = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %d = arith.mulf %v, %two : f32
        memref.store %d, %y[%i] : memref<?xf32>
      }
      return
    }
    func.func @short_ok() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c1024 = arith.constant 1024 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %x = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %y = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      %three = arith.constant 3.0 : f32
      %big = arith.cmpi uge, %n, %c1024 : index
      %f = arith.select %big, %two, %three : f32
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        %d = arith.mulf %v, %f : f32
        memref.store %d, %y[%i] : memref<?xf32>
      }
      return
    }
  }
}
util.func public @big(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %n = arith.constant 4096 : index
  %n32 = arith.constant 4096 : i32
  %y = flow.dispatch @al_ex::@scale[%n](%x, %n32) : (tensor<4096xf32>, i32) -> tensor<4096xf32>
  util.return %y : tensor<4096xf32>
}
util.func public @small(%x: tensor<256xf32>) -> tensor<256xf32> {
  %n = arith.constant 256 : index
  %n32 = arith.constant 256 : i32
  %y = flow.dispatch @al_ex::@scale[%n](%x, %n32) {autotune.allowed = [@plain]} : (tensor<256xf32>, i32) -> tensor<256xf32>
  util.return %y : tensor<256xf32>
}
