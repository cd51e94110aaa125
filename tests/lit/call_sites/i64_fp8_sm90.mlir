// REQUIRES: integration
// int64 and fp8 tensors in a module built for sm_90 compile with iree-compile: the fake data of
// the tuning entries needs dispatches IREE generates itself (seeded values, a linalg.generic per
// argument), and IREE 3.13 has no sm_90 code generation, so those get the nearest architecture
// it has (sm_89, PTX the driver JIT-compiles on Hopper) while the Triton objects stay sm_90a;
// fp8 fake data is built as bytes, bitcast.
// RUN: autotune-export %s --emit vmfb --target sm_90 -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=BUILD
// RUN: autotune-export %s --emit vmfb --target sm_80,sm_90 -o %t.multi.vmfb
// RUN: autotune-export %s --emit iree --target sm_90 -o %t.mlir
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_89 -o %t.2.vmfb
// RUN: not iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_90 -o %t.3.vmfb 2>&1 | FileCheck %s --check-prefix=IREE90
// RUN: FileCheck %s --check-prefix=FAKE --input-file %t.mlir

// BUILD: autotune-export: wrote {{.*}}.vmfb
// IREE90: missing GPU target in #hal.executable.target
// FAKE:   linalg.generic {{.+}} outs(%{{.+}} : tensor<1024xi64>)
// FAKE:   flow.tensor.bitcast %{{.+}} : tensor<{{.+}}xi8> -> tensor<{{.+}}xf8E5M2>

hal.executable.source private @gather_ex {
  hal.executable.autotuning.export @gather
      triton("../Inputs/call_site_kernels.py", "gather_rows_kernel")
      signature(table_ptr: *fp32, idx_ptr: *i64, out_ptr: *fp32 {output}, n: i32)
      configs([{D = 64, num_warps = 2}, {D = 64, num_warps = 4}])
      workload(rows)
      grid(rows)
}

hal.executable.source private @fp8_ex {
  hal.executable.autotuning.export @upcast
      triton("../Inputs/call_site_kernels.py", "fp8_upcast_kernel")
      signature(x_ptr: *fp8e5, out_ptr: *fp16 {output}, n: i32)
      configs([{BLOCK = 256, OUT_DTYPE = tl.float16, num_warps = 4}, {BLOCK = 1024, OUT_DTYPE = tl.float16, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
}

// out[r] = table[idx[r]] (rows of 64 floats)
util.func public @gather(%table: tensor<4096x64xf32>, %idx: tensor<1024xi64>) -> tensor<1024x64xf32> {
  %rows = arith.constant 1024 : index
  %n = arith.constant 1024 : i32
  %out = flow.dispatch @gather_ex::@gather[%rows](%table, %idx, %n) : (tensor<4096x64xf32>, tensor<1024xi64>, i32) -> tensor<1024x64xf32>
  util.return %out : tensor<1024x64xf32>
}

util.func public @upcast(%x: tensor<65536xf8E5M2>) -> tensor<65536xf16> {
  %len = arith.constant 65536 : index
  %n = arith.constant 65536 : i32
  %y = flow.dispatch @fp8_ex::@upcast[%len](%x, %n) : (tensor<65536xf8E5M2>, i32) -> tensor<65536xf16>
  util.return %y : tensor<65536xf16>
}
