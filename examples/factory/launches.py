"""The launches of examples/factory (kernels made at run time), as the library calls them, with
numpy's reference. ``args(torch)`` gives (kernel, grid, positional arguments, keyword arguments,
outputs); ``host``: the module's host arguments (shape, dtype); ``ref``: numpy's results."""

import numpy as np

N = 5000


def _axpby(key, dtype):
    def args(torch):
        import kernels

        x = torch.empty(N, dtype=torch.float32)
        y = torch.empty(N, dtype=torch.float32)
        out = torch.empty(N, dtype=getattr(torch, dtype))
        grid = lambda meta: (triton_cdiv(meta["n"], 256),)  # noqa: E731
        return kernels.AXPBY[key].kernel, grid, (x, y, out, N, 0.25), {}, ["out_ptr"]

    return {"args": args, "host": [((N,), np.float32), ((N,), np.float32)],
            "ref": lambda x, y: [(np.float32(2.0) * x + np.float32(0.25) * (y + np.float32(0.5))).astype(dtype)],
            "tol": (1e-3, 1e-3) if dtype == "float16" else (1e-6, 1e-6)}


def triton_cdiv(a, b):
    return (a + b - 1) // b


def _scale_args(torch):
    import kernels

    x = torch.empty(N, dtype=torch.float32)
    out = torch.empty(N, dtype=torch.float32)
    return kernels.make_scale(3), lambda meta: (triton_cdiv(meta["n"], meta["BLOCK"]),), (x, out, N), {"BLOCK": 512}, ["out_ptr"]


def _rowsum_args(torch):
    import kernels

    x = torch.empty(N, dtype=torch.float32)
    acc = torch.empty(1, dtype=torch.float32)
    return kernels.make_rowsum(), lambda meta: (triton_cdiv(meta["n"], meta["BLOCK"]),), (x, acc, N), {}, ["acc_ptr"]


LAUNCHES = {
    "axpby_fp16": _axpby("fp16", "float16"),
    "axpby_fp32": _axpby("fp32", "float32"),
    "scale": {"args": _scale_args, "host": [((N,), np.float32)], "ref": lambda x: [x * np.float32(3)],
              "tol": (1e-6, 1e-6)},
    "rowsum": {"args": _rowsum_args, "host": [((N,), np.float32)],
               "ref": lambda x: [np.array([x.astype(np.float64).sum()], np.float32)], "tol": (1e-4, 1e-3)},
}
