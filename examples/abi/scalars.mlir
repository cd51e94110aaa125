// Every scalar type a Triton signature may declare, through IREE.
//
//   autotune-export scalars.mlir --emit vmfb --target sm_90 \
//       --iree-compile-arg=--iree-input-demote-f64-to-f32=false -o scalars.vmfb
//
// IREE passes 32-bit constants only. The dispatch below passes i1, i8, i16, i32, i64, f16,
// bf16, f32 and f64 operands; lower-autotuning-dispatch turns each into 32-bit constants
// (zero-extended, bitcast, or split into low and high halves for i64/f64) and the kernel's
// PTX entry is rewritten to read them (see autotune_export/abi.py). The host function takes
// only types IREE's VM has (i32, i64, f32, f64) and narrows them itself: i1/i8/i16 by
// truncation, f16/bf16 from their bit patterns (the VM has no f16 arithmetic). fp64 needs
// --iree-input-demote-f64-to-f32=false, or IREE demotes the host's f64 values to f32.
hal.executable.source private @scalars_ex {
  hal.executable.autotuning.export @scalars
      triton("kernels.py", "scalars_kernel")
      signature(ints_ptr: *i64 {output}, floats_ptr: *fp64 {output}, vec_ptr: *i32, out_ptr: *i64 {output},
                flag: i1, small: i8, mid: i16, n: i32, un: u32, big: i64, ubig: u64, half: fp16, bhalf: bf16,
                single: fp32, double: fp64)
      configs([{BLOCK = 128, num_warps = 4}, {BLOCK = 1024, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<65536xi32>, 1 : i32, -3 : i32, -300 : i32, 7 : i32, 5000000000 : i64, 5000000000 : i64,
                    15872 : i32, 16416 : i32, 3.5 : f32, 4.5 : f64)
}

// Returns (the integers as the kernel read them [flag, small, mid, n, un, big, ubig bits],
// the floats [half, bhalf, single, double] widened to f64, vec + big as i64).
util.func public @scalars(%vec: tensor<?xi32>, %flag32: i32, %small32: i32, %mid32: i32, %un: i32, %big: i64,
                          %ubig: i64, %half_bits: i32, %bhalf_bits: i32, %single: f32, %double: f64)
    -> (tensor<7xi64>, tensor<4xf64>, tensor<?xi64>) {
  %c0 = arith.constant 0 : index
  %len = tensor.dim %vec, %c0 : tensor<?xi32>
  %n = arith.index_cast %len : index to i32
  %flag = arith.trunci %flag32 : i32 to i1
  %small = arith.trunci %small32 : i32 to i8
  %mid = arith.trunci %mid32 : i32 to i16
  %half16 = arith.trunci %half_bits : i32 to i16
  %half = arith.bitcast %half16 : i16 to f16
  %bhalf16 = arith.trunci %bhalf_bits : i32 to i16
  %bhalf = arith.bitcast %bhalf16 : i16 to bf16
  %ints, %floats, %out = flow.dispatch @scalars_ex::@scalars[%len](%vec, %flag, %small, %mid, %n, %un, %big, %ubig,
                                                                  %half, %bhalf, %single, %double)
      : (tensor<?xi32>{%len}, i1, i8, i16, i32, i32, i64, i64, f16, bf16, f32, f64)
      -> (tensor<7xi64>, tensor<4xf64>, tensor<?xi64>{%len})
  util.return %ints, %floats, %out : tensor<7xi64>, tensor<4xf64>, tensor<?xi64>
}
