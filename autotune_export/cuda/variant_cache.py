"""The content-addressed variant cache: one checksummed JSON entry per compiled variant
(``<cache>/variants/<key[:2]>/<key>.json``) and memoized derived artifacts (ptxas checks,
assembled cubins: :func:`cached_artifact`). Keys are made by
:meth:`autotune_export.cuda.triton_compile.VariantSpec.key`."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile
import warnings
from typing import Callable


from autotune_export.support import files as _files


# Bump when the layout of a cache entry, the recipe of VariantSpec.key or the meaning of a
# metadata field changes (4: written_params from the TTIR, as signature indices; 5: updated_params; 6: addresses_from_data;
# 7: compile errors at the kernel file's line and column; 8: the source hash covers the values of the
# globals and module attributes the kernel reads, LoadedKernel.values_read; 9: read_first_params;
# 10: n_regs and n_spills from the variant's cubin).
CACHE_FORMAT = 10


class CacheDirError(Exception):
    """The variant cache's folder cannot be written (it is a file, read-only, on a full disk):
    raised by :func:`compile_variants` before it compiles anything, naming the folder. The
    message is one line."""


# --------------------------------------------------------------------------------------------
# The cache


def _digest(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def entry_path(cache_dir: str | os.PathLike, key: str) -> pathlib.Path:
    return pathlib.Path(cache_dir) / "variants" / key[:2] / f"{key}.json"


def read_entry(path: pathlib.Path, key: str) -> dict | None:
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


def write_entry(path: pathlib.Path, key: str, payload: dict) -> None:
    """Write the entry atomically (:func:`autotune_export.support.files.atomic_write`); the
    caller holds the entry's lock. Raises OSError."""
    doc = {"format": CACHE_FORMAT, "key": key, "payload": payload, "sha256": _digest(payload)}
    _files.atomic_write(path, json.dumps(doc, sort_keys=True))


def cached_artifact(cache_dir: str | os.PathLike | None, kind: str, key_material: bytes, compute: Callable[[], bytes]) -> bytes:
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


def check_writable(root: str) -> None:
    """Raise CacheDirError unless a file can be made in ``<root>/variants`` (made if missing):
    a cache that cannot take the results would otherwise fail every variant's compilation."""
    folder = pathlib.Path(root) / "variants"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".writable-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise CacheDirError(
            f"the variant cache folder {root} cannot be written ({e.strerror or e}): give a writable "
            "one (--cache-dir, AUTOTUNE_EXPORT_CACHE_DIR) or build without the cache (--no-cache)"
        ) from None
