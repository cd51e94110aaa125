// The H200 benchmark of issue 25 (docs/program.md, "CUDA and Triton candidates"): fp16 matmuls
// as jax.export writes them (StableHLO dot_general, fp16 in and out). `main` runs all three;
// each is also a function of its own, so that its dispatch can be timed alone (per-dispatch
// times). Shapes are M x N x K, IREE's naming: 4096^3, 8192 x 128 x 8192 (a skinny N) and a
// batch of 8 matmuls of 2048^3. `call_floor` (one tiny elementwise dispatch, not tunable) is
// the floor of a synchronous call: what one call costs the host and the driver in any build.
func.func @main(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>,
                %c: tensor<8192x8192xf16>, %d: tensor<8192x128xf16>,
                %e: tensor<8x2048x2048xf16>, %f: tensor<8x2048x2048xf16>)
    -> (tensor<4096x4096xf16>, tensor<8192x128xf16>, tensor<8x2048x2048xf16>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<8192x8192xf16>, tensor<8192x128xf16>) -> tensor<8192x128xf16>
  %2 = stablehlo.dot_general %e, %f, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x2048x2048xf16>, tensor<8x2048x2048xf16>) -> tensor<8x2048x2048xf16>
  return %0, %1, %2 : tensor<4096x4096xf16>, tensor<8192x128xf16>, tensor<8x2048x2048xf16>
}

func.func @mm_4096(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  return %0 : tensor<4096x4096xf16>
}

func.func @mm_skinny(%c: tensor<8192x8192xf16>, %d: tensor<8192x128xf16>) -> tensor<8192x128xf16> {
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<8192x8192xf16>, tensor<8192x128xf16>) -> tensor<8192x128xf16>
  return %1 : tensor<8192x128xf16>
}

func.func @bmm(%e: tensor<8x2048x2048xf16>, %f: tensor<8x2048x2048xf16>) -> tensor<8x2048x2048xf16> {
  %2 = stablehlo.dot_general %e, %f, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x2048x2048xf16>, tensor<8x2048x2048xf16>) -> tensor<8x2048x2048xf16>
  return %2 : tensor<8x2048x2048xf16>
}

func.func @call_floor(%z: tensor<128xf16>) -> tensor<128xf16> {
  %0 = stablehlo.add %z, %z : tensor<128xf16>
  return %0 : tensor<128xf16>
}
