// In-place Triton kernels (x += y, a += b; c *= b, and x += a with an i64 scalar a ahead of x) exported with their results tied to
// their operands, two configs each: every variant must update its operands in place.
// Build: autotune-export examples/inplace/inplace.mlir --emit vmfb --target sm_90 -o out/inplace.vmfb
hal.executable.source private @first_ex {
  hal.executable.autotuning.export @inc
      triton("../../tests/lit/Inputs/inplace_kernels.py", "add_into_first")
      signature(x_ptr: *fp32 {output}, y_ptr: *fp32, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 1024, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<65536xf32>, tensor<65536xf32>)
}
util.func public @first(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %r = flow.dispatch @first_ex::@inc[%n](%x, %y, %n32) : (tensor<?xf32>{%n}, tensor<?xf32>{%n}, i32) -> %x{%n}
  util.return %r : tensor<?xf32>
}
hal.executable.source private @last_ex {
  hal.executable.autotuning.export @inc
      triton("../../tests/lit/Inputs/inplace_kernels.py", "add_into_last")
      signature(y_ptr: *fp32, x_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 1024, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<65536xf32>, tensor<65536xf32>)
}
util.func public @last(%y: tensor<?xf32>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %r = flow.dispatch @last_ex::@inc[%n](%y, %x, %n32) : (tensor<?xf32>{%n}, tensor<?xf32>{%n}, i32) -> %x{%n}
  util.return %r : tensor<?xf32>
}
hal.executable.source private @two_ex {
  hal.executable.autotuning.export @ax
      triton("../../tests/lit/Inputs/inplace_kernels.py", "axpy_two")
      signature(a_ptr: *fp32 {output}, b_ptr: *fp32, c_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 1024, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>)
}
util.func public @two(%a: tensor<?xf32>, %b: tensor<?xf32>, %c: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %r:2 = flow.dispatch @two_ex::@ax[%n](%a, %b, %c, %n32) : (tensor<?xf32>{%n}, tensor<?xf32>{%n}, tensor<?xf32>{%n}, i32) -> (%a{%n}, %c{%n})
  util.return %r#0, %r#1 : tensor<?xf32>, tensor<?xf32>
}
hal.executable.source private @scalar_ex {
  hal.executable.autotuning.export @add
      triton("../../tests/lit/Inputs/inplace_kernels.py", "add_scalar_into")
      signature(a: i64, x_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 1024, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<65536xf32>)
}
util.func public @scalar(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  // 2^33 + 5: the high half of the i64 matters (x + 5 if it were dropped).
  %a = arith.constant 8589934597 : i64
  %r = flow.dispatch @scalar_ex::@add[%n](%a, %x, %n32) : (i64, tensor<?xf32>{%n}, i32) -> %x{%n}
  util.return %r : tensor<?xf32>
}
