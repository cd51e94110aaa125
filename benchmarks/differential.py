"""Differential checker: generated Triton launches, run by Triton itself and through the exported module.

    # here (no GPU): Triton's interpreter on both sides
    python benchmarks/differential.py --interpret --cases 50 [--seed 0] [--json diff.json] [--keep DIR]

    # GPU, in two steps. Here (the venv of the Quick start, with torch): the cases' modules and
    # the IREE runtime's wheel for the GPU machine's Python 3.12; both folders git-ignored:
    echo /.gpu_diff/ >> .git/info/exclude; echo /.whl/ >> .git/info/exclude
    .venv/bin/python benchmarks/differential.py --build .gpu_diff --cases 100 --seed 0 --target sm_90
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 -d .whl iree-base-runtime==3.13.0
    # There (one call of the nvidia-h200 machine, /work/.library/device/README.md, carrying
    # .gpu_diff and .whl; its python3 has torch and Triton):
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/iree_base_runtime-*.whl && \
        PYTHONPATH=/tmp/site:. PYTHONUNBUFFERED=1 python3 benchmarks/differential.py --gpu .gpu_diff --json $OUT/diff.json

(``--gpu`` needs only torch, Triton, numpy and ``iree.runtime``: the variants' configs are
read at ``--build`` time and saved with the cases; Triton compiles each config there.)

A *case* is a kernel of one family (element-wise, scalars of every type, in place with one or
two tensors, several outputs, a ``None`` argument with a heuristic, strided 2-D access, strided
views passed as a library passes them (transposed, expanded, column-major, sliced at an offset), a
``prune_configs_by``, a heuristic on a dtype, ``reset_to_zero`` with atomics, ``restore_value``,
a reduction) in one call-site form: the launch as a PyTorch program writes it, exported with
:func:`autotune_export.interop.launch.launch_to_mlir`; a module with several dispatches of one
group (different sizes); a dynamic-shape host with ``tune_workload`` over several workloads.
Sizes, dtypes, scalar values and configs are drawn from the seed (``--seed``, ``--cases``: the
same numbers give the same cases).

Each case is run, for every variant of the exported group:

* by Triton, as the launch was written (the kernel object with its ``triton.autotune`` /
  ``triton.heuristics`` wrappers, the grid lambda, the arguments in the call's order), with the
  autotuner held to that variant's config (``configs = [config]``: no benchmarking, the config
  runs, as Triton runs a single config);
* through the exported module: here, each dispatch of the module bound as IREE binds it and run
  in Triton's interpreter (``autotune-export check``'s launches, fed the host function's
  arguments); on the GPU, the ``.vmfb`` with that variant selected, called like the program calls
  it (the host function's arguments in, its results out).

Both get the same data (seeded, position-dependent, per host argument); every host result
must equal the tensor Triton's launch left in the matching argument (the runtime's cross-check
tolerances). Any difference is reported with the case, the variant and the first element.
Exit status 1 when there is one (or a case could not be run), else 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# --------------------------------------------------------------------------------------------
# The generator


@dataclass
class Arg:
    """One argument of a Triton call, in the call's order: ``("host", i)`` the host function's
    argument ``i`` (an input, or a tensor written in place), ``("new", i)`` a new output buffer
    that the host function returns as result ``i`` (empty contents), ``("zeros", i)`` the same
    made with ``torch.zeros`` (what a caller of a ``reset_to_zero`` kernel passes),
    ``("scalar", value)``, ``("none",)``. ``view``: for a tensor, Python source of a function
    of it returning ``(view, span)``: the launch gets ``view`` (a transposed, expanded or sliced
    view of that storage), and ``span`` (the elements from the view's first one to its last one,
    what the module takes and returns for it) is read as its result."""

    kind: str
    value: Any = None
    view: str | None = None


@dataclass
class Call:
    """One Triton launch ``kernel[grid](*args, **kwargs)``: ``grid`` is Python source of the
    grid (a lambda of ``meta``); ``returns`` maps a host result index to the position of the
    argument that holds it after the launch (an output or a tensor written in place);
    ``workload``: the tuning workload it corresponds to (dynamic forms), else 0."""

    args: list[Arg]
    grid: str
    kwargs: dict = field(default_factory=dict)
    returns: dict = field(default_factory=dict)
    workload: int = 0


@dataclass
class Case:
    """A generated case: ``kernel_source`` (a ``.py`` file) defining ``kernel_name``; the host
    function's arguments per workload ``host_args[w][i] = (shape, torch dtype name)`` and its
    result count; the Triton ``calls``; ``mlir`` (the module, text) once built."""

    name: str
    family: str
    form: str
    kernel_source: str
    kernel_name: str
    host_args: list[list[tuple]]
    n_results: int
    calls: list[Call]
    launch_kwargs: dict = field(default_factory=dict)  # for launch_to_mlir: outputs, inplace, metaparams
    mlir: str | None = None


_HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n"

_CONFIGS = {
    "small": [(64, 1), (128, 2), (256, 4)],
    "mixed": [(32, 1), (128, 4), (512, 4), (1024, 8)],
}


def _configs_text(rng: random.Random, name: str = "BLOCK") -> str:
    chosen = rng.sample(_CONFIGS["mixed"], rng.randint(2, 4))
    return "[" + ", ".join(f"triton.Config({{'{name}': {b}}}, num_warps={w})" for b, w in chosen) + "]"


_DTYPES = ["float32", "float32", "float16", "bfloat16"]


def _elementwise(rng: random.Random, idx: int) -> Case:
    dtype = rng.choice(_DTYPES + ["int32"])
    n = rng.randint(1, 2500)
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["n"])
        @triton.jit
        def kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            y = tl.load(y_ptr + offs, mask=mask)
            tl.store(out_ptr + offs, x * 2 + y, mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    call = Call([Arg("host", 0), Arg("host", 1), Arg("new", 0), Arg("scalar", n)], grid, returns={0: 2})
    return Case(f"{idx:04d}-elementwise", "elementwise", "launch", src, "kernel", [[((n,), dtype), ((n,), dtype)]], 1,
                [call], {"outputs": ["out_ptr"]})


def _scalars(rng: random.Random, idx: int) -> Case:
    """Scalars of every type Triton's JIT gives a Python value: int (i32), a large int (i64),
    a float (fp32), a bool (i1)."""
    n = rng.randint(1, 2000)
    alpha = round(rng.uniform(-3, 3), 3)
    beta = rng.randint(-1000, 1000)
    big = rng.choice([2**31 + rng.randint(0, 1000), -(2**33) - rng.randint(0, 99), 2**40 + 7])
    flag = rng.choice([True, False])
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["n"])
        @triton.jit
        def kernel(x_ptr, out_ptr, alpha, beta, big, flag, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            y = x * alpha + beta + (big % 7).to(tl.float32)
            y = tl.where(flag, y, -y)
            tl.store(out_ptr + offs, y, mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    args = [Arg("host", 0), Arg("new", 0), Arg("scalar", alpha), Arg("scalar", beta), Arg("scalar", big), Arg("scalar", flag),
            Arg("scalar", n)]
    return Case(f"{idx:04d}-scalars", "scalars", "launch", src, "kernel", [[((n,), "float32")]], 1,
                [Call(args, grid, returns={0: 1})], {"outputs": ["out_ptr"]})


def _in_place(rng: random.Random, idx: int) -> Case:
    """One tensor updated in place (``x += y``), or two (``a += 1``, ``b *= 3``) named to
    ``inplace`` in either order."""
    n = rng.randint(1, 2000)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    form = idx % 3  # one tensor; two named in parameter order; two named in the other order
    if form == 0:
        src = _HEADER + textwrap.dedent(f"""
            @triton.autotune(configs={_configs_text(rng)}, key=["n"])
            @triton.jit
            def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                mask = offs < n
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
            """)
        return Case(f"{idx:04d}-inplace", "inplace", "launch", src, "kernel", [[((n,), "float32"), ((n,), "float32")]], 1,
                    [Call([Arg("host", 0), Arg("host", 1), Arg("scalar", n)], grid, returns={0: 0})], {"inplace": ["x_ptr"]})
    order = ["a_ptr", "b_ptr"] if form == 1 else ["b_ptr", "a_ptr"]
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["n"])
        @triton.jit
        def kernel(a_ptr, b_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(a_ptr + offs, tl.load(a_ptr + offs, mask=mask) + 1, mask=mask)
            tl.store(b_ptr + offs, tl.load(b_ptr + offs, mask=mask) * 3, mask=mask)
        """)
    # launch_to_mlir: the host takes a and b in parameter order and returns them in that order.
    return Case(f"{idx:04d}-inplace2", "inplace2", "launch", src, "kernel", [[((n,), "float32"), ((n,), "float32")]], 2,
                [Call([Arg("host", 0), Arg("host", 1), Arg("scalar", n)], grid, returns={0: 0, 1: 1})], {"inplace": order})


