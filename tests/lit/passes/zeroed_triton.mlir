// REQUIRES: integration
// reset_to_zero / restore_value on the triton(...) form: materialize-triton-variants zero-fills
// the named {output} pointers at every dispatch (a zero fill tied to the result; every other
// untied result tied to a flow.tensor.alloca), placing each new operand at its pointer's
// place in the signature, so IREE's binding order (tensor operands in order, then untied
// results) is the signature's pointer order: the layout's read-only flags show each pointer
// at its binding. The materialized group keeps the clauses as result indices. Without the
// clauses, the kernel's own triton.autotune(reset_to_zero=..., restore_value=...) apply; the
// op's clause wins (reset_to_zero() zeroes nothing).
// RUN: autotune-export %s -p zero-fill-outputs,materialize-triton-variants,verify-autotuning-groups --split-input-file 2>/dev/null | FileCheck %s
// RUN: autotune-export %s --split-input-file --emit iree -o %t.mlir 2>/dev/null
// RUN: iree-compile %t.mlir --split-input-file --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vmfb

// Zeroed outputs first and last, an output that is not zeroed between them, inputs between
// the outputs: a (rw), x (ReadOnly), b (rw), y (ReadOnly), c (rw).
// CHECK:       #[[L1:.+]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: hal.executable.source private @ends
// CHECK:         hal.executable.autotuning.export @s
// CHECK-NEXT:        variants([@s_0_128_w4_s3])
// CHECK-NEXT:        reset_to_zero(0, 2)
// CHECK:         layout(#[[L1]])
// CHECK-LABEL: util.func public @host_ends(
// CHECK:         %[[A:.+]] = flow.tensor.bitcast %{{.+}} : tensor<1xi32> -> tensor<1xf32> attributes {autotune.zeroed}
// CHECK-NEXT:    %[[B:.+]] = flow.tensor.alloca : tensor<1024xf32>
// CHECK:         %[[C:.+]] = flow.tensor.bitcast %{{.+}} : tensor<1xi32> -> tensor<1xf32> attributes {autotune.zeroed}
// CHECK-NEXT:    flow.dispatch @ends::@s[%{{.+}}](%[[A]], %arg0, %[[B]], %arg1, %[[C]], %{{.+}}) : (tensor<1xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1xf32>, i32) -> (%[[A]], %[[B]], %[[C]])
hal.executable.source private @ends {
  hal.executable.autotuning.export @s
      triton("../Inputs/zeroed_kernels.py", "sums")
      signature(a_ptr: *fp32 {output}, x_ptr: *fp32, b_ptr: *fp32 {output}, y_ptr: *fp32, c_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
      reset_to_zero(a_ptr, c_ptr)
}
util.func public @host_ends(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:3 = flow.dispatch @ends::@s[%n](%x, %y, %n32) : (tensor<1024xf32>, tensor<1024xf32>, i32) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>)
  util.return %r#0, %r#1, %r#2 : tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>
}

// -----

// The zeroed output between the others; the dispatch passes the last one in place. a and c,
// which the kernel updates atomically (tl.atomic_add), get zeros as fake data in the benchmark
// and check entries (autotune.fake_zeros: a's alloca, c in place).
// CHECK-LABEL: hal.executable.source private @middle
// CHECK:         hal.executable.autotuning.export @s
// CHECK-NEXT:        variants([@s_0_128_w4_s3])
// CHECK-NEXT:        reset_to_zero(1)
// CHECK:         layout(#[[L1]])
// CHECK-LABEL: util.func public @host_middle(
// CHECK:         %[[A:.+]] = flow.tensor.alloca : tensor<1xf32>
// CHECK:         %[[B:.+]] = flow.tensor.bitcast %{{.+}} : tensor<1024xi32> -> tensor<1024xf32> attributes {autotune.zeroed}
// CHECK-NEXT:    flow.dispatch @middle::@s[%{{.+}}](%[[A]], %arg0, %[[B]], %arg1, %arg2, %{{.+}}) {autotune.fake_zeros = array<i64: 0, 4>} : {{.+}} -> (%[[A]], %[[B]], %arg2)
hal.executable.source private @middle {
  hal.executable.autotuning.export @s
      triton("../Inputs/zeroed_kernels.py", "sums")
      signature(a_ptr: *fp32 {output}, x_ptr: *fp32, b_ptr: *fp32 {output}, y_ptr: *fp32, c_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n)
      grid(cdiv(n, BLOCK))
      reset_to_zero(b_ptr)
}
util.func public @host_middle(%x: tensor<1024xf32>, %y: tensor<1024xf32>, %c: tensor<1xf32>) -> (tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:3 = flow.dispatch @middle::@s[%n](%x, %y, %c, %n32) : (tensor<1024xf32>, tensor<1024xf32>, tensor<1xf32>, i32) -> (tensor<1xf32>, tensor<1024xf32>, %c)
  util.return %r#0, %r#1, %r#2 : tensor<1xf32>, tensor<1024xf32>, tensor<1xf32>
}

