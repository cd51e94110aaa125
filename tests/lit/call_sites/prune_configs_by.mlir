// REQUIRES: integration
// A group without configs(...) takes its kernel's triton.autotune configs after the autotuner's
// prune_configs_by, as Triton's Autotuner.prune_configs applies it: early_config_prune sees n
// (an arith.constant at the dispatch), the pointer's element size and Triton's device
// properties answered for --target; perf_model with top_k = 0.5 keeps the two lowest estimates,
// lowest first. One remark per pruned config, one naming which configs the group keeps. A group
// that gives configs(...) is not pruned (its kernel's pruner would keep nothing).
// RUN: autotune-export %s --emit vmfb --target sm_90 -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: autotune-export %s --emit mlir --target sm_80 -o %t.mlir 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: FileCheck %s --check-prefix=IR --input-file %t.mlir
// inspect shows each variant's config as compiled (the kept configs, renumbered).
// RUN: autotune-export inspect %s --target sm_90 | FileCheck %s --check-prefix=INSPECT
// INSPECT-LABEL: group @ex2::@perf: 2 variants
// INSPECT:       perf_0_256_w2_s3 {{.+}} BLOCK=256 num_warps=2 num_stages=3 num_ctas=1
// INSPECT-NEXT:  perf_1_1024_w4_s3 {{.+}} BLOCK=1024 num_warps=4 num_stages=3 num_ctas=1

// sm_90 has 132 SMs: 65536 / 512 = 128 programs do not fill them.
// SM90: remark: @early: triton.autotune config 2 {BLOCK = 512, num_warps = 4, num_stages = 3, num_ctas = 1} pruned: early_config_prune 'fill_every_sm' did not keep it (prune_configs_by)
// SM90: remark: @early: triton.autotune config 3 {BLOCK = 1024, num_warps = 4, num_stages = 3, num_ctas = 1} pruned: early_config_prune 'fill_every_sm' did not keep it (prune_configs_by)
// SM90: remark: @early: prune_configs_by (early_config_prune 'fill_every_sm') keeps 2 of 4 triton.autotune configs: the group's configs 0..1 are its configs 0, 1
// SM90: remark: @perf: triton.autotune config 0 {BLOCK = 128, num_warps = 1, num_stages = 3, num_ctas = 1} pruned: perf_model 'programs_plus_warps' estimates 612; top_k = 0.5 keeps the 2 lowest (up to 464) (prune_configs_by)
// SM90: remark: @perf: triton.autotune config 2 {BLOCK = 512, num_warps = 4, num_stages = 3, num_ctas = 1} pruned: perf_model 'programs_plus_warps' estimates 528; top_k = 0.5 keeps the 2 lowest (up to 464) (prune_configs_by)
// SM90: remark: @perf: prune_configs_by (perf_model 'programs_plus_warps') keeps 2 of 4 triton.autotune configs: the group's configs 0..1 are its configs 1, 3
// SM90-NOT: @explicit
// SM90: remark: @early: 2 variants for sm_90
// SM90: remark: @perf: 2 variants for sm_90
// SM90: remark: @explicit: 1 variant for sm_90
// SM90: autotune-export: wrote {{.*}}.vmfb

// sm_80 has 108 SMs: 128 programs fill them, so BLOCK = 512 stays.
// SM80: remark: @early: triton.autotune config 3 {BLOCK = 1024, num_warps = 4, num_stages = 3, num_ctas = 1} pruned
// SM80: remark: @early: prune_configs_by (early_config_prune 'fill_every_sm') keeps 3 of 4 triton.autotune configs: the group's configs 0..2 are its configs 0, 1, 2

// IR: hal.executable.autotuning.export @early
// IR: variants([@early_0_128_w1_s3, @early_1_256_w2_s3, @early_2_512_w4_s3])
// IR: hal.executable.autotuning.export @perf
// IR: variants([@perf_0_256_w2_s3, @perf_1_1024_w4_s3])

hal.executable.source private @ex {
  hal.executable.autotuning.export @early
      triton("../Inputs/pruned_kernels.py", "scale_early")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(len)
      grid(cdiv(len, BLOCK))
}

hal.executable.source private @ex2 {
  hal.executable.autotuning.export @perf
      triton("../Inputs/pruned_kernels.py", "scale_perf")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(len)
      grid(cdiv(len, BLOCK))
      tune_workload(tensor<65536xf32>)
}

hal.executable.source private @ex3 {
  hal.executable.autotuning.export @explicit
      triton("../Inputs/pruned_kernels.py", "scale_keeps_nothing")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 256, num_warps = 2}])
      workload(len)
      grid(cdiv(len, BLOCK))
}

util.func public @early(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %len = arith.constant 65536 : index
  %n = arith.index_cast %len : index to i32
  %y = flow.dispatch @ex::@early[%len](%x, %n) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %y : tensor<65536xf32>
}

// n from the tuning workload: the host's argument is dynamic, tune_workload gives its shape.
util.func public @perf(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %len = tensor.dim %x, %c0 : tensor<?xf32>
  %n = arith.index_cast %len : index to i32
  %y = flow.dispatch @ex2::@perf[%len](%x, %n) : (tensor<?xf32>{%len}, i32) -> tensor<?xf32>{%len}
  util.return %y : tensor<?xf32>
}

util.func public @explicit(%x: tensor<65536xf32>, %n: i32) -> tensor<65536xf32> {
  %len = arith.constant 65536 : index
  %y = flow.dispatch @ex3::@explicit[%len](%x, %n) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %y : tensor<65536xf32>
}
