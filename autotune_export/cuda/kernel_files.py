"""Triton kernel files: loading a kernel by ``(file, name)`` once per process and import
architecture, what its wrappers (``triton.autotune``, ``triton.heuristics``) carry, and the
values a kernel reads that Triton's cache key leaves out (:func:`values_read`, with the
constexpr values and dtype tables in :mod:`.kernel_values`). Part of the compile stage
(:mod:`autotune_export.cuda.triton_compile` re-exports the public names)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import os
import pathlib
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Sequence

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction, KernelInterface

from autotune_export.cuda import stub_driver as _stub_driver
from autotune_export.cuda.compile_errors import first_line
from autotune_export.support.files import run_source
from autotune_export.cuda.kernel_values import (  # noqa: F401  (part of this module's API)
    ELEMENT_SIZE,
    TORCH_DTYPE,
    TRITON_DTYPE,
    config_dict,
    plain_value,
    values_read,
)
from autotune_export.ir.params import TorchDtype, TritonDtype


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
    return [name for name, obj in vars(module).items() if not name.startswith("_") and isinstance(obj, KernelInterface)]


# --------------------------------------------------------------------------------------------
# Loading kernels


@dataclass(frozen=True)
class KernelSource:
    """Where a kernel is defined: the Python file ``path`` (made absolute) and the name of the
    module-level attribute ``name`` holding the ``@triton.jit`` function, possibly wrapped in
    ``triton.autotune`` / ``triton.heuristics`` / a library's own ``KernelInterface`` objects.
    ``import_arch``: the compute capability (90 for sm_90) Triton's driver reports while the
    file is imported (:mod:`autotune_export.cuda.stub_driver`); None: 80. It is not part of
    any cache key: only the imported kernel's source is. ``embedded``: for a kernel carried in
    the module (``kernel_source(...)``, :func:`group_kernel_source`), the sha256 hex digest of
    that text, which ``VariantSpec.key`` includes; "" for a kernel file of the user."""

    path: str
    name: str
    import_arch: int | None = None
    embedded: str = ""

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


def triton_value(value):
    """The inverse of :func:`plain_value` for what Triton is given: a
    :class:`~autotune_export.ir.group.TritonDtype` becomes the ``triton.language`` dtype,
    anything else is unchanged."""
    if isinstance(value, TritonDtype):
        import triton.language as tl

        return getattr(tl, value.name)
    if isinstance(value, TorchDtype):
        try:
            import torch
        except ImportError as e:
            raise KernelLoadError(
                f"the constexpr value {value} needs torch, which this process cannot import "
                f"({first_line(e)}): Triton hands the kernel the torch dtype itself"
            ) from None
        return getattr(torch, value.name)
    return value


def _autotune_wrapper(obj: Autotuner) -> AutotuneWrapper:
    prune = {
        name: value
        for name, value in (
            ("early_config_prune", getattr(obj, "early_config_prune", None)),
            ("perf_model", getattr(obj, "perf_model", None)),
        )
        if value is not None
    }
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


#: Folder of the cache (:func:`~autotune_export.support.paths.default_cache_dir`) holding the
#: kernels carried in modules.
EMBEDDED_DIR = "kernel_sources"


def embedded_kernel_file(text: str, cache_dir: str | os.PathLike | None = None) -> tuple[str, str]:
    """``(path, digest)``: the file holding ``text``, the Python text of a ``kernel_source(...)``
    clause (:mod:`autotune_export.cuda.kernel_capture`), written once under
    ``<cache_dir>/kernel_sources/`` (default: the cache folder; a folder of the system's
    temporary directory when that cannot be written), named after ``digest``, the sha256 hex
    digest of the text. It is then imported like any kernel file (:func:`import_kernel_file`).
    Raises KernelLoadError when no folder can be written."""
    from autotune_export.support import files
    from autotune_export.support.paths import default_cache_dir

    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    bases = [
        pathlib.Path(cache_dir or default_cache_dir()),
        pathlib.Path(tempfile.gettempdir()) / f"autotune-export-{os.getuid()}",
    ]
    errors = []
    for base in bases:
        path = base / EMBEDDED_DIR / f"kernel_{digest[:32]}.py"
        try:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                files.atomic_write(path, text)
            return str(path), digest
        except OSError as e:
            errors.append(f"{path.parent}: {e.strerror or e}")
    raise KernelLoadError("cannot write the kernel_source(...) of the module to a file: " + "; ".join(errors))


def group_kernel_source(
    group, base_dir: str, import_arch: int | None = None, cache_dir: str | os.PathLike | None = None
) -> tuple[KernelSource, str, str]:
    """``(KernelSource, full path, shown)`` of the kernel of a ``triton(...)`` group
    (:class:`~autotune_export.ir.group.AutotuneGroup`): its ``kernel_source(...)`` text written
    to a file (:func:`embedded_kernel_file`; ``shown`` is that file), else the file of
    ``triton("path", ...)``, a relative path resolved in ``base_dir`` (the input's folder),
    shown as the user gave it relative to the current directory (an absolute one as written).
    The one place that says where a group's kernel is. Raises KernelLoadError."""
    path, name = group.triton
    if group.kernel_source is not None:
        full, digest = embedded_kernel_file(group.kernel_source, cache_dir)
        return KernelSource(full, name, import_arch=import_arch, embedded=digest), full, full
    full = path if os.path.isabs(path) else os.path.normpath(os.path.join(base_dir, path))
    return KernelSource(full, name, import_arch=import_arch), full, (path if os.path.isabs(path) else os.path.relpath(full))


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
                    raise KernelLoadError(
                        f"{path} is module {dotted} (package root {root}), but a different "
                        f"{dotted} ({getattr(known, '__file__', None)}) is already imported"
                    )
                sys.path.insert(0, str(root))
                try:
                    known = importlib.import_module(dotted)
                except (Exception, SystemExit) as e:
                    raise KernelLoadError(
                        f"importing {path} as {dotted} failed: {type(e).__name__}: {first_line(e)}" + _env_hint(reads)
                    ) from e
                finally:
                    with contextlib.suppress(ValueError):
                        sys.path.remove(str(root))
                if not _same_file(getattr(known, "__file__", None) or "", path):
                    raise KernelLoadError(
                        f"importing {path} as {dotted} gave {getattr(known, '__file__', None)}: "
                        f"another package {dotted.split('.')[0]} comes first on sys.path"
                    )
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
            run_source(module, path)  # from its source: no stale .pyc, no __pycache__ written
        except (Exception, SystemExit) as e:
            sys.modules.pop(module_name, None)
            raise KernelLoadError(f"importing {path} failed: {type(e).__name__}: {first_line(e)}" + _env_hint(reads)) from e
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
        raise KernelLoadError(
            f"{what} was compiled for the GPU, not interpreted: set TRITON_INTERPRET=1 before the file is imported"
        )
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
        raise KernelLoadError(f"cannot hash the source of '{src.name}' in {src.path}: {type(e).__name__}: {first_line(e)}") from e
    values_hash = hashlib.sha256(json.dumps(read).encode()).hexdigest()
    defaults = {p.name: plain_value(p.default) for p in obj.params if p.is_constexpr and getattr(p, "has_default", False)}
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


def load_kernel_cached(src: KernelSource) -> LoadedKernel:
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