// -----

// No clauses: the kernel's triton.autotune(reset_to_zero=["acc_ptr"], restore_value=["hist_ptr"]);
// hist_ptr is passed in place (restored around timed runs; updated atomically: zeros as fake
// data), acc_ptr zero-filled.
// CHECK-LABEL: hal.executable.source private @from_kernel
// CHECK:         hal.executable.autotuning.export @t
// CHECK-NEXT:        variants([@t_0_128_w4_s3, @t_1_256_w4_s3])
// CHECK-NEXT:        reset_to_zero(1)
// CHECK-NEXT:        restore_value(0)
// CHECK-LABEL: util.func public @host_from_kernel(
// CHECK:         %[[Z:.+]] = flow.tensor.bitcast %{{.+}} attributes {autotune.zeroed}
// CHECK-NEXT:    flow.dispatch @from_kernel::@t[%{{.+}}](%arg0, %arg1, %[[Z]], %{{.+}}) {autotune.fake_zeros = array<i64: 1>} : {{.+}} -> (%arg1, %[[Z]])
hal.executable.source private @from_kernel {
  hal.executable.autotuning.export @t
      triton("../Inputs/zeroed_kernels.py", "tuned_sum")
      signature(x_ptr: *fp32, hist_ptr: *fp32 {output}, acc_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host_from_kernel(%x: tensor<1024xf32>, %h: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @from_kernel::@t[%n](%x, %h, %n32) : (tensor<1024xf32>, tensor<1xf32>, i32) -> (%h, tensor<1xf32>)
  util.return %r#0, %r#1 : tensor<1xf32>, tensor<1xf32>
}

// -----

// The op's reset_to_zero() wins over the kernel's: nothing is zero-filled; the kernel's
// restore_value still applies.
// CHECK-LABEL: hal.executable.source private @overridden
// CHECK:         hal.executable.autotuning.export @t
// CHECK-NEXT:        variants([@t_0_128_w4_s3, @t_1_256_w4_s3])
// CHECK-NEXT:        reset_to_zero()
// CHECK-NEXT:        restore_value(0)
// CHECK-LABEL: util.func public @host_overridden(
// CHECK-NOT:     autotune.zeroed
// CHECK:         flow.dispatch @overridden::@t[%{{.+}}](%arg0, %arg1, %{{.+}}) {autotune.fake_zeros = array<i64: 1>} : (tensor<1024xf32>, tensor<1xf32>, i32) -> (%arg1, tensor<1xf32>)
hal.executable.source private @overridden {
  hal.executable.autotuning.export @t
      triton("../Inputs/zeroed_kernels.py", "tuned_sum")
      signature(x_ptr: *fp32, hist_ptr: *fp32 {output}, acc_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))
      reset_to_zero()
}
util.func public @host_overridden(%x: tensor<1024xf32>, %h: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @overridden::@t[%n](%x, %h, %n32) : (tensor<1024xf32>, tensor<1xf32>, i32) -> (%h, tensor<1xf32>)
  util.return %r#0, %r#1 : tensor<1xf32>, tensor<1xf32>
}