def _two_outputs(rng: random.Random, idx: int) -> Case:
    n = rng.randint(1, 2000)
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["n"])
        @triton.jit
        def kernel(x_ptr, sum_ptr, y_ptr, diff_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            y = tl.load(y_ptr + offs, mask=mask)
            tl.store(sum_ptr + offs, x + y, mask=mask)
            tl.store(diff_ptr + offs, x - y, mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    args = [Arg("host", 0), Arg("new", 0), Arg("host", 1), Arg("new", 1), Arg("scalar", n)]
    return Case(f"{idx:04d}-outputs", "outputs", "launch", src, "kernel", [[((n,), "float32"), ((n,), "float32")]], 2,
                [Call(args, grid, returns={0: 1, 1: 3})], {"outputs": ["sum_ptr", "diff_ptr"]})


def _none_bias(rng: random.Random, idx: int) -> Case:
    n = rng.randint(1, 2000)
    with_bias = rng.random() < 0.5
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["n"])
        @triton.heuristics({{"HAS_BIAS": lambda args: args["b_ptr"] is not None}})
        @triton.jit
        def kernel(x_ptr, b_ptr, out_ptr, n, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            if HAS_BIAS:
                x = x + tl.load(b_ptr + offs, mask=mask)
            tl.store(out_ptr + offs, x * 3, mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    host = [((n,), "float32")] + ([((n,), "float32")] if with_bias else [])
    args = [Arg("host", 0), Arg("host", 1) if with_bias else Arg("none"), Arg("new", 0), Arg("scalar", n)]
    return Case(f"{idx:04d}-none", "none", "launch", src, "kernel", [host], 1, [Call(args, grid, returns={0: 2})],
                {"outputs": ["out_ptr"]})


def _strided(rng: random.Random, idx: int) -> Case:
    """A transpose through strides: ``out[j, i] = x[i, j]``, M x N not multiples of the tiles."""
    m, n = rng.randint(1, 90), rng.randint(1, 90)
    tiles = rng.sample([(16, 16, 1), (32, 16, 2), (16, 64, 4), (64, 32, 4)], rng.randint(2, 3))
    configs = "[" + ", ".join(f"triton.Config({{'BM': {a}, 'BN': {b}}}, num_warps={w})" for a, b, w in tiles) + "]"
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={configs}, key=["M", "N"])
        @triton.jit
        def kernel(x_ptr, out_ptr, M, N, sxm, sxn, som, son, BM: tl.constexpr, BN: tl.constexpr):
            rm = tl.program_id(0) * BM + tl.arange(0, BM)
            rn = tl.program_id(1) * BN + tl.arange(0, BN)
            mask = (rm[:, None] < M) & (rn[None, :] < N)
            x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
            tl.store(out_ptr + rn[None, :] * som + rm[:, None] * son, x, mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({m}, meta['BM']), triton.cdiv({n}, meta['BN']))"
    # x is M x N (strides N, 1); out is N x M (strides M, 1).
    args = [Arg("host", 0), Arg("new", 0), Arg("scalar", m), Arg("scalar", n), Arg("scalar", n), Arg("scalar", 1),
            Arg("scalar", m), Arg("scalar", 1)]
    case = Case(f"{idx:04d}-strided", "strided", "launch", src, "kernel", [[((m, n), "float32")]], 1,
                [Call(args, grid, returns={0: 1})], {"outputs": ["out_ptr"], "out_shapes": {"out_ptr": (n, m)}})
    return case


def _views(rng: random.Random, idx: int) -> Case:
    """Strided views passed to the launch as a library passes them (issue 23, item 1): a
    transposed input, an expanded (stride-0) bias, a column-major new output, a column-major
    tensor and a slice at a storage offset updated in place, a GEMM with a ``b.t()`` operand.
    The host passes (and gets back) each view's storage span."""
    # Sizes from 2: a view with a dimension of size 1 may be dense (torch.Tensor.is_contiguous),
    # and its module argument then has the view's shape, not the storage's.
    m, n = rng.randint(2, 70), rng.randint(2, 70)
    dtype = rng.choice(["float32", "float16"])
    tiles = rng.sample([(16, 16, 1), (32, 16, 2), (16, 64, 4)], 2)
    configs = "[" + ", ".join(f"triton.Config({{'BM': {a}, 'BN': {b}}}, num_warps={w})" for a, b, w in tiles) + "]"
    grid = f"lambda meta: (triton.cdiv({m}, meta['BM']), triton.cdiv({n}, meta['BN']))"
    form = idx % 4
    if form == 0:  # out (column-major, new) = 2 x (a transposed input) + bias (expanded along M)
        src = _HEADER + textwrap.dedent(f"""
            @triton.autotune(configs={configs}, key=["M", "N"])
            @triton.jit
            def kernel(x_ptr, b_ptr, out_ptr, M, N, sxm, sxn, sbm, sbn, som, son, BM: tl.constexpr, BN: tl.constexpr):
                rm = tl.program_id(0) * BM + tl.arange(0, BM)
                rn = tl.program_id(1) * BN + tl.arange(0, BN)
                mask = (rm[:, None] < M) & (rn[None, :] < N)
                x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
                b = tl.load(b_ptr + rm[:, None] * sbm + rn[None, :] * sbn, mask=mask)
                tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, x * 2 + b, mask=mask)
            """)
        args = [Arg("host", 0, "lambda s: (s.t(), s)"), Arg("host", 1, f"lambda s: (s.expand({m}, {n}), s)"),
                Arg("new", 0, "lambda s: (s.t(), s)"), Arg("scalar", m), Arg("scalar", n), Arg("scalar", 1),
                Arg("scalar", m), Arg("scalar", 0), Arg("scalar", 1), Arg("scalar", 1), Arg("scalar", m)]
        return Case(f"{idx:04d}-views", "views", "launch", src, "kernel", [[((n, m), dtype), ((n,), dtype)]], 1,
                    [Call(args, grid, returns={0: 2})], {"outputs": ["out_ptr"], "out_shapes": {"out_ptr": (n, m)}})
    inplace = textwrap.dedent(f"""
        @triton.autotune(configs={configs}, key=["M", "N"])
        @triton.jit
        def kernel(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr):
            rm = tl.program_id(0) * BM + tl.arange(0, BM)
            rn = tl.program_id(1) * BN + tl.arange(0, BN)
            mask = (rm[:, None] < M) & (rn[None, :] < N)
            x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
            y_ptrs = y_ptr + rm[:, None] * sym + rn[None, :] * syn
            tl.store(y_ptrs, tl.load(y_ptrs, mask=mask) * 3 - x, mask=mask)
        """)
    if form == 1:  # y (column-major) updated in place; x a dense view at a storage offset
        offset = "lambda s: (lambda b: (b[3:].view(s.shape), b[3:]))(torch.cat([s.new_zeros(3), s.reshape(-1)]))"
        args = [Arg("host", 0, offset), Arg("host", 1, "lambda s: (s.t(), s)"), Arg("scalar", m), Arg("scalar", n),
                Arg("scalar", n), Arg("scalar", 1), Arg("scalar", 1), Arg("scalar", m)]
        return Case(f"{idx:04d}-views", "views", "launch", _HEADER + inplace, "kernel", [[((m, n), dtype), ((n, m), dtype)]],
                    1, [Call(args, grid, returns={0: 1})], {"inplace": ["y_ptr"]})
    if form == 2:  # y a slice of a wider buffer at a storage offset (rows w apart), updated in place
        w = n + rng.randint(1, 9)
        span = (m - 1) * w + n
        gapped = (f"lambda s: (lambda b: (b.as_strided(({m}, {n}), ({w}, 1), 5), b[5:]))"
                  f"(torch.cat([s.new_zeros(5), s]))")
        args = [Arg("host", 0), Arg("host", 1, gapped), Arg("scalar", m), Arg("scalar", n), Arg("scalar", n),
                Arg("scalar", 1), Arg("scalar", w), Arg("scalar", 1)]
        return Case(f"{idx:04d}-views", "views", "launch", _HEADER + inplace, "kernel", [[((m, n), dtype), ((span,), dtype)]],
                    1, [Call(args, grid, returns={0: 1})], {"inplace": ["y_ptr"]})
    k = rng.randint(2, 40)  # C = A @ B with B passed as bt.t() (bt: N x K), fp16
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={configs}, key=["M", "N", "K"])
        @triton.jit
        def kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr):
            rm = tl.program_id(0) * BM + tl.arange(0, BM)
            rn = tl.program_id(1) * BN + tl.arange(0, BN)
            rk = tl.arange(0, 16)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k0 in range(0, K, 16):
                a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                            mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
                b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                            mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
                acc += tl.dot(a, b)
            tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
        """)
    args = [Arg("host", 0), Arg("host", 1, "lambda s: (s.t(), s)"), Arg("new", 0), Arg("scalar", m), Arg("scalar", n),
            Arg("scalar", k), Arg("scalar", k), Arg("scalar", 1), Arg("scalar", 1), Arg("scalar", k), Arg("scalar", n),
            Arg("scalar", 1)]
    return Case(f"{idx:04d}-views", "views", "launch", src, "kernel", [[((m, k), "float16"), ((n, k), "float16")]], 1,
                [Call(args, grid, returns={0: 2})], {"outputs": ["c_ptr"], "out_shapes": {"c_ptr": (m, n)},
                                                    "out_dtypes": {"c_ptr": "float32"}})


def _pruned(rng: random.Random, idx: int) -> Case:
    n = rng.randint(1, 1500)
    src = _HEADER + textwrap.dedent(f"""
        def _prune(configs, named_args, **kwargs):
            n = named_args["n"]
            kept = [c for c in configs if c.kwargs["BLOCK"] <= max(64, triton.next_power_of_2(n))]
            return kept or configs[:1]


        @triton.autotune(configs={_configs_text(rng)}, key=["n"], prune_configs_by={{"early_config_prune": _prune}})
        @triton.jit
        def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            # Unmasked inside whole blocks: the pruner keeps BLOCK <= next_power_of_2(n).
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) - 1, mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    return Case(f"{idx:04d}-pruned", "pruned", "launch", src, "kernel", [[((n,), "float32")]], 1,
                [Call([Arg("host", 0), Arg("new", 0), Arg("scalar", n)], grid, returns={0: 1})], {"outputs": ["out_ptr"]})


