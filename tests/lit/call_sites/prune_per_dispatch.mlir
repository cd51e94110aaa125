// REQUIRES: integration
// Issue 21.5: prune_configs_by runs per dispatch (Triton prunes at every launch with that
// launch's arguments). up_to_n keeps the blocks that fit in n (the kernel does not mask): the
// n = 65536 dispatch keeps all four configs, the n = 256 dispatch BLOCK 128 and 256 only. The
// group compiles the four (main compiled only the two both keep, so the n = 65536 dispatch lost
// the configs Triton runs for it); the n = 256 dispatch carries autotune.allowed, and the
// lowering maps any other choice there to its first (@g_0_128_w1_s3).
// RUN: autotune-export %s --emit mlir --target sm_90 -o %t.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR --input-file %t.mlir
// RUN: autotune-export %t.mlir -p lower-autotuning-dispatch | FileCheck %s --check-prefix=LOWER
// inspect shows what each dispatch may run where it is narrower than the group.
// RUN: autotune-export inspect %t.mlir | FileCheck %s --check-prefix=INSPECT
// RUN: autotune-export %t.mlir --emit vmfb --target sm_90 -o %t.vmfb
// RUN: autotune-export inspect %t.vmfb | FileCheck %s --check-prefix=VMFB

// REMARK: remark: @g: triton.autotune config 2 {BLOCK = 512, num_warps = 4, num_stages = 3, num_ctas = 1} pruned for dispatch 1 in @small (line {{[0-9]+}}): early_config_prune 'up_to_n' did not keep it (prune_configs_by)
// REMARK: remark: @g: prune_configs_by (early_config_prune 'up_to_n') saw dispatch 0 in @big (line {{[0-9]+}}): n = 65536; dispatch 1 in @small (line {{[0-9]+}}): n = 256
// REMARK-NOT: keeps 2 of 4
// REMARK: remark: @g: dispatch 1 in @small (line {{[0-9]+}}) may run only the group's configs 0, 1 (those its own prune_configs_by keeps, in Triton's order; another choice runs config 0 there)
// REMARK: remark: @g: 4 variants for sm_90

// IR: variants([@g_0_128_w1_s3, @g_1_256_w2_s3, @g_2_512_w4_s3, @g_3_1024_w4_s3])
// IR-LABEL: util.func public @big(
// IR-NOT:     autotune.allowed
// IR:         flow.dispatch @ex::@g[
// IR-LABEL: util.func public @small(
// IR:         flow.dispatch @ex::@g[%{{.+}}](%{{.+}}, %{{.+}}) {autotune.allowed = [@g_0_128_w1_s3, @g_1_256_w2_s3]}

// LOWER-LABEL: util.func public @small(
// LOWER:         %[[G:.+]] = util.global.load @__autotune.ex.g.choice : i32
// LOWER:         %[[OK:.+]] = arith.ori %{{.+}}, %{{.+}} : i1
// LOWER-NEXT:    %[[FIRST:.+]] = arith.constant 0 : i32
// LOWER-NEXT:    arith.select %[[OK]], %{{.+}}, %[[FIRST]] : i32
// LOWER:         flow.dispatch @ex::@g_0_128_w1_s3[

// INSPECT: group @ex::@g: 4 variants
// INSPECT: allowed: dispatch 1 in @small (line {{[0-9]+}}): @g_0_128_w1_s3, @g_1_256_w2_s3 (its own prune_configs_by keeps fewer; any other choice runs @g_0_128_w1_s3 there)

// VMFB: group @ex::@g: 4 variants
// VMFB: allowed: dispatch 1 in @small: @g_0_128_w1_s3, @g_1_256_w2_s3 (its own prune_configs_by keeps fewer; any other choice runs @g_0_128_w1_s3 there)

hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("../Inputs/pruned_kernels.py", "scale_unmasked")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(len)
      grid(cdiv(len, BLOCK))
}

util.func public @big(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %len = arith.constant 65536 : index
  %n = arith.constant 65536 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %y : tensor<65536xf32>
}

util.func public @small(%x: tensor<256xf32>) -> tensor<256xf32> {
  %len = arith.constant 256 : index
  %n = arith.constant 256 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<256xf32>, i32) -> tensor<256xf32>
  util.return %y : tensor<256xf32>
}
