"""Ahead-of-time compilation of the configs of one Triton kernel, in parallel, with a disk cache.

One *variant* is a Triton kernel compiled for one config (constexpr values, num_warps, num_stages,
...) and one GPU architecture, to PTX. No GPU and no CUDA driver are needed: ``triton.compile`` is
called with an explicit ``GPUTarget`` and runs LLVM and the ptxas bundled with Triton. Any Triton
from 3.6 through 3.9 works: the calls into Triton's compiler go through
:mod:`autotune_export.cuda.triton_compat`, which holds what differs between those releases.

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
environment variables that change Triton's output). The source hash is Triton's own key of the
kernel (``JITFunction.cache_key``) plus the values of the globals and module attributes the kernel
reads that Triton's key leaves out (:func:`values_read`), so editing ``ACC = tl.float16`` or a
``cfg.FACTOR`` in another module compiles again; Triton's own cache lives under ours, one folder
per such set of values, so it cannot hand back the old code either. Rerunning with unchanged
inputs compiles nothing and starts no worker processes.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import ast
import dataclasses
import hashlib
import importlib.util
import inspect
import io
import json
import os
import pathlib
import re
import sys
import tempfile
import threading
import types
import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import triton
from triton.compiler.errors import CompilationError
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import DependenciesFinder, JITCallable, JITFunction, KernelInterface

from autotune_export.cuda import stub_driver as _stub_driver
from autotune_export.cuda import triton_compat as _compat
from autotune_export.cuda import ttir as _ttir
from autotune_export.cuda import workers as _workers
from autotune_export.cuda.targets import check_ptx_version
from autotune_export.cuda.targets import max_shared_memory  # noqa: F401  (part of this module's API)
from autotune_export.support import files as _files
from autotune_export.support import progress as _progress
from autotune_export.support.paths import default_cache_dir  # noqa: F401  (part of this module's API)
from autotune_export.cuda import ptx as ptx_mod
from autotune_export.ir.group import TritonDtype

__all__ = [
    "CacheDirError",
    "CompiledVariant",
    "KernelLoadError",
    "KernelSource",
    "LoadedKernel",
    "AutotuneWrapper",
    "HeuristicsWrapper",
    "LauncherWrapper",
    "config_dict",
    "plain_value",
    "triton_value",
    "PrunedVariant",
    "VariantSpec",
    "compile_variants",
    "default_cache_dir",
    "import_kernel_file",
    "load_kernel",
    "interpreted_kernel",
    "max_shared_memory",
    "values_read",
]

# Bump when the layout of a cache entry, the recipe of VariantSpec.key or the meaning of a
# metadata field changes (4: written_params from the TTIR, as signature indices; 5: updated_params; 6: addresses_from_data;
# 7: compile errors at the kernel file's line and column; 8: the source hash covers the values of the
# globals and module attributes the kernel reads, LoadedKernel.values_read; 9: read_first_params).
CACHE_FORMAT = 9

# Compiled-metadata fields copied into CompiledVariant.metadata (all JSON scalars).
_METADATA_FIELDS = _compat.METADATA_FIELDS


#: When this environment variable is set, compiling a variant raises CompilationForbidden
#: instead (cache hits still work). The fast test suite sets it to keep itself fast.
NO_COMPILE_ENV = "AUTOTUNE_EXPORT_NO_TRITON_COMPILE"


class CompilationForbidden(BaseException):
    """A variant was to be compiled while :data:`NO_COMPILE_ENV` is set. A BaseException so that
    no handler turns it into a pruned config: it reaches the caller (and fails a test)."""


class CacheDirError(Exception):
    """The variant cache's folder cannot be written (it is a file, read-only, on a full disk):
    raised by :func:`compile_variants` before it compiles anything, naming the folder. The
    message is one line."""


class KernelLoadError(Exception):
    """A kernel could not be loaded: missing file, import failure, no such attribute, or the
    attribute is not a Triton kernel. The message is one line. ``part`` says which half of
    ``triton("file.py", "name")`` is wrong (``"file"`` or ``"kernel"``, for the diagnostic's
    position); ``candidates`` are what was there instead (the ``.py`` files of the directory,
    or the module's Triton kernels), for a "did you mean"."""

    def __init__(self, message: str, *, part: str = "file", candidates: Sequence[str] = ()):
        super().__init__(message)
        self.part = part
        self.candidates = tuple(candidates)


def _kernel_names(module) -> list[str]:
    """The module-level names of ``module`` that are Triton kernels (a JIT function or a
    wrapper of one: Autotuner, Heuristics), in definition order."""
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and isinstance(obj, KernelInterface)]


# --------------------------------------------------------------------------------------------
# Loading kernels