def _dtype_heuristic(rng: random.Random, idx: int) -> Case:
    dtype = rng.choice(["float32", "float16"])
    n = rng.randint(1, 2000)
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["n"])
        @triton.heuristics({{"HALF": lambda args: args["x_ptr"].dtype == torch.float16}})
        @triton.jit
        def kernel(x_ptr, out_ptr, n, HALF: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
            if HALF:
                x = x * 2
            else:
                x = x * 5
            tl.store(out_ptr + offs, x, mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    return Case(f"{idx:04d}-dtype-heuristic", "dtype-heuristic", "launch", src, "kernel", [[((n,), dtype)]], 1,
                [Call([Arg("host", 0), Arg("new", 0), Arg("scalar", n)], grid, returns={0: 1})],
                {"outputs": ["out_ptr"], "out_dtypes": {"out_ptr": "float32"}})


def _reset(rng: random.Random, idx: int) -> Case:
    """Atomic accumulation into a zeroed output (``reset_to_zero``): a histogram of x mod 8."""
    n = rng.randint(1, 2000)
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["n"], reset_to_zero=["hist_ptr"])
        @triton.jit
        def kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            tl.atomic_add(hist_ptr + (x & 7), 1, mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    # The caller passes torch.zeros(8) (Triton zeroes only while benchmarking): its contents go
    # in, so the launch names it in place (an output would be a new buffer of undefined contents).
    return Case(f"{idx:04d}-reset", "reset", "launch", src, "kernel", [[((n,), "int32"), ((8,), "int32", "zeros")]], 1,
                [Call([Arg("host", 0), Arg("host", 1), Arg("scalar", n)], grid, returns={0: 1})], {"inplace": ["hist_ptr"]})


def _restore(rng: random.Random, idx: int) -> Case:
    n = rng.randint(1, 2000)
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["n"], restore_value=["x_ptr"])
        @triton.jit
        def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            tl.store(x_ptr + offs, x * 2 + tl.load(y_ptr + offs, mask=mask), mask=mask)
        """)
    grid = f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)"
    return Case(f"{idx:04d}-restore", "restore", "launch", src, "kernel", [[((n,), "float32"), ((n,), "float32")]], 1,
                [Call([Arg("host", 0), Arg("host", 1), Arg("scalar", n)], grid, returns={0: 0})], {"inplace": ["x_ptr"]})


def _reduction(rng: random.Random, idx: int) -> Case:
    """Row sums with a loop over column blocks (each config sums in another order)."""
    m, n = rng.randint(1, 40), rng.randint(1, 700)
    src = _HEADER + textwrap.dedent(f"""
        @triton.autotune(configs={_configs_text(rng)}, key=["N"])
        @triton.jit
        def kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for start in range(0, N, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                acc += tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
            tl.store(out_ptr + row, tl.sum(acc, axis=0))
        """)
    return Case(f"{idx:04d}-reduction", "reduction", "launch", src, "kernel", [[((m, n), "float32")]], 1,
                [Call([Arg("host", 0), Arg("new", 0), Arg("scalar", n)], f"({m},)", returns={0: 1})],
                {"outputs": ["out_ptr"], "out_shapes": {"out_ptr": (m,)}})


_ADD_SOURCE = _HEADER + textwrap.dedent("""
    @triton.autotune(configs=CONFIGS, key=["n"])
    @triton.jit
    def kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3 - tl.load(y_ptr + offs, mask=mask), mask=mask)
    """)

_GROUP = """hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("kernel.py", "kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(n)
      grid(cdiv(n, BLOCK))%s
}
"""


def _dispatches(rng: random.Random, idx: int) -> Case:
    """Several dispatches of one group in one host function, each with its own size."""
    sizes = [rng.randint(1, 1500) for _ in range(rng.randint(2, 3))]
    args, lines, rets, host, calls = [], [], [], [], []
    for d, n in enumerate(sizes):
        t = f"tensor<{n}xf32>"
        args += [f"%x{d}: {t}", f"%y{d}: {t}"]
        lines += [f"  %n{d} = arith.constant {n} : i32", f"  %c{d} = arith.constant {n} : index",
                  f"  %r{d} = flow.dispatch @ex::@g[%c{d}](%x{d}, %y{d}, %n{d}) : ({t}, {t}, i32) -> {t}"]
        rets.append(f"%r{d}")
        host += [((n,), "float32"), ((n,), "float32")]
        calls.append(Call([Arg("host", 2 * d), Arg("host", 2 * d + 1), Arg("new", d), Arg("scalar", n)],
                          f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)", returns={d: 2}))
    types = ", ".join(f"tensor<{n}xf32>" for n in sizes)
    mlir = (_GROUP % "" + f"util.func public @main({', '.join(args)}) -> ({types}) {{\n" + "\n".join(lines)
            + f"\n  util.return {', '.join(rets)} : {types}\n}}\n")
    src = _ADD_SOURCE.replace("CONFIGS", _configs_text(rng))
    return Case(f"{idx:04d}-dispatches", "elementwise", "dispatches", src, "kernel", [host], len(sizes), calls, mlir=mlir)


def _workloads(rng: random.Random, idx: int) -> Case:
    """A dynamic-shape host tuned on several workloads (``tune_workload([...], [...])``)."""
    sizes = sorted(rng.sample(range(1, 1500), rng.randint(2, 3)))
    tune = ", ".join(f"[tensor<{n}xf32>, tensor<{n}xf32>]" for n in sizes)
    mlir = (_GROUP % f"\n      tune_workload({tune})" + textwrap.dedent("""\
        util.func public @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
          %c0 = arith.constant 0 : index
          %d = tensor.dim %x, %c0 : tensor<?xf32>
          %n = arith.index_cast %d : index to i32
          %r = flow.dispatch @ex::@g[%d](%x, %y, %n) : (tensor<?xf32>{%d}, tensor<?xf32>{%d}, i32) -> tensor<?xf32>{%d}
          util.return %r : tensor<?xf32>
        }
        """))
    calls = [Call([Arg("host", 0), Arg("host", 1), Arg("new", 0), Arg("scalar", n)],
                  f"lambda meta: (triton.cdiv({n}, meta['BLOCK']),)", returns={0: 2}, workload=w) for w, n in enumerate(sizes)]
    src = _ADD_SOURCE.replace("CONFIGS", _configs_text(rng))
    return Case(f"{idx:04d}-workloads", "elementwise", "workloads", src, "kernel",
                [[((n,), "float32"), ((n,), "float32")] for n in sizes], 1, calls, mlir=mlir)


def case_to_dict(case: Case) -> dict:
    """The case as plain data (JSON-able but for tuples: what crosses to the worker process
    and to the GPU machine, whatever name this file was imported under)."""
    return dataclasses.asdict(case)


def case_from_dict(data: dict) -> Case:
    calls = [Call(**{**c, "args": [Arg(**a) for a in c["args"]]}) for c in data["calls"]]
    return Case(**{**data, "calls": calls})


FAMILIES = {
    "elementwise": _elementwise, "scalars": _scalars, "inplace": _in_place, "outputs": _two_outputs, "none": _none_bias,
    "strided": _strided, "views": _views, "pruned": _pruned, "dtype-heuristic": _dtype_heuristic, "reset": _reset, "restore": _restore,
    "reduction": _reduction, "dispatches": _dispatches, "workloads": _workloads,
}


def generate(n: int, seed: int = 0, families: list[str] | None = None) -> list[Case]:
    """``n`` cases from ``seed``, cycling through ``families`` (default: all) so that every
    family and form appears once ``n >= len(FAMILIES)``."""
    names = families or list(FAMILIES)
    out = []
    for i in range(n):
        rng = random.Random(seed * 1_000_003 + i)
        out.append(FAMILIES[names[i % len(names)]](rng, i))
    return out


# --------------------------------------------------------------------------------------------
# Building the module of a case (here: launch_to_mlir, or the case's own module)


def _import(path: str, name: str):
    """The module-level object ``name`` of the file ``path``, imported under a name of its own."""
    import importlib.util

    mod_name = "_differential_" + os.path.basename(os.path.dirname(path)).replace("-", "_")
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return getattr(module, name)


def build_module(case: Case, folder: str) -> str:
    """Write the case's kernel file and its module (``module.mlir``) into ``folder``; returns
    the module's path. The ``launch`` form goes through ``launch_to_mlir`` with the call's
    arguments (torch tensors of the host's shapes and dtypes: only shape and dtype are read)."""
    import torch

    os.makedirs(folder, exist_ok=True)
    kernel_path = os.path.join(folder, "kernel.py")
    with open(kernel_path, "w", encoding="utf-8") as f:
        f.write(case.kernel_source)
    out = os.path.join(folder, "module.mlir")
    if case.form != "launch":
        with open(out, "w", encoding="utf-8") as f:
            f.write(case.mlir)
        return out
    from autotune_export.interop.launch import launch_to_mlir
    import triton  # noqa: F401  (the grid's source names it)

    kernel = _import(kernel_path, case.kernel_name)
    (call,) = case.calls
    host = case.host_args[0]
    args = []
    for pos, a in enumerate(call.args):
        if a.kind == "host":
            shape, dtype = host[a.value][:2]
            args.append(_viewed(a, torch.empty(shape, dtype=getattr(torch, dtype)))[0])
        elif a.kind in ("new", "zeros"):
            shape, dtype = out_shape(case, call, pos)
            args.append(_viewed(a, torch.empty(shape, dtype=getattr(torch, dtype)))[0])
        elif a.kind == "scalar":
            args.append(a.value)
        else:
            args.append(None)
    grid = eval(call.grid, {"triton": triton})  # noqa: S307 - the generator's own source
    launch_to_mlir(kernel, grid, *args, outputs=case.launch_kwargs.get("outputs", ()),
                   inplace=case.launch_kwargs.get("inplace", ()), output=out, kernel_source=(kernel_path, case.kernel_name))
    with open(out, encoding="utf-8") as f:
        case.mlir = f.read()
    return out


def _viewed(a: Arg, t):
    """``(what the launch gets, the span read back as the result)`` of tensor ``t`` for ``a``
    (``a.view``, else ``t`` itself for both)."""
    if a.view is None:
        return t, t
    import torch

    return eval(a.view, {"torch": torch})(t)  # noqa: S307 - the generator's own source


def out_shape(case: Case, call: Call, position: int) -> tuple[tuple, str]:
    """Shape and dtype of the output argument at ``position`` of ``call``."""
    host = case.host_args[call.workload]
    names = _param_names_from_source(case)
    p = names[position]
    ref = host[next(a.value for a in call.args if a.kind == "host")][:2]  # the call's first tensor argument
    return (tuple(case.launch_kwargs.get("out_shapes", {}).get(p, ref[0])),
            case.launch_kwargs.get("out_dtypes", {}).get(p, ref[1]))


def _param_names_from_source(case: Case) -> list[str]:
    import ast

    tree = ast.parse(case.kernel_source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == case.kernel_name)
    return [a.arg for a in fn.args.args if not (a.annotation is not None and "constexpr" in ast.unparse(a.annotation))]


# --------------------------------------------------------------------------------------------
# Running (in a process that interprets Triton kernels, or on the GPU)


def host_data(case: Case, workload: int, seed: int, device: str = "cpu") -> list:
    """The host function's arguments of ``workload``: seeded, position-dependent values
    (floats in [-1, 1), integers in [-8, 8)), or zeros where the case says so (an accumulator
    its caller zeroes), the same on both sides."""
    import torch

    out = []
    for i, (shape, dtype, *fill) in enumerate(case.host_args[workload]):
        g = torch.Generator().manual_seed(seed * 7_919 + workload * 104_729 + i)
        dt = getattr(torch, dtype)
        if fill == ["zeros"]:
            t = torch.zeros(shape, dtype=dt)
        elif dt.is_floating_point:
            t = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1).to(dt)
        else:
            t = torch.randint(-8, 8, shape, generator=g, dtype=torch.int64).to(dt)
        out.append(t.to(device))
    return out


