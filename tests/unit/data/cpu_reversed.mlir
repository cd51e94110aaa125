// A group whose second variant reads its input backwards (y[i] = 2 * x[n - 1 - i], the first
// y[i] = 2 * x[i]), for the fake data of the cross-check (issue 21, item 12): on a constant
// fill the two agree; on seeded, position-dependent fake data they must not. @bad_int does the
// same on i32 (y[i] = x[n - 1 - i] + 1 against @good_int's x[i] + 1).
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @rev_ex {
  hal.executable.autotuning.export @scale variants([@forward, @reversed])
  hal.executable.autotuning.export @bump variants([@good_int, @bad_int])
  hal.executable.export public @forward ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @reversed ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @good_int ordinal(2) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @bad_int ordinal(3) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @forward() {
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
    func.func @reversed() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      %last = arith.subi %n, %c1 : index
      scf.for %i = %c0 to %n step %c1 {
        %j = arith.subi %last, %i : index
        %x = memref.load %in[%j] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      return
    }
    func.func @good_int() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xi32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xi32>{%n}
      %one = arith.constant 1 : i32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xi32>
        %y = arith.addi %x, %one : i32
        memref.store %y, %out[%i] : memref<?xi32>
      }
      return
    }
    func.func @bad_int() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xi32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : memref<?xi32>{%n}
      %one = arith.constant 1 : i32
      %last = arith.subi %n, %c1 : index
      scf.for %i = %c0 to %n step %c1 {
        %j = arith.subi %last, %i : index
        %x = memref.load %in[%j] : memref<?xi32>
        %y = arith.addi %x, %one : i32
        memref.store %y, %out[%i] : memref<?xi32>
      }
      return
    }
  }
}
util.func public @scale(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %n = arith.constant 4096 : index
  %n32 = arith.constant 4096 : i32
  %y = flow.dispatch @rev_ex::@scale[%n](%x, %n32) : (tensor<4096xf32>, i32) -> tensor<4096xf32>
  util.return %y : tensor<4096xf32>
}
util.func public @bump(%x: tensor<4096xi32>) -> tensor<4096xi32> {
  %n = arith.constant 4096 : index
  %n32 = arith.constant 4096 : i32
  %y = flow.dispatch @rev_ex::@bump[%n](%x, %n32) : (tensor<4096xi32>, i32) -> tensor<4096xi32>
  util.return %y : tensor<4096xi32>
}
