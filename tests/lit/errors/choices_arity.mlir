// A choices(...) entry gives one value per workload value of the group (the arity of its
// variants' count(...) and of every dispatch's workload): one of another arity could never match
// a dispatch, so it is refused at the entry by verify-autotuning-groups (tester finding 04: the
// default pipeline, which does not lower, accepted it silently).
// RUN: not autotune-export %s --backend llvm-cpu -o %t.mlir 2>&1 | FileCheck %s
// RUN: not test -e %t.mlir
// CHECK: choices_arity.mlir:[[# @LINE + 4]]:76: error: choices(...) entry [1, 2] = @fast gives 2 workload values, but the variants of @scale take 1 (the arity of every dispatch's workload): it could never match a dispatch

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @cpu_ex {
  hal.executable.autotuning.export @scale variants([@slow, @fast]) choices([1, 2] = @fast)
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
      return
    }
    func.func @slow() {
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
