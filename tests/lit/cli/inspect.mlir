// REQUIRES: integration
// autotune-export inspect: the groups of a .mlir (after materialize-triton-variants) and of the
// .vmfb built from it, as a table and in JSON (variants, layout, workgroup size, shared memory,
// registers/spills from ptxas + cuobjdump with no GPU, default and specialized variants).
// RUN: autotune-export inspect %s --target sm_80 > %t.table
// RUN: FileCheck %s < %t.table
// RUN: autotune-export inspect %s --target sm_80 --json | FileCheck %s --check-prefix=JSON
// RUN: autotune-export %s --emit vmfb --target sm_80 -q -o %t.vmfb
// RUN: autotune-export inspect %t.vmfb | FileCheck %s --check-prefix=VMFB
// RUN: autotune-export inspect %t.vmfb --no-resources | FileCheck %s --check-prefix=NORES

// CHECK:      inspect.mlir (mlir): 2 groups, 2 executables
// CHECK-NEXT: executable @add_ex: ptx object for sm_80, 4 exports
// CHECK-NEXT: executable @dot_ex: ptx object for sm_80, 2 exports
// CHECK-EMPTY:
// CHECK-NEXT: group @add_ex::@add: 2 variants (+2 specialized)
// CHECK-NEXT:   kernel:      add_kernel in ../Inputs/kernels.py
// CHECK-NEXT:   host:        @add
// CHECK-NEXT:   layout:      3 bindings [ReadOnly, ReadOnly, ReadWrite], 1 constant
// CHECK-NEXT:   default:     @add_1_1024_w8_s3 (frozen by default(@v))
// CHECK-NEXT:   specialized: each variant has a fast path, taken when n (constant 0) % 16 == 0
// CHECK-NEXT:      variant                ordinal  workgroup  shared B  regs  spills  config
// CHECK-NEXT:      add_0_128_w4_s3              0  128x1x1            0  {{ *[0-9]+}}       0  BLOCK=128 num_warps=4
// CHECK-NEXT:        add_0_128_w4_s3_spec       1  128x1x1            0  {{ *[0-9]+}}       0  (specialized)
// CHECK-NEXT:   *  add_1_1024_w8_s3             2  256x1x1            0  {{ *[0-9]+}}       0  BLOCK=1024 num_warps=8
// CHECK-NEXT:        add_1_1024_w8_s3_spec      3  256x1x1            0  {{ *[0-9]+}}       0  (specialized)
// CHECK-EMPTY:
// A 256x256 fp32 accumulator in 128 threads does not fit in registers: ptxas spills.
// CHECK-NEXT: group @dot_ex::@dot: 2 variants
// CHECK-NEXT:   kernel:      tile_dot_kernel in ../Inputs/kernels.py
// CHECK-NEXT:   host:        @dot
// CHECK-NEXT:   layout:      3 bindings [ReadOnly, ReadOnly, ReadWrite], 0 constants
// CHECK-NEXT:   default:     @dot_0_32x32x32_w4_s2 (not frozen: the first variant until tuned)
// CHECK-NEXT:      variant ordinal workgroup shared B regs spills config
// CHECK-NEXT:   *  dot_0_32x32x32_w4_s2 0 128x1x1 {{[1-9][0-9]*}} {{[0-9]+}} 0 BM=32 BN=32 BK=32 num_warps=4 num_stages=2
// CHECK-NEXT:      dot_1_256x256x128_w4_s2 1 128x1x1 131072 {{[0-9]+}} {{[1-9][0-9]*}} BM=256 BN=256 BK=128 num_warps=4 num_stages=2
// CHECK-NEXT:   pruned:      config 2 {BM = 32, BN = 32, BK = 32, num_warps = 4, num_stages = 2, num_ctas = 2} pruned: num_ctas = 2: IREE launches no thread-block clusters
// CHECK-NOT:  note:

// JSON:      "format": "autotune-export.inspect/2",
// JSON:      "kind": "mlir",
// JSON:      "group": "add",
// JSON:      "kernel": {
// JSON-NEXT:   "path": "../Inputs/kernels.py",
// JSON-NEXT:   "name": "add_kernel"
// JSON:      "default": "add_1_1024_w8_s3",
// JSON-NEXT: "frozen": true,
// JSON-NEXT: "specialized": {
// JSON-NEXT:   "add_0_128_w4_s3": "add_0_128_w4_s3_spec",
// JSON-NEXT:   "add_1_1024_w8_s3": "add_1_1024_w8_s3_spec"
// JSON:      "guard_names": {
// JSON-NEXT:   "divisible_by_16": [
// JSON-NEXT:     "n"
// JSON:      "name": "add_0_128_w4_s3",
// JSON-NEXT: "ordinal": 0,
// JSON-NEXT: "workgroup_size": [
// JSON-NEXT:   128,
// JSON-NEXT:   1,
// JSON-NEXT:   1
// JSON-NEXT: ],
// JSON-NEXT: "shared_memory_bytes": 0,
// JSON-NEXT: "registers": {{[1-9][0-9]*}},
// JSON-NEXT: "spills": 0,

// The .vmfb keeps the variants, sizes, the default and (reflection metadata) the configs; the
// guards stay in the IR.
// VMFB:      inspect.mlir.tmp.vmfb (vmfb): 2 groups, 2 executables
// VMFB-NEXT: executable @add_ex: ptx object for sm_80, 4 exports
// VMFB-NEXT: executable @dot_ex: ptx object for sm_80, 2 exports
// VMFB-EMPTY:
// VMFB-NEXT: group @add_ex::@add: 2 variants (+2 specialized)
// VMFB-NEXT:   host:        @add
// VMFB-NEXT:   layout:      3 bindings [ReadOnly, ReadOnly, ReadWrite], 1 constant
// VMFB-NEXT:   default:     @add_1_1024_w8_s3
// VMFB-NEXT:   specialized: each variant has a fast path, taken when its guards hold
// VMFB-NEXT:      variant                ordinal  workgroup  shared B  regs  spills  config
// VMFB-NEXT:      add_0_128_w4_s3              0  128x1x1            0  {{ *[0-9]+}}       0  BLOCK=128 num_warps=4{{$}}
// VMFB-NEXT:        add_0_128_w4_s3_spec       1  128x1x1            0  {{ *[0-9]+}}       0  (specialized)
// VMFB-NEXT:   *  add_1_1024_w8_s3             2  256x1x1            0  {{ *[0-9]+}}       0  BLOCK=1024 num_warps=8{{$}}
// VMFB-NEXT:        add_1_1024_w8_s3_spec      3  256x1x1            0  {{ *[0-9]+}}       0  (specialized)
// VMFB:      group @dot_ex::@dot: 2 variants
// VMFB:      * dot_0_32x32x32_w4_s2 0 128x1x1 {{[1-9][0-9]*}} {{[0-9]+}} 0
// VMFB-NEXT:   dot_1_256x256x128_w4_s2 1 128x1x1 131072 {{[0-9]+}} {{[1-9][0-9]*}}

// NORES:     add_0_128_w4_s3              0  128x1x1            0     -       -
hal.executable.source private @add_ex {
  hal.executable.autotuning.export @add
      triton("../Inputs/kernels.py", "add_kernel")
      signature(x_ptr: *fp32:16, y_ptr: *fp32:16, out_ptr: *fp32:16 {output}, n: i32:16)
      configs([{BLOCK = 128, num_warps = 4}, {BLOCK = 1024, num_warps = 8}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<4096xf32>, tensor<4096xf32>)
      default(@add_1_1024_w8_s3)
}

hal.executable.source private @dot_ex {
  hal.executable.autotuning.export @dot
      triton("../Inputs/kernels.py", "tile_dot_kernel")
      signature(a_ptr: *fp16, b_ptr: *fp16, c_ptr: *fp32 {output})
      configs([{BM = 32, BN = 32, BK = 32, num_warps = 4, num_stages = 2},
               {BM = 256, BN = 256, BK = 128, num_warps = 4, num_stages = 2},
               {BM = 32, BN = 32, BK = 32, num_warps = 4, num_stages = 2, num_ctas = 2}])
      workload()
      grid(1)
}

util.func public @add(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n_i32 = arith.index_cast %n : index to i32
  %out = flow.dispatch @add_ex::@add[%n](%x, %y, %n_i32) : (tensor<?xf32>{%n}, tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %out : tensor<?xf32>
}

util.func public @dot(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>) -> tensor<32x32xf32> {
  %c = flow.dispatch @dot_ex::@dot(%a, %b) : (tensor<32x32xf16>, tensor<32x32xf16>) -> tensor<32x32xf32>
  util.return %c : tensor<32x32xf32>
}