def run_triton(case: Case, kernel, entries: list, seed: int, device: str = "cpu") -> dict:
    """Run the case's calls with the autotuner held to the config ``entries`` (the variant's
    ``[(key, value)]``); returns ``{(workload, host result): tensor}``."""
    import torch
    import triton

    import triton.language as tl

    tuner = kernel if type(kernel).__name__ == "Autotuner" else None
    kwargs = {k: getattr(tl, v[1]) if isinstance(v, (list, tuple)) and v[:1] == ["tl"] else v
              for k, v in entries if k not in ("num_warps", "num_stages", "num_ctas", "maxnreg")}
    options = {k: v for k, v in entries if k in ("num_warps", "num_stages")}
    if tuner is not None:
        tuner.configs = [triton.Config(kwargs, **options)]
        tuner.cache = {}
    results = {}
    for call in case.calls:
        data = host_data(case, call.workload, seed, device)
        args, spans = [], {}
        for pos, a in enumerate(call.args):
            if a.kind == "host":
                args.append(None)
                args[pos], spans[pos] = _viewed(a, data[a.value])
            elif a.kind in ("new", "zeros"):
                shape, dtype = out_shape(case, call, pos)
                make = torch.zeros if a.kind == "zeros" else torch.empty
                args.append(None)
                args[pos], spans[pos] = _viewed(a, make(shape, dtype=getattr(torch, dtype), device=device))
            elif a.kind == "scalar":
                args.append(a.value)
            else:
                args.append(None)
        grid = eval(call.grid, {"triton": triton})  # noqa: S307 - the generator's own source
        extra = {**call.kwargs, **({} if tuner is not None else {**kwargs, **options})}
        kernel[grid](*args, **extra)
        for j, pos in call.returns.items():
            results[(call.workload, j)] = spans[pos].detach().cpu()
    return results


