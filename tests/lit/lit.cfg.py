# lit configuration for autotune-export's FileCheck tests.
# Run with:  lit -v tests/lit                         (every test)
#            lit -v tests/lit --param suite=fast      (no Triton compilation; the CLI through cli_server.py)
#            lit -v tests/lit --param suite=integration
# A test that compiles Triton kernels (or runs iree-compile on the examples) says
# `// REQUIRES: integration`; the fast suite runs the others with Triton compilation forbidden
# (AUTOTUNE_EXPORT_NO_TRITON_COMPILE), so a test in the wrong suite fails there.
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from suite_format import SuiteTest  # noqa: E402

SUITE = lit_config.params.get("suite", "all")
if SUITE not in ("all", "fast", "integration"):
    lit_config.fatal(f"--param suite={SUITE}: expected all, fast or integration")


config.name = "autotune-export"
config.test_format = SuiteTest(SUITE)
if SUITE != "fast":
    config.available_features.add("integration")
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "lit.cfg.py", "suite_format.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
for var in ("HOME", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["PYTHONUNBUFFERED"] = "1"
if SUITE == "fast":
    config.environment["AUTOTUNE_EXPORT_NO_TRITON_COMPILE"] = "1"
# Compiled variants: never the user's cache folder ($AUTOTUNE_EXPORT_CACHE_DIR is not passed on).
# The integration tests share one of this checkout's (a kernel compiled once); each fast test
# gets its own, made afresh (suite_format.SuiteTest.execute). Under scripts/test.sh
# ($AUTOTUNE_EXPORT_TEST_SHARED_DIR, a folder it makes afresh), the integration tests' folder
# is made in there, its compiled artifacts shared with the pytest half running at the same
# time (tests/shared_cache.py: what is shared and why that is safe).
cache_dir = os.path.join(config.test_exec_root, "cache")
shared_dir = os.environ.get("AUTOTUNE_EXPORT_TEST_SHARED_DIR")  # shared_cache.SHARED_ENV
if shared_dir and SUITE != "fast":
    cache_dir = os.path.join(shared_dir, "lit-cache")
    if not os.path.isdir(cache_dir):
        import importlib.util

        spec = importlib.util.spec_from_file_location("atx_shared_cache", os.path.join(os.path.dirname(__file__), "..", "shared_cache.py"))
        shared_cache = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(shared_cache)
        shared_cache.share_compiled(cache_dir, os.path.join(shared_dir, "compiled"))
config.environment["AUTOTUNE_EXPORT_CACHE_DIR"] = cache_dir

# Both suites run `autotune-export` and FileCheck through a fork server that imports them once
# (cli_server.py: each command is a child forked from it, running the console script's
# `sys.exit(main())` with its own argv, folder, environment and streams); the Python start and
# the imports are most of a fast test's time, and in the integration suite (about 100 commands)
# also Triton's import and its key of its installation (a sha256 of libtriton.so), which the
# server computes once. `--param cli=installed` runs the installed commands (the console
# script itself; CI's quick start and example builds, and test_readme_tutorial, run it too).
CLI = lit_config.params.get("cli", "server")
if CLI not in ("server", "installed"):
    lit_config.fatal(f"--param cli={CLI}: expected server or installed")
if CLI == "server":
    import atexit
    import shutil
    import subprocess
    import tempfile

    server_dir = tempfile.mkdtemp(prefix="atx-lit-")  # a short path: a socket's is at most 107 bytes
    server_py = os.path.join(os.path.dirname(__file__), "cli_server.py")
    socket_path = os.path.join(server_dir, "cli.sock")
    # name: (MODULE:FUNCTION, the program's argv[0]); atx-python is %atx-python below.
    programs = {"autotune-export": ("autotune_export.tools.cli:main", os.path.join(bindir, "autotune-export")),
                "filecheck": ("filecheck.main:main", os.path.join(bindir, "filecheck")),
                "atx-python": ("cli_server:run_script", sys.executable)}
    for name in programs:
        shim = os.path.join(server_dir, name)
        with open(shim, "w") as f:
            f.write(f'#!/bin/sh\nexec "{sys.executable}" -S -E "{server_py}" "{socket_path}" {name} "$@"\n')
        os.chmod(shim, 0o755)
    # Modules that most autotune-export commands import on their way (reading a file, the compile
    # command asks tools.inspection whether it is a .vmfb; inspection imports the runtime):
    # imported once in the server, not in each child.
    # jax_triton: the scripts that %atx-python runs (errors/Inputs/jax_call.py) import it.
    # iree.compiler.dialects.linalg: the bench entries' fake-data fills (passes/fake_data) build
    # linalg attributes, which load the dialect's Python module and its op DSL (0.09 CPU-s).
    preload = ["autotune_export.runtime", "autotune_export.tools.inspection", "autotune_export.interop.jax_triton",
               "iree.compiler.dialects.linalg"]
    if SUITE != "fast":
        # What a command that compiles does first (cuda.workers.warm_up: Triton imported, its
        # key of its installation memoized); the fast suite compiles nothing.
        preload += ["autotune_export.cuda.triton_compile", "autotune_export.cuda.workers:warm_up"]
    server = subprocess.Popen([sys.executable, server_py, "serve", socket_path,
                               *(f"{name}={entry}={argv0}" for name, (entry, argv0) in programs.items()),
                               *(f"+{module}" for module in preload)],
                              env=dict(config.environment), stdin=subprocess.DEVNULL)

    def _stop_server():
        server.terminate()
        server.wait()
        shutil.rmtree(server_dir, ignore_errors=True)

    atexit.register(_stop_server)
    config.environment["PATH"] = os.pathsep.join([server_dir, config.environment["PATH"]])

# Tools: the CLI under test, FileCheck (the `filecheck` Python package), iree-compile, not.
config.substitutions.append(("%python", sys.executable))
# A Python script that imports the package (its start is most of its cost): in the fast suite a
# child of the fork server (cli_server.run_script), else the interpreter.
config.substitutions.append(("%atx-python", "atx-python" if CLI == "server" else sys.executable))
config.substitutions.append(("%examples", os.path.join(config.test_source_root, "..", "..", "examples")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# The `filecheck` package installs a `filecheck` script next to the interpreter.
config.substitutions.append((r"\bFileCheck\b", "filecheck"))
