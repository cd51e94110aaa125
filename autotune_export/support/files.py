"""Atomic file writes and checked cache entries: the one place that writes files which other
processes may read at the same time (outputs, caches, the tuning file)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import tempfile


__all__ = ["LOCK_WAIT_S", "atomic_write", "locked", "read_checked", "run_source", "write_checked"]

_DIGEST = 32  # bytes of a sha256 digest

#: The longest wait for another process's lock, seconds. Locks are held for one cache write,
#: one tuning-results update or one variant's Triton compile (minutes at most for the largest
#: kernels): a wait past this is a stuck holder, reported instead of waited on forever.
LOCK_WAIT_S = 900.0


def atomic_write(path: str | os.PathLike, data: bytes | str, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same directory, then
    ``os.replace`` (readers see the old file or the new one, never a part). Creates the
    directory. ``mode``: permission bits of the new file (default: as ``open`` would make it,
    honouring the umask). Raises OSError; the temporary file never remains."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(path: str | os.PathLike, timeout_s: float | None = None):
    """Hold the inter-process lock of ``path`` (``<path>.lock``, filelock) for the ``with``
    block. Waits at most ``timeout_s`` seconds (default :data:`LOCK_WAIT_S`) for another
    process to release it. Raises OSError when the lock file cannot be created (a folder that
    takes no files, such as /proc: filelock alone would poll for it forever) and TimeoutError
    (an OSError) when the wait runs out."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = f"{path}.lock"
    os.close(os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666))
    import filelock  # here: importing it (asyncio) costs every command ~0.1 s

    wait_s = LOCK_WAIT_S if timeout_s is None else timeout_s
    try:
        lock = filelock.FileLock(lock_path, timeout=wait_s)
        lock.acquire()
    except filelock.Timeout:
        raise TimeoutError(f"waited {wait_s:g} s for the lock {lock_path}: another process holds it") from None
    try:
        yield
    finally:
        lock.release()


def write_checked(path: str | os.PathLike, data: bytes) -> None:
    """A cache entry: ``data`` followed by its sha256, written atomically under the path's
    lock. Raises OSError."""
    with locked(path):
        atomic_write(path, data + hashlib.sha256(data).digest())


def read_checked(path: str | os.PathLike) -> bytes | None:
    """The data of an entry :func:`write_checked` made, or None when it is missing, truncated
    or altered (its digest does not match)."""
    try:
        blob = pathlib.Path(path).read_bytes()
    except OSError:
        return None
    if len(blob) >= _DIGEST and hashlib.sha256(blob[:-_DIGEST]).digest() == blob[-_DIGEST:]:
        return blob[:-_DIGEST]
    return None


def run_source(module, path: str | os.PathLike) -> None:
    """Execute the Python file ``path`` into ``module`` (a module made by
    ``importlib.util.module_from_spec``) from its source, as every user file the toolkit runs
    (kernel files, ``check --reference``) is run: not through ``SourceFileLoader``, which would
    write ``__pycache__`` next to the user's file and trust a ``.pyc`` whose mtime (whole
    seconds) and size match, so an edit of equal size within a second ran the old code. Raises
    what the file's code raises, and OSError when it cannot be read."""
    path = pathlib.Path(path)
    exec(compile(path.read_bytes(), str(path), "exec"), module.__dict__)
