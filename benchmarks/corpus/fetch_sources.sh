#!/bin/sh
# Puts the public Triton code of the corpus into scratch_gpu/corpus_src/ (git-ignored: never
# commit other projects' code), one folder per library, and records the commits in
# scratch_gpu/corpus_src/SOURCES.txt.
#
#   sh benchmarks/corpus/fetch_sources.sh [MIRROR_LIGER MIRROR_ATTORCH MIRROR_FLA]
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
#     `x is not None`, autotune with key=[...], do_not_specialize, device queries at import);
#   gemlite 0.6.0.post2 (PyPI's source distribution, sha256 pinned below; pure Python, no wheel
#     exists): low-bit quantized matmuls (GEMV/GEMM/split-K kernels unpacking int4/int8 weights,
#     autotune with prune_configs_by and heuristics, per-token activation quantization), asks the
#     GPU's capability when imported.
# A library whose mirror is missing is left out (with a note): its cases then fail to import,
# which `record.py --cases` / `replay.py --cases` of the other libraries do not reach.
# The kernels torch.compile writes (cases.py, `inductor.*`) need no sources: they are recorded
# with the files Inductor generated.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
dest="$here/scratch_gpu/corpus_src"
liger=${1:-/work/.mirror/linkedin+Liger-Kernel/repo}
attorch=${2:-/work/.mirror/BobMcDear+attorch/repo}
fla=${3:-/work/.mirror/fla-org+flash-linear-attention/repo}
LIGER_REV=0a62700752e8592c0bf16916d1e4dbf598cee8c1
ATTORCH_REV=67c2772baf33913ef51c2d1064f746ca17b63749
FLA_REV=bc3b101dcb713ddc5bd8924b66754eb68b5ccf89

GEMLITE_VERSION=0.6.0.post2
GEMLITE_SHA256=95c32b3d5ff10f6b08673ad08af1940d615fac01350be3e3c21b74eae01260e9

rm -rf "$dest"
mkdir -p "$dest"
: > "$dest/SOURCES.txt"
check=""
if [ -d "$liger" ]; then
  # Liger-Kernel: the package (src/liger_kernel) and its licence.
  mkdir -p "$dest/liger"
  git --git-dir="$liger" archive "$LIGER_REV" src/liger_kernel/__init__.py src/liger_kernel/utils.py \
      src/liger_kernel/env_report.py src/liger_kernel/ops LICENSE 2>/dev/null | tar -x -C "$dest/liger"
  echo "liger https://github.com/linkedin/Liger-Kernel $LIGER_REV (v0.6.4) -> liger/src" >> "$dest/SOURCES.txt"
  check="$check liger/src/liger_kernel/ops/rms_norm.py liger/src/liger_kernel/ops/utils.py"
else
  echo "fetch_sources.sh: no mirror $liger: Liger-Kernel left out" >&2
fi
if [ -d "$attorch" ]; then
  # attorch: the package and its licence.
  mkdir -p "$dest/attorch"
  git --git-dir="$attorch" archive "$ATTORCH_REV" attorch LICENSE 2>/dev/null | tar -x -C "$dest/attorch"
  echo "attorch https://github.com/BobMcDear/attorch $ATTORCH_REV -> attorch" >> "$dest/SOURCES.txt"
  check="$check attorch/attorch/__init__.py"
else
  echo "fetch_sources.sh: no mirror $attorch: attorch left out" >&2
fi
if [ -d "$fla" ]; then
  # flash-linear-attention: the package and its licence.
  mkdir -p "$dest/fla"
  git --git-dir="$fla" archive "$FLA_REV" fla LICENSE 2>/dev/null | tar -x -C "$dest/fla"
  echo "fla https://github.com/fla-org/flash-linear-attention $FLA_REV -> fla" >> "$dest/SOURCES.txt"
  check="$check fla/fla/__init__.py fla/fla/utils/_device.py fla/fla/modules/l2norm.py fla/LICENSE"
else
  echo "fetch_sources.sh: no mirror $fla: flash-linear-attention left out" >&2
fi
# gemlite: PyPI's source distribution (the package and its licence), checked against its sha256.
tmp=$(mktemp -d)
python3 -m pip download -q --no-deps --no-binary :all: -d "$tmp" "gemlite==$GEMLITE_VERSION" 2>/dev/null
echo "$GEMLITE_SHA256  $tmp/gemlite-$GEMLITE_VERSION.tar.gz" | sha256sum -c --quiet
mkdir -p "$dest/gemlite"
tar -xzf "$tmp/gemlite-$GEMLITE_VERSION.tar.gz" -C "$dest/gemlite" --strip-components=1 \
    "gemlite-$GEMLITE_VERSION/gemlite" "gemlite-$GEMLITE_VERSION/LICENSE"
rm -rf "$tmp"
echo "gemlite PyPI gemlite==$GEMLITE_VERSION (sdist sha256 $GEMLITE_SHA256) -> gemlite" >> "$dest/SOURCES.txt"
check="$check gemlite/gemlite/__init__.py gemlite/gemlite/triton_kernels/gemm_kernels.py gemlite/LICENSE"
cat "$dest/SOURCES.txt"
# git archive reports objects of other paths that a partial mirror lacks; check what we need.
for f in $check; do
  test -s "$dest/$f" || { echo "fetch_sources.sh: $dest/$f is missing" >&2; exit 1; }
done
