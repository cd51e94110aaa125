"""autotune-export: Triton kernels inside IREE-compiled programs, with their auto-tuning intact.

See README.md (what it is, the quick start, a tutorial) and docs/: the extension syntax
(``hal.executable.autotuning.export``, docs/syntax.md), the Python API (docs/python-api.md),
the pipeline and the layers (docs/architecture.md).
"""

import os as _os

__version__ = "0.1.0"

# The grammars live in the repository's top-level dialects/ folder, installed as the
# subpackage autotune_export.dialects (pyproject's package-dir mapping). When this package is
# imported straight from a source checkout (e.g. `python -c` in the repository root), load that
# folder as the subpackage (and nothing else of the checkout).
_here = _os.path.dirname(__file__)
_checkout_dialects = _os.path.join(_os.path.dirname(_here), "dialects", "__init__.py")
if not _os.path.isdir(_os.path.join(_here, "dialects")) and _os.path.isfile(_checkout_dialects):
    import importlib.util as _util
    import sys as _sys

    try:
        _found = _util.find_spec(__name__ + ".dialects")
    except ImportError:
        _found = None
    if _found is None:
        _spec = _util.spec_from_file_location(
            __name__ + ".dialects", _checkout_dialects, submodule_search_locations=[_os.path.dirname(_checkout_dialects)]
        )
        _module = _util.module_from_spec(_spec)
        _sys.modules[_spec.name] = _module
        _spec.loader.exec_module(_module)
