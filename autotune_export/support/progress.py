"""Progress bars and verbosity for the long loops: compiling variants, timing them.

One process-wide (context-local) verbosity level drives what is printed on stderr:

========  =====  ====================================================================
level     flag   prints
========  =====  ====================================================================
QUIET     ``-q`` errors only: no remarks, no bars, no per-item lines
NORMAL           remarks and, on a terminal, a progress bar per long loop
VERBOSE   ``-v`` also one line per item (``compiled ...``, ``from cache ...``, timings)
========  =====  ====================================================================

A bar is drawn with ``rich`` only when stderr is a terminal (not in pipes, CI logs or lit);
the bar is transient (erased when the loop ends), so a terminal shows the same lines as a log. ``AUTOTUNE_EXPORT_PROGRESS=0``
turns bars off, ``=1`` forces them on (e.g. for a terminal that does not say it is one).

Library code reports through :class:`Progress` (or :func:`track`) and :func:`note`::


    with progress.Progress(len(variants), "tuning @matmul") as bar:
        for v in variants:
            t = time_it(v)
            bar.advance(detail=f"{v}: {t:.3f} ms")   # detail printed only with -v

    for v in progress.track(variants, "tuning @matmul"):  # the same, without details
        ...

and the command sets the level around its work with ``with progress.verbosity(level):``.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
from typing import IO, Iterable, Iterator, TypeVar

__all__ = [
    "QUIET",
    "NORMAL",
    "VERBOSE",
    "Progress",
    "bars_enabled",
    "echo",
    "get_verbosity",
    "note",
    "track",
    "verbosity",
]

QUIET, NORMAL, VERBOSE = -1, 0, 1

_level: contextvars.ContextVar[int] = contextvars.ContextVar("autotune_export_verbosity", default=NORMAL)
_ON = ("1", "on", "yes", "true", "always", "force")
_OFF = ("0", "off", "no", "false", "never")

T = TypeVar("T")


def get_verbosity() -> int:
    """The current level: :data:`QUIET` (-1), :data:`NORMAL` (0) or :data:`VERBOSE` (1)."""
    return _level.get()


@contextlib.contextmanager
def verbosity(level: int) -> Iterator[None]:
    """Run the body at verbosity ``level`` (clamped to QUIET..VERBOSE), then restore it."""
    token = _level.set(max(QUIET, min(VERBOSE, int(level))))
    try:
        yield
    finally:
        _level.reset(token)


def _stderr() -> IO[str]:
    return sys.stderr  # looked up at each call: tests and callers may replace sys.stderr


def bars_enabled(stream: IO[str] | None = None) -> bool:
    """Whether a progress bar would be drawn on ``stream`` (default: stderr) now.

    No bar when quiet, when ``AUTOTUNE_EXPORT_PROGRESS`` is 0/off, or when the stream is not a
    terminal (or ``TERM=dumb``) unless ``AUTOTUNE_EXPORT_PROGRESS`` is 1/on.
    """
    if get_verbosity() < NORMAL:
        return False
    env = os.environ.get("AUTOTUNE_EXPORT_PROGRESS", "").strip().lower()
    if env in _OFF:
        return False
    if env in _ON:
        return True
    stream = stream if stream is not None else _stderr()
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # closed or not a file
        tty = False
    return bool(tty) and os.environ.get("TERM") != "dumb"


# --------------------------------------------------------------------------------------------
# Backends: start(), advance(n), write(line), close(). _NullBackend when no bar is drawn (its
# write() prints plain lines), _RichBackend when one is.


class _NullBackend:
    def __init__(self, stream: IO[str]):
        self.stream = stream

    def start(self) -> None:
        pass

    def advance(self, n: int) -> None:
        pass

    def write(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        pass


class _RichBackend(_NullBackend):
    def __init__(self, stream: IO[str], total: int, description: str, unit: str, force: bool):
        super().__init__(stream)
        from rich.console import Console  # here: importing rich costs every command ~0.1 s
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress as RichProgress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        # Our own Console on the stream: rich must not take over stdout (the module text goes there).
        console = Console(file=stream, force_terminal=True if force else None, highlight=False)
        self.bar = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(unit + "s"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.task = self.bar.add_task(description, total=total)

    def start(self) -> None:
        self.bar.start()

    def advance(self, n: int) -> None:
        self.bar.advance(self.task, n)

    def write(self, line: str) -> None:
        self.bar.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        self.bar.stop()


# The innermost bar drawing now: note() and echo() print through it so lines do not tear it.
_active: list["Progress"] = []
_active_lock = threading.Lock()


class Progress:
    """A progress bar over ``total`` items, used as a context manager.

    ``description`` heads the bar (``compiling 9 Triton variants``), ``unit`` names an item.
    ``stream``: where the bar and lines go (default: stderr at the time of the call).
    ``enabled``: None decides with :func:`bars_enabled`; True/False force it. The bar is drawn
    with rich. When disabled nothing is drawn, and :meth:`log` / ``detail`` lines still go to
    the stream (they are what ``-v`` prints in logs).
    """

    def __init__(
        self, total: int, description: str, *, unit: str = "variant", stream: IO[str] | None = None, enabled: bool | None = None
    ):
        self.total = max(0, int(total))
        self.description = description
        self.unit = unit
        self.stream = stream if stream is not None else _stderr()
        self.enabled = bars_enabled(self.stream) if enabled is None else bool(enabled)
        self.done = 0
        self._lock = threading.Lock()
        self._backend: _NullBackend = _NullBackend(self.stream)
        if self.enabled and self.total > 0:
            force = os.environ.get("AUTOTUNE_EXPORT_PROGRESS", "").strip().lower() in _ON
            self._backend = _RichBackend(self.stream, self.total, self.description, self.unit, force)

    @property
    def drawing(self) -> bool:
        """True when a bar is on the screen (enabled and something to count)."""
        return type(self._backend) is not _NullBackend

    def __enter__(self) -> "Progress":
        self._backend.start()
        with _active_lock:
            _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        with _active_lock:
            if self in _active:
                _active.remove(self)
        self._backend.close()

    def advance(self, n: int = 1, *, detail: str | None = None) -> None:
        """Count ``n`` more items done; ``detail`` is printed above the bar when verbose."""
        with self._lock:
            if detail is not None and get_verbosity() >= VERBOSE:
                self._backend.write(detail)
            self.done += n
            self._backend.advance(n)

    def log(self, line: str) -> None:
        """Print ``line`` on the stream (above the bar while it is drawn), whatever the level."""
        with self._lock:
            self._backend.write(line)


def track(
    items: Iterable[T],
    description: str,
    *,
    total: int | None = None,
    unit: str = "variant",
    stream: IO[str] | None = None,
    enabled: bool | None = None,
) -> Iterator[T]:
    """Yield ``items`` while a :class:`Progress` bar counts them (``total`` defaults to len())."""
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            items = list(items)
            total = len(items)
    with Progress(total, description, unit=unit, stream=stream, enabled=enabled) as bar:
        for item in items:
            yield item
            bar.advance()


def echo(line: str, *, level: int = NORMAL) -> None:
    """Print ``line`` on stderr when the verbosity is at least ``level``, through the active
    bar when one is drawn (so the bar is not torn)."""
    if get_verbosity() < level:
        return
    with _active_lock:
        bar = _active[-1] if _active else None
    if bar is not None and bar.stream is _stderr():
        bar.log(line)
    else:
        print(line, file=_stderr(), flush=True)


def note(line: str) -> None:
    """Print a detail line on stderr, only when verbose (``-v``)."""
    echo(line, level=VERBOSE)


# --------------------------------------------------------------------------------------------
# Command-line flags, shared by the command and its subcommands


def add_arguments(parser) -> None:
    """Add ``-q/--quiet`` and ``-v/--verbose`` to an argparse ``parser``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", action="store_true", help="print errors only: no remarks, no progress bar")
    group.add_argument(
        "-v", "--verbose", action="store_true", help="print details: one line per compiled variant (and per timed variant)"
    )


def level_of(args) -> int:
    """The verbosity the parsed ``args`` ask for (see :func:`add_arguments`)."""
    if getattr(args, "quiet", False):
        return QUIET
    if getattr(args, "verbose", False):
        return VERBOSE
    return NORMAL