@dataclass(frozen=True)
class KernelSource:
    """Where a kernel is defined: the Python file ``path`` (made absolute) and the name of the
    module-level attribute ``name`` holding the ``@triton.jit`` function, possibly wrapped in
    ``triton.autotune`` / ``triton.heuristics`` / a library's own ``KernelInterface`` objects.
    ``import_arch``: the compute capability (90 for sm_90) Triton's driver reports while the
    file is imported (:mod:`autotune_export.cuda.stub_driver`); None: 80. It is not part of
    any cache key: only the imported kernel's source is."""
    path: str
    name: str
    import_arch: int | None = None

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
    sha256 hex digest of the JIT function's cache key (Triton's ``JITFunction.cache_key``: the
    source of the kernel and of the JIT functions it calls, and the ``tl.constexpr`` globals
    they read) and of :attr:`values_read`. ``values_read``: what that key leaves out but the
    compiled code depends on, the value of every other global the kernel or a JIT function it
    calls reads (``ACC = tl.float16``) and of every attribute of a module they read
    (``cfg.FACTOR``), as sorted ``(name, text)`` pairs (:func:`values_read`); ``values_hash``
    their sha256 hex digest, which also names Triton's own cache folder under ours.

    ``wrappers`` lists every object between the module attribute and the JIT function, outermost
    first: :class:`AutotuneWrapper`, :class:`HeuristicsWrapper`, :class:`LauncherWrapper` (a
    library's own ``triton.KernelInterface`` keeping the kernel in ``.fn``).
    ``constexpr_defaults``: the defaults the ``def`` gives constexpr parameters.
    ``not_specialized`` / ``not_aligned``: the parameters of ``@triton.jit(do_not_specialize=...)``
    / ``do_not_specialize_on_alignment=...`` (Triton's JIT neither makes them constexpr 1 nor
    assumes them divisible by 16 / never assumes them 16-aligned). Config values
    are plain Python (``tl.constexpr`` unwrapped, a ``tl.dtype`` as
    :class:`~autotune_export.ir.group.TritonDtype`)."""
    fn: JITFunction
    arg_names: list[str]
    constexpr_names: list[str]
    default_configs: list[dict] | None
    heuristics: dict[str, Callable]
    source_hash: str
    wrappers: list = dataclasses.field(default_factory=list)
    constexpr_defaults: dict = dataclasses.field(default_factory=dict)
    not_specialized: frozenset = frozenset()
    not_aligned: frozenset = frozenset()
    values_read: tuple = ()
    values_hash: str = ""


def _first_line(text: str) -> str:
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


@dataclass(frozen=True)
class AutotuneWrapper:
    """A ``triton.autotune`` met on the way to the JIT function, as Triton's ``Autotuner``
    holds it: ``configs`` (dicts as in :attr:`LoadedKernel.default_configs`), ``key`` (argument
    names whose values key the tuning), ``prune_configs_by`` (``early_config_prune``,
    ``perf_model``, ``top_k``: those given; applied by :mod:`autotune_export.cuda.launch_model`),
    ``reset_to_zero`` / ``restore_value`` (argument names zeroed / restored around every timed
    run), ``pre_hook`` / ``post_hook`` (user hooks, or None), ``cache_results``;
    ``triton_configs``: the ``triton.Config`` objects themselves, in the order of ``configs``
    (what the pruning functions are given)."""
    configs: tuple
    key: tuple[str, ...]
    prune_configs_by: dict
    reset_to_zero: tuple[str, ...]
    restore_value: tuple[str, ...]
    pre_hook: Callable | None = None
    post_hook: Callable | None = None
    cache_results: bool = False
    triton_configs: tuple = ()


@dataclass(frozen=True)
class HeuristicsWrapper:
    """A ``triton.heuristics``: ``values`` maps a parameter to ``f(named_args) -> value``, in
    the order Triton evaluates them (each sees the values of the ones before)."""
    values: dict


@dataclass(frozen=True)
class LauncherWrapper:
    """A library's own ``triton.KernelInterface`` (or other object) holding the kernel in
    ``.fn`` (launcher caches, ``__getitem__`` wrappers): ``type_name`` is its class'
    qualified name. What it does at launch time is not known here."""
    type_name: str


def plain_value(value):
    """A constexpr value as autotune-export holds it: ``tl.constexpr`` unwrapped, a
    ``triton.language.dtype`` as :class:`~autotune_export.ir.group.TritonDtype`, anything else
    unchanged."""
    seen = 0
    while type(value).__name__ == "constexpr" and hasattr(value, "value") and seen < 8:
        value, seen = value.value, seen + 1
    dtype = TritonDtype.of(value)
    return dtype if dtype is not None else value


def triton_value(value):
    """The inverse of :func:`plain_value` for what Triton is given: a
    :class:`~autotune_export.ir.group.TritonDtype` becomes the ``triton.language`` dtype,
    anything else is unchanged."""
    if isinstance(value, TritonDtype):
        import triton.language as tl

        return getattr(tl, value.name)
    return value


#: Pointee of a signature's pointer type (``*fp16``) -> the ``triton.language`` dtype name.
TRITON_DTYPE = {
    "i1": "int1", "u1": "int1", "i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
    "u32": "uint32", "i64": "int64", "u64": "uint64", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
    "fp64": "float64", "fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "fp8e4b8": "float8e4b8",
    "fp8e5b16": "float8e5b16", "fp8e4b15": "float8e4b15",
}

#: The same pointee -> the ``torch`` dtype of the tensor a PyTorch launch passes (None: torch
#: has none; Triton's ``type_canonicalisation_dict`` in ``triton/runtime/jit.py`` maps back).
TORCH_DTYPE = {
    "i1": "bool", "u1": "bool", "i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
    "u32": "uint32", "i64": "int64", "u64": "uint64", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
    "fp64": "float64", "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz",
    "fp8e5b16": "float8_e5m2fnuz", "fp8e4b15": None,
}

#: Bytes per element of each pointee (a bool is one byte).
ELEMENT_SIZE = {
    "i1": 1, "u1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "i64": 8, "u64": 8, "fp16": 2,
    "bf16": 2, "fp32": 4, "fp64": 8, "fp8e4nv": 1, "fp8e5": 1, "fp8e4b8": 1, "fp8e5b16": 1, "fp8e4b15": 1,
}


def config_dict(c) -> dict:
    """A ``triton.Config`` (or look-alike) as :attr:`LoadedKernel.default_configs` holds it:
    ``{"kwargs": {...plain values}, "num_warps", "num_stages", "num_ctas", "maxnreg"}``
    (missing fields: Triton's defaults 4, 3, 1, None)."""
    return {"kwargs": {k: plain_value(v) for k, v in dict(c.kwargs).items()}, "num_warps": getattr(c, "num_warps", 4),
            "num_stages": getattr(c, "num_stages", 3), "num_ctas": getattr(c, "num_ctas", 1),
            "maxnreg": getattr(c, "maxnreg", None)}


def _autotune_wrapper(obj: Autotuner) -> AutotuneWrapper:
    prune = {name: value for name, value in (("early_config_prune", getattr(obj, "early_config_prune", None)),
                                             ("perf_model", getattr(obj, "perf_model", None)))
             if value is not None}
    if prune.get("perf_model") is not None:
        prune["top_k"] = getattr(obj, "configs_top_k", 1.0)
    return AutotuneWrapper(
        configs=tuple(config_dict(c) for c in obj.configs),
        key=tuple(getattr(obj, "keys", None) or ()),
        prune_configs_by=prune,
        reset_to_zero=tuple(getattr(obj, "reset_to_zero", None) or ()),
        restore_value=tuple(getattr(obj, "restore_value", None) or ()),
        pre_hook=obj.pre_hook if getattr(obj, "user_defined_pre_hook", False) else None,
        post_hook=obj.post_hook if getattr(obj, "user_defined_post_hook", False) else None,
        cache_results=bool(getattr(obj, "cache_results", False)),
        triton_configs=tuple(obj.configs),
    )


def _inner(obj):
    """The object ``obj`` wraps, when it is a wrapper: a ``KernelInterface`` (Triton's
    Autotuner, Heuristics, a library's launcher) or any object whose ``.fn`` is one. None when
    ``obj`` wraps nothing."""
    try:
        inner = getattr(obj, "fn", None)
    except Exception:
        return None
    if inner is None or isinstance(obj, JITFunction):
        return None
    if isinstance(obj, KernelInterface) or isinstance(inner, KernelInterface):
        return inner
    return None


def _unwrap(obj, what: str, terminal: type = JITFunction):
    """``(JITFunction, wrappers outermost first)``: peel every wrapper off ``obj`` (see
    :func:`_inner`) down to an instance of ``terminal`` (Triton's interpreter's
    ``InterpretedFunction`` for :func:`interpreted_kernel`). Raises KernelLoadError when the
    chain ends elsewhere or loops."""
    wrappers: list = []
    seen: set[int] = set()
    while not isinstance(obj, terminal):
        if id(obj) in seen or len(wrappers) > 64:
            raise KernelLoadError(f"{what}: its .fn chain loops")
        seen.add(id(obj))
        inner = _inner(obj)
        if inner is None:
            through = f" (reached through {' -> '.join(_wrapper_name(w) for w in wrappers)})" if wrappers else ""
            raise KernelLoadError(f"{what} is not a Triton kernel (got {type(obj).__name__}){through}")
        if isinstance(obj, Autotuner):
            wrappers.append(_autotune_wrapper(obj))
        elif isinstance(obj, Heuristics):
            wrappers.append(HeuristicsWrapper(dict(obj.values)))
        else:
            wrappers.append(LauncherWrapper(type(obj).__qualname__))
        obj = inner
    return obj, wrappers


def _wrapper_name(w) -> str:
    if isinstance(w, AutotuneWrapper):
        return "Autotuner"
    if isinstance(w, HeuristicsWrapper):
        return "Heuristics"
    return w.type_name


class _ValuesFinder(DependenciesFinder):
    """Triton's own ``DependenciesFinder`` (the visitor behind ``JITFunction.cache_key``,
    ``triton/runtime/jit.py``, 3.6 to 3.9), made to also write down the values its key leaves
    out: what it hands to ``record_reference`` under a global's name (it keeps only those
    wrapped in ``tl.constexpr`` in the key) and under an attribute read (``cfg.FACTOR``, which
    it does not keep at all), and the same in every JIT function reached (``_update_hash``).
    Which names count, and what a reference is, stay Triton's."""

    def __init__(self, fn, found: set, seen: set):
        super().__init__(name=getattr(fn, "_fn_name", fn.__name__), globals=fn.__globals__,
                         nonlocals=inspect.getclosurevars(fn.fn).nonlocals, src=fn.src)
        self._found, self._seen, self._labels = found, seen, []

    def visit_Attribute(self, node):
        self._labels.append(ast.unparse(node))
        try:
            return super().visit_Attribute(node)
        finally:
            self._labels.pop()

    def record_reference(self, val, var_dict=None, name=None):
        super().record_reference(val, var_dict, name)
        label = name if var_dict is not None else (self._labels[-1] if self._labels else None)
        if label is None or getattr(self, "visiting_arg_default_value", False) or not _is_data(val):
            return
        self._found.add((label, _value_text(val)))

    def _update_hash(self, func):
        super()._update_hash(func)
        func = getattr(func, "__func__", func)  # a bound constexpr function
        if id(func) not in self._seen and hasattr(func, "parse"):
            self._seen.add(id(func))
            _ValuesFinder(func, self._found, self._seen).visit(func.parse())


def _is_data(value) -> bool:
    """Whether Triton's code generator reads ``value`` as a constant (not a module, class,
    function, JIT function or Triton builtin)."""
    import triton.language as tl

    if value is None or isinstance(value, (types.ModuleType, type, JITCallable)):
        return False
    if getattr(value, "__triton_builtin__", False) or getattr(value, "__triton_aggregate__", False):
        return False
    return isinstance(value, tl.constexpr) or not callable(value)


def _value_text(value) -> str:
    """A value as the same text in every process: ``tl.constexpr`` unwrapped, a Triton dtype
    as ``tl.float16``, containers element by element, anything else as its type and repr (an
    object whose repr holds its address then never matches another process's: a cache miss,
    never a wrong hit)."""
    value = plain_value(value)
    if isinstance(value, TritonDtype):
        return f"tl.{value.name}"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[" + ", ".join(_value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "dict{" + ", ".join(f"{k!r}: {_value_text(v)}" for k, v in value.items()) + "}"
    return f"{type(value).__qualname__}:{value!r}"


def values_read(fn: JITFunction) -> tuple[tuple[str, str], ...]:
    """What the JIT function ``fn`` and the JIT functions it calls read that Triton's cache key
    (``fn.cache_key``) does not cover, though the compiled code depends on it: the value of
    each global they read that is not a ``tl.constexpr`` (``ACC = tl.float16``: Triton's key
    holds only the constexpr ones, and its launcher checks the others in the process that
    compiled, not across processes) and of each attribute they read from a module
    (``cfg.FACTOR``), found by Triton's own visitor (:class:`_ValuesFinder`). Sorted
    ``(name or attribute text, value text)`` pairs. Raises what ``fn.cache_key`` raises."""
    found: set = set()
    _ValuesFinder(fn, found, {id(fn)}).visit(fn.parse())
    return tuple(sorted(found))


def _package_module(path: pathlib.Path) -> tuple[str, pathlib.Path] | None:
    """``(dotted module name, directory to put on sys.path)`` when ``path`` lies in a regular
    package (its directory has an ``__init__.py``): the package root is found by walking up
    the directories that have one (and whose names are identifiers). None otherwise."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    if parts and not parts[0].isidentifier():
        return None
    d = path.parent
    while (d / "__init__.py").is_file() and d.name.isidentifier():
        parts.insert(0, d.name)
        d = d.parent
    if d == path.parent or not parts:
        return None
    return ".".join(parts), d


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


# Per process: (resolved path of a kernel file, import arch) -> (file identity, module). A file is
# executed once per process and architecture (a file that registers something at import raises when
# run twice); it is imported again only once it changed on disk (mtime, size or inode).
_modules: dict[tuple[str, int], tuple[tuple | None, object]] = {}


def _file_identity(path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def import_kernel_file(path: str | os.PathLike, import_arch: int = 80):
    """The module of the kernel file ``path``: the one loader of kernel files in
    autotune-export (:func:`load_kernel`, :func:`interpreted_kernel` and everything that loads
    a kernel go through it). The file is executed once per process for each ``import_arch``
    (the compute capability Triton's stand-in driver answers for while the file runs,
    :mod:`autotune_export.cuda.stub_driver`; a build imports its files for one, its first
    target's): the module is kept by resolved path (``os.path.realpath``) and architecture
    and served again until the file changes on disk, so a file that registers a name at import
    time (and raises the second time) loads for every kernel, group and pass of a build that
    names it. A module of a package stays the one in ``sys.modules`` (imported once). How the
    file is imported (as a module of its package, or on its own): :func:`load_kernel`. Raises
    KernelLoadError."""
    path = pathlib.Path(os.path.abspath(path))
    key = (os.path.realpath(path), import_arch)
    identity = _file_identity(key[0])
    known = _modules.get(key)
    if known is not None and identity is not None and known[0] == identity:
        return known[1]
    module = _import_module(path, import_arch)
    _modules[key] = (identity, module)
    return module


def _env_hint(reads) -> str:
    """``"; <the last GPU-related environment variable the file read>"`` for a failed import
    (:class:`~autotune_export.cuda.stub_driver.EnvironmentReads`), or "" when it read none."""
    hint = reads.hint() if reads is not None else ""
    return f"; {hint}" if hint else ""


def _import_module(path: pathlib.Path, import_arch: int):
    """Execute the kernel file ``path`` (see :func:`load_kernel`; :func:`import_kernel_file`
    calls this once per process and version of the file; a module of a package is imported
    once per process, by its dotted name). Raises KernelLoadError."""
    package = _package_module(path)
    with _stub_driver.answering_for(import_arch) as reads:
        if package is not None:
            dotted, root = package
            known = sys.modules.get(dotted)
            if known is None or not _same_file(getattr(known, "__file__", None) or "", path):
                if known is not None:
                    raise KernelLoadError(f"{path} is module {dotted} (package root {root}), but a different "
                                          f"{dotted} ({getattr(known, '__file__', None)}) is already imported")
                sys.path.insert(0, str(root))
                try:
                    known = importlib.import_module(dotted)
                except (Exception, SystemExit) as e:
                    raise KernelLoadError(f"importing {path} as {dotted} failed: {type(e).__name__}: {_first_line(e)}"
                                          + _env_hint(reads)) from e
                finally:
                    with contextlib.suppress(ValueError):
                        sys.path.remove(str(root))
                if not _same_file(getattr(known, "__file__", None) or "", path):
                    raise KernelLoadError(f"importing {path} as {dotted} gave {getattr(known, '__file__', None)}: "
                                          f"another package {dotted.split('.')[0]} comes first on sys.path")
            return known
        # One module per file and import arch (import_kernel_file keeps both), both in sys.modules.
        module_name = f"_autotune_export_kernel_{hashlib.sha256(str(path).encode()).hexdigest()[:16]}_sm{import_arch}"
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
            raise KernelLoadError(f"importing {path} failed: {type(e).__name__}: {_first_line(e)}" + _env_hint(reads)) from e
        finally:
            with contextlib.suppress(ValueError):
                sys.path.remove(str(path.parent))
        return module


def _kernel_attribute(src: KernelSource) -> tuple[object, str]:
    """``(the module attribute src.name of the imported src.path, how to name it in
    messages)``. Raises KernelLoadError."""
    path = pathlib.Path(src.path)
    if not path.is_file():
        try:
            near = sorted(p.name for p in path.parent.iterdir() if p.suffix == ".py")
        except OSError:
            near = []
        raise KernelLoadError(f"kernel file {path} does not exist", candidates=near)
    module = import_kernel_file(path, src.import_arch or 80)
    if not hasattr(module, src.name):
        raise KernelLoadError(f"{path} has no attribute '{src.name}'", part="kernel", candidates=_kernel_names(module))
    return getattr(module, src.name), f"'{src.name}' in {path}"


def interpreted_kernel(src: KernelSource):
    """The kernel ``src`` as Triton's interpreter runs it: the ``InterpretedFunction`` that
    ``@triton.jit`` makes when ``TRITON_INTERPRET=1`` is set while the file is imported (Triton
    reads the variable at decoration time), wrappers (``triton.autotune``,
    ``triton.heuristics``, launchers) peeled off as :func:`load_kernel` does. Call it in a
    process that had the variable set before importing the file (``autotune-export check``
    runs one). Raises KernelLoadError, also when the file's kernel is not interpreted."""
    from triton.runtime.interpreter import InterpretedFunction

    obj, what = _kernel_attribute(src)
    if isinstance(obj, JITFunction) or isinstance(getattr(obj, "fn", None), JITFunction):
        raise KernelLoadError(f"{what} was compiled for the GPU, not interpreted: set TRITON_INTERPRET=1 before the file is imported")
    return _unwrap(obj, what, terminal=InterpretedFunction)[0]


def load_kernel(src: KernelSource) -> LoadedKernel:
    """Import ``src.path`` and return the kernel named ``src.name``.

    A file in a regular package (its directory has an ``__init__.py``) is imported as a module
    of that package: the package root is found by walking up the ``__init__.py`` directories,
    its parent is put on ``sys.path`` while importing, and the module is imported by its dotted
    name, so relative imports (``from .utils import ...``) work; it is imported once per
    process (``sys.modules``: an already imported module of that file is reused, and a module
    of the same name from another file is an error). Any other file is imported as a fresh
    module named after a hash of its path (so two files called kernel.py do not collide),
    registered in ``sys.modules``, its directory on ``sys.path`` while it is imported, so it may
    import its neighbours; it too is executed once per process and ``import_arch``, and again
    only once it changed on disk (:func:`import_kernel_file`, through which every kernel file
    is loaded).

    While the file is imported, Triton's active driver is a stand-in that answers for compute
    capability ``src.import_arch`` (default 80): see :mod:`autotune_export.cuda.stub_driver`.
    Wrappers around the JIT function are peeled off and recorded (:attr:`LoadedKernel.wrappers`).
    Raises KernelLoadError."""
    obj, what = _kernel_attribute(src)
    try:
        obj, wrappers = _unwrap(obj, what)
    except KernelLoadError as err:  # what the name in triton(...) names is no kernel
        raise KernelLoadError(str(err), part="kernel") from None
    autotuners = [w for w in wrappers if isinstance(w, AutotuneWrapper)]
    default_configs = [dict(c) for c in autotuners[0].configs] if autotuners else None
    heuristics: dict[str, Callable] = {}
    for w in wrappers:
        if isinstance(w, HeuristicsWrapper):
            for name, fn in w.values.items():
                heuristics.pop(name, None)  # re-insert: an inner wrapper runs later
                heuristics[name] = fn
    try:
        cache_key = obj.cache_key
        read = values_read(obj)
    except Exception as e:
        raise KernelLoadError(f"cannot hash the source of '{src.name}' in {src.path}: "
                              f"{type(e).__name__}: {_first_line(e)}") from e
    values_hash = hashlib.sha256(json.dumps(read).encode()).hexdigest()
    defaults = {p.name: plain_value(p.default) for p in obj.params
                if p.is_constexpr and getattr(p, "has_default", False)}
    return LoadedKernel(
        fn=obj,
        arg_names=list(obj.arg_names),
        constexpr_names=[p.name for p in obj.params if p.is_constexpr],
        default_configs=default_configs,
        heuristics=heuristics,
        source_hash=hashlib.sha256(f"{cache_key}\n{values_hash}".encode()).hexdigest(),
        wrappers=wrappers,
        constexpr_defaults=defaults,
        not_specialized=frozenset(p.name for p in obj.params if getattr(p, "do_not_specialize", False)),
        not_aligned=frozenset(p.name for p in obj.params if getattr(p, "do_not_specialize_on_alignment", False)),
        values_read=read,
        values_hash=values_hash,
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
    ``constexprs`` gives a value (int, float, bool, str, None or a Triton dtype: a
    :class:`~autotune_export.ir.group.TritonDtype`, or a ``tl.dtype``, stored as one) to every
    ``tl.constexpr`` parameter. It may also give a value to a runtime parameter, which then
    leaves the signature: this is the JIT's specialization (Triton's JIT makes an int argument
    equal to 1 a constant, and an argument passed as None a constexpr None) and what lets
    Triton know that an inner stride is 1.
    ``divisibility`` holds indices into ``signature`` of parameters promised to be multiples of
    16 (pointers: 16-byte aligned); the code is only valid for such values.
    ``arch`` is the compute capability times ten (80, 86, 89, 90, 100: those of
    :mod:`autotune_export.cuda.targets`); 90 and 100 compile to sm_90a / sm_100a.
    ``ptx_version`` pins the PTX ISA of the output (86 means 8.6; None keeps Triton's default,
    which the CUDA 13.0 driver cannot JIT). ``num_warps``, ``num_stages``,
    ``num_ctas``, ``maxnreg`` are Triton's compile options.

    Raises ValueError on malformed fields (:class:`~autotune_export.cuda.targets.TargetError`, a
    ValueError, for an unsupported ``arch`` and for a ``ptx_version`` older than the ``arch``
    needs: :func:`~autotune_export.cuda.targets.check_ptx_version`). Lists are accepted and stored as tuples;
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
        set_("constexprs", tuple((str(n), plain_value(v)) for n, v in self.constexprs))
        set_("divisibility", tuple(sorted(set(self.divisibility))))
        names = [n for n, _ in self.signature] + [n for n, _ in self.constexprs]
        if len(set(names)) != len(names):
            raise ValueError(f"a parameter appears twice in the signature and constexprs: {names}")
        for name, value in self.constexprs:
            if value is not None and not isinstance(value, (int, float, bool, str, TritonDtype)):
                raise ValueError(f"constexpr {name} = {value!r}: expected int, float, bool, str, None or a Triton dtype")
        max_shared_memory(self.arch)  # validates arch
        check_ptx_version(self.ptx_version, self.arch)  # LLVM would abort the process
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
        environment variables Triton lets change its output (line info is always disabled).
        A Triton dtype value enters as ``{"tl": "float16"}``, None as JSON null."""
        fields = dataclasses.asdict(self)
        fields["kernel"] = self.kernel.name
        fields["constexprs"] = [[n, {"tl": v.name} if isinstance(v, TritonDtype) else v] for n, v in self.constexprs]
        doc = {"format": CACHE_FORMAT, "triton": triton.__version__, "source": source_hash,
               "spec": fields, "env": _compile_env()}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


@dataclass
class CompiledVariant:
    """A compiled variant. ``metadata`` holds name (the PTX entry, the Python function's name:
    the same for every variant of a kernel), num_warps (launch with this one), num_ctas,
    num_stages, shared (dynamic shared memory bytes), global_scratch_size/_align and
    profile_scratch_size/_align (bytes per program), tmem_size, arch, ptx_version,
    triton_version, hash (Triton's), written_params: the indices into ``spec.signature`` of
    the pointer parameters the kernel may store through (from its TTIR, see
    :mod:`autotune_export.cuda.ttir`; every pointer when the TTIR cannot be analysed) and
    updated_params: those it may update atomically (none known without the TTIR),
    read_first_params: those it loads from before storing through them (none known without
    the TTIR), and
    addresses_from_data: how it makes pointers no parameter gives (refused by
    materialize-triton-variants).
    ``cached`` is True when it came from our disk cache."""
    spec: VariantSpec
    ptx: str
    metadata: dict
    cached: bool


@dataclass
class PrunedVariant:
    """A variant that cannot run under IREE, with a one-line ``reason``. ``cacheable`` is
    False for a failure of the machine rather than of the variant (a worker that died, ptxas
    killed or crashing without a diagnostic, a file that could not be written): such a result
    is never written to the cache, so the next run compiles it again."""
    spec: VariantSpec
    reason: str
    cacheable: bool = True


def _compile_env() -> dict[str, str]:
    env = _compat.cache_invalidating_env()
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


def _divisible_args(spec: VariantSpec, kernel: LoadedKernel) -> list[int]:
    # ASTSource (3.6 to 3.9) keys attributes by a path into ALL parameters, constexprs
    # included, while spec.divisibility indexes the runtime signature.
    return [kernel.arg_names.index(spec.signature[i][0]) for i in spec.divisibility]


def _error_line(e: Exception, kernel_fn=None) -> str:
    """One line for a failed compile: for Triton's CompilationError, ``FILE:LINE:COL: message``
    of the innermost error (a call into another JIT function chains them), the position in the
    kernel's file (1-based, as MLIR diagnostics count; Triton's own ``at L:C`` counts lines from
    the ``def`` and columns from 0) when ``kernel_fn`` or a JIT function it can reach by name has
    that source, and Triton's message (the error's own text, else its cause's: Triton leaves
    ``error_message`` empty for some errors, whose text then ends in the excerpt's caret).
    ptxas errors give ptxas' diagnostic; anything else its type and first line."""
    if isinstance(e, CompilationError):
        inner = e
        while isinstance(inner.__cause__, CompilationError):
            inner = inner.__cause__
        message = getattr(inner, "error_message", None)
        if not message and inner.__cause__ is not None:
            cause = inner.__cause__
            message = f"{type(cause).__name__}: {_first_line(cause)}" if _first_line(cause) else type(cause).__name__
        if not message:
            lines = [line.strip() for line in str(inner).splitlines() if line.strip() and set(line.strip()) != {"^"}]
            message = lines[-1] if lines else type(inner).__name__
        message = _first_line(message)
        node = getattr(inner, "node", None)
        if node is None or not hasattr(node, "lineno"):
            return message
        place = _source_position(inner.src, node.lineno, node.col_offset, kernel_fn)
        return f"{place}: {message}" if place else f"{message} (kernel line {node.lineno}, column {node.col_offset})"
    text = str(e)
    if _is_ptxas_error(e):
        return _ptxas_message(text)[0]
    first = _first_line(text)
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


# One diagnostic of ptxas: "ptxas /tmp/x.ptx, line 32; error   : Unknown modifier '.instr'",
# "ptxas error   : Entry function 'k' uses too much shared data (...)", "ptxas fatal   : ..."; Triton 3.9
# runs "ptxas-blackwell" for sm_90a and later, which says so in its diagnostics.
_PTXAS_LINE = re.compile(r"^\s*ptxas[\w-]*\s+(?:\S.*?, line (?P<line>\d+); )?(?P<severity>error|fatal|warning)\s*:\s*(?P<message>.*?)\s*$",
                         re.MULTILINE)
_PTXAS_ABORTED = "Ptx assembly aborted due to errors"


def _is_ptxas_error(e: BaseException) -> bool:
    """Triton's ``PTXASError`` (3.6 to 3.9: ``triton.runtime.errors``; its text holds ptxas'
    stderr after "`ptxas` stderr:")."""
    return type(e).__name__ == "PTXASError"


def _printed_ptx(printed: str, error: str) -> str | None:
    """The PTX in what Triton printed for a failed ptxas run (3.6 to 3.9: a rule of ``=``,
    the PTXASError's text, a blank line, the PTX, a rule), or None."""
    start = printed.find(error) if error else -1
    if start < 0:
        return None
    rest = printed[start + len(error):]
    end = rest.find("\n" + "=" * 64)
    return rest[:end].strip("\n") if end >= 0 else None


def _ptxas_message(text: str, ptx: str | None = None) -> tuple[str, bool]:
    """``(one line, whether it is the variant's fault)`` for the text of Triton's PTXASError.

    ptxas ends every failed assembly with "ptxas fatal : Ptx assembly aborted due to errors";
    what went wrong is in the ``error`` lines before it (and ``fatal`` ones that name a line of
    the PTX: "Unsupported .version 7.9"), which name the line of the PTX (their file is a
    temporary one, left out): the first is given, with how many more there are, and the line
    itself when ``ptx`` (the text ptxas was given) has it. Such errors are a property of the
    PTX (cacheable). Without one (ptxas killed, crashed, out of memory, or a fatal error of its
    own, ``returncode`` in Triton's first line), the failure is the machine's, not cached."""
    found = [m for m in _PTXAS_LINE.finditer(text) if m.group("message") != _PTXAS_ABORTED]
    errors = [m for m in found if m.group("severity") == "error" or (m.group("severity") == "fatal" and m.group("line"))]
    if errors:
        first = errors[0]
        where = ""
        if first.group("line"):
            number = int(first.group("line"))
            lines = ptx.splitlines() if ptx else []
            quoted = lines[number - 1].strip() if 0 < number <= len(lines) else ""
            where = f" (PTX line {number}: {quoted})" if quoted else f" (PTX line {number})"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"ptxas {first.group('severity')}: {first.group('message')}{where}{more}", True
    fatal = [m for m in found if m.group("severity") == "fatal"]
    if fatal:
        return f"ptxas fatal: {fatal[0].group('message')}", False
    return f"ptxas failed: {_first_line(text)}", False


def _failure(e: Exception, kernel_fn=None, printed: str = "") -> tuple[str, bool]:
    """``(reason, cacheable)`` for an exception of ``triton.compile``: the kernel's fault
    (Triton's front end, an MLIR or LLVM pass, ptxas' diagnostics of the PTX) is cacheable,
    the machine's is not: an OSError (ptxas missing, a file that cannot be written, a full
    disk), MemoryError, a subprocess error, ptxas failing without a diagnostic. ``printed``:
    what Triton printed meanwhile (for a ptxas failure, its error and the PTX: the line a
    ptxas error names is quoted from it)."""
    import subprocess

    if _is_ptxas_error(e):
        text = getattr(e, "error_message", None) or str(e)  # PTXASError's str() adds a prefix
        message, cacheable = _ptxas_message(text, _printed_ptx(printed, text))
    else:
        message = _error_line(e, kernel_fn)
        cacheable = not isinstance(e, (OSError, MemoryError, subprocess.SubprocessError))
    reason = f"compile error: {_compat.explain_compile_error(message)}"
    if not cacheable:
        reason += " (a failure of this machine, not of the kernel: not cached)"
    return reason, cacheable


def _source_position(src: str | None, lineno: int, col: int, kernel_fn) -> str | None:
    """``FILE:LINE:COL`` in the file of the JIT function whose source is ``src`` (the kernel,
    or a JIT function among its module's globals), for Triton's ``lineno`` (1 = the ``def``)
    and 0-based ``col`` in that source; None when none has it."""
    if kernel_fn is None or src is None:
        return None
    import inspect

    candidates = [kernel_fn] + [v for v in getattr(kernel_fn.fn, "__globals__", {}).values() if isinstance(v, JITFunction)]
    for jit in candidates:
        if getattr(jit, "src", None) != src:
            continue
        try:
            lines, start = inspect.getsourcelines(jit.fn)
            path = inspect.getsourcefile(jit.fn)
        except (OSError, TypeError):
            return None
        offset = next((i for i, line in enumerate(lines) if re.match(r"\s*def\s", line)), 0)
        indent = len(lines[offset]) - len(lines[offset].lstrip())
        if path and not os.path.relpath(path).startswith(".."):
            path = os.path.relpath(path)
        return f"{path}:{start + offset + lineno - 1}:{col + indent + 1}"
    return None


_settings_lock = threading.Lock()


@contextlib.contextmanager
def _triton_settings(triton_cache_dir: str | None):
    """Triton's cache in our cache dir (a temporary one when caching is off) and no line info,
    restored on exit. Knobs are process-wide, so threads compile one at a time."""
    cache_dir = contextlib.nullcontext(triton_cache_dir) if triton_cache_dir is not None \
        else tempfile.TemporaryDirectory(prefix="autotune-export-triton-")
    with _settings_lock, cache_dir as path, _compat.compile_settings(path):
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
        # Triton prints a failed ptxas run's PTX and log to stdout, where our output may go
        # (-o -): kept out of it (the reason says what ptxas said).
        printed = io.StringIO()
        with _triton_settings(triton_cache_dir), contextlib.redirect_stdout(printed):
            compiled = _compat.compile_ast(kernel.fn, signature, {n: triton_value(v) for n, v in spec.constexprs},
                                           _divisible_args(spec, kernel), spec.arch, options)
    except Exception as e:
        reason, cacheable = _failure(e, kernel.fn, printed.getvalue())
        return {"kind": "pruned", "reason": reason, **({} if cacheable else {"cacheable": False})}
    if printed.getvalue():
        # What the kernel printed while compiling (tl.static_print) is the author's: to stderr.
        sys.stderr.write(printed.getvalue())
    md = compiled.metadata
    limit = max_shared_memory(spec.arch)
    if md.shared > limit:
        return {"kind": "pruned",
                "reason": f"needs {md.shared} bytes of shared memory, sm_{spec.arch} allows at most {limit}"}
    metadata = {name: _jsonable(value) for name, value in _compat.metadata(compiled).items()}
    ptx_text = compiled.asm["ptx"]
    # PTX that does not parse (damaged in Triton's cache) raises PtxError: _compile_payload
    # then compiles again with a fresh Triton cache.
    ptx_mod.parse_entry(ptx_text)
    # Pointer parameters the kernel may store through (ReadOnly bindings are the others);
    # computed once here so that cache hits skip the analysis.
    (metadata["written_params"], metadata["updated_params"],
     metadata["addresses_from_data"], metadata["read_first_params"]) = _accessed_params(spec, compiled.asm.get("ttir"))
    return {"kind": "compiled", "ptx": ptx_text, "metadata": metadata}


def _accessed_params(spec: VariantSpec, ttir_text: str | None) -> tuple[list[int], list[int], list[str], list[int]]:
    """``(written, updated, addresses_from_data, read_first)``: indices into ``spec.signature``
    of the pointers (and tensor descriptors) the kernel may write, and may update atomically,
    how it makes pointers from data, and the pointers it loads from before storing through them
    (:class:`autotune_export.cuda.ttir.WrittenParams`), from its TTIR; every pointer written,
    none known updated or read first and nothing known made when the TTIR is missing or cannot
    be analysed."""
    if ttir_text is not None:
        try:
            found = _ttir.analyze(ttir_text)
            return (sorted(found.written_parameters), sorted(found.updated_parameters), list(found.addresses_from_data),
                    sorted(found.read_first_parameters))
        except _ttir.TtirError:
            pass
    every = [i for i, (_, t) in enumerate(spec.signature) if t.startswith(("*", "tensordesc", "nvtmadesc"))]
    return every, [], [], []


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
        return PrunedVariant(spec, payload["reason"], payload.get("cacheable", True))
    return CompiledVariant(spec, payload["ptx"], payload["metadata"], cached)


def _triton_cache_dir(cache_dir: str, kernel: LoadedKernel) -> str:
    """Triton's own cache under ours: ``<cache_dir>/triton/<values_hash[:16]>``. Triton keys
    its entries by ``JITFunction.cache_key``, which leaves out the values in
    :attr:`LoadedKernel.values_read`; one folder per set of those values keeps it from serving
    code compiled with other ones."""
    return os.path.join(cache_dir, "triton", kernel.values_hash[:16])


def _compile_worker(spec: VariantSpec, cache_dir: str | None) -> CompiledVariant | PrunedVariant:
    """Compile one variant (the unit of work sent to executors). With a ``cache_dir``, holds
    the entry's file lock, serves an entry another process wrote meanwhile, else compiles and
    writes the entry. ``cache_dir=None`` compiles with no cache at all."""
    kernel = _load_kernel_cached(spec.kernel)
    if cache_dir is None:
        return _result(spec, _compile_payload(spec, kernel, None), cached=False)
    key = spec.key(kernel.source_hash)
    path = _entry_path(cache_dir, key)
    with contextlib.ExitStack() as lock:
        try:
            lock.enter_context(_files.locked(path))
        except OSError as e:  # the folder stopped being writable since compile_variants checked it
            warnings.warn(f"autotune-export: cannot lock cache entry {path}: {e}; compiling without the cache",
                          RuntimeWarning)
            return _result(spec, _compile_payload(spec, kernel, None), cached=False)
        payload = _read_entry(path, key)
        if payload is not None:
            return _result(spec, payload, cached=True)
        payload = _compile_payload(spec, kernel, _triton_cache_dir(cache_dir, kernel))
        if payload.get("cacheable", True):
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
    ``triton.compile`` ("compile error: ...": Triton's message at the kernel's line, ptxas' own
    error with the PTX line it names). Results, pruned ones included, are cached in
    ``cache_dir`` (default :func:`default_cache_dir`) unless ``use_cache`` is False, except
    failures of the machine rather than of the variant (``PrunedVariant.cacheable`` False: ptxas
    killed or failing without a diagnostic, an OSError); cache hits are served in this process
    without starting workers, and specs with equal keys compile once. What Triton prints while
    compiling (its dump of a PTX that ptxas rejects) is kept off stdout.

    Misses compile in ``executor`` when given (a ProcessPoolExecutor is best: Triton's settings
    are process-wide, so a thread pool compiles one variant at a time), else in-process when
    ``jobs == 1`` or there is one miss, else in ``min(jobs, misses)`` processes: this one and a
    new ProcessPoolExecutor of ``min(jobs, misses) - 1`` workers (``jobs`` defaults to
    os.cpu_count()) started with the "spawn" method, so a calling script needs the usual
    ``if __name__ == "__main__":`` guard. The workers take the variants longest first (a guess
    from the tile sizes), this process the shortest ones no worker has started. A worker that
    dies yields a PrunedVariant ("compile worker failed: ...") that is not cached; a crash
    of Triton in this process (as with ``jobs == 1``) ends it.

    Progress: misses are counted on a bar on stderr when it is a terminal, and with
    ``autotune_export.support.progress.verbosity(VERBOSE)`` (``-v``) one line per variant is printed
    (see :mod:`autotune_export.support.progress`). ``progress``, if given, is called in this process
    as ``progress(done, total, result)`` after each compiled miss, in completion order.

    Raises KernelLoadError when a kernel cannot be loaded, ValueError when a spec does not
    match its kernel's parameters or ``jobs`` is not a positive int, and CacheDirError when
    there are misses and the cache folder cannot be written (before anything is compiled)."""
    _workers.check_jobs(jobs)
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
    if todo and root is not None:
        _check_writable(root)
    for indices, outcome in zip(misses.values(), _run_workers(todo, root, jobs, executor, progress)):
        for i in indices:
            results[i] = dataclasses.replace(outcome, spec=specs[i])
    return results


def _check_writable(root: str) -> None:
    """Raise CacheDirError unless a file can be made in ``<root>/variants`` (made if missing):
    a cache that cannot take the results would otherwise fail every variant's compilation."""
    folder = pathlib.Path(root) / "variants"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".writable-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise CacheDirError(f"the variant cache folder {root} cannot be written ({e.strerror or e}): give a writable "
                            "one (--cache-dir, AUTOTUNE_EXPORT_CACHE_DIR) or build without the cache (--no-cache)") from None


def _remember(outcome: CompiledVariant | PrunedVariant, cache_dir: str) -> None:
    """Write a result computed by a foreign executor's worker (e.g. a Dask worker on another
    machine, whose cache this process cannot see) into this process's cache, if missing."""
    if isinstance(outcome, PrunedVariant) and not outcome.cacheable:
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


def _cost(spec: VariantSpec) -> tuple:
    """A guess at how long ``spec`` takes to compile, to start the long ones first (the
    last to finish then are short): the product of its integer constexprs (tile sizes),
    then num_warps * num_stages, then fewer divisibility hints first (a plain variant's
    scalar code is longer to assemble). Only the order of compilation depends on it."""
    size = 1
    for _, v in spec.constexprs:
        if isinstance(v, int) and not isinstance(v, bool) and 1 < v <= 1 << 20:
            size *= v
    return (size, spec.num_warps * spec.num_stages, -len(spec.divisibility))


def _run_workers(todo: list[VariantSpec], cache_dir: str | None, jobs: int | None,
                 executor: concurrent.futures.Executor | None,
                 progress: Callable[[int, int, CompiledVariant | PrunedVariant], None] | None = None,
                 ) -> list[CompiledVariant | PrunedVariant]:
    # With our own pool, this process is one of the `jobs` compilers: it starts jobs - 1
    # workers (none for a single miss) and compiles too, taking the cheapest variants the
    # workers have not started, so no core waits for a worker's start-up (Python, Triton and
    # the kernel imported again) while this process, which has them, sits idle. Workers that
    # _workers.start started ahead are used (and kept) when they are as many.
    n = _workers.count(jobs)
    standby = _workers.standby(n) if executor is None and n > 0 else None
    owned = executor is None and n > 0 and (len(todo) > 1 or standby is not None)
    workers = min(n, len(todo) - 1) if standby is None else min(n, len(todo))
    if owned:
        executor = standby or _workers.new_pool(workers)
    out: list[CompiledVariant | PrunedVariant | None] = [None] * len(todo)

    def failed(spec: VariantSpec, e: Exception) -> PrunedVariant:
        # The worker died or could not run (compile errors never get here).
        return PrunedVariant(spec, f"compile worker failed: {type(e).__name__}: {_first_line(e)}", cacheable=False)

    def here(k: int) -> CompiledVariant | PrunedVariant:
        try:
            return _compile_worker(todo[k], cache_dir)
        except Exception as e:
            return failed(todo[k], e)

    # --- progress: a bar over the misses, one line per variant with -v (autotune_export.support.progress)
    plural = "s" if len(todo) != 1 else ""
    with _progress.Progress(len(todo), f"compiling {len(todo)} Triton variant{plural}") as bar:
        def finish(k: int, outcome: CompiledVariant | PrunedVariant) -> None:
            out[k] = outcome
            bar.advance(detail=f"autotune-export: {_describe(outcome)}")
            if progress is not None:
                progress(bar.done, len(todo), outcome)

        try:
            if executor is None:  # jobs == 1 or one miss: in this process, one after the other
                for k in range(len(todo)):
                    finish(k, here(k))
            else:  # any concurrent.futures.Executor (process/thread pool, Dask's get_executor())
                order = sorted(range(len(todo)), key=lambda k: _cost(todo[k]), reverse=True)
                with _workers.without_main() if owned else contextlib.nullcontext():  # workers start on submit
                    futures = {executor.submit(_compile_worker, todo[k], cache_dir): k for k in order}
                queue = list(futures)  # longest first: the workers take them from the front
                left = set(queue)
                broken: list = []

                def collect(future) -> None:
                    k = futures[future]
                    try:
                        outcome = future.result()
                        if not owned and cache_dir is not None:
                            _remember(outcome, cache_dir)
                    except Exception as e:
                        # The worker could not run it (it died, or it could not import the
                        # kernel file that this process imported: a module that only imports
                        # after the caller set something up, a remote worker without the
                        # file). Compiling is deterministic, so this process compiles it
                        # instead: a config is never dropped for a worker's sake.
                        outcome = here(k)
                        if isinstance(outcome, PrunedVariant) and outcome.reason.startswith("compile worker failed"):
                            outcome = failed(todo[k], e)
                        if standby is not None and isinstance(e, concurrent.futures.BrokenExecutor):
                            broken.append(e)
                    left.discard(future)
                    finish(k, outcome)

                if owned:
                    # Take from the back of the queue what no worker has started (a cancelled
                    # future is one); the first `workers` stay for the workers.
                    for future in reversed(queue[workers:]):
                        for f in [f for f in left if f.done() and not f.cancelled()]:
                            collect(f)
                        if not future.cancel():
                            break  # started: so are the ones before it
                        left.discard(future)
                        finish(futures[future], here(futures[future]))
                for future in concurrent.futures.as_completed(list(left)):
                    collect(future)
                if broken:
                    _workers.stop()  # a pool that lost a worker is not kept
        except BaseException:
            if standby is not None:
                _workers.stop()  # nor one whose work was interrupted
            raise
        finally:
            if owned and standby is None:
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
