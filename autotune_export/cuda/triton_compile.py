"""Ahead-of-time compilation of the configs of one Triton kernel, in parallel, with a disk cache.

One *variant* is a Triton kernel compiled for one config (constexpr values, num_warps, num_stages,
...) and one GPU architecture, to PTX. No GPU and no CUDA driver are needed: ``triton.compile`` is
called with an explicit ``GPUTarget`` and runs LLVM and the ptxas bundled with Triton.

Conventions (Triton's own launcher, which the emitted dispatches follow):

* a program (thread block) has ``num_warps * 32`` threads, where ``num_warps`` is the value in the
  compiled metadata (Triton may raise the requested one);
* ``shared`` is the dynamic shared memory of one program in bytes (all of Triton's shared memory
  is the dynamic ``extern .shared`` array); above 48 KiB the launch needs the opt-in attribute;
* the PTX entry takes every runtime (non-constexpr) parameter in declaration order, then two
  hidden pointers, ``global_scratch`` and ``profile_scratch``, used when the matching metadata
  size is non-zero.

Results are cached under :func:`default_cache_dir`, one JSON file per variant, keyed by
:meth:`VariantSpec.key` (Triton version, the kernel's source hash, every field of the spec and the
environment variables that change Triton's output). Rerunning with unchanged inputs compiles
nothing and starts no worker processes.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import multiprocessing
import os
import pathlib
import re
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import triton
from triton import knobs
from triton._C.libtriton import get_cache_invalidating_env_vars
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.compiler.errors import CompilationError
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction

from autotune_export.cuda import ttir as _ttir
from autotune_export.cuda.targets import max_shared_memory  # noqa: F401  (part of this module's API)
from autotune_export.support import files as _files
from autotune_export.support import progress as _progress
from autotune_export.support.paths import default_cache_dir  # noqa: F401  (part of this module's API)
from autotune_export.cuda import ptx as ptx_mod

__all__ = [
    "CompiledVariant",
    "KernelLoadError",
    "KernelSource",
    "LoadedKernel",
    "PrunedVariant",
    "VariantSpec",
    "compile_variants",
    "default_cache_dir",
    "load_kernel",
    "max_shared_memory",
]

# Bump when the layout of a cache entry, the recipe of VariantSpec.key or the meaning of a
# metadata field changes (4: written_params from the TTIR, as signature indices).
CACHE_FORMAT = 4

# Compiled-metadata fields copied into CompiledVariant.metadata (all JSON scalars).
_METADATA_FIELDS = ("name", "num_warps", "num_ctas", "num_stages", "shared", "global_scratch_size",
                    "global_scratch_align", "profile_scratch_size", "profile_scratch_align", "tmem_size",
                    "ptx_version", "triton_version", "hash", "launch_cooperative_grid", "launch_pdl",
                    "tensordesc_meta")


#: When this environment variable is set, compiling a variant raises CompilationForbidden
#: instead (cache hits still work). The fast test suite sets it to keep itself fast.
NO_COMPILE_ENV = "AUTOTUNE_EXPORT_NO_TRITON_COMPILE"


class CompilationForbidden(BaseException):
    """A variant was to be compiled while :data:`NO_COMPILE_ENV` is set. A BaseException so that
    no handler turns it into a pruned config: it reaches the caller (and fails a test)."""


class KernelLoadError(Exception):
    """A kernel could not be loaded: missing file, import failure, no such attribute, or the
    attribute is not a Triton kernel. The message is one line."""


# --------------------------------------------------------------------------------------------
# Loading kernels


@dataclass(frozen=True)
class KernelSource:
    """Where a kernel is defined: the Python file ``path`` (made absolute) and the name of the
    module-level attribute ``name`` holding the ``@triton.jit`` function, possibly wrapped in
    ``triton.autotune`` / ``triton.heuristics``."""
    path: str
    name: str

    def __post_init__(self):
        object.__setattr__(self, "path", os.path.abspath(os.fspath(self.path)))


@dataclass
class LoadedKernel:
    """A kernel after :func:`load_kernel`.

    ``default_configs`` come from a ``triton.autotune`` wrapper (the outermost one), one dict per
    ``triton.Config`` with keys kwargs, num_warps, num_stages, num_ctas, maxnreg (pre-hooks are
    dropped); None when there is no autotuner. ``heuristics`` maps a parameter name to
    ``f(named_args) -> value`` from ``triton.heuristics`` wrappers, in the order Triton applies
    them (outer wrapper first; a later entry for the same name wins). ``source_hash`` is a
    sha256 hex digest of the JIT function's cache key, which covers the source of the kernel,
    of the JIT functions it calls, and the constexpr globals it reads."""
    fn: JITFunction
    arg_names: list[str]
    constexpr_names: list[str]
    default_configs: list[dict] | None
    heuristics: dict[str, Callable]
    source_hash: str


def _first_line(text: str) -> str:
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def load_kernel(src: KernelSource) -> LoadedKernel:
    """Import ``src.path`` as a fresh module and return the kernel named ``src.name``.

    The module gets a name derived from a hash of its path (so two files called kernel.py do
    not collide) and is registered in ``sys.modules``; the file's directory is on ``sys.path``
    while it is imported, so it may import its neighbours. Raises KernelLoadError."""
    path = pathlib.Path(src.path)
    if not path.is_file():
        raise KernelLoadError(f"kernel file {path} does not exist")
    module_name = "_autotune_export_kernel_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise KernelLoadError(f"{path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:
        sys.modules.pop(module_name, None)
        raise KernelLoadError(f"importing {path} failed: {type(e).__name__}: {_first_line(e)}") from e
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(path.parent))

    if not hasattr(module, src.name):
        raise KernelLoadError(f"{path} has no attribute '{src.name}'")
    obj = getattr(module, src.name)
    default_configs = None
    heuristics: dict[str, Callable] = {}
    while isinstance(obj, (Autotuner, Heuristics)):
        if isinstance(obj, Autotuner):
            if default_configs is None:
                default_configs = [{
                    "kwargs": dict(c.kwargs), "num_warps": c.num_warps, "num_stages": c.num_stages,
                    "num_ctas": c.num_ctas, "maxnreg": c.maxnreg
                } for c in obj.configs]
        else:
            for name, fn in obj.values.items():
                heuristics.pop(name, None)  # re-insert: an inner wrapper runs later
                heuristics[name] = fn
        obj = obj.fn
    if not isinstance(obj, JITFunction):
        raise KernelLoadError(f"'{src.name}' in {path} is not a Triton kernel (got {type(obj).__name__})")
    try:
        cache_key = obj.cache_key
    except Exception as e:
        raise KernelLoadError(f"cannot hash the source of '{src.name}' in {path}: "
                              f"{type(e).__name__}: {_first_line(e)}") from e
    return LoadedKernel(
        fn=obj,
        arg_names=list(obj.arg_names),
        constexpr_names=[p.name for p in obj.params if p.is_constexpr],
        default_configs=default_configs,
        heuristics=heuristics,
        source_hash=hashlib.sha256(cache_key.encode()).hexdigest(),
    )


# Per process: KernelSource -> (file identity, LoadedKernel). Avoids re-importing a kernel file
# once per config in a worker; a changed file (mtime, size or inode) is imported again.
_loaded: dict[KernelSource, tuple[tuple, LoadedKernel]] = {}


def _load_kernel_cached(src: KernelSource) -> LoadedKernel:
    try:
        st = os.stat(src.path)
        identity = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        identity = None
    hit = _loaded.get(src)
    if identity is not None and hit is not None and hit[0] == identity:
        return hit[1]
    kernel = load_kernel(src)
    _loaded[src] = (identity, kernel)
    return kernel


# --------------------------------------------------------------------------------------------
# Variants


@dataclass(frozen=True)
class VariantSpec:
    """One variant to compile.

    ``signature`` lists (name, Triton type) for every runtime parameter in declaration order;
    these are the parameters of the PTX entry. Types: ``*fp16 *bf16 *fp32 *i8 ...`` for
    pointers, ``i1 i8 i16 i32 i64 u32 u64 fp16 bf16 fp32 fp64`` for scalars.
    ``constexprs`` gives a value (int, float, bool or str) to every ``tl.constexpr`` parameter.
    It may also give a value to a runtime parameter, which then leaves the signature: this is the
    JIT's specialization (Triton's JIT makes an int argument equal to 1 a constant) and what
    lets Triton know that an inner stride is 1.
    ``divisibility`` holds indices into ``signature`` of parameters promised to be multiples of
    16 (pointers: 16-byte aligned); the code is only valid for such values.
    ``arch`` is the compute capability times ten (80, 86, 89, 90, 100: those of
    :mod:`autotune_export.cuda.targets`); 90 and 100 compile to sm_90a / sm_100a.
    ``ptx_version`` pins the PTX ISA of the output (86 means 8.6; None keeps Triton's default,
    which the CUDA 13.0 driver cannot JIT). ``num_warps``, ``num_stages``,
    ``num_ctas``, ``maxnreg`` are Triton's compile options.

    Raises ValueError on malformed fields (:class:`~autotune_export.cuda.targets.TargetError`, a
    ValueError, for an unsupported ``arch``). Lists are accepted and stored as tuples;
    divisibility is sorted."""
    kernel: KernelSource
    signature: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, object], ...]
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: int | None = None
    arch: int = 80
    ptx_version: int | None = 86
    divisibility: tuple[int, ...] = ()

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("signature", tuple((str(n), str(t)) for n, t in self.signature))
        set_("constexprs", tuple((str(n), v) for n, v in self.constexprs))
        set_("divisibility", tuple(sorted(set(self.divisibility))))
        names = [n for n, _ in self.signature] + [n for n, _ in self.constexprs]
        if len(set(names)) != len(names):
            raise ValueError(f"a parameter appears twice in the signature and constexprs: {names}")
        for name, value in self.constexprs:
            if not isinstance(value, (int, float, bool, str)):
                raise ValueError(f"constexpr {name} = {value!r}: expected int, float, bool or str")
        max_shared_memory(self.arch)  # validates arch
        for field in ("num_warps", "num_stages", "num_ctas"):
            if not isinstance(getattr(self, field), int) or getattr(self, field) < 1:
                raise ValueError(f"{field} = {getattr(self, field)!r}: expected a positive int")
        bad = [i for i in self.divisibility if not 0 <= i < len(self.signature)]
        if bad:
            raise ValueError(f"divisibility indices {bad} are outside the signature "
                             f"({len(self.signature)} parameters)")

    def key(self, source_hash: str) -> str:
        """The cache key: a sha256 hex digest over the cache format, the Triton version,
        ``source_hash`` (:attr:`LoadedKernel.source_hash`), every field of the spec except the
        kernel's file path (the output depends on the source, not on where it lives), and the
        environment variables Triton lets change its output (line info is always disabled)."""
        fields = dataclasses.asdict(self)
        fields["kernel"] = self.kernel.name
        doc = {"format": CACHE_FORMAT, "triton": triton.__version__, "source": source_hash,
               "spec": fields, "env": _compile_env()}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


@dataclass
class CompiledVariant:
    """A compiled variant. ``metadata`` holds name (the PTX entry, the Python function's name:
    the same for every variant of a kernel), num_warps (launch with this one), num_ctas,
    num_stages, shared (dynamic shared memory bytes), global_scratch_size/_align and
    profile_scratch_size/_align (bytes per program), tmem_size, arch, ptx_version,
    triton_version, hash (Triton's) and written_params: the indices into ``spec.signature`` of
    the pointer parameters the kernel may store through (from its TTIR, see
    :mod:`autotune_export.cuda.ttir`; every pointer when the TTIR cannot be analysed).
    ``cached`` is True when it came from our disk cache."""
    spec: VariantSpec
    ptx: str
    metadata: dict
    cached: bool


@dataclass
class PrunedVariant:
    """A variant that cannot run under IREE, with a one-line ``reason``."""
    spec: VariantSpec
    reason: str


def _compile_env() -> dict[str, str]:
    env = dict(get_cache_invalidating_env_vars())
    env["TRITON_DISABLE_LINE_INFO"] = "true"
    return env


def _check_spec(spec: VariantSpec, kernel: LoadedKernel) -> None:
    values = dict(spec.constexprs)
    where = f"{spec.kernel.name} in {spec.kernel.path}"
    missing = [n for n in kernel.constexpr_names if n not in values]
    if missing:
        raise ValueError(f"{where}: no value for constexpr parameter(s) {', '.join(missing)}")
    unknown = [n for n in values if n not in kernel.arg_names]
    if unknown:
        raise ValueError(f"{where}: constexprs name unknown parameter(s) {', '.join(unknown)}")
    expected = [n for n in kernel.arg_names if n not in values]
    given = [n for n, _ in spec.signature]
    if given != expected:
        raise ValueError(f"{where}: signature lists ({', '.join(given)}), "
                         f"the kernel's runtime parameters are ({', '.join(expected)})")


def _divisibility_attrs(spec: VariantSpec, kernel: LoadedKernel) -> dict:
    # ASTSource (3.9) keys attributes by a path into ALL parameters, constexprs included,
    # while spec.divisibility indexes the runtime signature.
    return {(kernel.arg_names.index(spec.signature[i][0]),): [["tt.divisibility", 16]]
            for i in spec.divisibility}


def _error_line(e: Exception) -> str:
    if isinstance(e, CompilationError):
        # "at L:C:", a source excerpt, a caret, then the message: the last line is the
        # innermost error, also when the error comes from a called JIT function.
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        where = f" (kernel line {e.node.lineno}, column {e.node.col_offset})" \
            if hasattr(e.node, "lineno") else ""
        return (lines[-1] if lines else type(e).__name__) + where
    text = str(e)
    # ptxas' own diagnostic says more than Triton's wrapper around it.
    ptxas = re.search(r"^\s*(ptxas (?:error|fatal)\s*:.*)$", text, re.MULTILINE)
    if ptxas:
        return ptxas.group(1).strip()
    first = _first_line(text)
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


_settings_lock = threading.Lock()


@contextlib.contextmanager
def _triton_settings(triton_cache_dir: str | None):
    """Triton's cache in our cache dir (a temporary one when caching is off) and no line info,
    restored on exit. Knobs are process-wide, so threads compile one at a time."""
    cache_dir = contextlib.nullcontext(triton_cache_dir) if triton_cache_dir is not None \
        else tempfile.TemporaryDirectory(prefix="autotune-export-triton-")
    with _settings_lock, knobs.cache.scope(), knobs.compilation.scope(), cache_dir as path:
        knobs.cache.dir = path
        knobs.compilation.disable_line_info = True
        yield


def _jsonable(value):
    """Metadata values as JSON can hold them (tuples/lists of plain values, else their text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def _compile_payload(spec: VariantSpec, kernel: LoadedKernel, triton_cache_dir: str | None) -> dict:
    """Compile one variant; if Triton's own cache hands back damaged output (the PTX does not
    parse), compile once more with a fresh, temporary Triton cache."""

    try:
        return _compile_payload_once(spec, kernel, triton_cache_dir)
    except ptx_mod.PtxError:
        if triton_cache_dir is None:
            raise
        with tempfile.TemporaryDirectory(prefix="autotune-export-triton-") as fresh:
            return _compile_payload_once(spec, kernel, fresh)


def _compile_payload_once(spec: VariantSpec, kernel: LoadedKernel, triton_cache_dir: str | None) -> dict:

    types = dict(spec.signature)
    signature = {n: types.get(n, "constexpr") for n in kernel.arg_names}
    options = {"num_warps": spec.num_warps, "num_stages": spec.num_stages, "num_ctas": spec.num_ctas,
               "ptx_version": spec.ptx_version, "enable_fp_fusion": True}
    if spec.maxnreg is not None:
        options["maxnreg"] = spec.maxnreg
    if os.environ.get(NO_COMPILE_ENV):
        raise CompilationForbidden(f"{NO_COMPILE_ENV} is set: this process may not compile Triton kernels "
                                   f"(kernel '{spec.kernel.name}'; the fast test suite compiles none)")
    try:
        with _triton_settings(triton_cache_dir):
            compiled = triton.compile(
                ASTSource(kernel.fn, signature, dict(spec.constexprs), _divisibility_attrs(spec, kernel)),
                target=GPUTarget("cuda", spec.arch, 32), options=options)
    except Exception as e:
        return {"kind": "pruned", "reason": f"compile error: {_error_line(e)}"}
    md = compiled.metadata
    limit = max_shared_memory(spec.arch)
    if md.shared > limit:
        return {"kind": "pruned",
                "reason": f"needs {md.shared} bytes of shared memory, sm_{spec.arch} allows at most {limit}"}
    metadata = {name: _jsonable(getattr(md, name, None)) for name in _METADATA_FIELDS}
    metadata["arch"] = md.target.arch
    ptx_text = compiled.asm["ptx"]
    # PTX that does not parse (damaged in Triton's cache) raises PtxError: _compile_payload
    # then compiles again with a fresh Triton cache.
    ptx_mod.parse_entry(ptx_text)
    # Pointer parameters the kernel may store through (ReadOnly bindings are the others);
    # computed once here so that cache hits skip the analysis.
    metadata["written_params"] = _written_params(spec, compiled.asm.get("ttir"))
    return {"kind": "compiled", "ptx": ptx_text, "metadata": metadata}


def _written_params(spec: VariantSpec, ttir_text: str | None) -> list[int]:
    """Indices into ``spec.signature`` of the pointers (and tensor descriptors) the kernel may
    write, from its TTIR; all of them when the TTIR is missing or cannot be analysed."""
    if ttir_text is not None:
        try:
            return sorted(_ttir.analyze(ttir_text).written_parameters)
        except _ttir.TtirError:
            pass
    return [i for i, (_, t) in enumerate(spec.signature) if t.startswith(("*", "tensordesc", "nvtmadesc"))]


# --------------------------------------------------------------------------------------------
# The cache


def _digest(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _entry_path(cache_dir: str | os.PathLike, key: str) -> pathlib.Path:
    return pathlib.Path(cache_dir) / "variants" / key[:2] / f"{key}.json"


def _read_entry(path: pathlib.Path, key: str) -> dict | None:
    """The payload of a valid entry, or None when it is missing, unreadable, for another key,
    or fails its checksum (truncated or edited)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key:
        return None
    payload = doc.get("payload")
    if not isinstance(payload, dict) or doc.get("sha256") != _digest(payload):
        return None
    return payload


def _write_entry(path: pathlib.Path, key: str, payload: dict) -> None:
    """Write the entry atomically (:func:`autotune_export.support.files.atomic_write`); the
    caller holds the entry's lock. Raises OSError."""
    doc = {"format": CACHE_FORMAT, "key": key, "payload": payload, "sha256": _digest(payload)}
    _files.atomic_write(path, json.dumps(doc, sort_keys=True))


def cached_artifact(cache_dir: str | os.PathLike | None, kind: str, key_material: bytes,
                    compute: Callable[[], bytes]) -> bytes:
    """Content-addressed memo for derived artifacts (ptxas checks, assembled cubins).

    ``key_material`` is hashed (sha256) into ``<cache_dir>/<kind>/<hash[:2]>/<hash>``; the file
    holds ``compute()``'s bytes followed by their sha256 (32 bytes), so a truncated or altered
    entry is recomputed (:func:`autotune_export.support.files.read_checked` /
    :func:`~autotune_export.support.files.write_checked`: written atomically under a file
    lock). ``cache_dir=None`` computes without caching. Exceptions of ``compute`` propagate and
    nothing is stored; a cache that cannot be written only warns (RuntimeWarning).
    """
    if cache_dir is None:
        return compute()
    digest = hashlib.sha256(key_material).hexdigest()
    path = pathlib.Path(cache_dir) / kind / digest[:2] / digest
    data = _files.read_checked(path)
    if data is not None:
        return data
    data = compute()
    try:
        _files.write_checked(path, data)
    except OSError as e:
        warnings.warn(f"autotune-export: cannot write cache entry {path}: {e}", RuntimeWarning)
    return data


def _result(spec: VariantSpec, payload: dict, cached: bool) -> CompiledVariant | PrunedVariant:
    if payload["kind"] == "pruned":
        return PrunedVariant(spec, payload["reason"])
    return CompiledVariant(spec, payload["ptx"], payload["metadata"], cached)


def _compile_worker(spec: VariantSpec, cache_dir: str | None) -> CompiledVariant | PrunedVariant:
    """Compile one variant (the unit of work sent to executors). With a ``cache_dir``, holds
    the entry's file lock, serves an entry another process wrote meanwhile, else compiles and
    writes the entry. ``cache_dir=None`` compiles with no cache at all."""
    kernel = _load_kernel_cached(spec.kernel)
    if cache_dir is None:
        return _result(spec, _compile_payload(spec, kernel, None), cached=False)
    key = spec.key(kernel.source_hash)
    path = _entry_path(cache_dir, key)
    with _files.locked(path):
        payload = _read_entry(path, key)
        if payload is not None:
            return _result(spec, payload, cached=True)
        payload = _compile_payload(spec, kernel, os.path.join(cache_dir, "triton"))
        try:
            _write_entry(path, key, payload)
        except OSError as e:
            warnings.warn(f"autotune-export: cannot write cache entry {path}: {e}", RuntimeWarning)
    return _result(spec, payload, cached=False)


def compile_variants(specs: Sequence[VariantSpec], *, jobs: int | None = None,
                     executor: concurrent.futures.Executor | None = None,
                     cache_dir: str | os.PathLike | None = None,
                     use_cache: bool = True,
                     progress: Callable[[int, int, CompiledVariant | PrunedVariant], None] | None = None,
                     ) -> list[CompiledVariant | PrunedVariant]:
    """Compile ``specs`` to PTX; one result per spec, in the same order.

    Pruned (PrunedVariant, with the reason) rather than compiled: ``num_ctas > 1`` (IREE
    launches no thread-block clusters; decided before compiling), a variant whose dynamic
    shared memory exceeds :func:`max_shared_memory` for its arch, and any exception raised by
    ``triton.compile`` ("compile error: ..."). Results, pruned ones included, are cached in
    ``cache_dir`` (default :func:`default_cache_dir`) unless ``use_cache`` is False; cache hits
    are served in this process without starting workers, and specs with equal keys compile once.

    Misses compile in ``executor`` when given (a ProcessPoolExecutor is best: Triton's settings
    are process-wide, so a thread pool compiles one variant at a time), else in-process when
    ``jobs == 1``, else in a new ProcessPoolExecutor of ``min(jobs, misses)`` workers
    (``jobs`` defaults to os.cpu_count()) started with the "spawn" method, so a calling script
    needs the usual ``if __name__ == "__main__":`` guard. A worker that dies yields a
    PrunedVariant ("compile worker failed: ...") that is not cached.

    Progress: misses are counted on a bar on stderr when it is a terminal, and with
    ``autotune_export.support.progress.verbosity(VERBOSE)`` (``-v``) one line per variant is printed
    (see :mod:`autotune_export.support.progress`). ``progress``, if given, is called in this process
    as ``progress(done, total, result)`` after each compiled miss, in completion order.

    Raises KernelLoadError when a kernel cannot be loaded and ValueError when a spec does not
    match its kernel's parameters (before anything is compiled)."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs = {jobs}: expected a positive int")
    specs = list(specs)
    root = os.path.abspath(cache_dir if cache_dir is not None else default_cache_dir()) if use_cache else None
    results: list[CompiledVariant | PrunedVariant | None] = [None] * len(specs)
    misses: dict[str, list[int]] = {}  # key -> indices of the specs with that key
    for i, spec in enumerate(specs):
        kernel = _load_kernel_cached(spec.kernel)
        _check_spec(spec, kernel)
        if spec.num_ctas > 1:
            results[i] = PrunedVariant(spec, f"num_ctas = {spec.num_ctas}: IREE launches no thread-block clusters")
            continue
        key = spec.key(kernel.source_hash)
        payload = _read_entry(_entry_path(root, key), key) if root is not None else None
        if payload is not None:
            results[i] = _result(spec, payload, cached=True)
            _progress.note(f"autotune-export: {_describe(results[i])}")  # -v (progress)
        else:
            misses.setdefault(key, []).append(i)

    todo = [specs[indices[0]] for indices in misses.values()]
    for indices, outcome in zip(misses.values(), _run_workers(todo, root, jobs, executor, progress)):
        for i in indices:
            results[i] = dataclasses.replace(outcome, spec=specs[i])
    return results


def _remember(outcome: CompiledVariant | PrunedVariant, cache_dir: str) -> None:
    """Write a result computed by a foreign executor's worker (e.g. a Dask worker on another
    machine, whose cache this process cannot see) into this process's cache, if missing."""
    if isinstance(outcome, PrunedVariant) and outcome.reason.startswith("compile worker failed"):
        return
    kernel = _load_kernel_cached(outcome.spec.kernel)
    key = outcome.spec.key(kernel.source_hash)
    path = _entry_path(cache_dir, key)
    if _read_entry(path, key) is not None:
        return
    if isinstance(outcome, PrunedVariant):
        payload = {"kind": "pruned", "reason": outcome.reason}
    else:
        payload = {"kind": "compiled", "ptx": outcome.ptx, "metadata": outcome.metadata}
    try:
        with _files.locked(path):
            _write_entry(path, key, payload)
    except OSError as e:
        warnings.warn(f"autotune-export: cannot write cache entry {path}: {e}", RuntimeWarning)


def _run_workers(todo: list[VariantSpec], cache_dir: str | None, jobs: int | None,
                 executor: concurrent.futures.Executor | None,
                 progress: Callable[[int, int, CompiledVariant | PrunedVariant], None] | None = None,
                 ) -> list[CompiledVariant | PrunedVariant]:
    owned = executor is None and jobs != 1 and len(todo) > 0
    if owned:
        executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs or os.cpu_count() or 1, len(todo)),
            mp_context=multiprocessing.get_context("spawn"))
    out: list[CompiledVariant | PrunedVariant | None] = [None] * len(todo)

    def failed(spec: VariantSpec, e: Exception) -> PrunedVariant:
        # The worker died or could not run (compile errors never get here).
        return PrunedVariant(spec, f"compile worker failed: {type(e).__name__}: {_first_line(e)}")

    # --- progress: a bar over the misses, one line per variant with -v (autotune_export.support.progress)
    plural = "s" if len(todo) != 1 else ""
    with _progress.Progress(len(todo), f"compiling {len(todo)} Triton variant{plural}") as bar:
        def finish(k: int, outcome: CompiledVariant | PrunedVariant) -> None:
            out[k] = outcome
            bar.advance(detail=f"autotune-export: {_describe(outcome)}")
            if progress is not None:
                progress(bar.done, len(todo), outcome)

        try:
            if executor is None:  # jobs == 1: in this process, one after the other
                for k, spec in enumerate(todo):
                    try:
                        outcome = _compile_worker(spec, cache_dir)
                    except Exception as e:
                        outcome = failed(spec, e)
                    finish(k, outcome)
            else:  # any concurrent.futures.Executor (process/thread pool, Dask's get_executor())
                futures = {executor.submit(_compile_worker, spec, cache_dir): k for k, spec in enumerate(todo)}
                for future in concurrent.futures.as_completed(futures):
                    k = futures[future]
                    try:
                        outcome = future.result()
                        if executor is not None and not owned and cache_dir is not None:
                            _remember(outcome, cache_dir)
                    except Exception as e:
                        outcome = failed(todo[k], e)
                    finish(k, outcome)
        finally:
            if owned:
                executor.shutdown(wait=True, cancel_futures=True)
    return out  # type: ignore[return-value]


def _describe(result: CompiledVariant | PrunedVariant) -> str:
    """One line about a result for ``-v``: kernel, config, arch and outcome."""
    spec = result.spec
    consts = ", ".join(f"{n}={v}" for n, v in spec.constexprs)
    opts = f"w{spec.num_warps} s{spec.num_stages}" + (f" maxnreg={spec.maxnreg}" if spec.maxnreg else "")
    what = f"{spec.kernel.name}[{consts}] {opts} sm_{spec.arch}"
    if spec.divisibility:
        what += f" div16={list(spec.divisibility)}"
    if isinstance(result, PrunedVariant):
        return f"pruned: {what}: {result.reason}"
    shared = result.metadata.get("shared", 0)
    return f"{'from cache' if result.cached else 'compiled'}: {what}: {shared} B shared"
