"""The corpus: each case calls public ops of a Triton library, through the library's own Python
wrappers, on inputs made from a seed, a shape and a dtype.

A case is a function ``case(device)``: it makes its inputs on the CPU from its own seeded
``torch.Generator`` (so that the GPU recording and the CPU replay start from the same values),
moves them to ``device`` and calls the ops. Every Triton launch it makes is one launch of the
corpus. The same code runs on the GPU (record.py, ``"cuda"``) and here (replay.py, ``"cpu"``:
the launches are intercepted, not run). Ops whose wrappers take another path on a CPU tensor
than on a GPU one (Liger's backward norms size their partial sums by
``torch.cuda.get_device_properties().multi_processor_count``) are left out: their replay would
not be the recorded launch.

To add a case: write a function below that makes its inputs with :func:`rand` / :func:`labels`
and calls the library, and list it in :data:`CASES` with a unique name. Keep tensors small:
what a recording brings back from the GPU machine is limited (64 MiB).
"""

from __future__ import annotations

import contextlib
import types
import zlib
from typing import Callable

import torch


def _gen(tag: str) -> torch.Generator:
    return torch.Generator().manual_seed(zlib.crc32(tag.encode()))


def rand(tag: str, shape, dtype=torch.float32, device="cpu", scale=1.0, offset=0.0) -> torch.Tensor:
    """Normal values (``scale``, ``offset``) from the seed ``tag``, made on the CPU, then moved."""
    x = torch.randn(*shape, generator=_gen(tag), dtype=torch.float32) * scale + offset
    return x.to(dtype).to(device)


def labels(tag: str, n: int, classes: int, device="cpu", ignore: int | None = None, every: int = 5) -> torch.Tensor:
    """int64 labels in [0, classes), every ``every``-th one ``ignore`` when given."""
    y = torch.randint(0, classes, (n,), generator=_gen(tag), dtype=torch.int64)
    if ignore is not None:
        y[::every] = ignore
    return y.to(device)


_UNRECORDED = [0]


@contextlib.contextmanager
def unrecorded():
    """Launches a case makes inside this block are not part of the corpus: record.py lets them
    run unseen, replay.py expects none there (setting a library up: a first call of a
    ``torch.compile``d function, which compiles, autotunes and selects its kernels, or a
    layer's weight packing whose wrapper takes a torch path for CPU tensors)."""
    _UNRECORDED[0] += 1
    try:
        yield
    finally:
        _UNRECORDED[0] -= 1


def recording_paused() -> bool:
    """Whether the case is inside :func:`unrecorded`."""
    return _UNRECORDED[0] > 0


class Ctx(types.SimpleNamespace):
    """A stand-in for the ``ctx`` of a ``torch.autograd.Function`` called directly."""

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


# --------------------------------------------------------------------------------------------
# Liger-Kernel (v0.6.4): module-level forward/backward functions


def liger_rms_norm(d, rows, cols, dtype, casting, offset):
    from liger_kernel.ops.rms_norm import rms_norm_forward

    x = rand(f"rms.x{rows}{cols}{dtype}", (rows, cols), dtype, d)
    w = rand(f"rms.w{cols}", (cols,), dtype, d, 0.1, 1.0)
    rms_norm_forward(x, w, 1e-6, offset, casting, None)


def liger_layer_norm(d, rows, cols, dtype):
    from liger_kernel.ops.layer_norm import layer_norm_forward

    x = rand(f"ln.x{rows}{cols}{dtype}", (rows, cols), dtype, d)
    w = rand(f"ln.w{cols}", (cols,), dtype, d, 0.1, 1.0)
    b = rand(f"ln.b{cols}", (cols,), dtype, d, 0.1)
    layer_norm_forward(x, w, b, 1e-5)


