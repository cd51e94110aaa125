#!/bin/sh
# Puts the public Triton code of the corpus into scratch_gpu/corpus_src/ (git-ignored: never
# commit other projects' code), one folder per library, and records the commits in
# scratch_gpu/corpus_src/SOURCES.txt.
#
#   sh benchmarks/corpus/fetch_sources.sh MIRROR_LIGER MIRROR_ATTORCH MIRROR_FLA
#
# Each MIRROR_* is a bare git directory of the library (the search tool's `fetch` of
# github:linkedin/Liger-Kernel, github:BobMcDear/attorch and github:fla-org/flash-linear-attention gives /work/.mirror/OWNER+NAME/repo;
# a `git clone --bare` does as well). The revisions are pinned so that a recording and its
# replay read the same code:
#   Liger-Kernel v0.6.4 (0a62700752e8592c0bf16916d1e4dbf598cee8c1): plain Python wrappers around
#     @triton.jit kernels (layer norms, SwiGLU/GeGLU, cross entropy, RoPE, KL/JSD/TVD losses,
#     group norm, softmax, DyT, ...), kernels inside a package with absolute imports;
#   attorch 67c2772baf33913ef51c2d1064f746ca17b63749: triton.autotune + triton.heuristics
#     kernels (heuristics that read run-time scalars), relative imports inside the package;
#   flash-linear-attention bc3b101dcb713ddc5bd8924b66754eb68b5ccf89: norms, cumsum, recurrent
#     linear attention (None for optional tensors, varlen cu_seqlens, heuristics on
#     `x is not None`, autotune with key=[...], do_not_specialize, device queries at import).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
dest="$here/scratch_gpu/corpus_src"
liger=${1:-/work/.mirror/linkedin+Liger-Kernel/repo}
attorch=${2:-/work/.mirror/BobMcDear+attorch/repo}
fla=${3:-/work/.mirror/fla-org+flash-linear-attention/repo}
LIGER_REV=0a62700752e8592c0bf16916d1e4dbf598cee8c1
ATTORCH_REV=67c2772baf33913ef51c2d1064f746ca17b63749
FLA_REV=bc3b101dcb713ddc5bd8924b66754eb68b5ccf89

rm -rf "$dest"
mkdir -p "$dest/liger" "$dest/attorch" "$dest/fla"
# Liger-Kernel: the package (src/liger_kernel) and its licence.
git --git-dir="$liger" archive "$LIGER_REV" src/liger_kernel/__init__.py src/liger_kernel/utils.py \
    src/liger_kernel/env_report.py src/liger_kernel/ops LICENSE 2>/dev/null | tar -x -C "$dest/liger"
# attorch: the package and its licence.
git --git-dir="$attorch" archive "$ATTORCH_REV" attorch LICENSE 2>/dev/null | tar -x -C "$dest/attorch"
# flash-linear-attention: the package and its licence.
git --git-dir="$fla" archive "$FLA_REV" fla LICENSE 2>/dev/null | tar -x -C "$dest/fla"
{
  echo "liger https://github.com/linkedin/Liger-Kernel $LIGER_REV (v0.6.4) -> liger/src"
  echo "attorch https://github.com/BobMcDear/attorch $ATTORCH_REV -> attorch"
  echo "fla https://github.com/fla-org/flash-linear-attention $FLA_REV -> fla"
} > "$dest/SOURCES.txt"
cat "$dest/SOURCES.txt"
# git archive reports objects of other paths that a partial mirror lacks; check what we need.
for f in liger/src/liger_kernel/ops/rms_norm.py liger/src/liger_kernel/ops/utils.py attorch/attorch/__init__.py \
    fla/fla/__init__.py fla/fla/utils/_device.py fla/fla/modules/l2norm.py fla/LICENSE; do
  test -s "$dest/$f" || { echo "fetch_sources.sh: $dest/$f is missing" >&2; exit 1; }
done
