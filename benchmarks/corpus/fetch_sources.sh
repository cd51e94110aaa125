#!/bin/sh
# Puts the public Triton code of the corpus into scratch_gpu/corpus_src/ (git-ignored: never
# commit other projects' code), one folder per library, and records the commits in
# scratch_gpu/corpus_src/SOURCES.txt.
#
#   sh benchmarks/corpus/fetch_sources.sh MIRROR_LIGER MIRROR_ATTORCH
#
# Each MIRROR_* is a bare git directory of the library (the search tool's `fetch` of
# github:linkedin/Liger-Kernel and github:BobMcDear/attorch gives /work/.mirror/OWNER+NAME/repo;
# a `git clone --bare` does as well). The revisions are pinned so that a recording and its
# replay read the same code:
#   Liger-Kernel v0.6.4 (0a62700752e8592c0bf16916d1e4dbf598cee8c1): plain Python wrappers around
#     @triton.jit kernels (layer norms, SwiGLU/GeGLU, cross entropy, RoPE, KL/JSD/TVD losses,
#     group norm, softmax, DyT, ...), kernels inside a package with absolute imports;
#   attorch 67c2772baf33913ef51c2d1064f746ca17b63749: triton.autotune + triton.heuristics
#     kernels (heuristics that read run-time scalars), relative imports inside the package.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
dest="$here/scratch_gpu/corpus_src"
liger=${1:-/work/.mirror/linkedin+Liger-Kernel/repo}
attorch=${2:-/work/.mirror/BobMcDear+attorch/repo}
LIGER_REV=0a62700752e8592c0bf16916d1e4dbf598cee8c1
ATTORCH_REV=67c2772baf33913ef51c2d1064f746ca17b63749

rm -rf "$dest"
mkdir -p "$dest/liger" "$dest/attorch"
# Liger-Kernel: the package (src/liger_kernel) and its licence.
git --git-dir="$liger" archive "$LIGER_REV" src/liger_kernel/__init__.py src/liger_kernel/utils.py \
    src/liger_kernel/env_report.py src/liger_kernel/ops LICENSE 2>/dev/null | tar -x -C "$dest/liger"
# attorch: the package and its licence.
git --git-dir="$attorch" archive "$ATTORCH_REV" attorch LICENSE 2>/dev/null | tar -x -C "$dest/attorch"
{
  echo "liger https://github.com/linkedin/Liger-Kernel $LIGER_REV (v0.6.4) -> liger/src"
  echo "attorch https://github.com/BobMcDear/attorch $ATTORCH_REV -> attorch"
} > "$dest/SOURCES.txt"
cat "$dest/SOURCES.txt"
# git archive reports objects of other paths that a partial mirror lacks; check what we need.
for f in liger/src/liger_kernel/ops/rms_norm.py liger/src/liger_kernel/ops/utils.py attorch/attorch/__init__.py; do
  test -s "$dest/$f" || { echo "fetch_sources.sh: $dest/$f is missing" >&2; exit 1; }
done
