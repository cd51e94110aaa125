// REQUIRES: integration
// In-place {output} pointers follow IREE's binding rule for tied results: the tensor operands
// bind first, in operand order (an operand with a result tied to it, -> %x, included), then the
// untied results. So an {output} pointer written in place takes its operand's binding, and the
// layout puts the written (read-write) binding where IREE passes that operand.
// RUN: autotune-export %s -p materialize-triton-variants,verify-autotuning-groups --split-input-file 2>/dev/null | FileCheck %s
// RUN: autotune-export %s --split-input-file --emit iree -o %t.mlir 2>/dev/null
// RUN: iree-compile %t.mlir --split-input-file --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vmfb

// The tied operand first: x (read-write) is binding 0, y (read-only) binding 1.
// CHECK:       #[[L1:.+]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer, ReadOnly>]>
// CHECK-LABEL: hal.executable.source private @first
// CHECK:       hal.executable.export public @inc_0_128_w4_s3 ordinal(0) layout(#[[L1]])
hal.executable.source private @first {
  hal.executable.autotuning.export @inc
      triton("../Inputs/inplace_kernels.py", "add_into_first")
      signature(x_ptr: *fp32 {output}, y_ptr: *fp32, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host_first(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @first::@inc[%n](%x, %y, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> %x
  util.return %r : tensor<1024xf32>
}

// -----

// The tied operand last: y (read-only) is binding 0, x (read-write) binding 1.
// CHECK:       #[[L2:.+]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @last
// CHECK:       layout(#[[L2]])
hal.executable.source private @last {
  hal.executable.autotuning.export @inc
      triton("../Inputs/inplace_kernels.py", "add_into_last")
      signature(y_ptr: *fp32, x_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host_last(%y: tensor<1024xf32>, %x: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @last::@inc[%n](%y, %x, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> %x
  util.return %r : tensor<1024xf32>
}

// -----

// Two tied operands around a read-only one: a, c read-write (bindings 0 and 2), b read-only.
// CHECK:       #[[L3:.+]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @two
// CHECK:       layout(#[[L3]])
hal.executable.source private @two {
  hal.executable.autotuning.export @ax
      triton("../Inputs/inplace_kernels.py", "axpy_two")
      signature(a_ptr: *fp32 {output}, b_ptr: *fp32, c_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host_two(%a: tensor<1024xf32>, %b: tensor<1024xf32>, %c: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @two::@ax[%n](%a, %b, %c, %n32) : (tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>, i32) -> (%a, %c)
  util.return %r#0, %r#1 : tensor<1024xf32>, tensor<1024xf32>
}
