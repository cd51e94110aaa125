"""The ``autotune-export`` command's input and output: reading the input file (UTF-8 MLIR text,
not a .vmfb; ``-`` for stdin), checking ``-o`` before any work, writing it (atomically, or in
place for a device), and keeping standard output for the IR alone with ``-o -``."""

from __future__ import annotations

import contextlib
import os
import sys

from autotune_export.frontend.reader import SourceFile
from autotune_export.support import files
from autotune_export.support.diagnostics import DiagnosticError, Location


def write_output(path: str, data: bytes | str) -> None:
    """Write the command's output ``data`` to ``path``: ``-`` is standard output (text: refuse
    binary output first, :func:`check_stdout`); a regular file (or a new one) atomically
    (:func:`autotune_export.support.files.atomic_write`, default permissions: no partial
    file, ever); anything else that exists and is not a directory (``/dev/null``, a FIFO, a
    terminal) is opened and written in place, as shells and MLIR tools write to it (an atomic
    write would replace the device by a file). Raises DiagnosticError when it cannot."""
    if path == "-":
        sys.stdout.write(data if isinstance(data, str) else data.decode("utf-8"))
        sys.stdout.flush()
        return
    try:
        if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
            with open(path, "wb") as f:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
        else:
            files.atomic_write(path, data)
    except OSError as exc:
        raise DiagnosticError.at(None, f"cannot write '{path}': {exc.strerror or exc}") from None


def _decode(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text; a DiagnosticError at the line and column (in characters) of the
    first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[: err.start]
        line = before.count(b"\n") + 1
        col = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", errors="replace")) + 1
        raise DiagnosticError.at(
            Location(name, line, col),
            f"invalid UTF-8 (byte 0x{data[err.start]:02X}); autotune-export reads MLIR as UTF-8 text",
        ) from None


def read_source(path: str) -> SourceFile:
    """Read an input file (``-``: stdin) as a :class:`~autotune_export.frontend.SourceFile`.

    Relative ``triton("kernel.py", ...)`` paths then resolve against the file's directory (the
    current directory for stdin). Raises DiagnosticError when it cannot be read or is not UTF-8.
    """
    if path == "-":
        if sys.stdin is None:
            raise DiagnosticError.at(None, "no standard input to read ('-')")
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text-only stream (tests replace sys.stdin)
            return SourceFile(sys.stdin.read(), "<stdin>", os.getcwd())
        data = stream.read()
        _refuse_vmfb("<stdin>", data)
        return SourceFile(_decode(data, "<stdin>"), "<stdin>", os.getcwd())
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise DiagnosticError.at(None, f"cannot read '{path}': {err.strerror}") from None
    _refuse_vmfb(path, data)
    return SourceFile(_decode(data, path), path, os.path.dirname(os.path.abspath(path)))


def _refuse_vmfb(name: str, data: bytes) -> None:
    """A compiled module given to the compile command (which reads MLIR text): a
    DiagnosticError naming the subcommands that take it, not an MLIR parse error about
    its bytes. What a .vmfb is: :mod:`autotune_export.tools.inspection`'s test."""
    from autotune_export.tools.inspection import is_vmfb

    if is_vmfb("" if name == "<stdin>" else name, data[:8]):
        raise DiagnosticError.at(
            None, f"{name} is a compiled module (.vmfb); use autotune-export inspect/tune (this command compiles .mlir)"
        )


@contextlib.contextmanager
def stdout_for_output(reserve: bool):
    """With ``reserve`` (``-o -``): while the command runs, whatever else writes to standard
    output (a kernel file printing when it is imported, Triton's and LLVM's own dumps,
    compile workers started meanwhile) goes to standard error, so that standard output gets
    the IR alone, written after this (``sys.stdout`` and file descriptor 1 are restored)."""
    if not reserve:
        yield
        return
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    saved_fd = None
    try:
        saved_fd = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no descriptor 1 or 2: nothing to keep apart
        saved_fd = None
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        sys.stdout = saved
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def check_stdout(path: str, emit: str) -> None:
    """``-o -`` is standard output, for text: a DiagnosticError for ``--emit vmfb`` (a binary
    module; MLIR tools write it to a file only)."""
    if path == "-" and emit == "vmfb":
        raise DiagnosticError.at(None, "--emit vmfb needs -o FILE.vmfb")


def check_output(path: str, emit: str, flag: str = "-o") -> None:
    """Before any work: ``-o PATH`` can be written (not a directory; the nearest existing
    directory above it, where atomic_write makes the missing ones, is a writable directory).
    ``flag``: the option that named ``path``, as the messages name it (``--write-back``).
    Raises DiagnosticError."""
    if path == "-":
        return
    if os.path.isdir(path):
        suffix = ".vmfb" if emit == "vmfb" else ".mlir"
        raise DiagnosticError.at(
            None, f"{flag} {path} is a directory; give a file name (e.g. {os.path.join(path, 'out' + suffix)})"
        )
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    if not os.path.isdir(parent):
        raise DiagnosticError.at(None, f"cannot write {flag} {path}: {parent} is not a directory")
    if os.path.exists(path) and not os.path.isfile(path):
        # A device or a FIFO (/dev/null): written in place (write_output).
        if not os.access(path, os.W_OK):
            raise DiagnosticError.at(None, f"cannot write {flag} {path}: permission denied")
        return
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DiagnosticError.at(None, f"cannot write {flag} {path}: the directory {parent} is not writable")
