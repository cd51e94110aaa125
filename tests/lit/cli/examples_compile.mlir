// REQUIRES: integration
// Every example's --emit iree output is accepted by the installed iree-compile (for CUDA), and
// --emit vmfb produces a module; both for sm_80 and sm_90.
// RUN: autotune-export %examples/matmul/matmul.mlir --emit iree --target sm_80 -o %t.matmul.mlir 2> %t.matmul.err
// RUN: FileCheck %s --check-prefix=PRUNE < %t.matmul.err
// RUN: iree-compile %t.matmul.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.matmul.vmfb
// RUN: autotune-export %examples/vector_add/vector_add.mlir --emit iree --target sm_80 -o %t.vector_add.mlir
// RUN: iree-compile %t.vector_add.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vector_add.vmfb
// RUN: autotune-export %examples/softmax/softmax.mlir --emit iree --target sm_80 -o %t.softmax.mlir
// RUN: iree-compile %t.softmax.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.softmax.vmfb
// RUN: autotune-export %examples/vector_add/vector_add.mlir --emit vmfb --target sm_90 -o %t.vector_add.sm90.vmfb
// RUN: iree-dump-module %t.vector_add.sm90.vmfb | FileCheck %s --check-prefix=VMFB
// RUN: FileCheck %s --check-prefix=IREE < %t.softmax.mlir
// The cubin object format (assembled here by Triton's ptxas) goes through verification and
// iree-compile too.
// RUN: autotune-export %examples/vector_add/vector_add.mlir --emit iree --object-format cubin --target sm_80 -o %t.cubin.mlir
// RUN: FileCheck %s --check-prefix=CUBIN < %t.cubin.mlir
// RUN: iree-compile %t.cubin.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.cubin.vmfb

// CUBIN: #hal.executable.object<{path = "vector_add_ex.cubin", data = dense<

// Config 8's specialized variant needs 196608 bytes of shared memory: pruned on sm_80.
// PRUNE: matmul.mlir:9:3: remark: @matmul: config 8 {BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 64, GROUP_M = 8, num_warps = 8, num_stages = 7} pruned (specialized variant): needs 196608 bytes of shared memory, sm_80 allows at most 166912
// PRUNE: matmul.mlir:9:3: remark: @matmul: 8 variants (+8 specialized) for sm_80 ({{[0-9]+}} compiled, {{[0-9]+}} from cache), 1 pruned

// The module exports the host function and the tuning entry points.
// VMFB-DAG: add
// VMFB-DAG: __autotune
// VMFB-DAG: __autotune.vector_add_ex.add.select
// VMFB-DAG: __autotune.vector_add_ex.add.bench.2

// Plain IREE input: no extension op left, one export per config.
// IREE-NOT: autotuning
// IREE: hal.executable.export public @softmax_0_1024_w1_s3 ordinal(0)
// IREE: hal.executable.export public @softmax_3_2048_w8_s3 ordinal(3)