def _interpret_worker(job_path: str, out_path: str, parent: int) -> int:
    """The interpreter process of ``--interpret``: per case, the module's launches (check's
    binding, fed the host data) and Triton's calls, every variant. Ends with ``parent``."""
    from autotune_export.cuda.workers import _end_with_parent
    from autotune_export.tools import check

    _end_with_parent(parent)

    with open(job_path, "rb") as f:
        jobs = pickle.load(f)
    out = []
    for case, folder, launches, seed in jobs:
        case = case_from_dict(case)
        entry: dict = {"case": case.name, "module": {}, "triton": {}, "errors": []}
        try:
            for launch in launches:
                data = host_data(case, launch.workload_index, seed)
                launch.data = {k: data[i] for k, i in enumerate(launch.host_args) if i is not None}
                got = check.run_launch(launch)
                for k, v in enumerate(launch.variants):
                    run = got["runs"][k]
                    if run["error"]:
                        entry["errors"].append(f"module, {v.name}: {run['error']}")
                        continue
                    for j, i in enumerate(launch.host_results):
                        if i is not None:
                            entry["module"][(v.name, launch.workload_index, i)] = run["buffers"][launch.results[j]]
            kernel = _import(os.path.join(folder, "kernel.py"), case.kernel_name)
            for v in launches[0].variants if launches else []:
                try:
                    for key, t in run_triton(case, kernel, plain_entries(v.entries), seed).items():
                        entry["triton"][(v.name, *key)] = t
                except Exception as err:  # noqa: BLE001 - reported as a difference
                    entry["errors"].append(f"Triton, {v.name}: {type(err).__name__}: {str(err).strip().splitlines()[-1:]}")
        except Exception as err:  # noqa: BLE001
            entry["errors"].append(f"{type(err).__name__}: {err}")
        out.append(entry)
    with open(out_path, "wb") as f:
        pickle.dump(out, f)
    return 0


