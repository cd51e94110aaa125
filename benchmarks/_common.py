"""Helpers shared by the benchmark scripts: config spaces, .mlir rendering, tables, JSON, ncu.

Kept free of GPU imports so that every script can import it on a machine with no GPU.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from typing import Iterable, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MATMUL_MLIR = os.path.join(ROOT, "examples", "matmul", "matmul.mlir")
MATMUL_KERNEL = os.path.join(ROOT, "examples", "matmul", "kernel.py")
VECTOR_ADD_MLIR = os.path.join(ROOT, "examples", "vector_add", "vector_add.mlir")
VECTOR_ADD_KERNEL = os.path.join(ROOT, "examples", "vector_add", "kernel.py")
SPACE32_MLIR = os.path.join(ROOT, "benchmarks", "configs", "matmul_space32.mlir")
SPACE64_MLIR = os.path.join(ROOT, "benchmarks", "configs", "matmul_space64.mlir")
#: build_gpu_inputs.py writes the 64 configs as JSON under this name next to the .vmfb files.
SPACE64_JSON_NAME = "s64_configs.json"


# ---------------------------------------------------------------------------------------------
# Config spaces


def space32_configs() -> list[dict]:
    """The 32-config matmul space: BLOCK_M, BLOCK_N in {32, 64, 128, 256} x BLOCK_K in {32, 64}.

    GROUP_M = 8; num_warps = 8 for tiles of at least 128x256 elements, else 4; num_stages = 4
    for BLOCK_K = 32 and 3 for BLOCK_K = 64 (deeper pipelines for thinner k-slices, as in
    Triton's tutorial spaces). Sorted by (BLOCK_M, BLOCK_N, BLOCK_K)."""
    out = []
    for bm in (32, 64, 128, 256):
        for bn in (32, 64, 128, 256):
            for bk in (32, 64):
                out.append({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8,
                            "num_warps": 8 if bm * bn >= 128 * 256 else 4,
                            "num_stages": 4 if bk == 32 else 3})
    return out


def space64_configs() -> list[dict]:
    """The 64 configs of benchmarks/configs/matmul_space64.mlir (a generated ``product`` space),
    in its order, as dicts (``BLOCK_M`` ... ``num_warps``, ``num_stages``): read from
    benchmarks/configs/matmul_space64.py, the same space from Python (tests/unit/test_space.py
    checks that the two agree). Needs triton (the space's configs are ``triton.Config``) and the
    toolkit's IR layer (iree.compiler); where that is absent (the GPU machine, which carries only
    the runtime wheel), the configs are read from ``.gpu_bench/s64_configs.json``, which
    build_gpu_inputs.py wrote from this function. Raises ImportError when neither is there."""
    import importlib.util

    try:
        import iree.compiler  # noqa: F401 - the space's Python spelling needs the IR layer
    except ImportError:
        saved = os.path.join(ROOT, ".gpu_bench", SPACE64_JSON_NAME)
        if not os.path.exists(saved):
            raise ImportError(f"space64_configs: no iree.compiler here and no {saved} (build_gpu_inputs.py --only s64 writes it)")
        with open(saved) as f:
            return json.load(f)

    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    spec = importlib.util.spec_from_file_location("matmul_space64", SPACE64_MLIR.replace(".mlir", ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [{**c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages} for c in mod.CONFIGS]


def load_subset(n_configs: int) -> list[dict]:
    """Configs of the module-load benchmark (each config gives 2 variants: plain + specialized).
    16 configs: every BLOCK_K = 32 config of the 32-space; 4 configs: those with BLOCK_M and
    BLOCK_N in {64, 128}."""
    k32 = [c for c in space32_configs() if c["BLOCK_K"] == 32]
    if n_configs == 16:
        return k32
    if n_configs == 4:
        return [c for c in k32 if c["BLOCK_M"] in (64, 128) and c["BLOCK_N"] in (64, 128)]
    raise ValueError(n_configs)


def example_matmul_configs() -> list[dict]:
    """The configs([...]) of examples/matmul/matmul.mlir, parsed from the file."""
    text = open(MATMUL_MLIR, encoding="utf-8").read()
    body = re.search(r"configs\(\[(.*?)\]\)", text, re.S).group(1)
    out = []
    for item in re.findall(r"\{([^}]*)\}", body):
        out.append({k.strip(): int(v) for k, v in (kv.split("=") for kv in item.split(","))})
    return out


def render_matmul_mlir(configs: Sequence[dict] | None = None, tune_mnk: tuple[int, int, int] | None = None,
                       kernel_path: str | None = None, tune_shapes: Sequence[tuple[int, int, int]] | None = None) -> str:
    """examples/matmul/matmul.mlir with its configs, tune_workload and kernel path replaced.

    ``tune_mnk``: (M, N, K) of the tune workload (A is MxK, B is KxN); ``tune_shapes``: several
    (one choice per workload). ``kernel_path``: the string put in triton("...") (absolute, or
    relative to where the .mlir will live)."""
    text = open(MATMUL_MLIR, encoding="utf-8").read()
    if configs is not None:
        items = [", ".join(f"{k} = {v}" for k, v in c.items()) for c in configs]
        block = "configs([" + ",\n               ".join("{" + i + "}" for i in items) + "])"
        text, n = re.subn(r"configs\(\[.*?\]\)", lambda _: block, text, count=1, flags=re.S)
        assert n == 1
    if tune_mnk is not None:
        m, n_, k = tune_mnk
        text, n = re.subn(r"tune_workload\([^)]*\)",
                          f"tune_workload(tensor<{m}x{k}xf16>, tensor<{k}x{n_}xf16>)", text, count=1)
        assert n == 1
    if tune_shapes:
        lists = ", ".join(f"[tensor<{m}x{k}xf16>, tensor<{k}x{n_}xf16>]" for m, n_, k in tune_shapes)
        text, n = re.subn(r"tune_workload\([^)]*\)", f"tune_workload({lists})", text, count=1)
        assert n == 1
    if kernel_path is not None:
        text, n = re.subn(r'triton\("kernel\.py"', f'triton("{kernel_path}"', text, count=1)
        assert n == 1
    return text


# ---------------------------------------------------------------------------------------------
# Output


def table(headers: Sequence[str], rows: Iterable[Sequence], title: str | None = None) -> str:
    """A GitHub-markdown table (also readable in a terminal)."""
    rows = [["" if v is None else (f"{v:.3g}" if isinstance(v, float) and abs(v) < 1e-2 and v != 0 else
             (f"{v:.2f}" if isinstance(v, float) else str(v))) for v in r] for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h)) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    out = [f"### {title}", ""] if title else []
    out += [line(headers), "| " + " | ".join("-" * w for w in widths) + " |"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def write_json(path: str | None, doc) -> None:
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True, default=str)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def environment(gpu: bool = False) -> dict:
    """Machine, versions (and GPU name/driver when ``gpu``), for the JSON reports."""
    env = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
           "argv": sys.argv, "loadavg": os.getloadavg()}
    try:
        import importlib.metadata as md
        for pkg in ("triton", "torch", "iree-base-runtime", "iree-base-compiler", "numpy", "jax"):
            try:
                env[pkg] = md.version(pkg)
            except md.PackageNotFoundError:
                pass
    except Exception:  # noqa: BLE001
        pass
    if gpu:
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,memory.total",
                                "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
            env["gpu"] = q.stdout.strip()
        except Exception as e:  # noqa: BLE001
            env["gpu"] = f"nvidia-smi failed: {e}"
    return env


def run_json_worker(argv: Sequence[str], env: dict | None = None, timeout: float = 600) -> dict:
    """Run ``python3 argv...`` that writes one JSON document as its last stdout line."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=full_env, timeout=timeout)
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-15:]
        return {"error": f"exit {p.returncode}: " + " | ".join(tail)}
    lines = [l for l in p.stdout.strip().splitlines() if l.startswith("{")]
    if not lines:
        return {"error": "no JSON from worker: " + p.stdout[-500:] + p.stderr[-1000:]}
    return json.loads(lines[-1])


# ---------------------------------------------------------------------------------------------
# Nsight Compute

_UNITS_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
             "second": 1e6, "s": 1e6}


def ncu_kernel_times(argv: Sequence[str], env: dict | None = None, ncu: str | None = None,
                     timeout: float = 300) -> dict:
    """Run ``python3 argv...`` under ``ncu --metrics gpu__time_duration.sum`` and return
    ``{"kernels": [{"name", "grid", "block", "us"}...] in launch order, "raw": csv text}`` or
    ``{"error": ...}``. The child should print nothing that starts with a double quote."""
    ncu = ncu or os.environ.get("NCU", "/usr/local/cuda/bin/ncu")
    cmd = [ncu, "--csv", "--metrics", "gpu__time_duration.sum", "--clock-control", "none",
           "--target-processes", "all", sys.executable, *argv]
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}
    rows = [l for l in p.stdout.splitlines() if l.startswith('"')]
    if not rows:
        return {"error": f"ncu exit {p.returncode}, no CSV: " + (p.stdout[-800:] + p.stderr[-800:]).replace("\n", " | ")}
    reader = list(csv.DictReader(io.StringIO("\n".join(rows))))
    kernels = []
    for r in reader:
        if r.get("Metric Name") and r["Metric Name"] != "gpu__time_duration.sum":
            continue
        name = r.get("Kernel Name") or r.get("Function Name") or r.get("Demangled Name") or "?"
        value = r.get("Metric Value") or r.get("gpu__time_duration.sum")
        unit = r.get("Metric Unit") or "nsecond"
        try:
            us = float(str(value).replace(",", "")) * _UNITS_US.get(unit.strip(), 1e-3)
        except ValueError:
            continue  # a units row of the raw page
        kernels.append({"id": r.get("ID"), "name": name, "grid": r.get("Grid Size"),
                        "block": r.get("Block Size"), "us": us, "pid": r.get("Process ID")})
    return {"kernels": kernels, "returncode": p.returncode, "raw": "\n".join(rows)}


def open_module(path: str, driver: str = "cuda"):
    """AutotunedModule for timing: no tuning cache (every autotune() really tunes)."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from autotune_export.runtime.tuner import AutotunedModule

    try:
        return AutotunedModule(path, driver=driver, cache=None)
    except TypeError:  # a runtime without the cache keyword
        return AutotunedModule(path, driver=driver)
