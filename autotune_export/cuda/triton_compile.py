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
import dataclasses
import io
import os
import sys
import tempfile
import threading
import warnings
from typing import Callable, Sequence

from autotune_export.cuda import triton_compat as _compat
from autotune_export.cuda import ttir as _ttir
from autotune_export.cuda import workers as _workers
from autotune_export.cuda.targets import max_shared_memory  # noqa: F401  (part of this module's API)
from autotune_export.support import files as _files
from autotune_export.support import progress as _progress
from autotune_export.support.paths import default_cache_dir  # noqa: F401  (part of this module's API)
from autotune_export.cuda import ptx as ptx_mod
from autotune_export.cuda.compile_errors import failure, first_line
from autotune_export.cuda.kernel_files import (  # noqa: F401  (part of this module's API)
    AutotuneWrapper,
    HeuristicsWrapper,
    KernelLoadError,
    KernelSource,
    LauncherWrapper,
    LoadedKernel,
    ELEMENT_SIZE,
    EMBEDDED_DIR,
    TORCH_DTYPE,
    TRITON_DTYPE,
    config_dict,
    embedded_kernel_file,
    group_kernel_source,
    import_kernel_file,
    interpreted_kernel,
    load_kernel,
    load_kernel_cached,
    plain_value,
    triton_value,
    values_read,
)
from autotune_export.cuda.variant_spec import CompiledVariant, PrunedVariant, VariantSpec
from autotune_export.cuda.variant_cache import (  # noqa: F401  (part of this module's API)
    CACHE_FORMAT,
    CacheDirError,
    cached_artifact,
    check_writable,
    entry_path,
    read_entry,
    write_entry,
)

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
    "embedded_kernel_file",
    "group_kernel_source",
    "load_kernel",
    "interpreted_kernel",
    "max_shared_memory",
    "values_read",
]


# Compiled-metadata fields copied into CompiledVariant.metadata (all JSON scalars).
_METADATA_FIELDS = _compat.METADATA_FIELDS


#: When this environment variable is set, compiling a variant raises CompilationForbidden
#: instead (cache hits still work). The fast test suite sets it to keep itself fast.
NO_COMPILE_ENV = "AUTOTUNE_EXPORT_NO_TRITON_COMPILE"


class CompilationForbidden(BaseException):
    """A variant was to be compiled while :data:`NO_COMPILE_ENV` is set. A BaseException so that
    no handler turns it into a pruned config: it reaches the caller (and fails a test)."""


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
        raise ValueError(
            f"{where}: signature lists ({', '.join(given)}), the kernel's runtime parameters are ({', '.join(expected)})"
        )


def _divisible_args(spec: VariantSpec, kernel: LoadedKernel) -> list[int]:
    # ASTSource (3.6 to 3.9) keys attributes by a path into ALL parameters, constexprs
    # included, while spec.divisibility indexes the runtime signature.
    return [kernel.arg_names.index(spec.signature[i][0]) for i in spec.divisibility]


_settings_lock = threading.Lock()


@contextlib.contextmanager
def _triton_settings(triton_cache_dir: str | None):
    """Triton's cache in our cache dir (a temporary one when caching is off) and no line info,
    restored on exit. Knobs are process-wide, so threads compile one at a time."""
    cache_dir = (
        contextlib.nullcontext(triton_cache_dir)
        if triton_cache_dir is not None
        else tempfile.TemporaryDirectory(prefix="autotune-export-triton-")
    )
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
    options = {
        "num_warps": spec.num_warps,
        "num_stages": spec.num_stages,
        "num_ctas": spec.num_ctas,
        "ptx_version": spec.ptx_version,
        "enable_fp_fusion": True,
    }
    if spec.maxnreg is not None:
        options["maxnreg"] = spec.maxnreg
    if os.environ.get(NO_COMPILE_ENV):
        raise CompilationForbidden(
            f"{NO_COMPILE_ENV} is set: this process may not compile Triton kernels "
            f"(kernel '{spec.kernel.name}'; the fast test suite compiles none)"
        )
    try:
        # Triton prints a failed ptxas run's PTX and log to stdout, where our output may go
        # (-o -): kept out of it (the reason says what ptxas said).
        printed = io.StringIO()
        with _triton_settings(triton_cache_dir), contextlib.redirect_stdout(printed):
            compiled = _compat.compile_ast(
                kernel.fn,
                signature,
                {n: triton_value(v) for n, v in spec.constexprs},
                _divisible_args(spec, kernel),
                spec.arch,
                options,
            )
    except Exception as e:
        reason, cacheable = failure(e, kernel.fn, printed.getvalue())
        return {"kind": "pruned", "reason": reason, **({} if cacheable else {"cacheable": False})}
    if printed.getvalue():
        # What the kernel printed while compiling (tl.static_print) is the author's: to stderr.
        sys.stderr.write(printed.getvalue())
    md = compiled.metadata
    limit = max_shared_memory(spec.arch)
    if md.shared > limit:
        return {"kind": "pruned", "reason": f"needs {md.shared} bytes of shared memory, sm_{spec.arch} allows at most {limit}"}
    metadata = {name: _jsonable(value) for name, value in _compat.metadata(compiled).items()}
    ptx_text = compiled.asm["ptx"]
    # PTX that does not parse (damaged in Triton's cache) raises PtxError: _compile_payload
    # then compiles again with a fresh Triton cache.
    ptx_mod.parse_entry(ptx_text)
    # Pointer parameters the kernel may store through (ReadOnly bindings are the others);
    # computed once here so that cache hits skip the analysis.
    (metadata["written_params"], metadata["updated_params"], metadata["addresses_from_data"], metadata["read_first_params"]) = (
        _accessed_params(spec, compiled.asm.get("ttir"))
    )
    metadata["n_regs"], metadata["n_spills"] = _register_usage(compiled.asm.get("cubin"), md.name)
    return {"kind": "compiled", "ptx": ptx_text, "metadata": metadata}


