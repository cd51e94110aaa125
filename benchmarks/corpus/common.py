"""What record.py, replay.py and verify.py share: where the corpus' sources are, how a launch's
kernel and arguments are described, and how tensors are stored.

Imports neither autotune_export nor iree (record.py runs where only torch and Triton are);
torch and Triton are imported by the functions that need them.

A recorded launch is one ``kernel[grid](*args, **kwargs)`` of a case, seen at Triton's
``KernelInterface.__getitem__`` (the object the library indexes: a ``JITFunction``, an
``Autotuner``, a ``Heuristics``). Its tensors are stored as numpy arrays in one ``.npz`` per
launch: ``before__P`` for every tensor argument ``P`` (its contents when the launch was made) and
``after__P`` for those the launch changed (after ``torch.cuda.synchronize()``); a strided view also
``span_before__P``/``span_after__P``: the storage it spans (:func:`storage_slice`). bfloat16 and fp8
tensors are stored as their bits (``uint16``/``uint8``); the index says their dtype.
"""

from __future__ import annotations

import inspect
import json
import os
import pathlib
import shutil
import tarfile
from typing import Any

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
#: Where fetch_sources.sh puts the public code (git-ignored).
SOURCES = REPO / "scratch_gpu" / "corpus_src"
#: Folders put on sys.path (package roots of the libraries).
SOURCE_PATHS = [SOURCES / "liger" / "src", SOURCES / "attorch", SOURCES / "fla", SOURCES / "gemlite"]
#: What replay.py writes (git-ignored).
GPU_CORPUS = REPO / ".gpu_corpus"

#: torch dtype name -> (stored numpy dtype, bits stored instead of values?)
_STORED = {
    "float16": ("float16", False), "float32": ("float32", False), "float64": ("float64", False),
    "bfloat16": ("uint16", True), "float8_e4m3fn": ("uint8", True), "float8_e5m2": ("uint8", True),
    "int8": ("int8", False), "int16": ("int16", False), "int32": ("int32", False), "int64": ("int64", False),
    "uint8": ("uint8", False), "bool": ("bool", False),
}


def add_sources() -> list[str]:
    """Put the libraries' package roots on ``sys.path`` (run fetch_sources.sh first). A library
    fetch_sources.sh left out (no mirror) is not there: its cases fail to import, the others run.
    Returns the missing roots; exits when none is there."""
    import sys

    missing = [str(p) for p in SOURCE_PATHS if not p.is_dir()]
    if len(missing) == len(SOURCE_PATHS):
        raise SystemExit(f"corpus: {', '.join(missing)} missing: run sh benchmarks/corpus/fetch_sources.sh first")
    if missing:
        print(f"corpus: not fetched (their cases fail to import): {', '.join(missing)}", file=sys.stderr)
    for p in reversed(SOURCE_PATHS):
        if p.is_dir() and str(p) not in sys.path:
            sys.path.insert(0, str(p))
    return missing


def dtype_name(t) -> str:
    """``torch.float16`` -> ``"float16"``."""
    return str(t.dtype).removeprefix("torch.")


def to_numpy(t) -> np.ndarray:
    """A host copy of tensor ``t`` (its logical contents, contiguous), bits for bf16/fp8."""
    import torch

    name = dtype_name(t)
    stored, bits = _STORED.get(name, (None, False))
    if stored is None:
        raise ValueError(f"cannot store a {name} tensor")
    c = t.detach().contiguous().cpu()
    if bits:  # a copy: for a CPU tensor (dry run) .cpu() and .numpy() share its memory
        c = c.view(torch.int16 if stored == "uint16" else torch.uint8)
        return c.numpy().view(stored).copy()
    return c.numpy().copy()


def storage_slice(t):
    """The elements of tensor ``t``'s storage from its first element (``storage_offset``) to the
    last one its view reaches, 1-D in the storage's order (``1 + sum((size_d - 1) * stride_d)``
    elements): what a kernel can address through the data pointer Triton passes, for a strided
    view (``b.t()``, a slice, an ``expand``), gaps included. None for a dense (contiguous) tensor,
    a tensor with no elements or one with a negative stride."""
    if t.is_contiguous() or t.numel() == 0 or any(s < 0 for s in t.stride()):
        return None
    n = 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return t.as_strided((n,), (1,), t.storage_offset())


