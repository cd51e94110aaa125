"""Cache folders whose compiled artifacts are shared between test processes running at the
same time: the pytest-xdist workers of one session (tests/unit/conftest.py) and, under
scripts/test.sh, the integration suite's lit tests and pytest workers (tests/lit/lit.cfg.py).
Loaded by its path by both (it is no package), so it imports nothing of the project."""

from __future__ import annotations

import os
import pathlib

#: The folder scripts/test.sh makes afresh for the integration suite and removes after it.
SHARED_ENV = "AUTOTUNE_EXPORT_TEST_SHARED_DIR"

#: The parts of a cache folder (autotune_export.support.paths.default_cache_dir) that hold
#: content-addressed compiled artifacts, each entry written whole under a lock: compiled
#: variants, Triton's own cache, ptxas checks and assembled cubins, iree-compile checks of
#: program candidates. An entry is what any process would have written for its key, so
#: processes running at the same time can share them. The rest of a cache folder (tuning
#: results, build records) stays each folder's own.
SHARED_ARTIFACTS = ("variants", "triton", "cubin", "program-cuda")


def share_compiled(cache: str | os.PathLike, shared: str | os.PathLike) -> pathlib.Path:
    """Make ``cache`` (a new folder, or an existing one whose :data:`SHARED_ARTIFACTS` are not
    there yet) a cache folder whose :data:`SHARED_ARTIFACTS` are links to folders of ``shared``
    (made as needed); returns ``cache`` as a Path. Raises OSError (FileExistsError where a
    part is there already)."""
    cache, shared = pathlib.Path(cache), pathlib.Path(shared)
    cache.mkdir(parents=True, exist_ok=True)
    for part in SHARED_ARTIFACTS:
        (shared / part).mkdir(parents=True, exist_ok=True)
        (cache / part).symlink_to(shared / part, target_is_directory=True)
    return cache
