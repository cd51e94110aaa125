// Cross entropy over int64 labels through tritonlib's cross_entropy_fwd: the module attribute
// is the library's launcher object around a triton.autotune kernel; its configs (none given
// here) are those the library picked at import time for the GPU Triton's driver reported,
// which is the --target (more of them for sm_90 than for sm_80).
//
//   autotune-export cross_entropy.mlir --emit vmfb --target sm_90 -o cross_entropy.vmfb
//
// softcap is None in @cross_entropy (Triton's constexpr None: `if softcap is not None` is
// decided when compiling) and a run-time fp32 in @cross_entropy_softcap.
hal.executable.source private @ce_ex {
  hal.executable.autotuning.export @ce
      triton("tritonlib/ops/cross_entropy.py", "cross_entropy_fwd")
      signature(logits_ptr: *fp32, labels_ptr: *i64, loss_ptr: *fp32 {output}, stride: i32, n_cols: i32,
                ignore_index: i32, softcap: none)
      workload(M)
      grid(M)
      tune_workload(tensor<1024x32000xf32>, tensor<1024xi64>)
}

hal.executable.source private @ce_softcap_ex {
  hal.executable.autotuning.export @ce_softcap
      triton("tritonlib/ops/cross_entropy.py", "cross_entropy_fwd")
      signature(logits_ptr: *fp32, labels_ptr: *i64, loss_ptr: *fp32 {output}, stride: i32, n_cols: i32,
                ignore_index: i32, softcap: fp32)
      workload(M)
      grid(M)
      tune_workload(tensor<1024x32000xf32>, tensor<1024xi64>, 30.0 : f32)
}

// loss[i] = logsumexp(logits[i]) - logits[i, labels[i]], 0 where labels[i] == -100.
util.func public @cross_entropy(%logits: tensor<?x?xf32>, %labels: tensor<?xi64>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %logits, %c0 : tensor<?x?xf32>
  %v = tensor.dim %logits, %c1 : tensor<?x?xf32>
  %n = arith.index_cast %v : index to i32
  %ignore = arith.constant -100 : i32
  %loss = flow.dispatch @ce_ex::@ce[%m](%logits, %labels, %n, %n, %ignore)
      : (tensor<?x?xf32>{%m, %v}, tensor<?xi64>{%m}, i32, i32, i32) -> tensor<?xf32>{%m}
  util.return %loss : tensor<?xf32>
}

// The same with logits softcapped: softcap * tanh(logits / softcap).
util.func public @cross_entropy_softcap(%logits: tensor<?x?xf32>, %labels: tensor<?xi64>, %softcap: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %logits, %c0 : tensor<?x?xf32>
  %v = tensor.dim %logits, %c1 : tensor<?x?xf32>
  %n = arith.index_cast %v : index to i32
  %ignore = arith.constant -100 : i32
  %loss = flow.dispatch @ce_softcap_ex::@ce_softcap[%m](%logits, %labels, %n, %n, %ignore, %softcap)
      : (tensor<?x?xf32>{%m, %v}, tensor<?xi64>{%m}, i32, i32, i32, f32) -> tensor<?xf32>{%m}
  util.return %loss : tensor<?xf32>
}