def from_numpy(a: np.ndarray, dtype: str):
    """The torch tensor (CPU) of an array stored by :func:`to_numpy` for a ``dtype`` tensor."""
    import torch

    stored, bits = _STORED[dtype]
    if bits:
        t = torch.from_numpy(a.view(np.int16 if stored == "uint16" else np.uint8).copy())
        return t.view(getattr(torch, dtype))
    return torch.from_numpy(a.copy())


def runtime_array(a: np.ndarray, dtype: str) -> np.ndarray:
    """The array as iree.runtime takes it: bf16/fp8 as ml_dtypes arrays."""
    if not _STORED[dtype][1]:
        return a
    import ml_dtypes

    return a.view({"bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
                   "float8_e5m2": ml_dtypes.float8_e5m2}[dtype])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# --------------------------------------------------------------------------------------------
# Kernels and their parameters


def python_function(obj: Any):
    """The Python function under a Triton kernel object (``.fn`` chain: Autotuner, Heuristics,
    JITFunction, InterpretedFunction)."""
    for _ in range(16):
        if inspect.isfunction(obj):
            return obj
        obj = getattr(obj, "fn", None)
        if obj is None:
            break
    raise TypeError("not a Triton kernel object")


def wrappers(obj: Any) -> list[str]:
    """Class names along the ``.fn`` chain, outermost first (``["Autotuner", "Heuristics",
    "JITFunction"]``)."""
    out = []
    for _ in range(16):
        if inspect.isfunction(obj) or obj is None:
            break
        out.append(type(obj).__name__)
        obj = getattr(obj, "fn", None)
    return out


def parameters(fn) -> list[tuple[str, bool, Any]]:
    """``(name, is_constexpr, default or inspect.Parameter.empty)`` per parameter of the
    kernel's Python function (``tl.constexpr`` annotations, as Triton's JIT reads them)."""
    out = []
    for p in inspect.signature(fn).parameters.values():
        ann = p.annotation
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
        out.append((p.name, "constexpr" in str(text), p.default))
    return out


LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "grf_mode")


def bind(fn, args: tuple, kwargs: dict) -> tuple[dict, dict]:
    """``(values by parameter name, launch options)`` of a launch ``k[grid](*args, **kwargs)``:
    positional arguments fill the parameters in order, keywords by name (options such as
    ``num_warps`` are not parameters)."""
    params = parameters(fn)
    names = [n for n, _, _ in params]
    values = dict(zip(names, args))
    options = {}
    for key, v in kwargs.items():
        if key in names:
            values[key] = v
        else:
            options[key] = v
    return values, options


def describe_value(v: Any) -> dict:
    """What the index says of one argument."""
    try:
        import torch
        is_tensor = isinstance(v, torch.Tensor)
    except ImportError:  # pragma: no cover
        is_tensor = False
    if is_tensor:
        return {"kind": "tensor", "dtype": dtype_name(v), "shape": list(v.shape), "strides": list(v.stride()),
                "contiguous": bool(v.is_contiguous()), "storage_offset": int(v.storage_offset())}
    if v is None:
        return {"kind": "none"}
    if isinstance(v, bool):
        return {"kind": "bool", "value": v}
    if isinstance(v, int):
        return {"kind": "int", "value": v}
    if isinstance(v, float):
        return {"kind": "float", "value": v}
    if isinstance(v, str):
        return {"kind": "str", "value": v}
    name = getattr(v, "name", None)
    if type(v).__name__ == "dtype" and isinstance(name, str):  # a tl.dtype
        return {"kind": "tl_dtype", "value": name}
    if hasattr(v, "value") and type(v).__name__ == "constexpr":
        return describe_value(v.value)
    return {"kind": "other", "type": type(v).__name__, "repr": repr(v)[:200]}


def tl_value(d: dict) -> Any:
    """The Python value of a scalar described by :func:`describe_value`."""
    if d["kind"] == "none":
        return None
    if d["kind"] == "tl_dtype":
        import triton.language as tl

        named = getattr(tl, d["value"], None)
        if isinstance(named, tl.dtype):
            return named
        # Triton's short names (fp16, bf16, fp8e4nv, ...): the tl.dtype of that name
        for v in vars(tl).values():
            if isinstance(v, tl.dtype) and v.name == d["value"]:
                return v
        raise ValueError(f"no triton.language dtype named {d['value']!r}")
    return d.get("value")


# --------------------------------------------------------------------------------------------
# Recordings on disk


