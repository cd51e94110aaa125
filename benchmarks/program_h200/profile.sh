#!/bin/sh
# Device-side view of calls of @main in the tuned and the frozen build, for the question "why is frozen main slower than tuned main" (docs/program.md):
#   sh benchmarks/program_h200/profile.sh out/program_h200 OUTDIR
# With nsys: a CUDA trace of 3 calls per build; prints each matmul kernel's start (us, from
# the build's first kernel), duration (us) and name: overlapping kernels ran concurrently.
# Without nsys, ncu: per kernel launch its duration, grid, block and shared memory (ncu
# serializes kernels: no overlap shown). Needs PYTHONPATH with iree.runtime; < 60 s.
set -u
F=${1:-out/program_h200}; O=${2:-/tmp}
B="tuned frozen"
HERE=$(dirname "$0")
for b in $B; do
  echo "== $b"
  if command -v nsys >/dev/null 2>&1; then
    nsys profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite true -o "$O/prof_$b" \
      python3 "$HERE/one_call.py" "$F" "$b" --calls 3 >"$O/prof_$b.log" 2>&1 || { tail -5 "$O/prof_$b.log"; exit 1; }
    nsys stats --report cuda_gpu_trace --format csv --force-export true -o "$O/trace_$b" "$O/prof_$b.nsys-rep" >/dev/null 2>&1
    python3 - "$O/trace_${b}_cuda_gpu_trace.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if any(k in r.get("Name", "") for k in ("bmm_kernel", "matmul"))]
rows = rows[-9:]  # the last three calls' kernels (three per call of main)
t0 = int(rows[0]["Start (ns)"]) if rows else 0
for r in rows:
    print(f"  start {(int(r['Start (ns)']) - t0) / 1e3:9.1f} us  dur {int(r['Duration (ns)']) / 1e3:8.1f} us  {r['Name'][:70]}")
PY
  elif command -v ncu >/dev/null 2>&1; then
    ncu -k regex:'bmm_kernel|matmul' --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static \
      --csv python3 "$HERE/one_call.py" "$F" "$b" >"$O/ncu_$b.csv" 2>"$O/ncu_$b.err" || { tail -5 "$O/ncu_$b.err"; exit 1; }
    python3 - "$O/ncu_$b.csv" <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
for r in csv.DictReader(lines[start:] if start is not None else []):
    print(f"  {r.get('ID')} {r.get('Kernel Name', '')[:60]:60s} {r.get('Metric Name')} = {r.get('Metric Value')} {r.get('Metric Unit', '')}")
PY
  else
    echo "neither nsys nor ncu"; exit 1
  fi
done
