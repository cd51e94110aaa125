"""Cross entropy forward over int64 labels with ignore_index and an optional logit softcap
(None), autotuned over configs chosen from the GPU at import time, behind the library's own
launcher (as Liger's and unsloth's cross entropies)."""

import triton
import triton.language as tl

from ..registry import register
from ..utils import ARCH, CachedLauncher, softcapped

# Bigger blocks where the GPU has the shared memory and bandwidth for them (decided when the
# module is imported, from what Triton's driver reports).
_BLOCKS = (1024, 2048, 4096) if ARCH >= 90 else (1024, 2048)
CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in _BLOCKS for w in (4, 8)]


def _prune(configs, named_args, **kwargs):
    # Blocks wider than the row are wasted work (the library's pruner).
    n_cols = named_args.get("n_cols")
    if not isinstance(n_cols, int):
        return configs
    return [c for c in configs if c.kwargs["BLOCK"] <= max(1024, triton.next_power_of_2(n_cols))] or configs[:1]


@triton.autotune(CONFIGS, key=["n_cols"], reset_to_zero=["loss_ptr"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def _cross_entropy_fwd(logits_ptr, labels_ptr, loss_ptr, stride, n_cols, ignore_index, softcap, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    label = tl.load(labels_ptr + row)
    ignored = label == ignore_index
    base = logits_ptr + row * stride
    m = float("-inf")
    d = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        x = softcapped(x, softcap)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    x_label = softcapped(tl.load(base + tl.where(ignored, 0, label)).to(tl.float32), softcap)
    loss = tl.where(ignored, 0.0, tl.log(d) + m - x_label)
    tl.store(loss_ptr + row, loss)


cross_entropy_fwd = register("cross_entropy_fwd", CachedLauncher(_cross_entropy_fwd))
