# lit configuration for autotune-export's FileCheck tests.
# Run with:  lit -v tests/lit                         (every test)
#            lit -v tests/lit --param suite=fast      (no Triton compilation, under a minute)
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
# gets its own, made afresh (suite_format.SuiteTest.execute).
config.environment["AUTOTUNE_EXPORT_CACHE_DIR"] = os.path.join(config.test_exec_root, "cache")

# Tools: the CLI under test, FileCheck (the `filecheck` Python package), iree-compile, not.
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%examples", os.path.join(config.test_source_root, "..", "..", "examples")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# The `filecheck` package installs a `filecheck` script next to the interpreter.
config.substitutions.append((r"\bFileCheck\b", "filecheck"))
