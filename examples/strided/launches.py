"""The strided launches of examples/strided, as a PyTorch program writes them, and what each
module computes in numpy (shared by build.py, check_on_gpu.py and the tests).

Each entry of :data:`LAUNCHES`: ``kernel`` (a name in kernels.py); ``args(torch)``: the
launch's arguments (torch CPU tensors: only their shapes, dtypes and strides are read when
exporting) and its grid; ``outputs``/``inplace`` as given to ``launch_to_mlir``; ``host``: the
module's arguments (shape, numpy dtype), each the storage span of a tensor of the launch, in
the order of the host function (docs/call-sites.md, "Strided tensors"); ``ref(*host)``: its
results in numpy (each the storage span the kernel wrote, in the span's own order);
``tol``: (rtol, atol) of the comparison, or one pair per result (:func:`tolerance`).
"""

from __future__ import annotations

import numpy as np

M, N, K = 257, 129, 96          # GEMM: not multiples of any tile
QM, QK, GROUP = 100, 512, 128   # quantization: 100 rows, 4 groups of 128
EM, EN = 77, 300                # element-wise


def _cdiv(a, b):
    return -(-a // b)


def _gemm_bt(torch):
    a = torch.empty(M, K, dtype=torch.float16)
    bt = torch.empty(N, K, dtype=torch.float16)   # B stored as N x K (a linear layer's weight)
    b = bt.t()                                     # the K x N operand: strides (1, K)
    c = torch.empty(M, N, dtype=torch.float16)
    grid = lambda meta: (_cdiv(M, meta["BM"]), _cdiv(N, meta["BN"]))  # noqa: E731
    return grid, (a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride())


def _gemm_colmajor_out(torch):
    a = torch.empty(M, K, dtype=torch.float16)
    b = torch.empty(K, N, dtype=torch.float16)
    c = torch.empty(N, M, dtype=torch.float32).t()  # column-major M x N: strides (1, M)
    grid = lambda meta: (_cdiv(M, meta["BM"]), _cdiv(N, meta["BN"]))  # noqa: E731
    return grid, (a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride())


def _quant_colmajor_scales(torch):
    x = torch.empty(QM, QK, dtype=torch.float16)
    q = torch.empty(QM, QK, dtype=torch.int8)
    s = torch.empty(QK // GROUP, QM, dtype=torch.float32).t()  # M x groups, column-major
    grid = lambda meta: (_cdiv(QM, meta["BLOCK_M"]), QK // GROUP)  # noqa: E731
    return grid, (x, q, s, QM, x.stride(0), q.stride(0), *s.stride()), {"GROUP": GROUP}


def _broadcast_bias(torch):
    x = torch.empty(EN, EM, dtype=torch.float32).t()  # a transposed input
    bias = torch.empty(EN, dtype=torch.float32)
    y = bias.expand(EM, EN)                            # stride 0 along M
    out = torch.empty(EM, EN, dtype=torch.float32)
    grid = lambda meta: (_cdiv(EM, meta["BM"]), _cdiv(EN, meta["BN"]))  # noqa: E731
    return grid, (x, y, out, EM, EN, 2.0, *x.stride(), *y.stride(), *out.stride())


def _inplace_colmajor(torch):
    x = torch.empty(EM, EN, dtype=torch.float32)
    y = torch.empty(EN, EM, dtype=torch.float32).t()  # updated in place, column-major
    grid = lambda meta: (_cdiv(EM, meta["BM"]), _cdiv(EN, meta["BN"]))  # noqa: E731
    return grid, (x, y, EM, EN, 0.5, *x.stride(), *y.stride())


WIDE = EN + 12


def _inplace_gapped(torch):
    x = torch.empty(EM, EN, dtype=torch.float32)
    buf = torch.empty(EM + 2, WIDE, dtype=torch.float32)
    y = buf[2:, 4:4 + EN]                              # a slice at a storage offset: rows WIDE apart
    grid = lambda meta: (_cdiv(EM, meta["BM"]), _cdiv(EN, meta["BN"]))  # noqa: E731
    return grid, (x, y, EM, EN, -1.5, *x.stride(), *y.stride())


LOCK_N = 100_003


def _lock(torch):
    x = torch.empty(LOCK_N, dtype=torch.float32)
    out = torch.zeros(1, dtype=torch.float32)
    lock = torch.zeros(1, dtype=torch.int32)
    grid = lambda meta: (_cdiv(LOCK_N, meta["BLOCK"]),)  # noqa: E731
    return grid, (x, out, lock, LOCK_N)


def _f32(a):
    return a.astype(np.float32)


def _quant_ref(x):
    xf = _f32(x).reshape(QM, QK // GROUP, GROUP)
    scale = np.maximum(np.abs(xf).max(axis=2), np.float32(1e-10)) / np.float32(127.0)  # M x groups
    q = np.trunc(xf / scale[:, :, None]).astype(np.int8).reshape(QM, QK)
    return q, np.ascontiguousarray(scale.T)  # the scales' storage: groups x M


def _gapped_ref(x, span):
    out = span.copy()
    rows = np.arange(EM)[:, None] * WIDE + np.arange(EN)[None, :]
    out[rows] = span[rows] + np.float32(-1.5) * x
    return (out,)


def tolerance(spec: dict, j: int) -> tuple[float, float]:
    """(rtol, atol) for result ``j`` of launch ``spec``."""
    tol = spec["tol"]
    return tol[j] if isinstance(tol[0], tuple) else tol


LAUNCHES = {
    "gemm_bt": dict(kernel="matmul", args=_gemm_bt, outputs=["c_ptr"], inplace=[],
                    host=[((M, K), np.float16), ((N, K), np.float16)],
                    ref=lambda a, bt: ((_f32(a) @ _f32(bt).T).astype(np.float16),), tol=(1e-2, 2e-2)),
    "gemm_colmajor_out": dict(kernel="matmul", args=_gemm_colmajor_out, outputs=["c_ptr"], inplace=[],
                              host=[((M, K), np.float16), ((K, N), np.float16)],
                              ref=lambda a, b: (np.ascontiguousarray((_f32(a) @ _f32(b)).T),), tol=(1e-3, 1e-3)),
    "quant_colmajor_scales": dict(kernel="group_quant", args=_quant_colmajor_scales, outputs=["q_ptr", "s_ptr"],
                                  inplace=[], host=[((QM, QK), np.float16)], ref=_quant_ref,
                                  # q: x / scale rounds differently on a GPU (div.full.f32): one step
                                  tol=((0.0, 1.0), (1e-6, 0.0))),
    "broadcast_bias": dict(kernel="add2d", args=_broadcast_bias, outputs=["out_ptr"], inplace=[],
                           host=[((EN, EM), np.float32), ((EN,), np.float32)],
                           ref=lambda xt, bias: (np.float32(2.0) * xt.T + bias[None, :],), tol=(1e-6, 1e-6)),
    "inplace_colmajor": dict(kernel="axpy_", args=_inplace_colmajor, outputs=[], inplace=["y_ptr"],
                             host=[((EM, EN), np.float32), ((EN, EM), np.float32)],
                             ref=lambda x, yt: (yt + np.float32(0.5) * x.T,), tol=(1e-6, 1e-6)),
    "inplace_gapped": dict(kernel="axpy_", args=_inplace_gapped, outputs=[], inplace=["y_ptr"],
                           host=[((EM, EN), np.float32), (((EM - 1) * WIDE + EN,), np.float32)],
                           ref=_gapped_ref, tol=(1e-6, 1e-6)),
    "lock": dict(kernel="locked_sum", args=_lock, outputs=[], inplace=["out_ptr", "lock_ptr"],
                 host=[((LOCK_N,), np.float32), ((1,), np.float32), ((1,), np.int32)],
                 ref=lambda x, out, lock: (out + x.astype(np.float64).sum().astype(np.float32), np.zeros(1, np.int32)),
                 tol=(1e-4, 1e-2)),
}
