#!/bin/bash
# All GPU benchmarks in one command, for one call of a lent GPU machine.
#
#   here:   python benchmarks/build_gpu_inputs.py            # .gpu_bench/: modules + IREE wheel
#   there:  bash benchmarks/run_gpu_suite.sh [STEPS]          # STEPS: tuning,profile,dispatch,tflops,load
#
# Results (JSON per benchmark, log.txt, env.txt) go to $OUT (default /tmp/bench_out). Each step
# has its own time limit so that one slow step cannot starve the others.
set -u
OUT=${OUT:-/tmp/bench_out}
STEPS=${1:-tuning,dispatch,tflops,load}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
if ! python3 -c "import iree.runtime" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu_bench/whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
# The runtime as committed (build_gpu_inputs.py), then the checkout.
export PYTHONPATH=$PWD/.gpu_bench/pkg:$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
{
  date -u; nvidia-smi; /usr/local/cuda/bin/ncu --version; nproc
  python3 -c "import sys, torch, triton, numpy; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'numpy', numpy.__version__)"
  python3 -c "import importlib.metadata as m; print('iree-base-runtime', m.version('iree-base-runtime'))" 2>&1
  python3 -c "import jax; print('jax', jax.__version__)" 2>&1 | tail -1
  (cd /tmp && python3 -c "import autotune_export.runtime as r; print('runtime from', r.__file__)")
  cat .gpu_bench/build.json
} > "$OUT/env.txt" 2>&1
log="$OUT/log.txt"
step() {  # name limit_s command...
  local name=$1 limit=$2; shift 2
  case ",$STEPS," in *",$name,"*) ;; *) return ;; esac
  echo "=== $name ($(date -u +%T), limit ${limit}s): $*" | tee -a "$log"
  timeout -k 5 "$limit" "$@" 2>&1 | tee -a "$log"
  echo "=== $name exit ${PIPESTATUS[0]}" | tee -a "$log"
}
step tuning ${TUNING_LIMIT:-520} python3 benchmarks/tuning_vs_triton.py --runs ${TUNING_RUNS:-3} --profile \
  ${TUNING_ARGS:-} --json "$OUT/tuning.json"
step profile ${PROFILE_LIMIT:-60} python3 benchmarks/profile_tuning.py .gpu_bench/mm_8192x8192x8192.vmfb --runs 2
step dispatch ${DISPATCH_LIMIT:-90} python3 benchmarks/dispatch_overhead.py ${DISPATCH_ARGS:-} --json "$OUT/dispatch.json"
step tflops ${TFLOPS_LIMIT:-90} python3 benchmarks/matmul_tflops.py --json "$OUT/tflops.json"
step load ${LOAD_LIMIT:-80} python3 benchmarks/module_load.py --json "$OUT/load.json"
