// REQUIRES: integration
// materialize-triton-variants refusals that need a compiled variant: pointers the kernel writes
// (from its TTIR) must be bound to results, and a config pruned for its block size leaves the
// others (a remark says why).
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 --split-input-file --verify-diagnostics

// The kernel stores through x_ptr, which the signature does not mark {output}: IREE would pass
// x as a ReadOnly binding of an operand it may share. Refused at the group.
hal.executable.source private @ex {
  // expected-remark @+2 {{@g: 1 variant for sm_80}}
  // expected-error @+1 {{kernel 'scale_and_clear_kernel' of @g writes through 'x_ptr' (a store or atomic), which is not {output}: IREE treats dispatch operands as immutable; mark it 'x_ptr: *fp32 {output}' and return it as a result, or tie a result to its operand at the dispatch}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_and_clear_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-note @+1 {{the dispatch binds tensor operand 0 (tensor<1024xf32>) to 'x_ptr' here}}
  %r = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// Atomics write too.
hal.executable.source private @ex {
  // expected-remark @+2 {{@g: 1 variant for sm_80}}
  // expected-error @+1 {{kernel 'histogram_kernel' of @g writes through 'hist_ptr' (a store or atomic), which is not {output}}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "histogram_kernel")
      signature(x_ptr: *i32, hist_ptr: *i32, out_ptr: *i32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xi32>, %h: tensor<16xi32>) -> tensor<1024xi32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  // expected-note @+1 {{the dispatch binds tensor operand 1 (tensor<16xi32>) to 'hist_ptr' here}}
  %r = flow.dispatch @ex::@g[%n](%x, %h, %n32) : (tensor<1024xi32>, tensor<16xi32>, i32) -> tensor<1024xi32>
  util.return %r : tensor<1024xi32>
}

// -----

// In place: the written pointer's operand is tied to a result (-> %x). Accepted, as before.
hal.executable.source private @ex {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_and_clear_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @ex::@g[%n](%x, %n32) : (tensor<1024xf32>, i32) -> (%x, tensor<1024xf32>)
  util.return %r#0, %r#1 : tensor<1024xf32>, tensor<1024xf32>
}

// -----

// An i8 tensor for a bool pointer: Triton reads *i1 one byte per element, so it fits.
hal.executable.source private @ex {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "bool_mask_kernel")
      signature(x_ptr: *fp32, keep_ptr: *i1, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      workload(n) grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %k: tensor<1024xi8>) -> tensor<1024xf32> {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r = flow.dispatch @ex::@g[%n](%x, %k, %n32) : (tensor<1024xf32>, tensor<1024xi8>, i32) -> tensor<1024xf32>
  util.return %r : tensor<1024xf32>
}

// -----

// One config over the block limit is pruned with a remark; the other one is built.
hal.executable.source private @ex {
  // expected-remark @+2 {{@g: config 1 {BLOCK = 256, num_warps = 64} pruned: num_warps = 64 is 2048 threads per block; CUDA allows at most 1024 (num_warps <= 32)}}
  // expected-remark @+1 {{@g: 1 variant for sm_80 (}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128, num_warps = 4}, {BLOCK = 256, num_warps = 64}])
      workload(n) grid(cdiv(n, BLOCK))
}

// -----

// Addresses the host computed (a tensor of data_ptr() values) mean nothing in an IREE program.
hal.executable.source private @ex {
  // expected-remark @+2 {{@g: 1 variant for sm_80}}
  // expected-error @+1 {{kernel 'rows_by_address_kernel' of @g addresses memory through tt.int_to_ptr of a loaded integer: a device address the host computed (a tensor of data_ptr() values, as grouped GEMMs pass, or one passed as an integer) means nothing inside an IREE program, which gives a kernel its buffers only as bindings; pass each buffer as a pointer parameter}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "rows_by_address_kernel")
      signature(addrs_ptr: *i64, out_ptr: *fp32 {output})
      configs([{BLOCK = 128}])
      workload() grid(4)
}
util.func public @host(%addrs: tensor<4xi64>) -> tensor<512xf32> {
  %r = flow.dispatch @ex::@g(%addrs) : (tensor<4xi64>) -> tensor<512xf32>
  util.return %r : tensor<512xf32>
}

// -----

// A grid constant for a config over CUDA's limit (y and z: 65535 blocks) cannot launch: refused
// at build time, at the grid, as the program front door drops such a candidate (tester, Dec 2).
hal.executable.source private @ex {
  // expected-remark @+1 {{@g: 1 variant for sm_80}}
  hal.executable.autotuning.export @g triton("Inputs/refusal_kernels.py", "scale_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}])
      // expected-error @+1 {{grid y is 70000 blocks; CUDA allows at most 65535 in y (x: 2**31 - 1, y and z: 65535) for config 0 {BLOCK = 128}: the launch cannot run (cuLaunchKernel refuses it)}}
      workload() grid(1, 70000)
}
