// prune_configs_by of a kernel's triton.autotune, applied to a group without configs(...):
// what the pruning functions read but an export does not know is an error at the group that
// names it and says how to fix it; so are a pruner that keeps nothing (Triton requires one) and
// a top_k Triton rejects. All of it happens before anything compiles (fast suite).
// RUN: autotune-export %s -p materialize-triton-variants --target sm_90 --split-input-file --verify-diagnostics

// n is an argument of the host function and no tune_workload(...) gives it.
hal.executable.source private @ex {
  // expected-error @+1 {{@g: prune_configs_by of the triton.autotune of 'scale_early': early_config_prune 'fill_every_sm' reads argument 'n', which is not known when exporting; a scalar is known when each dispatch of the group passes a value computed from constants, tune_workload(...) or static argument shapes; otherwise give the configs to export explicitly with configs([...])}}
  hal.executable.autotuning.export @g
      triton("../Inputs/pruned_kernels.py", "scale_early")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(len)
      grid(cdiv(len, BLOCK))
}

util.func public @f(%x: tensor<65536xf32>, %n: i32) -> tensor<65536xf32> {
  %len = arith.constant 65536 : index
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %y : tensor<65536xf32>
}

// -----

// Of a tensor of dynamic shape, only the dtype and the element size are known (a static one's
// .shape, .numel() and .stride() are: tests/unit/test_cli_launch_args.py).
hal.executable.source private @ex {
  // expected-error @+1 {{early_config_prune 'reads_shape' reads argument 'x_ptr.shape', which is not known when exporting; of a tensor .dtype and .element_size() are known from the signature, .shape, .numel() and .stride() where every dispatch binds a tensor of static shape (dense, as IREE's buffers are); give the configs to export explicitly with configs([...])}}
  hal.executable.autotuning.export @g
      triton("../Inputs/pruned_kernels.py", "scale_reads_shape")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(len)
      grid(cdiv(len, BLOCK))
}

util.func public @f(%x: tensor<?xf32>, %len: index) -> tensor<?xf32> {
  %n = arith.constant 65536 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<?xf32>{%len}, i32) -> tensor<?xf32>{%len}
  util.return %y : tensor<?xf32>
}

// -----

hal.executable.source private @ex {
  // expected-error @+1 {{early_config_prune 'keeps_nothing' kept no config: Triton requires at least one (AutotunerError: No valid autotuner configs after pruning); give the configs to export explicitly with configs([...])}}
  hal.executable.autotuning.export @g
      triton("../Inputs/pruned_kernels.py", "scale_keeps_nothing")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(len)
      grid(cdiv(len, BLOCK))
}

util.func public @f(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %len = arith.constant 65536 : index
  %n = arith.constant 65536 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %y : tensor<65536xf32>
}

// -----

hal.executable.source private @ex {
  // expected-error @+1 {{prune_configs_by top_k = '2': Triton requires a float <= 1.0 or an int (TypeError)}}
  hal.executable.autotuning.export @g
      triton("../Inputs/pruned_kernels.py", "scale_bad_top_k")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(len)
      grid(cdiv(len, BLOCK))
}

util.func public @f(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %len = arith.constant 65536 : index
  %n = arith.constant 65536 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %y : tensor<65536xf32>
}
