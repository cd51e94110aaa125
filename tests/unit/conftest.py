"""Suites: tests marked ``integration`` compile Triton kernels (or run iree-compile on the
examples); the fast suite (``AUTOTUNE_EXPORT_SUITE=fast pytest -m "not integration"``) runs the
others with Triton compilation forbidden, so a test in the wrong suite fails there instead of
slowing it down.

Cache folders: no test reads or writes the user's cache folder (``$AUTOTUNE_EXPORT_CACHE_DIR``,
``$XDG_CACHE_HOME/autotune-export`` or ``~/.cache/autotune-export``, as
:func:`autotune_export.support.paths.default_cache_dir` finds it when the session starts).
``AUTOTUNE_EXPORT_CACHE_DIR`` points at a temporary folder: one per test in the fast suite, one
per session for ``integration`` tests (they share compiled variants, as the integration suite
always has; a fresh folder per test would recompile every kernel), and one per session for
module- and session-scoped fixtures. A session folder's compiled artifacts (tests/shared_cache.py:
content-addressed entries, each written whole under a lock) are shared by all pytest-xdist
workers, and under scripts/test.sh with the integration suite's lit tests, which run at the
same time; tuning results and build records stay the session's own. An audit hook records every write
(open for writing, rename, mkdir, remove) this process makes under the user's folder, and the
test that made it fails (a subprocess inherits the temporary folder through the environment)."""

import hashlib
import os
import tempfile
import shutil
import atexit
import pathlib
import sys

import pytest

from autotune_export.support.paths import default_cache_dir

FAST = os.environ.get("AUTOTUNE_EXPORT_SUITE") == "fast"
CACHE_ENV = "AUTOTUNE_EXPORT_CACHE_DIR"

#: The user's cache folder, resolved before any test changes the environment.
REAL_CACHE = os.path.abspath(default_cache_dir())
#: Writes under REAL_CACHE seen by the audit hook (event, path), drained by each test.
_WRITES: list[tuple[str, str]] = []
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _under_real_cache(path) -> str | None:
    if isinstance(path, int) or path is None:
        return None
    try:
        full = os.path.abspath(os.fsdecode(os.fspath(path)))
    except (TypeError, ValueError):
        return None
    return full if full == REAL_CACHE or full.startswith(REAL_CACHE + os.sep) else None


def _audit(event: str, args: tuple) -> None:
    if event == "open":
        path, mode, flags = args
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS)
        paths = [path] if writes else []
    elif event in ("os.rename", "os.replace", "os.link", "os.symlink"):
        paths = list(args[:2])
    elif event in ("os.mkdir", "os.remove", "os.rmdir", "os.truncate", "os.chmod"):
        paths = [args[0]]
    else:
        return
    for p in paths:
        hit = _under_real_cache(p)
        if hit is not None:
            _WRITES.append((event, hit))


sys.addaudithook(_audit)

# Hypothesis keeps caches (constants, unicode data) in ./.hypothesis, in the checkout, even with
# database=None: point it at a temporary folder of this process, removed at exit.
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="autotune-export-hypothesis-")
atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, True)
try:
    import hypothesis.configuration

    hypothesis.configuration.set_hypothesis_home_dir(_HYPOTHESIS_HOME)
except ImportError:  # pragma: no cover - hypothesis is a test extra
    pass


