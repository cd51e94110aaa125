#!/bin/sh
# One batched GPU run of the ABI checks (results under $OUT, or ./gpu_abi_out when unset):
#   examples/abi/build.sh .gpu_abi && cp IREE_RUNTIME_WHEEL .gpu_abi/   # here, no GPU
#   sh examples/abi/run_gpu_checks.sh                                    # on the GPU machine
# Expects .gpu_abi/ to hold the modules of build.sh and, when iree.runtime is not installed,
# the iree-base-runtime wheel.
export PYTHONUNBUFFERED=1
out=${OUT:-gpu_abi_out}
mkdir -p "$out"
if ! python3 -c "import iree.runtime" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu_abi/*.whl || exit 3
    export PYTHONPATH=/tmp/site
fi
nvidia-smi -L
timeout 100 python3 examples/abi/check_on_gpu.py --vmfb-dir .gpu_abi --json "$out/results.json" > "$out/check.log" 2>&1
echo "check rc=$?"
grep -v "^scalars \|^tma_\|^matmul " "$out/check.log" | tail -25
grep "WRONG" "$out/check.log" | head
grep "^scalars\|^tma_multi" "$out/check.log" | head -3
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
echo "ncu=$ncu"
timeout 100 "$ncu" --csv --clock-control none --metrics gpu__time_duration.sum,launch__shared_mem_per_block_dynamic \
    python3 examples/abi/check_on_gpu.py --vmfb-dir .gpu_abi --ncu-part > "$out/ncu.csv" 2> "$out/ncu.err"
echo "ncu rc=$?"
tail -4 "$out/ncu.err"
python3 examples/abi/check_on_gpu.py --parse-ncu "$out/ncu.csv"