def compare(case: Case, module: dict, triton_side: dict, variants: list[str]) -> list[str]:
    """Differences between the module's host results and Triton's, per variant, workload and
    result (the runtime's cross-check tolerances)."""

    from autotune_export.runtime.tuner import results_agree

    problems = []
    for v in variants:
        for w in range(len(case.host_args)):
            for i in range(case.n_results):
                a, b = triton_side.get((v, w, i)), module.get((v, w, i))
                if a is None or b is None:
                    problems.append(f"{v}, workload {w}, result {i}: {'Triton' if a is None else 'the module'} gave none")
                    continue
                na, nb = _np(a), _np(b)
                if na.shape != nb.shape:
                    problems.append(f"{v}, workload {w}, result {i}: shape {nb.shape}, Triton {na.shape}")
                    continue
                why = results_agree([na], [nb])
                if why:
                    problems.append(f"{v}, workload {w}, result {i}: {why}")
    return problems


def _torch_of(a):
    """A numpy result as a torch tensor; bf16 results (ml_dtypes arrays, which torch.from_numpy
    refuses) through their 16-bit pattern."""
    import torch

    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view("int16").copy()).view(torch.bfloat16)
    return torch.from_numpy(a)


def _np(t):
    import torch

    if t.dtype == torch.bfloat16:
        try:
            import ml_dtypes

            return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        except ImportError:
            return t.float().numpy()
    return t.numpy()


