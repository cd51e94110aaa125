// REQUIRES: integration
// An {output} written in place binds at the operand its result is tied to, wherever that
// operand is among the tensor operands (IREE binds them in operand order; result j is the j-th
// {output}): the layout's read-write binding is where the tied operand is, and the kernel's
// parameters are put in that order (autotune_export/ir/binding.py). Issue 21.4: with two
// outputs this built the layout as if nothing were in place; with one it was refused, or
// (launch_to_mlir's in-place form, the tied operand last) accepted by coincidence.
// RUN: autotune-export %s -p materialize-triton-variants,verify-autotuning-groups --target sm_80 --split-input-file 2>/dev/null | FileCheck %s
// RUN: autotune-export %s --split-input-file --emit iree --target sm_80 -o %t.mlir 2>/dev/null
// RUN: iree-compile %t.mlir --split-input-file --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vmfb

// acc (result 0) in place, its operand first: acc at binding 0 (read-write), x at binding 1
// (read-only), out at binding 2 (the untied result).
// CHECK: #[[L1:.+]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @acc_first
// CHECK: layout(#[[L1]])
hal.executable.source private @acc_first {
  hal.executable.autotuning.export @g triton("../errors/Inputs/binding_kernels.py", "acc_and_out")
      signature(x_ptr: *fp32, acc_ptr: *fp32 {output}, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %acc: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @acc_first::@g[%n](%acc, %x, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> (%acc, tensor<1024xf32>)
  util.return %r#0, %r#1 : tensor<1024xf32>, tensor<1024xf32>
}

// -----

// One output, first in the signature, its operand last (launch_to_mlir's in-place form):
// y at binding 0 (read-only), x at binding 1 (read-write).
// CHECK: #[[L2:.+]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @tied_last
// CHECK: layout(#[[L2]])
hal.executable.source private @tied_last {
  hal.executable.autotuning.export @g triton("../Inputs/inplace_kernels.py", "add_into_first")
      signature(x_ptr: *fp32 {output}, y_ptr: *fp32, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host2(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @tied_last::@g[%n](%y, %n32, %x) : (tensor<1024xf32>, i32, tensor<1024xf32>) -> %x
  util.return %r : tensor<1024xf32>
}