def read_index(folder: str | os.PathLike) -> dict:
    return json.loads((pathlib.Path(folder) / "index.json").read_text())


def unpack(recording: str | os.PathLike, into: str | os.PathLike) -> pathlib.Path:
    """The folder holding a recording's ``index.json``: ``recording`` itself when it has one,
    else its ``corpus-*.tar`` parts (what record.py --pack leaves) unpacked into ``into``."""
    rec = pathlib.Path(recording)
    parts = sorted(rec.glob("corpus-*.tar"))
    if (rec / "index.json").is_file() and not parts:
        return rec
    if not parts:
        raise SystemExit(f"corpus: {rec} holds neither index.json nor corpus-*.tar")
    into = pathlib.Path(into)
    into.mkdir(parents=True, exist_ok=True)
    for p in parts:
        with tarfile.open(p) as tar:
            tar.extractall(into, filter="data")
    if (rec / "index.json").is_file() and not (into / "index.json").is_file():
        shutil.copy(rec / "index.json", into / "index.json")
    return into


def merge_recordings(folders: list[pathlib.Path], into: pathlib.Path) -> dict:
    """One recording in ``into`` made of the recordings in ``folders`` (each holding an
    ``index.json``): their cases in order (a case name recorded twice is an error) and their
    ``launches/`` arrays (and ``generated/`` kernel files). They must come from one environment (GPU, torch, Triton); the
    sources are the last one's (a superset: record.py --cases records a part of one tree).
    Returns the merged index, also written to ``into/index.json``."""
    into = pathlib.Path(into)
    into.mkdir(parents=True, exist_ok=True)
    merged: dict | None = None
    seen: set[str] = set()
    for folder in folders:
        index = read_index(folder)
        if merged is None:
            merged = {**index, "cases": [], "seconds": 0}
        elif index["environment"] != merged["environment"]:
            raise SystemExit(f"corpus: {folder} was recorded in another environment ({index['environment']} vs "
                             f"{merged['environment']})")
        for case in index["cases"]:
            if case["name"] in seen:
                raise SystemExit(f"corpus: case {case['name']} is in two recordings")
            seen.add(case["name"])
            merged["cases"].append(case)
        merged["sources"] = index.get("sources", merged.get("sources"))
        merged["seconds"] = round(merged["seconds"] + index.get("seconds", 0), 1)
        if (pathlib.Path(folder) / "launches").is_dir():
            shutil.copytree(pathlib.Path(folder) / "launches", into / "launches", dirs_exist_ok=True)
        if (pathlib.Path(folder) / "generated").is_dir():  # kernel files written at run time (Inductor's)
            shutil.copytree(pathlib.Path(folder) / "generated", into / "generated", dirs_exist_ok=True)
    assert merged is not None
    (into / "index.json").write_text(json.dumps(merged, indent=1))
    return merged


def load_arrays(folder: str | os.PathLike, launch: dict) -> dict[str, np.ndarray]:
    with np.load(pathlib.Path(folder) / launch["data"]) as z:
        return {k: z[k] for k in z.files}


def ttir_access(ttir_text: str) -> tuple[set[int], set[int], bool]:
    """``(written, read, atomics)``: indices of the kernel's runtime parameters (TTIR arguments) whose
    memory the kernel may store to, and may load from. The writes are
    ``autotune_export.cuda.ttir``'s analysis; the reads follow the same "may point to" origins
    to the pointer operand of every load (``READ_OPS``). Both err towards "yes". ``atomics``:
    whether the kernel has atomic ops (sums in a run-dependent order). Needs Triton
    and autotune_export/cuda/ttir.py with ttir_ops.py and ttir_origins.py (which import nothing else of the
    project)."""
    from triton._C.libtriton import ir

    from autotune_export.cuda import ttir as T
    from autotune_export.cuda import ttir_ops as T_ops
    from autotune_export.cuda import ttir_origins as T_origins

    wp = T.analyze(ttir_text)
    context = ir.context()
    ir.load_dialects(context)
    module = T_ops.parse_module(ttir_text, context)
    try:
        ops, blocks = T_ops.collect(module)
        kernel = T_ops.kernel_name(module, ops)
        builder = T_origins.OriginBuilder(module, ops, blocks)
        graph = builder.build()
    finally:
        del module
    for i, arg in enumerate(builder.functions[kernel]):
        graph.seeds[arg].add(i)
    origins = graph.solve()
    reached: set = set()
    for op in ops:
        if op.name in T_ops.READ_OPS and op.operands:
            reached |= origins.get(op.operands[0], set())
    of = wp.parameter_of_args()
    pointers = {i for i in wp.pointers}
    read_args = pointers if T_origins.TOP in reached else pointers & reached
    atomics = any(op.name.startswith("tt.atomic") for op in ops)
    return set(wp.written_parameters), {of[i] for i in read_args}, atomics


