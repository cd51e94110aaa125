"""The strided examples in Triton's interpreter (no GPU): for each launch of launches.py,

* the exported module's dispatch, bound as IREE binds it (``autotune-export check``'s launches,
  fed the host function's arguments: each tensor's storage span), every variant;
* Triton's own launch as the library writes it (the kernel with its ``triton.autotune`` held to
  that variant's config, the views made from the same storage, the strides as given);

and both against numpy (launches.py's ``ref``): the module's results must be what Triton leaves
in the views' storage, and what the GPU check (check_on_gpu.py) compares with::

    python examples/strided/build.py                 # the .mlir files (kept in the repository)
    python examples/strided/check_on_cpu.py [--only gemm_bt,lock]

Needs torch (CPU) and Triton (``TRITON_INTERPRET=1`` is set for a child process). Exit status
1 when a result differs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for p in (HERE, ROOT):
    if p not in sys.path:
        sys.path.insert(0, p)


def module_launches(path: str) -> list:
    """check's launches of every dispatch of the module at ``path``."""
    from autotune_export.frontend.reader import parse_source
    from autotune_export.ir.walk import executable_sources, groups_of
    from autotune_export.passes.base import PassContext
    from autotune_export.tools import check
    from autotune_export.tools.cli import read_source

    source = read_source(path)
    module = parse_source(source)
    ctx = PassContext(source=source, remark=lambda d: None)
    args = argparse.Namespace(target="sm_90", seed=0, timeout=600.0, reference=None, group=None)
    out = []
    for src in executable_sources(module):
        for op in groups_of(src):
            out += check.launches_of_group(ctx, module, src, op, args)[0]
    return out


def host_data(spec, seed: int) -> list:
    """The host function's arguments: seeded values in [-1, 1) (integers: zeros, a free lock)."""
    rng = np.random.default_rng(seed)
    return [np.zeros(shape, dtype) if np.issubdtype(dtype, np.integer) else (rng.random(shape) * 2 - 1).astype(dtype)
            for shape, dtype in spec["host"]]


def triton_launch(name: str, spec, data: list, entries: list) -> list:
    """Triton's own launch of ``name`` on views of ``data``'s storage, with the autotuner held
    to ``entries`` (a variant's config); returns the storage spans of the tensors written, in
    the host function's result order."""
    import torch
    import triton

    import kernels

    kernel = getattr(kernels, spec["kernel"])
    grid, args, *kw = spec["args"](torch)
    storage = [torch.from_numpy(d.copy()) for d in data]
    host_of, views, k = {}, [], 0
    for pos, a in enumerate(args):  # each tensor of the launch, in order, is made from the next host array's storage
        if isinstance(a, torch.Tensor):
            written = spec["outputs"] + spec["inplace"]
            name_of = kernel.fn.arg_names[pos] if hasattr(kernel, "fn") else None
            if name_of in spec["outputs"]:
                base = torch.empty(_span_numel(a), dtype=a.dtype)
            else:
                base = storage[k].reshape(-1)
                k += 1
            views.append(torch.as_strided(base, a.shape, a.stride(), 0))
            host_of[pos] = (name_of, base, name_of in written)
        else:
            views.append(a)
    options = {key: v for key, v in entries if key in ("num_warps", "num_stages")}
    config = {key: v for key, v in entries if key not in ("num_warps", "num_stages", "num_ctas", "maxnreg")}
    config.update(kw[0] if kw else {})
    kernel.configs = [triton.Config({key: v for key, v in config.items() if key not in (kw[0] if kw else {})}, **options)]
    kernel.cache = {}
    kernel[grid](*views, **(kw[0] if kw else {}))
    order = sorted((pos for pos, (_, _, w) in host_of.items() if w), key=lambda p: kernel.fn.arg_names.index(host_of[p][0]))
    return [host_of[pos][1].numpy() for pos in order]


def _span_numel(t) -> int:
    from autotune_export.cuda.launch_model import storage_span

    return storage_span(t.shape, t.stride()).span


def worker(job: str) -> int:
    """The interpreter process: the launches planned by :func:`main` (pickled to ``job``)."""
    import pickle

    from autotune_export.tools import check
    from launches import LAUNCHES, tolerance

    with open(job, "rb") as f:
        jobs = pickle.load(f)
    bad = 0
    for i, (name, launch) in enumerate(jobs):
        spec = LAUNCHES[name]
        data = host_data(spec, i)
        launch.data = {b: data[h] for b, h in enumerate(launch.host_args) if h is not None}
        launch.data = {b: __import__("torch").from_numpy(v.copy()) for b, v in launch.data.items()}
        ref = spec["ref"](*data)
        got = check.run_launch(launch)
        for k, v in enumerate(launch.variants):
            run = got["runs"][k]
            if run["error"]:
                print(f"FAIL {name} {v.name}: module: {run['error']}")
                bad += 1
                continue
            module = [None] * len(ref)
            for j, h in enumerate(launch.host_results):
                if h is not None:
                    module[h] = run["buffers"][launch.results[j]].numpy().reshape(ref[h].shape)
            triton_side = [t.reshape(r.shape) for t, r in zip(triton_launch(name, spec, data, v.entries), ref)]
            for what, results in (("module", module), ("Triton", triton_side)):
                for j, (g, want) in enumerate(zip(results, ref)):
                    ok = g is not None and g.dtype == want.dtype and np.allclose(
                        g.astype(np.float64), want.astype(np.float64), rtol=tolerance(spec, j)[0], atol=tolerance(spec, j)[1])
                    bad += not ok
                    print(f"{'OK  ' if ok else 'FAIL'} {name:22} {v.name:36} {what:7} result {j} vs numpy")
            for j, (g, t) in enumerate(zip(module, triton_side)):
                same = g is not None and np.array_equal(g, t) if name != "lock" else np.allclose(g, t, rtol=1e-5, atol=1e-3)
                bad += not same
                print(f"{'OK  ' if same else 'FAIL'} {name:22} {v.name:36} module result {j} == Triton's")
    print(f"{'FAILED' if bad else 'passed'}: {bad} failure(s)")
    return 1 if bad else 0


def main(argv=None) -> int:
    from launches import LAUNCHES

    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None, help="comma-separated launch names")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    import pickle
    import tempfile

    from build import export

    names = args.only.split(",") if args.only else list(LAUNCHES)
    jobs = []
    for name in names:  # planned here: the kernel file is imported for Triton, not the interpreter
        path = os.path.join(HERE, f"{name}.mlir")
        if not os.path.exists(path):
            export(name)
        (launch,) = module_launches(path)
        jobs.append((name, launch))
    with tempfile.TemporaryDirectory(prefix="strided-check-") as tmp:
        job = os.path.join(tmp, "jobs.pkl")
        with open(job, "wb") as f:
            pickle.dump(jobs, f)
        env = {**os.environ, "TRITON_INTERPRET": "1"}
        return subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", job], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
