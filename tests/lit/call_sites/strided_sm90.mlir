// REQUIRES: integration
// examples/strided (issue 23, item 1): launches that pass strided views, exported by
// launch_to_mlir (examples/strided/build.py), each built into a .vmfb for sm_90. The host
// function takes and returns each view's storage span (a b.t() GEMM operand: the (N, K) weight
// itself; a column-major output or in-place tensor: its storage, transposed; an expanded bias:
// its row; a slice at a storage offset: its 1-D span), the strides reach the kernel as the launch
// gave them, and `inspect` names every strided tensor from the module's reflection.
// RUN: rm -rf %t && mkdir -p %t
// RUN: autotune-export %examples/strided/gemm_bt.mlir --emit vmfb --target sm_90 -o %t/gemm_bt.vmfb
// RUN: autotune-export inspect %t/gemm_bt.vmfb --no-resources | FileCheck %s --check-prefix=BT
// RUN: autotune-export %examples/strided/gemm_colmajor_out.mlir --emit vmfb --target sm_90 -o %t/gemm_colmajor_out.vmfb
// RUN: autotune-export inspect %t/gemm_colmajor_out.vmfb --no-resources | FileCheck %s --check-prefix=CM
// RUN: autotune-export %examples/strided/inplace_colmajor.mlir --emit vmfb --target sm_90 -o %t/inplace_colmajor.vmfb
// RUN: autotune-export inspect %t/inplace_colmajor.vmfb --no-resources | FileCheck %s --check-prefix=IP
// RUN: autotune-export %examples/strided/quant_colmajor_scales.mlir --emit vmfb --target sm_90 -o %t/quant.vmfb
// RUN: autotune-export inspect %t/quant.vmfb --no-resources | FileCheck %s --check-prefix=Q
// RUN: autotune-export %examples/strided/broadcast_bias.mlir --emit vmfb --target sm_90 -o %t/bias.vmfb
// RUN: autotune-export %examples/strided/inplace_gapped.mlir --emit vmfb --target sm_90 -o %t/gapped.vmfb
// RUN: autotune-export inspect %t/gapped.vmfb --no-resources | FileCheck %s --check-prefix=GAP
// RUN: autotune-export %examples/strided/lock.mlir --emit vmfb --target sm_90 -o %t/lock.vmfb 2>&1 | FileCheck %s --check-prefix=LOCK
// RUN: FileCheck %s --check-prefix=IR --input-file %examples/strided/gemm_bt.mlir

// BT:      host:        @gemm_bt
// BT-NEXT: strided:     b_ptr (argument 1): (96, 129) view, strides (1, 96), permuted: storage span tensor<129x96xf16>
// BT-NEXT: layout:      3 bindings [ReadOnly, ReadOnly, ReadWrite], 9 constants
// CM:      strided:     c_ptr (result 0): (257, 129) view, strides (1, 257), permuted: storage span tensor<129x257xf32>
// IP:      strided:     y_ptr (argument 1, result 0): (77, 300) view, strides (1, 77), permuted: storage span tensor<300x77xf32>
// IP-NEXT: layout:      2 bindings [ReadOnly, ReadWrite]
// Q:       strided:     s_ptr (result 1): (100, 4) view, strides (1, 100), permuted: storage span tensor<4x100xf32>
// Q-NEXT:  layout:      3 bindings [ReadOnly, ReadWrite, ReadWrite]
// GAP:     strided:     y_ptr (argument 1, result 0): (77, 300) view, strides (312, 1), gapped: storage span tensor<24012xf32>
// LOCK:    kernel 'locked_sum' updates 'lock_ptr' atomically
// LOCK:    autotune-export: wrote

// The strides of the launch are the dispatch's constants: b = bt.t() of a (129, 96) bt is (1, 96).
// IR:      // Strided: 'b_ptr' is a (96, 129) view, strides (1, 96) (permuted)
// IR:      util.func public @gemm_bt(%arg0: tensor<257x96xf16>, %arg1: tensor<129x96xf16>) -> tensor<257x129xf16>
// IR:      %c257_i32 = arith.constant 257 : i32
// IR-NEXT: %c129_i32 = arith.constant 129 : i32
// IR-NEXT: %c96_i32 = arith.constant 96 : i32
// IR-NEXT: %c96_i32_0 = arith.constant 96 : i32
// IR-NEXT: %c1_i32 = arith.constant 1 : i32
// IR-NEXT: %c1_i32_1 = arith.constant 1 : i32
// IR-NEXT: %c96_i32_2 = arith.constant 96 : i32
// IR-NEXT: %c129_i32_3 = arith.constant 129 : i32
// IR-NEXT: %c1_i32_4 = arith.constant 1 : i32
