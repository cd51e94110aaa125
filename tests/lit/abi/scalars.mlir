// REQUIRES: integration
// Every scalar type of a Triton signature becomes 32-bit IREE constants: narrow ones widened
// (the PTX parameter is declared .u32), 64-bit ones split into low and high halves (two .u32
// parameters reassembled with mov.b64), fp32 bitcast. The dispatch site makes the constants.
// RUN: autotune-export %s -p materialize-triton-variants --target sm_80 2>/dev/null | FileCheck %s --check-prefix=MAT
// RUN: autotune-export %s --emit iree --target sm_80 2>/dev/null | FileCheck %s --check-prefix=LOWER
// RUN: autotune-export %s --emit iree --target sm_80 -o %t.mlir 2>/dev/null
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 --iree-input-demote-f64-to-f32=false -o %t.vmfb

hal.executable.source private @scalars_ex {
  hal.executable.autotuning.export @scalars
      triton("../../../examples/abi/kernels.py", "scalars_kernel")
      signature(ints_ptr: *i64 {output}, floats_ptr: *fp64 {output}, vec_ptr: *i32, out_ptr: *i64 {output},
                flag: i1, small: i8, mid: i16, n: i32, un: u32, big: i64, ubig: u64, half: fp16, bhalf: bf16,
                single: fp32, double: fp64)
      configs([{BLOCK = 128, num_warps = 4}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<4096xi32>, 1 : i32, 5000000000 : i64, 4.5 : f64)
}

util.func public @scalars(%vec: tensor<?xi32>, %flag32: i32, %big: i64, %double: f64) -> (tensor<7xi64>, tensor<4xf64>, tensor<?xi64>) {
  %c0 = arith.constant 0 : index
  %len = tensor.dim %vec, %c0 : tensor<?xi32>
  %n = arith.index_cast %len : index to i32
  %flag = arith.trunci %flag32 : i32 to i1
  %small = arith.trunci %flag32 : i32 to i8
  %mid = arith.trunci %flag32 : i32 to i16
  %half = arith.constant 1.5 : f16
  %bhalf = arith.constant 2.5 : bf16
  %single = arith.constant 3.5 : f32
  %ints, %floats, %out = flow.dispatch @scalars_ex::@scalars[%len](%vec, %flag, %small, %mid, %n, %n, %big, %big, %half, %bhalf, %single, %double)
      : (tensor<?xi32>{%len}, i1, i8, i16, i32, i32, i64, i64, f16, bf16, f32, f64) -> (tensor<7xi64>, tensor<4xf64>, tensor<?xi64>{%len})
  util.return %ints, %floats, %out : tensor<7xi64>, tensor<4xf64>, tensor<?xi64>
}

// 11 scalars, three of them 64-bit: 14 constants. vec_ptr (the only input) is the first binding.
// MAT: #pipeline_layout = #hal.pipeline.layout<constants = 14, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
// The entry: 4 pointers, then flag/small/mid widened to .u32, n, un, big as two .u32 (9, 10),
// ubig (11, 12), half/bhalf widened (13, 14), single stays .f32 (15), double split (16, 17).
// MAT: .param .u64 .ptr .global .align 1 scalars_0_128_w4_s3_param_3,\0A\09.param .u32 scalars_0_128_w4_s3_param_4,
// MAT-SAME: .param .u32 scalars_0_128_w4_s3_param_14,\0A\09.param .f32 scalars_0_128_w4_s3_param_15,\0A\09.param .u32 scalars_0_128_w4_s3_param_16,\0A\09.param .u32 scalars_0_128_w4_s3_param_17\0A)
// MAT-SAME: { .reg .b32 %abi_lo, %abi_hi; ld.param.b32 %abi_lo, [scalars_0_128_w4_s3_param_9]; ld.param.b32 %abi_hi, [scalars_0_128_w4_s3_param_10]; mov.b64 %rd{{[0-9]+}}, {%abi_lo, %abi_hi}; }
// MAT-SAME: ld.param.b8 {{.*}}[scalars_0_128_w4_s3_param_4]
// MAT-SAME: ld.param.b16 {{.*}}[scalars_0_128_w4_s3_param_13]

// LOWER-LABEL: util.func public @scalars(
// LOWER:      %[[FLAG:.+]] = arith.extui %{{.+}} : i1 to i32
// LOWER-NEXT: %[[SMALL:.+]] = arith.extui %{{.+}} : i8 to i32
// LOWER-NEXT: %[[MID:.+]] = arith.extui %{{.+}} : i16 to i32
// LOWER-NEXT: %[[BIGLO:.+]] = arith.trunci %[[BIG:.+]] : i64 to i32
// LOWER-NEXT: %[[C32:.+]] = arith.constant 32 : i64
// LOWER-NEXT: %[[SHIFTED:.+]] = arith.shrui %[[BIG]], %[[C32]] : i64
// LOWER-NEXT: %[[BIGHI:.+]] = arith.trunci %[[SHIFTED]] : i64 to i32
// LOWER:      %[[HALF16:.+]] = arith.bitcast %{{.+}} : f16 to i16
// LOWER-NEXT: %[[HALF:.+]] = arith.extui %[[HALF16]] : i16 to i32
// LOWER-NEXT: %[[BHALF16:.+]] = arith.bitcast %{{.+}} : bf16 to i16
// LOWER-NEXT: %[[BHALF:.+]] = arith.extui %[[BHALF16]] : i16 to i32
// LOWER-NEXT: %[[SINGLE:.+]] = arith.bitcast %{{.+}} : f32 to i32
// LOWER-NEXT: %[[DBITS:.+]] = arith.bitcast %{{.+}} : f64 to i64
// LOWER-NEXT: %[[DLO:.+]] = arith.trunci %[[DBITS]] : i64 to i32
// LOWER:      %[[DHI:.+]] = arith.trunci %{{.+}} : i64 to i32
// LOWER:      flow.dispatch @scalars_ex::@scalars_0_128_w4_s3[%{{.+}}, %{{.+}}](%{{.+}}, %[[FLAG]], %[[SMALL]], %[[MID]], %{{.+}}, %{{.+}}, %[[BIGLO]], %[[BIGHI]], %{{.+}}, %{{.+}}, %[[HALF]], %[[BHALF]], %[[SINGLE]], %[[DLO]], %[[DHI]])
// LOWER-SAME: : (tensor<?xi32>{%{{.+}}}, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> (tensor<7xi64>, tensor<4xf64>, tensor<?xi64>{%{{.+}}})
