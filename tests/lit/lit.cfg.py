# lit configuration for autotune-export's FileCheck tests.
# Run with:  lit -v tests/lit
import os
import sys

import lit.formats

config.name = "autotune-export"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
for var in ("HOME", "AUTOTUNE_EXPORT_CACHE_DIR", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["PYTHONUNBUFFERED"] = "1"
# A cache of compiled variants shared by the tests of one checkout (hermetic: not the user's).
config.environment.setdefault("AUTOTUNE_EXPORT_CACHE_DIR", os.path.join(config.test_exec_root, "cache"))

# Tools: the CLI under test, FileCheck (the `filecheck` Python package), iree-compile, not.
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%examples", os.path.join(config.test_source_root, "..", "..", "examples")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# The `filecheck` package installs a `filecheck` script next to the interpreter.
config.substitutions.append((r"\bFileCheck\b", "filecheck"))