def _register_usage(cubin: bytes | None, name: str) -> tuple[int | None, int | None]:
    """``(n_regs, n_spills)`` of entry ``name`` in the cubin ptxas made of the variant inside
    ``triton.compile`` (the numbers Triton's ``CompiledKernel`` reads from the driver when it
    loads, here read from the cubin with no GPU); ``(None, None)`` when they cannot be read."""
    from autotune_export.cuda import resources

    if not cubin:
        return None, None
    try:
        usage = resources.cubin_resources(cubin)
    except resources.ResourceError:
        return None, None
    found = usage.get(name) or (next(iter(usage.values())) if len(usage) == 1 else None)
    return (found.registers, found.spills) if found is not None else (None, None)


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
            return (
                sorted(found.written_parameters),
                sorted(found.updated_parameters),
                list(found.addresses_from_data),
                sorted(found.read_first_parameters),
            )
        except _ttir.TtirError:
            pass
    every = [i for i, (_, t) in enumerate(spec.signature) if t.startswith(("*", "tensordesc", "nvtmadesc"))]
    return every, [], [], []


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
    kernel = load_kernel_cached(spec.kernel)
    if cache_dir is None:
        return _result(spec, _compile_payload(spec, kernel, None), cached=False)
    key = spec.key(kernel.source_hash)
    path = entry_path(cache_dir, key)
    with contextlib.ExitStack() as lock:
        try:
            lock.enter_context(_files.locked(path))
        except OSError as e:  # the folder stopped being writable since compile_variants checked it
            warnings.warn(f"autotune-export: cannot lock cache entry {path}: {e}; compiling without the cache", RuntimeWarning)
            return _result(spec, _compile_payload(spec, kernel, None), cached=False)
        payload = read_entry(path, key)
        if payload is not None:
            return _result(spec, payload, cached=True)
        payload = _compile_payload(spec, kernel, _triton_cache_dir(cache_dir, kernel))
        if payload.get("cacheable", True):
            try:
                write_entry(path, key, payload)
            except OSError as e:
                warnings.warn(f"autotune-export: cannot write cache entry {path}: {e}", RuntimeWarning)
    return _result(spec, payload, cached=False)


def compile_variants(
    specs: Sequence[VariantSpec],
    *,
    jobs: int | None = None,
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
        kernel = load_kernel_cached(spec.kernel)
        _check_spec(spec, kernel)
        if spec.num_ctas > 1:
            results[i] = PrunedVariant(spec, f"num_ctas = {spec.num_ctas}: IREE launches no thread-block clusters")
            continue
        key = spec.key(kernel.source_hash)
        payload = read_entry(entry_path(root, key), key) if root is not None else None
        if payload is not None:
            results[i] = _result(spec, payload, cached=True)
            _progress.note(f"autotune-export: {_describe(results[i])}")  # -v (progress)
        else:
            misses.setdefault(key, []).append(i)

    todo = [specs[indices[0]] for indices in misses.values()]
    if todo and root is not None:
        check_writable(root)
    for indices, outcome in zip(misses.values(), _run_workers(todo, root, jobs, executor, progress)):
        for i in indices:
            results[i] = dataclasses.replace(outcome, spec=specs[i])
    return results


def _remember(outcome: CompiledVariant | PrunedVariant, cache_dir: str) -> None:
    """Write a result computed by a foreign executor's worker (e.g. a Dask worker on another
    machine, whose cache this process cannot see) into this process's cache, if missing."""
    if isinstance(outcome, PrunedVariant) and not outcome.cacheable:
        return
    kernel = load_kernel_cached(outcome.spec.kernel)
    key = outcome.spec.key(kernel.source_hash)
    path = entry_path(cache_dir, key)
    if read_entry(path, key) is not None:
        return
    if isinstance(outcome, PrunedVariant):
        payload = {"kind": "pruned", "reason": outcome.reason}
    else:
        payload = {"kind": "compiled", "ptx": outcome.ptx, "metadata": outcome.metadata}
    try:
        with _files.locked(path):
            write_entry(path, key, payload)
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


def _run_workers(
    todo: list[VariantSpec],
    cache_dir: str | None,
    jobs: int | None,
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
        return PrunedVariant(spec, f"compile worker failed: {type(e).__name__}: {first_line(e)}", cacheable=False)

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