def answer_cuda_queries(capability=(9, 0)) -> bool:
    """Without a GPU, make ``torch.cuda.get_device_capability()`` answer ``capability`` (the
    recorded GPU's): attorch asks it when its package is imported (``utils.get_n_stages``, for
    the configs of its conv kernels). Returns whether it patched anything (not with a GPU)."""
    import torch

    if torch.cuda.is_available():
        return False
    torch.cuda.get_device_capability = lambda device=None: tuple(capability)
    return True


#: ``(kernel, parameter list, names dropped)`` per ``triton.autotune`` whose name lists name
#: something that is not a kernel argument (see :func:`tolerate_unknown_autotune_names`).
DROPPED_AUTOTUNE_NAMES: list[tuple[str, str, list[str]]] = []


def tolerate_unknown_autotune_names() -> bool:
    """Make this Triton drop the names in a ``triton.autotune``'s ``key`` / ``reset_to_zero`` /
    ``restore_value`` that are not arguments of the kernel, as Triton did up to its 3.8
    releases (``Autotuner.run`` skipped them: the GPU machine's Triton 3.6 imports such a
    kernel, and tunes as if the name were not there). Triton 3.9 (triton-lang/triton#11602)
    refuses them with a ValueError when the decorator runs, so a library with one stale name
    does not import at all here. Each dropped name is noted in
    :data:`DROPPED_AUTOTUNE_NAMES`. Returns whether it patched anything (idempotent)."""
    import triton
    from triton.runtime.autotuner import Autotuner

    original = Autotuner.__init__
    if getattr(original, "_corpus_tolerant", False):
        return False

    def _probe(a):  # a stand-in kernel: does this Triton refuse a key that is not an argument?
        pass

    try:
        Autotuner(_probe, ["a"], [triton.Config({})], ["not_an_argument"], None, None)
    except Exception:  # noqa: BLE001 - the ValueError of 3.9 (or a release that cannot build the probe)
        pass
    else:
        return False  # it ignores such names itself (the GPU machine's 3.6)

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, *args, **kwargs):
        names = list(arg_names)
        lists = []
        for what, given in (("key", key), ("reset_to_zero", reset_to_zero), ("restore_value", restore_value)):
            if given is None:
                lists.append(given)
                continue
            kept = [n for n in given if n in names]
            if len(kept) != len(list(given)):
                DROPPED_AUTOTUNE_NAMES.append((getattr(fn, "__name__", repr(fn)), what,
                                               [n for n in given if n not in names]))
            lists.append(kept)
        original(self, fn, arg_names, configs, *lists, *args, **kwargs)

    __init__._corpus_tolerant = True
    Autotuner.__init__ = __init__
    return True


def device_answers(case, capability=(9, 0)):
    """The context a case runs in: for a case marked ``asks_device`` (cases.asks_device: its
    library asks the GPU when imported or when its wrappers are called), on a machine without
    a GPU, autotune-export's stand-in (``autotune_export.cuda.stub_driver.answering_for``, the
    mechanism the toolkit uses while it imports a kernel file: docs/call-sites.md, "Libraries
    that query the GPU when imported"): Triton's driver and ``torch.cuda`` answer for
    ``capability`` (the recorded GPU's) while the case runs, so the library's module-level
    values (configs, block sizes, ``IS_NVIDIA_HOPPER``) and the SM count its wrappers read
    are those of that GPU (its representative part: sm_90 answers as an H100 SXM, 132 SMs,
    the recorded H200's count), not those of a CPU fallback. Tensors the case makes for the
    CPU stay on the CPU. With a GPU, or for any other case: nothing (a null context)."""
    import contextlib

    import torch

    if not getattr(case, "asks_device", False) or torch.cuda.is_available():
        return contextlib.nullcontext()
    from autotune_export.cuda.stub_driver import answering_for

    return answering_for(int(capability[0]) * 10 + int(capability[1]))
