// REQUIRES: integration
// Several architectures in one module: --target sm_80,sm_90 links one object per architecture
// (keyed by target_arch); lowering makes a hal.executable with one variant per architecture,
// most capable first, each with its own object, block size and shared memory, and a condition
// on the device's compute capability that IREE evaluates when the module loads. A config that
// cannot run on one of the architectures is dropped for all (same exports in every variant).
// RUN: autotune-export %s -p materialize-triton-variants,verify-autotuning-groups --target sm_80,sm_90 2>/dev/null | FileCheck %s --check-prefix=MAT
// RUN: autotune-export %s --emit iree --target sm_80,sm_90 2>/dev/null | FileCheck %s --check-prefix=LOWER
// RUN: autotune-export %s --emit iree --target sm_80,sm_90 -o %t.mlir 2>/dev/null
// RUN: iree-compile %t.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o %t.vmfb
// RUN: iree-dump-module %t.vmfb | FileCheck %s --check-prefix=VMFB
// A cubin runs on its own major architecture only: the sm_80 variant then stops at 8.9.
// RUN: autotune-export %s --emit iree --target sm_80,sm_90 --object-format cubin 2>/dev/null | FileCheck %s --check-prefix=CUBIN

hal.executable.source private @tma_ex {
  hal.executable.autotuning.export @tma_scale
      triton("../../../examples/abi/kernels.py", "tma_scale_kernel")
      signature(x_ptr: *fp32:16, out_ptr: *fp32:16 {output}, M: i32, N: i32)
      configs([{BM = 32, BN = 32, num_warps = 4}, {BM = 64, BN = 128, num_warps = 4}])
      workload(M, N)
      grid(cdiv(M, BM), cdiv(N, BN))
      tune_workload(tensor<256x256xf32>)
}

util.func public @tma_scale(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %M = arith.index_cast %m : index to i32
  %N = arith.index_cast %n : index to i32
  %y = flow.dispatch @tma_ex::@tma_scale[%m, %n](%x, %M, %N) : (tensor<?x?xf32>{%m, %n}, i32, i32) -> tensor<?x?xf32>{%m, %n}
  util.return %y : tensor<?x?xf32>
}

// MAT-DAG: #[[T80:.+]] = #hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_80"}>
// MAT-DAG: #[[T90:.+]] = #hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_90a"}>
// MAT: hal.executable.source private @tma_ex <objects = <{#[[T80]] = [#hal.executable.object<{path = "tma_ex.sm_80.ptx", data = "{{.*}}.target sm_80\0A{{.*}}"}>], #[[T90]] = [#hal.executable.object<{path = "tma_ex.sm_90a.ptx", data = "{{.*}}.target sm_90a\0A{{.*}}"}>]}>>
// MAT: } <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = [[SMEM:[0-9]+]]> attributes {autotune.config = [{{.+}}], autotune.global_scratch = [256, 128], autotune.targets = {sm_80 = [128, 0], sm_90a = [128, [[SMEM]]]}}

// LOWER-NOT: autotune.targets
// LOWER:      hal.executable private @tma_ex {
// LOWER-NEXT:   hal.executable.variant public @sm_90a target(#{{.+}}) objects([#hal.executable.object<{path = "tma_ex.sm_90a.ptx"
// LOWER-NEXT:     hal.executable.condition(%[[D:.+]]: !hal.device) -> i1 {
// LOWER-NEXT:       %{{.+}}, %[[MAJOR:.+]] = hal.device.query<%[[D]] : !hal.device> key("cuda.device" :: "compute_capability_major") : i1, i32 = 0 : i32
// LOWER-NEXT:       %{{.+}}, %[[MINOR:.+]] = hal.device.query<%[[D]] : !hal.device> key("cuda.device" :: "compute_capability_minor") : i1, i32 = 0 : i32
// LOWER:            %[[CC:.+]] = arith.addi %{{.+}}, %[[MINOR]] : i32
// LOWER-NEXT:       %[[LO:.+]] = arith.constant 90 : i32
// LOWER-NEXT:       %[[GE:.+]] = arith.cmpi sge, %[[CC]], %[[LO]] : i32
// LOWER-NEXT:       %[[HI:.+]] = arith.constant 90 : i32
// LOWER-NEXT:       %[[LE:.+]] = arith.cmpi sle, %[[CC]], %[[HI]] : i32
// LOWER-NEXT:       %[[OK:.+]] = arith.andi %[[GE]], %[[LE]] : i1
// LOWER-NEXT:       hal.return %[[OK]] : i1
// LOWER:          hal.executable.export public @tma_scale_0_32x32_w4_s3 ordinal(0)
// LOWER:          } <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = {{[1-9][0-9]*}}>
// LOWER:        hal.executable.variant public @sm_80 target(#{{.+}}) objects([#hal.executable.object<{path = "tma_ex.sm_80.ptx"
// LOWER:            %[[LO80:.+]] = arith.constant 80 : i32
// LOWER-NEXT:       %[[GE80:.+]] = arith.cmpi sge, %{{.+}}, %[[LO80]] : i32
// LOWER-NEXT:       hal.return %[[GE80]] : i1
// LOWER:          hal.executable.export public @tma_scale_0_32x32_w4_s3 ordinal(0)
// LOWER:          } <workgroup_size = [128 : index, 1 : index, 1 : index]> attributes {autotune.config = [{{.+}}]}{{$}}
// LOWER-LABEL: util.func public @tma_scale(
// LOWER:      flow.dispatch {@tma_ex::@sm_90a::@tma_scale_0_32x32_w4_s3, @tma_ex::@sm_80::@tma_scale_0_32x32_w4_s3}[

// The module queries the compute capability when it loads and creates the executable from
// the first variant whose condition holds.
// VMFB: compute_capability_major
// VMFB: does not support any variant of executable `tma_ex`

// CUBIN: hal.executable.variant public @sm_80
// CUBIN:      %[[LO:.+]] = arith.constant 80 : i32
// CUBIN-NEXT: %[[GE:.+]] = arith.cmpi sge, %{{.+}}, %[[LO]] : i32
// CUBIN-NEXT: %[[HI:.+]] = arith.constant 89 : i32