def liger_glu(d, op, rows, cols, dtype):
    mod = __import__(f"liger_kernel.ops.{op}", fromlist=["x"])
    a = rand(f"{op}.a{rows}{cols}{dtype}", (2, rows // 2, cols), dtype, d)
    b = rand(f"{op}.b{rows}{cols}{dtype}", (2, rows // 2, cols), dtype, d)
    dc = rand(f"{op}.dc{rows}{cols}{dtype}", (2, rows // 2, cols), dtype, d)
    a, b, _ = getattr(mod, f"{op}_forward")(a, b)
    getattr(mod, f"{op}_backward")(a, b, dc)  # writes da, db over a, b (in place)


def liger_cross_entropy(d, rows, vocab, dtype, reduction="mean", weight=False, smoothing=0.0, softcap=None,
                        z_loss=False, grad=None):
    from liger_kernel.ops.cross_entropy import cross_entropy_backward, cross_entropy_forward

    x = rand(f"ce.x{rows}{vocab}{dtype}", (rows, vocab), dtype, d, 2.0)
    y = labels(f"ce.y{rows}{vocab}", rows, vocab, d, ignore=-100)
    w = rand(f"ce.w{vocab}", (vocab,), torch.float32, d, 0.1, 1.0) if weight else None
    lse = 1e-4 if z_loss else 0.0
    loss, _, _, x_grad = cross_entropy_forward(x, y, w, -100, lse, smoothing, reduction, softcap, z_loss)
    if grad is not None:  # a scalar != 1 multiplies the gradient in place (element_mul_kernel)
        cross_entropy_backward(x_grad, torch.tensor(grad, device=d))


def liger_rope(d, bsz, heads, kv_heads, seq, hd, dtype, backward=False):
    from liger_kernel.ops.rope import rope_backward, rope_forward

    q = rand(f"rope.q{bsz}{heads}{seq}{hd}{dtype}", (bsz, heads, seq, hd), dtype, d)
    k = rand(f"rope.k{bsz}{kv_heads}{seq}{hd}{dtype}", (bsz, kv_heads, seq, hd), dtype, d)
    pos = torch.arange(seq, dtype=torch.float32)[:, None] * (10000.0 ** (-torch.arange(0, hd, 2) / hd))[None]
    emb = torch.cat([pos, pos], dim=-1)[None]
    cos, sin = emb.cos().to(dtype).to(d), emb.sin().to(dtype).to(d)
    q, k, cos, sin = rope_forward(q, k, cos, sin)
    if backward:
        dq = rand("rope.dq", (bsz, heads, seq, hd), dtype, d)
        dk = rand("rope.dk", (bsz, kv_heads, seq, hd), dtype, d)
        rope_backward(dq, dk, cos, sin)


def liger_kl_div(d, rows, cols, reduction, log_target, dtype=torch.float32):
    from liger_kernel.ops.kl_div import kldiv_backward_triton, kldiv_forward_triton

    y_pred = torch.log_softmax(rand(f"kl.p{rows}{cols}", (rows, cols)), -1).to(dtype).to(d)
    t = torch.softmax(rand(f"kl.t{rows}{cols}", (rows, cols)), -1)
    y_true = (t.log() if log_target else t).to(dtype).to(d)
    kldiv_forward_triton(y_pred, y_true, log_target, reduction, 1e-10)
    if reduction != "none":
        grads = torch.empty_like(y_true)
        kldiv_backward_triton(y_true, torch.tensor(1.0, device=d), grads, log_target)


def liger_jsd(d, rows, cols, beta, with_labels):
    from liger_kernel.ops.jsd import jsd_backward, jsd_forward

    x = torch.log_softmax(rand(f"jsd.x{rows}{cols}", (rows, cols)), -1).to(d)
    t = torch.log_softmax(rand(f"jsd.t{rows}{cols}", (rows, cols)), -1).to(d)
    lab = labels(f"jsd.l{rows}", rows, cols, d, ignore=-100, every=3) if with_labels else None
    loss, dx = jsd_forward(x, t, lab, beta, -100, with_labels)
    jsd_backward(dx, torch.tensor(0.5, device=d))


def liger_group_norm(d, batch, channels, groups, hidden, dtype=torch.float32):
    from liger_kernel.ops.group_norm import group_norm_backward, group_norm_forward

    x = rand(f"gn.x{batch}{channels}{hidden}", (batch, channels, hidden), dtype, d)
    w = rand(f"gn.w{channels}", (channels,), dtype, d, 0.1, 1.0)
    b = rand(f"gn.b{channels}", (channels,), dtype, d, 0.1)
    y, x2, mean, rstd, _ = group_norm_forward(x, channels, groups, w, b, 1e-6)
    dy = rand(f"gn.dy{batch}{channels}{hidden}", (batch, channels, hidden), dtype, d)
    group_norm_backward(dy, x2, w, b, mean, rstd, channels, groups)


def liger_softmax(d, rows, cols, dtype):
    from liger_kernel.ops.softmax import _softmax_backward, _softmax_forward

    x = rand(f"sm.x{rows}{cols}{dtype}", (rows, cols), dtype, d)
    y, block, warps, multi = _softmax_forward(x)
    dy = rand(f"sm.dy{rows}{cols}{dtype}", (rows, cols), dtype, d)
    _softmax_backward(dy, y, block, warps, multi)


def liger_tvd(d, rows, cols, reduction, with_labels):
    from liger_kernel.ops.tvd import tv_distance_forward_triton

    p = torch.softmax(rand(f"tvd.p{rows}{cols}", (rows, cols)), -1).to(d)
    q = torch.softmax(rand(f"tvd.q{rows}{cols}", (rows, cols)), -1).to(d)
    lab = labels(f"tvd.l{rows}", rows, cols, d, ignore=-100, every=4) if with_labels else None
    tv_distance_forward_triton(p, q, lab, reduction, -100, with_labels)


def liger_sparsemax(d, rows, cols):
    from liger_kernel.ops.sparsemax import _sparsemax_backward, _sparsemax_forward

    x = rand(f"spm.x{rows}{cols}", (rows, cols), torch.float32, d, 2.0)
    y, out_flat = _sparsemax_forward(x, -1)
    g = rand(f"spm.g{rows}{cols}", (rows, cols), torch.float32, d)
    _sparsemax_backward(g, out_flat, -1)


def liger_qwen2vl_mrope(d, bsz, heads, kv_heads, seq, hd):
    from liger_kernel.ops.qwen2vl_mrope import qwen2vl_mrope_forward

    q = rand("mrope.q", (bsz, heads, seq, hd), torch.float32, d)
    k = rand("mrope.k", (bsz, kv_heads, seq, hd), torch.float32, d)
    cos = rand("mrope.cos", (3, bsz, seq, hd), torch.float32, d).tanh()
    sin = rand("mrope.sin", (3, bsz, seq, hd), torch.float32, d).tanh()
    qwen2vl_mrope_forward(q, k, cos, sin, [hd // 8, hd // 8 * 1, hd // 4])


def liger_llama4_rope(d, bsz, seq, heads, kv_heads, hd):
    from liger_kernel.ops.llama4_rope import llama4_rope_forward

    q = rand("l4.q", (bsz, seq, heads, hd), torch.float32, d)
    k = rand("l4.k", (bsz, seq, kv_heads, hd), torch.float32, d)
    ang = rand("l4.f", (seq, hd // 2))
    freqs = torch.polar(torch.ones_like(ang), ang).to(d)
    llama4_rope_forward(q, k, freqs)


def liger_fused_add_rms_norm(d, rows, cols, dtype, casting):
    from liger_kernel.ops.fused_add_rms_norm import fused_add_rms_norm_forward

    x = rand(f"farms.x{rows}{cols}", (rows, cols), dtype, d)
    r = rand(f"farms.r{rows}{cols}", (rows, cols), dtype, d)
    w = rand(f"farms.w{cols}", (cols,), dtype, d, 0.1, 1.0)
    fused_add_rms_norm_forward(x, r, w, 1e-6, 0.0, casting)


def liger_poly_norm(d, rows, cols):
    from liger_kernel.ops.poly_norm import poly_norm_forward

    x = rand(f"poly.x{rows}{cols}", (rows, cols), torch.float32, d)
    w = rand("poly.w", (3,), torch.float32, d, 0.1, 0.3)
    b = rand("poly.b", (1,), torch.float32, d, 0.1)
    poly_norm_forward(x, w, b, 1e-6)


def liger_dyt(d, rows, cols, dtype, beta):
    from liger_kernel.ops.dyt import liger_dyt_fwd

    x = rand(f"dyt.x{rows}{cols}{dtype}", (rows, cols), dtype, d)
    alpha = rand("dyt.a", (1,), dtype, d, 0.1, 0.5)
    gamma = rand(f"dyt.g{cols}", (cols,), dtype, d, 0.1, 1.0)
    b = rand(f"dyt.b{cols}", (cols,), dtype, d, 0.1) if beta else None
    liger_dyt_fwd(x, alpha, gamma, b)


# --------------------------------------------------------------------------------------------
# attorch: torch.autograd.Function layers (triton.autotune + triton.heuristics kernels),
# forward then backward through their own methods.


def _fwd_bwd(fn, d, grad_tag, *args):
    ctx = Ctx(needs_input_grad=(True,) * 8)
    first = args[0]
    first.requires_grad_(True)
    with torch.no_grad():
        out = fn.forward(ctx, *args)
        g = rand(grad_tag, tuple(out.shape), out.dtype, d) if out.dim() else torch.tensor(1.5, dtype=out.dtype, device=d)
        fn.backward(ctx, g)


def attorch_softmax(d, batch, feat, dtype, neg, log):
    from attorch.softmax_layers import SoftmaxAutoGrad

    x = rand(f"at.sm{batch}{feat}{dtype}", (batch, feat), dtype, d)
    _fwd_bwd(SoftmaxAutoGrad, d, "at.sm.g", x, neg, log)


def attorch_act(d, n, dtype, act):
    from attorch.act_layers import ActFuncAutoGrad

    x = rand(f"at.act{n}{dtype}{act}", (4, n // 4), dtype, d)
    _fwd_bwd(ActFuncAutoGrad, d, f"at.act.g{act}", x, act, 0.0, False)


def attorch_layer_norm(d, batch, feat, dtype, affine):
    from attorch.layer_norm_layer import LayerNormAutoGrad

    x = rand(f"at.ln{batch}{feat}{dtype}", (batch, feat), dtype, d)
    w = rand(f"at.ln.w{feat}", (feat,), dtype, d, 0.1, 1.0) if affine else None
    b = rand(f"at.ln.b{feat}", (feat,), dtype, d, 0.1) if affine else None
    _fwd_bwd(LayerNormAutoGrad, d, "at.ln.g", x, w, b, 1e-5, True)


def attorch_rms_norm(d, batch, feat, dtype):
    from attorch.rms_norm_layer import RMSNormAutoGrad

    x = rand(f"at.rms{batch}{feat}{dtype}", (batch, feat), dtype, d)
    w = rand(f"at.rms.w{feat}", (feat,), dtype, d, 0.1, 1.0)
    _fwd_bwd(RMSNormAutoGrad, d, "at.rms.g", x, w, 1e-6)


def attorch_glu(d, batch, feat, act):
    from attorch.glu_layer import GLUAutoGrad

    x = rand(f"at.glu{batch}{feat}", (batch, 2 * feat), torch.float32, d)
    _fwd_bwd(GLUAutoGrad, d, "at.glu.g", x, -1, act)


def attorch_cross_entropy(d, batch, classes, weight):
    from attorch.cross_entropy_loss_layer import CrossEntropyLossAutoGrad

    x = rand(f"at.ce{batch}{classes}", (batch, classes), torch.float32, d, 2.0)
    y = labels(f"at.ce.y{batch}{classes}", batch, classes, d)
    w = rand(f"at.ce.w{classes}", (classes,), torch.float32, d, 0.1, 1.0) if weight else None
    _fwd_bwd(CrossEntropyLossAutoGrad, d, "at.ce.g", x, y, w)


def attorch_p_loss(d, n, p, reduction):
    from attorch.p_loss_layers import PLossAutoGrad

    x = rand(f"at.pl.x{n}", (8, n // 8), torch.float32, d)
    t = rand(f"at.pl.t{n}", (8, n // 8), torch.float32, d)
    _fwd_bwd(PLossAutoGrad, d, f"at.pl.g{reduction}", x, t, p, reduction)


def attorch_nll_loss(d, batch, classes, reduction, weight):
    from attorch.nll_loss_layer import NLLLossAutoGrad

    x = torch.log_softmax(rand(f"at.nll{batch}{classes}", (batch, classes)), -1).to(d)
    y = labels(f"at.nll.y{batch}{classes}", batch, classes, d)
    w = rand(f"at.nll.w{classes}", (classes,), torch.float32, d, 0.1, 1.0) if weight else None
    _fwd_bwd(NLLLossAutoGrad, d, f"at.nll.g{reduction}", x, y, reduction, w)


# --------------------------------------------------------------------------------------------
# flash-linear-attention (fla-org/flash-linear-attention bc3b101d): its module-level forward /
# backward functions, and autograd Functions' forward/backward called with a Ctx. Kernels inside
# a package (``from fla.ops.utils import ...``), triton.autotune with ``key=[...]`` and fla's
# autotune kwargs (``cache_results``; ``fla_cache_autotune``'s CachedAutotuner subclass),
# triton.heuristics on ``x is not None``, ``do_not_specialize``, ``None`` for optional tensors and
# scalars, with and without ``cu_seqlens``. fla asks the device when imported
# (fla/utils/_device.py: Triton's driver for the backend and the shared memory, torch.cuda for
# the name and capability; ``BS_LIST = [32, 64] if check_shared_mem() else [16, 32]``) and some
# wrappers ask again when called (``layer_norm_bwd`` sizes its partial sums by the SM count):
# every fla case is marked :func:`asks_device`.


def asks_device(case):
    """Mark ``case`` as one whose library asks the GPU (when imported, or in its wrappers).
    Without a GPU, record.py (dry run) and replay.py run it with autotune-export's stand-in
    answering for the recorded GPU (``common.device_answers``): the launches are then the ones
    the library makes on that GPU, not those of its CPU fallback."""
    case.asks_device = True
    return case


def fla_l2norm(d, rows, cols, dtype, out_dtype=None):
    from fla.modules.l2norm import l2norm_bwd, l2norm_fwd

    x = rand(f"fla.l2.x{rows}{cols}{dtype}", (2, rows // 2, cols), dtype, d)
    y, rstd = l2norm_fwd(x, 1e-6, out_dtype)
    dy = rand(f"fla.l2.dy{rows}{cols}", tuple(y.shape), y.dtype, d)
    l2norm_bwd(y, rstd, dy, 1e-6)


def fla_layer_norm(d, rows, cols, dtype, rms, bias, residual, backward):
    from fla.modules.layernorm import LayerNormFunction

    x = rand(f"fla.ln.x{rows}{cols}{dtype}", (2, rows // 2, cols), dtype, d)
    w = rand(f"fla.ln.w{cols}", (cols,), dtype, d, 0.1, 1.0)
    b = rand(f"fla.ln.b{cols}", (cols,), dtype, d, 0.1) if bias else None
    r = rand(f"fla.ln.r{rows}{cols}", (2, rows // 2, cols), dtype, d) if residual else None
    ctx = Ctx()
    with torch.no_grad():
        # forward(ctx, x, weight, bias, residual, eps, prenorm, residual_in_fp32, is_rms_norm)
        y = LayerNormFunction.forward(ctx, x, w, b, r, 1e-5, False, False, rms)
        if backward:
            LayerNormFunction.backward(ctx, rand(f"fla.ln.dy{rows}{cols}", tuple(y.shape), y.dtype, d))


def fla_norm_gated(d, rows, cols, activation, rms, bias):
    from fla.modules.fused_norm_gate import layer_norm_gated_fwd

    x = rand(f"fla.ng.x{rows}{cols}", (rows, cols), torch.float32, d)
    g = rand(f"fla.ng.g{rows}{cols}", (rows, cols), torch.float32, d)
    w = rand(f"fla.ng.w{cols}", (cols,), torch.float32, d, 0.1, 1.0)
    b = rand(f"fla.ng.b{cols}", (cols,), torch.float32, d, 0.1) if bias else None
    layer_norm_gated_fwd(x, g, w, b, activation, 1e-5, is_rms_norm=rms)


def _cu_seqlens(d, lengths):
    return torch.tensor([0] + list(lengths), dtype=torch.int64).cumsum(0).to(d)


def fla_local_cumsum(d, shape, chunk, reverse=False, scale=None, lengths=None):
    from fla.ops.utils import chunk_local_cumsum

    g = rand(f"fla.cs.g{shape}", shape, torch.float32, d, 0.1, -0.05)
    cu = _cu_seqlens(d, lengths) if lengths else None
    chunk_local_cumsum(g, chunk, reverse=reverse, scale=scale, cu_seqlens=cu)


def fla_global_cumsum(d, shape, reverse=False, lengths=None):
    from fla.ops.utils import chunk_global_cumsum

    s = rand(f"fla.gcs.s{shape}", shape, torch.float32, d, 0.1, -0.05)
    cu = _cu_seqlens(d, lengths) if lengths else None
    chunk_global_cumsum(s, reverse=reverse, cu_seqlens=cu)


def fla_softmax(d, rows, cols, dtype):
    from fla.ops.utils.softmax import softmax_bwd, softmax_fwd

    x = rand(f"fla.sm.x{rows}{cols}{dtype}", (rows, cols), dtype, d)
    p = softmax_fwd(x, torch.float)
    softmax_bwd(p, rand(f"fla.sm.dp{rows}{cols}", (rows, cols), torch.float32, d), torch.float)


def fla_logsumexp(d, rows, cols, scale):
    from fla.ops.utils.logsumexp import logsumexp_fwd

    logsumexp_fwd(rand(f"fla.lse.x{rows}{cols}", (rows, cols), torch.float32, d), scale)


def fla_mean_pooling(d, shape, chunk, lengths=None):
    from fla.ops.utils.pooling import MeanPoolingFunction

    x = rand(f"fla.mp.x{shape}", shape, torch.float32, d)
    cu = _cu_seqlens(d, lengths) if lengths else None
    ctx = Ctx()
    with torch.no_grad():
        o = MeanPoolingFunction.forward(ctx, x, chunk, cu)
        MeanPoolingFunction.backward(ctx, rand(f"fla.mp.do{shape}", tuple(o.shape), o.dtype, d))


def fla_simple_gla(d, b, t, h, k, v, h0=False, final=False, lengths=None, backward=False):
    import torch.nn.functional as F

    from fla.ops.common.fused_recurrent import FusedRecurrentFunction

    q = rand(f"fla.sg.q{b}{t}{h}{k}", (b, t, h, k), torch.float32, d)
    kk = rand(f"fla.sg.k{b}{t}{h}{k}", (b, t, h, k), torch.float32, d)
    vv = rand(f"fla.sg.v{b}{t}{h}{v}", (b, t, h, v), torch.float32, d)
    g = F.logsigmoid(rand(f"fla.sg.g{b}{t}{h}", (b, t, h))).to(d)
    cu = _cu_seqlens(d, lengths) if lengths else None
    n = len(lengths) if lengths else b
    s0 = rand(f"fla.sg.h0{n}{h}{k}{v}", (n, h, k, v), torch.float32, d, 0.1) if h0 else None
    ctx = Ctx()
    with torch.no_grad():
        # forward(ctx, q, k, v, g, g_gamma, gk, gv, scale, initial_state, output_final_state,
        #         reverse, state_v_first, cu_seqlens): fused_recurrent_simple_gla's call
        o, ht = FusedRecurrentFunction.forward(ctx, q, kk, vv, g, None, None, None, k ** -0.5, s0, final,
                                               False, False, cu)
        if backward:
            do = rand(f"fla.sg.do{b}{t}{h}{v}", tuple(o.shape), o.dtype, d)
            dht = rand(f"fla.sg.dht{n}{h}{k}{v}", tuple(ht.shape), ht.dtype, d) if ht is not None else None
            FusedRecurrentFunction.backward(ctx, do, dht)


def fla_swiglu(d, rows, cols, dtype, use_weight):
    from fla.modules.activations import swiglu_fwd, swiglu_fwdbwd

    x = rand(f"fla.glu.x{rows}{cols}{dtype}", (rows, cols), dtype, d)
    y = rand(f"fla.glu.y{rows}{cols}{dtype}", (rows, cols), dtype, d)
    swiglu_fwd(x, y)
    swiglu_fwdbwd(x, y, rand(f"fla.glu.g{rows}{cols}{dtype}", (rows, cols), dtype, d), use_weight)


# --------------------------------------------------------------------------------------------
# gemlite (0.6.0.post2): low-bit quantized matmuls (GemLiteLinear layers made by gemlite.helper,
# called as modules: the custom op gemlite::forward_functional picks GEMV / GEMV_REVSPLITK /
# GEMV_SPLITK / GEMM_SPLITK / GEMM by the batch size), the weight packing kernel and the
# activation quantizers. Kernels: triton.autotune with prune_configs_by (gemlite's pruner reads
# M, N, K, group_size... from the arguments, and the shared memory of the device), heuristics,
# split-K sums with atomics, int4 unpacking, fp8 operands. gemlite asks the device when imported
# (torch.cuda.get_device_capability, get_device_properties(0).name to load its shipped autotune
# cache of that GPU): every case is marked :func:`asks_device`, and each starts from an empty
# config cache (gemlite.reset_config: the H200 has no shipped cache; the stand-in answers as an
# H100, whose cache would otherwise pick other configs here than on the GPU).


def _gemlite():
    import gemlite

    gemlite.reset_config()
    return gemlite


def gemlite_bitpack(d, rows, cols, nbits, packing):
    _gemlite()
    from gemlite.bitpack import pack_weights_over_cols_triton

    w = torch.randint(0, 2**nbits, (rows, cols), generator=_gen(f"gl.pack{rows}{cols}{nbits}"), dtype=torch.uint8)
    pack_weights_over_cols_triton(w.to(d), W_nbits=nbits, packing_bitwidth=packing, transpose=True)


def gemlite_a16wn(d, m, n, k, nbits, group, dtype):
    """A layer of ``nbits`` weights (asymmetric, grouped by ``group`` along K), fp16/bf16 activations."""
    _gemlite()
    from gemlite.helper import A16Wn

    w_q = torch.randint(0, 2**nbits, (n, k), generator=_gen(f"gl.wq{n}{k}{nbits}"), dtype=torch.uint8)
    scales = (rand(f"gl.s{n}{k}{group}", (n, k // group), scale=0.01).abs() + 0.005).to(dtype)
    zeros = torch.full((n, k // group), 2 ** (nbits - 1), dtype=dtype)
    with unrecorded():  # packs with Triton on a GPU, with torch for CPU tensors
        layer = A16Wn(device=d, dtype=dtype).from_weights(w_q.to(d), scales.to(d), zeros.to(d), nbits, group)
    layer(rand(f"gl.x{m}{k}{dtype}", (m, k), dtype, d))


def gemlite_a16w8(d, m, n, k, dtype):
    """Channel-wise int8 weights (quantized by gemlite from a float weight), fp16 activations."""
    _gemlite()
    from gemlite.helper import A16W8_INT8

    w = rand(f"gl.w8.{n}{k}", (n, k), scale=0.05)
    layer = A16W8_INT8(device=d, dtype=dtype).from_weights(w.to(dtype).to(d))
    layer(rand(f"gl.x8.{m}{k}{dtype}", (m, k), dtype, d))


def gemlite_a8w8_dynamic(d, m, n, k, fp8):
    """Dynamic per-token activation quantization (int8 or fp8) and the quantized matmul."""
    _gemlite()
    from gemlite.helper import A8W8_fp8_dynamic, A8W8_int8_dynamic

    w = rand(f"gl.wd.{n}{k}", (n, k), scale=0.05)
    layer = (A8W8_fp8_dynamic if fp8 else A8W8_int8_dynamic)(device=d, dtype=torch.float16).from_weights(w.to(torch.float16).to(d))
    layer(rand(f"gl.xd.{m}{k}", (m, k), torch.float16, d))


def gemlite_quant_per_token(d, m, k, dtype, w_dtype):
    _gemlite()
    from gemlite.quant_utils import scale_activations_per_token

    scale_activations_per_token(rand(f"gl.q{m}{k}{dtype}", (m, k), dtype, d, 3.0), w_dtype=w_dtype)


# --------------------------------------------------------------------------------------------
# Kernels torch.compile writes (Inductor, the torch of the recording). A case compiles a small
# function and calls it twice: the first call (unrecorded) compiles, autotunes each kernel's
# configs and selects the matmul templates; the second is recorded. record.py makes Inductor's
# launches of its generated kernels (CachingAutotuner.run) go through Triton's front door, as
# Inductor itself does under TRITON_INTERPRET=1 (CachingAutotuner._interpret_args_grid):
# ``kernel.fn[grid](*args, **config.kwargs, num_warps=..., num_stages=...)`` with the config its
# autotuning chose, and keeps the generated kernel files with the recording. Without a GPU
# (replay.py) nothing is compiled again (Inductor would write other kernels for CPU tensors):
# :func:`relaunch_generated` imports the recorded files and makes the recorded calls. The dry
# run (record.py --device cpu) lets Inductor write Triton for CPU tensors (cpu_backend="triton")
# and run it in Triton's interpreter.


def generated(case):
    """Mark ``case`` as one whose kernels are written at run time (torch.compile): replay.py
    relaunches them from the recorded files (:func:`relaunch_generated`) instead of calling it."""
    case.generated = True
    case.asks_device = True  # the dry run: Triton's driver answering (Inductor asks it for the target)
    return case


def inductor_compiled(d, fn, inputs, max_autotune=False, dynamic=False):
    import torch._dynamo
    import torch._inductor.config as ic

    torch._dynamo.reset()
    patches = {"compile_threads": 1, "fx_graph_cache": False}
    if d == "cpu":
        patches["cpu_backend"] = "triton"
    if max_autotune:  # the Triton mm templates only, at most 4 of their configs (a short recording)
        patches.update(max_autotune=True, max_autotune_gemm_backends="TRITON", max_autotune_pointwise=False)
        if hasattr(ic, "test_configs") and hasattr(ic.test_configs, "max_mm_configs"):
            patches["test_configs.max_mm_configs"] = 4
    with ic.patch(patches):
        compiled = torch.compile(fn, dynamic=dynamic, fullgraph=True)
        with unrecorded():
            compiled(*inputs)
        compiled(*inputs)


def _pointwise(x, y):
    return torch.relu(x * torch.sigmoid(y) + 1.0) - 0.5 * y


def _reductions(x):
    return x.sum(-1) * 0.5 + x.amax(-1), x.mean(0)


def _softmax(x):
    return torch.softmax(x * 2.0, dim=-1)


def _layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def _rms_norm_residual(x, r, w):
    h = x + r
    return h * torch.rsqrt(h.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(h.dtype) * w, h


def _mm_epilogue(x, w, b):
    return torch.relu(x @ w + b) * 2.0


def inductor_case(d, what, dtype=torch.float32, shape=(64, 256), **kw):
    if what == "pointwise":
        inputs = (rand(f"ind.pw.x{shape}", shape, dtype, d), rand(f"ind.pw.y{shape}", shape, dtype, d))
        fn = _pointwise
    elif what == "reductions":
        inputs, fn = (rand(f"ind.red.x{shape}", shape, dtype, d),), _reductions
    elif what == "softmax":
        inputs, fn = (rand(f"ind.sm.x{shape}", shape, dtype, d),), _softmax
    elif what == "layer_norm":
        inputs = (rand(f"ind.ln.x{shape}", shape, dtype, d), rand(f"ind.ln.w{shape[-1]}", shape[-1:], dtype, d, 0.1, 1.0),
                  rand(f"ind.ln.b{shape[-1]}", shape[-1:], dtype, d, 0.1))
        fn = _layer_norm
    elif what == "rms_norm_residual":
        inputs = (rand(f"ind.rn.x{shape}", shape, dtype, d), rand(f"ind.rn.r{shape}", shape, dtype, d),
                  rand(f"ind.rn.w{shape[-1]}", shape[-1:], dtype, d, 0.1, 1.0))
        fn = _rms_norm_residual
    elif what == "mm_epilogue":
        m, k, n = shape
        inputs = (rand(f"ind.mm.x{m}{k}", (m, k), dtype, d), rand(f"ind.mm.w{k}{n}", (k, n), dtype, d, 0.1),
                  rand(f"ind.mm.b{n}", (n,), dtype, d))
        fn = _mm_epilogue
    else:
        raise ValueError(what)
    inductor_compiled(d, fn, inputs, **kw)


def relaunch_generated(launches: list[dict], folder, device: str = "cpu") -> None:
    """Make the recorded launches of a :func:`generated` case again, as they were made: per
    launch, the kernel object of the recorded generated file (imported from ``folder``, the
    recording), indexed by the recorded grid and called with the recorded arguments (tensors
    made from their recorded contents, scalars, the constexprs and launch options as keywords).
    This is the call record.py saw on the GPU (Inductor's own launch through Triton's front
    door), now made on ``device`` tensors."""
    import importlib.util
    import pathlib

    import numpy as np

    import common

    folder = pathlib.Path(folder)
    modules: dict = {}
    for launch in launches:
        source = launch["kernel"].get("source")
        if source is None:
            raise RuntimeError(f"launch {launch['index']} has no recorded generated file")
        mod = modules.get(source)
        if mod is None:
            path = folder / source
            spec = importlib.util.spec_from_file_location(f"corpus_generated_{path.stem}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            modules[source] = mod
        kernel = getattr(mod, launch["kernel"]["function"])
        jit = kernel
        while not hasattr(jit, "arg_names") and hasattr(jit, "fn"):
            jit = jit.fn
        with np.load(folder / launch["data"]) as z:
            arrays = {k: z[k] for k in z.files}
        args, kwargs = [], {}
        for p in launch["params"]:
            if p["kind"] == "default":
                continue
            if p["kind"] == "tensor":
                a = common.from_numpy(arrays[f"before__{p['name']}"], p["dtype"]).reshape(p["shape"])
                v = torch.empty_strided(p["shape"], p["strides"], dtype=a.dtype, device=device)
                v.copy_(a)
            else:
                v = common.tl_value(p)
            if p["constexpr"]:
                kwargs[p["name"]] = v
            else:
                args.append(v)
        for k, d in launch.get("options", {}).items():
            kwargs[k] = common.tl_value(d)
        jit[tuple(launch["grid"])](*args, **kwargs)


f16, bf16, f32 = torch.float16, torch.bfloat16, torch.float32

#: name -> case(device). Launch counts are what the cases make (see record.py's index).
CASES: dict[str, Callable[[str], None]] = {
    "liger.rms_norm.f32.llama": lambda d: liger_rms_norm(d, 64, 512, f32, "llama", 0.0),
    "liger.rms_norm.f16.gemma": lambda d: liger_rms_norm(d, 32, 1000, f16, "gemma", 1.0),
    "liger.rms_norm.bf16.none": lambda d: liger_rms_norm(d, 48, 768, bf16, "none", 0.0),
    "liger.layer_norm.f32": lambda d: liger_layer_norm(d, 64, 512, f32),
    "liger.layer_norm.f16": lambda d: liger_layer_norm(d, 33, 1000, f16),
    "liger.swiglu.f32": lambda d: liger_glu(d, "swiglu", 64, 512, f32),
    "liger.swiglu.bf16": lambda d: liger_glu(d, "swiglu", 32, 700, bf16),
    "liger.geglu.f32": lambda d: liger_glu(d, "geglu", 64, 512, f32),
    "liger.geglu.f16": lambda d: liger_glu(d, "geglu", 24, 1000, f16),
    "liger.cross_entropy.f32.mean": lambda d: liger_cross_entropy(d, 32, 1000, f32, grad=2.0),
    "liger.cross_entropy.f32.zloss": lambda d: liger_cross_entropy(d, 48, 512, f32, weight=True, smoothing=0.1,
                                                                  softcap=30.0, z_loss=True),
    "liger.cross_entropy.bf16.none": lambda d: liger_cross_entropy(d, 16, 2000, bf16, reduction="none"),
    "liger.rope.f32": lambda d: liger_rope(d, 2, 4, 2, 16, 64, f32, backward=True),
    "liger.rope.f16": lambda d: liger_rope(d, 1, 8, 8, 24, 128, f16),
    "liger.kl_div.batchmean": lambda d: liger_kl_div(d, 32, 512, "batchmean", False),
    "liger.kl_div.none.log_target": lambda d: liger_kl_div(d, 16, 1000, "none", True),
    "liger.jsd.nolabels": lambda d: liger_jsd(d, 32, 512, 0.5, False),
    "liger.jsd.labels": lambda d: liger_jsd(d, 24, 300, 0.1, True),
    "liger.group_norm": lambda d: liger_group_norm(d, 4, 8, 2, 64),
    "liger.softmax.f32": lambda d: liger_softmax(d, 64, 512, f32),
    "liger.softmax.f16": lambda d: liger_softmax(d, 32, 1000, f16),
    "liger.tvd.batchmean": lambda d: liger_tvd(d, 32, 512, "batchmean", False),
    "liger.tvd.labels.none": lambda d: liger_tvd(d, 16, 300, "none", True),
    "liger.sparsemax": lambda d: liger_sparsemax(d, 32, 256),
    "liger.qwen2vl_mrope": lambda d: liger_qwen2vl_mrope(d, 1, 4, 2, 16, 64),
    "liger.llama4_rope": lambda d: liger_llama4_rope(d, 1, 16, 4, 2, 64),
    "liger.fused_add_rms_norm": lambda d: liger_fused_add_rms_norm(d, 32, 512, f32, "llama"),
    "liger.poly_norm": lambda d: liger_poly_norm(d, 32, 512),
    "liger.dyt.f32.beta": lambda d: liger_dyt(d, 32, 512, f32, True),
    "liger.dyt.bf16.nobeta": lambda d: liger_dyt(d, 16, 4096, bf16, False),
    "attorch.softmax.f32": lambda d: attorch_softmax(d, 64, 512, f32, False, False),
    "attorch.log_softmin.f16": lambda d: attorch_softmax(d, 2048, 32, f16, True, True),
    "attorch.act.relu": lambda d: attorch_act(d, 4096, f32, "relu"),
    "attorch.act.gelu.f16": lambda d: attorch_act(d, 3000, f16, "gelu"),
    "attorch.act.leaky_relu": lambda d: attorch_act(d, 2048, f32, "leaky_relu_0.01"),
    "attorch.layer_norm.affine": lambda d: attorch_layer_norm(d, 64, 256, f32, True),
    "attorch.layer_norm.plain": lambda d: attorch_layer_norm(d, 32, 300, f32, False),
    "attorch.rms_norm": lambda d: attorch_rms_norm(d, 64, 256, f32),
    "attorch.glu.sigmoid": lambda d: attorch_glu(d, 32, 256, "sigmoid"),
    "attorch.cross_entropy": lambda d: attorch_cross_entropy(d, 32, 500, False),
    "attorch.cross_entropy.weight": lambda d: attorch_cross_entropy(d, 16, 300, True),
    "attorch.mse.mean": lambda d: attorch_p_loss(d, 4096, 2, "mean"),
    "attorch.l1.none": lambda d: attorch_p_loss(d, 2048, 1, "none"),
    "attorch.nll.sum.weight": lambda d: attorch_nll_loss(d, 32, 200, "sum", True),
    "fla.l2norm.f32": asks_device(lambda d: fla_l2norm(d, 64, 256, f32)),
    "fla.l2norm.bf16.wide": asks_device(lambda d: fla_l2norm(d, 16, 1024, bf16, f32)),
    "fla.layer_norm.residual.bias": asks_device(lambda d: fla_layer_norm(d, 64, 256, f32, False, True, True, True)),
    "fla.rms_norm.nobias": asks_device(lambda d: fla_layer_norm(d, 48, 128, f32, True, False, False, True)),
    "fla.layer_norm.wide.f16": asks_device(lambda d: fla_layer_norm(d, 16, 1024, f16, False, True, False, False)),
    "fla.norm_gated.swish.rms": asks_device(lambda d: fla_norm_gated(d, 32, 256, "swish", True, False)),
    "fla.norm_gated.sigmoid.bias": asks_device(lambda d: fla_norm_gated(d, 32, 128, "sigmoid", False, True)),
    "fla.cumsum.local.scalar": asks_device(lambda d: fla_local_cumsum(d, (2, 100, 4), 64)),
    "fla.cumsum.local.scalar.varlen": asks_device(lambda d: fla_local_cumsum(d, (1, 100, 4), 32, reverse=True,
                                                                              scale=0.5, lengths=(37, 63))),
    "fla.cumsum.local.vector": asks_device(lambda d: fla_local_cumsum(d, (2, 64, 2, 48), 16)),
    "fla.cumsum.global.scalar.varlen": asks_device(lambda d: fla_global_cumsum(d, (1, 90, 2), lengths=(20, 70))),
    "fla.cumsum.global.vector.reverse": asks_device(lambda d: fla_global_cumsum(d, (2, 40, 2, 24), reverse=True)),
    "fla.softmax": asks_device(lambda d: fla_softmax(d, 32, 200, f32)),
    "fla.logsumexp.noscale": asks_device(lambda d: fla_logsumexp(d, 16, 300, None)),
    "fla.logsumexp.scale": asks_device(lambda d: fla_logsumexp(d, 16, 300, 0.5)),
    "fla.mean_pooling": asks_device(lambda d: fla_mean_pooling(d, (2, 48, 2, 32), 16)),
    "fla.mean_pooling.varlen": asks_device(lambda d: fla_mean_pooling(d, (1, 50, 2, 32), 16, lengths=(18, 32))),
    "fla.simple_gla.recurrent": asks_device(lambda d: fla_simple_gla(d, 2, 24, 2, 32, 32, backward=True)),
    "fla.simple_gla.recurrent.h0.varlen": asks_device(lambda d: fla_simple_gla(d, 1, 40, 2, 32, 64, h0=True, final=True,
                                                                                lengths=(15, 25), backward=True)),
    "fla.swiglu.f32": asks_device(lambda d: fla_swiglu(d, 32, 256, f32, False)),
    "fla.swiglu.bf16.weight": asks_device(lambda d: fla_swiglu(d, 16, 300, bf16, True)),
    "gemlite.bitpack.w4": asks_device(lambda d: gemlite_bitpack(d, 128, 256, 4, 32)),
    "gemlite.a16w4.gemv.f16": asks_device(lambda d: gemlite_a16wn(d, 1, 256, 512, 4, 64, f16)),
    "gemlite.a16w4.splitk.f16": asks_device(lambda d: gemlite_a16wn(d, 16, 256, 512, 4, 64, f16)),
    "gemlite.a16w4.gemm.bf16": asks_device(lambda d: gemlite_a16wn(d, 64, 256, 512, 4, 128, bf16)),
    "gemlite.a16w8.gemv.f16": asks_device(lambda d: gemlite_a16w8(d, 1, 256, 512, f16)),
    "gemlite.a8w8.int8.gemm": asks_device(lambda d: gemlite_a8w8_dynamic(d, 64, 256, 512, False)),
    "gemlite.a8w8.fp8.splitk": asks_device(lambda d: gemlite_a8w8_dynamic(d, 16, 256, 512, True)),
    "gemlite.quant.per_token.int8": asks_device(lambda d: gemlite_quant_per_token(d, 48, 512, f16, torch.int8)),
    "gemlite.quant.per_token.fp8.bf16": asks_device(lambda d: gemlite_quant_per_token(d, 32, 300, bf16, torch.float8_e4m3fn)),
    "inductor.pointwise.f32": generated(lambda d: inductor_case(d, "pointwise", f32, (64, 256))),
    "inductor.pointwise.f16.dynamic": generated(lambda d: inductor_case(d, "pointwise", f16, (48, 100), dynamic=True)),
    "inductor.reductions.f32": generated(lambda d: inductor_case(d, "reductions", f32, (32, 1000))),
    "inductor.reductions.long.f32": generated(lambda d: inductor_case(d, "reductions", f32, (8, 20000))),
    "inductor.softmax.f16": generated(lambda d: inductor_case(d, "softmax", f16, (48, 512))),
    "inductor.softmax.wide.f32": generated(lambda d: inductor_case(d, "softmax", f32, (4, 6000))),
    "inductor.layer_norm.f32": generated(lambda d: inductor_case(d, "layer_norm", f32, (64, 512))),
    "inductor.rms_norm_residual.bf16": generated(lambda d: inductor_case(d, "rms_norm_residual", bf16, (32, 768))),
    "inductor.mm_epilogue.f16": generated(lambda d: inductor_case(d, "mm_epilogue", f16, (64, 128, 256), max_autotune=True)),
    "inductor.mm_epilogue.f32": generated(lambda d: inductor_case(d, "mm_epilogue", f32, (32, 64, 96), max_autotune=True)),
}
