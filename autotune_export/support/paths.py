"""Where autotune-export keeps its files (no heavy imports: the runtime uses this on GPU
machines without Triton's compiler)."""

from __future__ import annotations

import os
import pathlib

__all__ = ["default_cache_dir"]


def default_cache_dir() -> pathlib.Path:
    """The cache directory: ``$AUTOTUNE_EXPORT_CACHE_DIR``, else ``$XDG_CACHE_HOME/autotune-export``,
    else ``~/.cache/autotune-export``. Not created here."""
    if os.environ.get("AUTOTUNE_EXPORT_CACHE_DIR"):
        return pathlib.Path(os.environ["AUTOTUNE_EXPORT_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return pathlib.Path(os.environ["XDG_CACHE_HOME"]) / "autotune-export"
    return pathlib.Path.home() / ".cache" / "autotune-export"
