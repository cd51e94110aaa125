// A CPU group with zero-element operands (issue 23 item 5): an empty optional input
// (tensor<0xf32>, never read, as torch.empty(0) passed for an unused bias) and an empty second
// result (tensor<0xf32>, never written). @mul computes 2 * x, @add computes x + x.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @empty_ex {
  hal.executable.autotuning.export @twice variants([@mul, @add]) tune_workload(tensor<1024xf32>, tensor<0xf32>)
  hal.executable.export public @mul ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @add ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @mul() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset(%c0) : memref<?xf32>{%n}
      %two = arith.constant 2.0 : f32
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      return
    }
    func.func @add() {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : memref<?xf32>{%n}
      %out = hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset(%c0) : memref<?xf32>{%n}
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %in[%i] : memref<?xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %out[%i] : memref<?xf32>
      }
      return
    }
  }
}
util.func public @twice(%x: tensor<?xf32>, %none: tensor<0xf32>) -> (tensor<?xf32>, tensor<0xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %y:2 = flow.dispatch @empty_ex::@twice[%n](%x, %none, %n32) : (tensor<?xf32>{%n}, tensor<0xf32>, i32) -> (tensor<?xf32>{%n}, tensor<0xf32>)
  util.return %y#0, %y#1 : tensor<?xf32>, tensor<0xf32>
}
