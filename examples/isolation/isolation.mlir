// out = 2 * x (fp32) through a Triton kernel with four configs, two of which a tuner must
// survive: {FAR = 1} stores 4 TiB out of bounds (a CUDA illegal address) and {STEP = 0} never
// terminates (examples/isolation/kernels.py). Tuning drops both with a reason, picks among the
// two others, and the program goes on (examples/isolation/check_on_gpu.py).
//
//   autotune-export examples/isolation/isolation.mlir --emit vmfb --target sm_90 -o .gpu/isolation/isolation.vmfb
hal.executable.source private @isolation_ex {
  hal.executable.autotuning.export @scale
      triton("kernels.py", "scale_kernel")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 1024, FAR = 0, STEP = 1, num_warps = 4},
               {BLOCK = 1024, FAR = 1, STEP = 1, num_warps = 4},
               {BLOCK = 1024, FAR = 0, STEP = 0, num_warps = 4},
               {BLOCK = 256, FAR = 0, STEP = 1, num_warps = 2}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<1048576xf32>)
}

util.func public @scale(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n_i32 = arith.index_cast %n : index to i32
  %out = flow.dispatch @isolation_ex::@scale[%n](%x, %n_i32) : (tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %out : tensor<?xf32>
}
