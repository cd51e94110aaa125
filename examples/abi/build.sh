#!/bin/sh
# Build the modules that examples/abi/check_on_gpu.py runs (no GPU needed):
#   examples/abi/build.sh OUTDIR
# scalars.vmfb, tma_scale.vmfb and matmul.vmfb hold sm_90 cubins; tma_multi.vmfb holds PTX for
# sm_80 and sm_90a in two hal.executable.variants, selected when the module loads.
set -eu
out=${1:?usage: build.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
ae=${AUTOTUNE_EXPORT:-autotune-export}
ic=${IREE_COMPILE:-iree-compile}
build() {  # name input targets object-format iree-target [iree flags...]
    name=$1 input=$2 targets=$3 format=$4 iree_target=$5
    shift 5
    "$ae" "$input" --emit iree --target "$targets" --object-format "$format" -o "$out/$name.mlir"
    "$ic" "$out/$name.mlir" --iree-hal-target-device=cuda --iree-cuda-target="$iree_target" "$@" -o "$out/$name.vmfb"
}
# iree-target: what IREE compiles its own dispatches (the tuning entries' fake data) for; it has
# no sm_90 code generation, so sm_89 for the sm_90 modules (the Triton cubins stay sm_90).
build scalars "$here/scalars.mlir" sm_90 cubin sm_89 --iree-input-demote-f64-to-f32=false
build tma_scale "$here/tma_scale.mlir" sm_90 cubin sm_89
build matmul "$here/../matmul/matmul.mlir" sm_90 cubin sm_89
build tma_multi "$here/tma_scale.mlir" sm_80,sm_90 ptx sm_80
ls -l "$out"/*.vmfb