# --------------------------------------------------------------------------------------------
# The modes


def _module_launches(path: str):
    """check's launches of every dispatch and workload of the module at ``path``."""
    from autotune_export.frontend.reader import parse_source
    from autotune_export.ir.walk import executable_sources, groups_of
    from autotune_export.passes.base import PassContext
    from autotune_export.tools import check
    from autotune_export.tools.cli import read_source

    source = read_source(path)
    module = parse_source(source)
    ctx = PassContext(source=source, remark=lambda d: None)
    args = argparse.Namespace(target="sm_90", seed=0, timeout=300.0, reference=None, group=None)
    launches = []
    for src in executable_sources(module):
        for op in groups_of(src):
            got, _ = check.launches_of_group(ctx, module, src, op, args)
            launches += got
    return launches


def run_interpret(cases: list[Case], seed: int, keep: str | None, timeout: float) -> dict:
    """``--interpret``: both sides in Triton's interpreter (a child process with
    ``TRITON_INTERPRET=1``). Returns the report."""
    from autotune_export.support.diagnostics import DiagnosticError

    work = keep or tempfile.mkdtemp(prefix="autotune-export-differential-")
    report = {"mode": "interpret", "seed": seed, "cases": [], "variants": 0, "differences": 0, "refused": 0}
    jobs = []
    for case in cases:
        folder = os.path.join(work, case.name)
        item = {"case": case.name, "family": case.family, "form": case.form, "differences": [], "variants": 0}
        try:
            path = build_module(case, folder)
            launches = _module_launches(path)
        except DiagnosticError as err:
            item["refused"] = "; ".join(d.format() for d in err.diagnostics)
            report["refused"] += 1
            report["cases"].append(item)
            continue
        except Exception as err:  # noqa: BLE001 - the export failed: a finding
            item["differences"].append(f"export failed: {type(err).__name__}: {err}")
            report["cases"].append(item)
            continue
        jobs.append((case_to_dict(case), folder, launches, seed))
        report["cases"].append(item)
    by_name = {c["case"]: c for c in report["cases"]}
    job_path, out_path = os.path.join(work, "job.pkl"), os.path.join(work, "out.pkl")
    with open(job_path, "wb") as f:
        pickle.dump(jobs, f)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", job_path, out_path, str(os.getpid())], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"the interpreter process failed ({proc.returncode}): {proc.stderr[-2000:]}")
    with open(out_path, "rb") as f:
        outcomes = pickle.load(f)
    for (case, folder, launches, _), got in zip(jobs, outcomes):
        case = case_from_dict(case)
        item = by_name[case.name]
        variants = [v.name for v in launches[0].variants] if launches else []
        item["variants"] = len(variants)
        item["differences"] += got["errors"] + compare(case, got["module"], got["triton"], variants)
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return report