def _load_shared_cache():
    """tests/shared_cache.py (shared with tests/lit/lit.cfg.py), loaded by its path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("atx_shared_cache", pathlib.Path(__file__).parents[1] / "shared_cache.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shared_cache = _load_shared_cache()


def _shared_artifacts_dir(tmp_path_factory) -> pathlib.Path:
    """Where this session's cache folders find their compiled artifacts
    (shared_cache.SHARED_ARTIFACTS): ``$AUTOTUNE_EXPORT_TEST_SHARED_DIR/compiled`` when
    scripts/test.sh set it (the integration suite's lit tests use it too), else a folder of
    this session's temporary root that every pytest-xdist worker sees."""
    if os.environ.get(shared_cache.SHARED_ENV):
        return pathlib.Path(os.environ[shared_cache.SHARED_ENV]) / "compiled"
    return _shared_build_dir(tmp_path_factory).with_name("compiled")


@pytest.fixture(scope="session", autouse=True)
def _session_cache_dir(tmp_path_factory):
    """A session-wide cache folder (module-scoped fixtures, integration tests). Its compiled
    artifacts are shared with the other pytest-xdist workers (and, under scripts/test.sh,
    with the integration suite's lit tests): a kernel that one compiled is not compiled again
    by the others."""
    saved = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(shared_cache.share_compiled(tmp_path_factory.mktemp("atx-cache"), _shared_artifacts_dir(tmp_path_factory)))
    yield os.environ[CACHE_ENV]
    if saved is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = saved


@pytest.fixture(autouse=True)
def _own_cache_dir(request, monkeypatch, _session_cache_dir):
    """Each fast test its own cache folder; fails a test that wrote into the user's."""
    if request.node.get_closest_marker("integration") is None:
        own = request.getfixturevalue("tmp_path") / "atx-cache"
        monkeypatch.setenv(CACHE_ENV, str(own))
    yield  # writes of the fixtures set up for this test count as the test's
    written, _WRITES[:] = list(_WRITES), []
    assert not written, f"the test wrote into the user's cache folder {REAL_CACHE}: {written[:5]}"


@pytest.fixture(autouse=True)
def _tune_in_process(monkeypatch):
    """Tuning in this process (``isolation="none"``) unless a test asks for a worker: a worker
    start costs seconds, and the tests of isolation (test_isolation.py) pass ``isolation=``."""
    monkeypatch.setenv("AUTOTUNE_EXPORT_ISOLATION", "none")
    yield


def _refuse(*args, **kwargs):
    raise AssertionError("this test compiles a Triton kernel: mark it @pytest.mark.integration")


@pytest.fixture(autouse=True)
def _fast_suite_compiles_nothing(request, monkeypatch):
    if FAST and request.node.get_closest_marker("integration") is None:
        from autotune_export.cuda.triton_compile import NO_COMPILE_ENV

        monkeypatch.setenv(NO_COMPILE_ENV, "1")  # workers and subprocesses
        import triton

        monkeypatch.setattr(triton, "compile", _refuse)  # direct calls in this process
    yield


def _shared_build_dir(tmp_path_factory) -> pathlib.Path:
    """This session's folder for builds that every pytest-xdist worker reads: the session's
    temporary root (the workers' ``popen-gwN`` folders are in it), else this process's."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    return base / "cpu-vmfb"


#: iree-compile's own threads off for the suite's CPU builds (``--mlir-disable-threading``): the
#: suite already keeps both cores busy (two pytest-xdist workers and lit), where MLIR's pass
#: threads only add CPU time (an llvm-cpu build of acc.mlir: 3.1 CPU-s threaded, 2.3 serial,
#: the same wall time). The module built is the same.
SERIAL_IREE_COMPILE = ["--iree-compile-arg=--mlir-disable-threading"]


@pytest.fixture(scope="session")
def cpu_vmfb(tmp_path_factory):
    """``build(source, name=None) -> Path``: the ``.vmfb`` that ``autotune-export SOURCE --emit
    vmfb --backend llvm-cpu`` writes, for ``source`` a path (tests/unit/data/...) or the text of
    a module (written to ``NAME.mlir`` first). Built once per session for each (name, text), by
    whichever pytest-xdist worker asks first, under a lock in the session's temporary root (an
    iree-compile for the CPU costs 1.5-3 CPU-seconds, and tests in several files read the same
    module); the file is read-only, as every test only reads it. Asserts that the command
    succeeds."""
    import filelock

    from autotune_export.tools import cli

    shared = _shared_build_dir(tmp_path_factory)
    shared.mkdir(exist_ok=True)

    def build(source: str | os.PathLike, name: str | None = None) -> pathlib.Path:
        if isinstance(source, os.PathLike):
            text, name = pathlib.Path(source).read_text(), name or pathlib.Path(source).stem
        else:
            text, name = source, name or "module"
        folder = shared / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        out = folder / f"{name}.vmfb"
        with filelock.FileLock(str(folder) + ".lock"):
            if not out.exists():
                folder.mkdir(exist_ok=True)
                src, partial = folder / f"{name}.mlir", folder / f"{name}.partial.vmfb"
                src.write_text(text)
                assert cli.main([str(src), "--emit", "vmfb", "--backend", "llvm-cpu", "-o", str(partial), *SERIAL_IREE_COMPILE]) == 0
                partial.chmod(0o444)
                partial.replace(out)  # whole or absent: a worker that failed leaves no .vmfb behind
        return out

    return build


def pytest_collection_modifyitems(session, config, items):
    """The test files that build a CPU ``.vmfb`` (their tests use :func:`cpu_vmfb`) first, each
    file's tests in their order: pytest-xdist (``--dist loadfile``) hands out files in this
    order, so the long ones start first and the workers finish together instead of one running
    the last long file alone. Every worker sorts the same collection the same way."""
    heavy = {item.nodeid.split("::")[0] for item in items if "cpu_vmfb" in getattr(item, "fixturenames", ())}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in heavy)  # stable: order kept within each part


def pytest_collection_finish(session):
    """The objects alive once the tests are collected (the imported modules: MLIR's bindings,
    Triton, numpy, PyTorch where a test file imports it, and the test modules) are moved out
    of the garbage collector's sight (``gc.freeze``): they live until the process ends, and a
    full collection would walk all of them again each time (2-3 CPU-seconds a pytest-xdist
    worker in the fast suite, and pytest's own collections at the end). Garbage the tests
    make is collected as before."""
    import gc

    gc.freeze()


_FROZEN_AT: list[str] = []


def pytest_runtest_setup(item):
    """At each test file's first test: the garbage of the files before collected, what they
    left alive (modules they imported: PyTorch, Triton's compiler, caches) frozen as at
    collection (:func:`pytest_collection_finish`)."""
    path = item.nodeid.split("::")[0]
    if _FROZEN_AT and _FROZEN_AT[-1] != path:
        import gc

        gc.collect()
        gc.freeze()
    _FROZEN_AT[:] = [path]


def pytest_unconfigure(config):
    """The frozen objects back in the collector's sight before the interpreter ends: frozen,
    Triton's nanobind objects outlived its module teardown and nanobind printed a "leaked"
    report at every worker's exit."""
    import gc

    gc.unfreeze()
    gc.collect()