def build_gpu(cases: list[Case], folder: str, target: str, seed: int) -> int:
    """``--build``: per case its folder (kernel.py, module.mlir, module.vmfb) and
    ``cases.pkl`` for ``--gpu``."""
    from autotune_export.support.diagnostics import DiagnosticError
    from autotune_export.tools import cli

    os.makedirs(folder, exist_ok=True)
    kept, entries = [], {}
    for case in cases:
        sub = os.path.join(folder, case.name)
        try:
            path = build_module(case, sub)
        except DiagnosticError as err:
            print(f"{case.name}: refused: {err}")
            continue
        rc = cli.main([path, "--emit", "vmfb", "--target", target, "-o", os.path.join(sub, "module.vmfb"), "-q"])
        if rc != 0:
            print(f"{case.name}: the build failed (exit {rc})")
            continue
        kept.append(case)
        entries[case.name] = _variant_entries(path)
    with open(os.path.join(folder, "cases.pkl"), "wb") as f:
        pickle.dump({"seed": seed, "cases": [case_to_dict(c) for c in kept], "entries": entries}, f)
    print(f"built {len(kept)} of {len(cases)} cases in {folder}")
    return 0


def run_gpu(folder: str) -> dict:
    """``--gpu`` (on the GPU machine): per case and variant, the ``.vmfb`` with the variant
    selected, called with the host data, against Triton's launch held to that config, both on
    the GPU."""
    import numpy as np

    from autotune_export.runtime.tuner import AutotunedModule

    with open(os.path.join(folder, "cases.pkl"), "rb") as f:
        saved = pickle.load(f)
    seed = saved["seed"]
    report = {"mode": "gpu", "seed": seed, "cases": [], "variants": 0, "differences": 0, "refused": 0}
    for case in map(case_from_dict, saved["cases"]):
        sub = os.path.join(folder, case.name)
        item = {"case": case.name, "family": case.family, "form": case.form, "differences": [], "variants": 0}
        report["cases"].append(item)
        try:
            mod = AutotunedModule(os.path.join(sub, "module.vmfb"), driver="cuda", cache=None)
            (group,) = mod.groups.values()
            kernel = _import(os.path.join(sub, "kernel.py"), case.kernel_name)
            configs = saved["entries"][case.name]
            module_side, triton_side = {}, {}
            for k, variant in enumerate(group.variants):
                mod.select(group.key, k)
                for w in range(len(case.host_args)):
                    res = mod("main", *[_np(t) for t in host_data(case, w, seed)])
                    res = list(res) if isinstance(res, (list, tuple)) else [res]
                    for i, r in enumerate(res):
                        module_side[(variant, w, i)] = _torch_of(np.asarray(r))
                for key, t in run_triton(case, kernel, configs[variant], seed, device="cuda").items():
                    triton_side[(variant, *key)] = t
            item["variants"] = len(group.variants)
            item["differences"] += compare(case, module_side, triton_side, list(group.variants))
        except Exception as err:  # noqa: BLE001 - a case that cannot run is a finding
            item["differences"].append(f"{type(err).__name__}: {err}")
    return report


def plain_entries(entries: list) -> list:
    """A variant's config entries as plain data: a Triton dtype (``tl.float16``) as
    ``["tl", "float16"]`` (what the GPU machine, without IREE's compiler, can read)."""
    out = []
    for k, v in entries:
        name = getattr(v, "name", None)
        out.append([k, ["tl", name] if type(v).__name__ == "TritonDtype" else v])
    return out


def _variant_entries(path: str) -> dict:
    """variant name -> its config entries (check's plan of the module: no GPU needed)."""
    return {v.name: plain_entries(v.entries) for launch in _module_launches(path)[:1] for v in launch.variants}


def _finish(report: dict, json_path: str | None) -> int:
    for item in report["cases"]:
        report["variants"] += item.get("variants", 0)
        report["differences"] += len(item["differences"])
        status = "refused" if "refused" in item else ("DIFF" if item["differences"] else "ok")
        print(f"{item['case']:28} {item['form']:10} variants {item.get('variants', 0):2}  {status}")
        for d in item["differences"][:5]:
            print(f"    {d}")
    print(f"{len(report['cases'])} cases ({report['refused']} refused), {report['variants']} variants, "
          f"{report['differences']} differences")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, default=str)
            f.write("\n")
    return 1 if report["differences"] else 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        return _interpret_worker(argv[1], argv[2], int(argv[3]))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--interpret", action="store_true", help="both sides in Triton's interpreter (no GPU)")
    mode.add_argument("--build", metavar="DIR", help="build the cases' modules for --gpu into DIR")
    mode.add_argument("--gpu", metavar="DIR", help="run the cases built in DIR on the GPU")
    mode.add_argument("--list", action="store_true", help="print the generated cases and exit")
    p.add_argument("--cases", type=int, default=50, help="number of cases (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generator and the data (default 0)")
    p.add_argument("--families", default=None, help="comma-separated families (default: all): " + ", ".join(FAMILIES))
    p.add_argument("--target", default="sm_90", help="--build's CUDA target (default sm_90)")
    p.add_argument("--keep", default=None, metavar="DIR", help="--interpret: keep the cases' files in DIR")
    p.add_argument("--timeout", type=float, default=3000.0, help="--interpret: seconds for the interpreter process")
    p.add_argument("--json", default=None, help="write the report here")
    args = p.parse_args(argv)
    os.environ.setdefault("AUTOTUNE_EXPORT_CACHE_DIR", os.path.join(tempfile.gettempdir(), "autotune-export-differential-cache"))
    if args.gpu:
        return _finish(run_gpu(args.gpu), args.json)
    families = args.families.split(",") if args.families else None
    cases = generate(args.cases, args.seed, families)
    if args.list:
        for c in cases:
            print(f"{c.name:28} {c.family:16} {c.form:10} host args {c.host_args}")
        return 0
    if args.build:
        return build_gpu(cases, args.build, args.target, args.seed)
    t0 = time.perf_counter()
    report = run_interpret(cases, args.seed, args.keep, args.timeout)
    report["seconds"] = round(time.perf_counter() - t0, 1)
    return _finish(report, args.json)


if __name__ == "__main__":
    sys.exit(main())
