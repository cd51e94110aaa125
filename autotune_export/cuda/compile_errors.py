"""One line for a failed Triton compile: Triton's message at the kernel file's line and
column (:func:`error_line`), ptxas' own diagnostic with the PTX line it names, and whether a
failure is the variant's (cached) or the machine's (not cached: :func:`failure`)."""

from __future__ import annotations

import os
import re

from triton.compiler.errors import CompilationError
from triton.runtime.jit import JITFunction

from autotune_export.cuda import triton_compat as _compat


def first_line(text) -> str:
    """The first non-blank line of ``str(text)``, stripped ("" when there is none)."""
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def error_line(e: Exception, kernel_fn=None) -> str:
    """One line for a failed compile: for Triton's CompilationError, ``FILE:LINE:COL: message``
    of the innermost error (a call into another JIT function chains them), the position in the
    kernel's file (1-based, as MLIR diagnostics count; Triton's own ``at L:C`` counts lines from
    the ``def`` and columns from 0) when ``kernel_fn`` or a JIT function it can reach by name has
    that source, and Triton's message (the error's own text, else its cause's: Triton leaves
    ``error_message`` empty for some errors, whose text then ends in the excerpt's caret).
    ptxas errors give ptxas' diagnostic; anything else its type and first line."""
    if isinstance(e, CompilationError):
        inner = e
        while isinstance(inner.__cause__, CompilationError):
            inner = inner.__cause__
        message = getattr(inner, "error_message", None)
        if not message and inner.__cause__ is not None:
            cause = inner.__cause__
            message = f"{type(cause).__name__}: {first_line(cause)}" if first_line(cause) else type(cause).__name__
        if not message:
            lines = [line.strip() for line in str(inner).splitlines() if line.strip() and set(line.strip()) != {"^"}]
            message = lines[-1] if lines else type(inner).__name__
        message = first_line(message)
        node = getattr(inner, "node", None)
        if node is None or not hasattr(node, "lineno"):
            return message
        place = _source_position(inner.src, node.lineno, node.col_offset, kernel_fn)
        return f"{place}: {message}" if place else f"{message} (kernel line {node.lineno}, column {node.col_offset})"
    text = str(e)
    if _is_ptxas_error(e):
        return _ptxas_message(text)[0]
    first = first_line(text)
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


# One diagnostic of ptxas: "ptxas /tmp/x.ptx, line 32; error   : Unknown modifier '.instr'",
# "ptxas error   : Entry function 'k' uses too much shared data (...)", "ptxas fatal   : ..."; Triton 3.9
# runs "ptxas-blackwell" for sm_90a and later, which says so in its diagnostics.
_PTXAS_LINE = re.compile(
    r"^\s*ptxas[\w-]*\s+(?:\S.*?, line (?P<line>\d+); )?(?P<severity>error|fatal|warning)\s*:\s*(?P<message>.*?)\s*$",
    re.MULTILINE,
)
_PTXAS_ABORTED = "Ptx assembly aborted due to errors"


def _is_ptxas_error(e: BaseException) -> bool:
    """Triton's ``PTXASError`` (3.6 to 3.9: ``triton.runtime.errors``; its text holds ptxas'
    stderr after "`ptxas` stderr:")."""
    return type(e).__name__ == "PTXASError"


def _printed_ptx(printed: str, error: str) -> str | None:
    """The PTX in what Triton printed for a failed ptxas run (3.6 to 3.9: a rule of ``=``,
    the PTXASError's text, a blank line, the PTX, a rule), or None."""
    start = printed.find(error) if error else -1
    if start < 0:
        return None
    rest = printed[start + len(error) :]
    end = rest.find("\n" + "=" * 64)
    return rest[:end].strip("\n") if end >= 0 else None


def _ptxas_message(text: str, ptx: str | None = None) -> tuple[str, bool]:
    """``(one line, whether it is the variant's fault)`` for the text of Triton's PTXASError.

    ptxas ends every failed assembly with "ptxas fatal : Ptx assembly aborted due to errors";
    what went wrong is in the ``error`` lines before it (and ``fatal`` ones that name a line of
    the PTX: "Unsupported .version 7.9"), which name the line of the PTX (their file is a
    temporary one, left out): the first is given, with how many more there are, and the line
    itself when ``ptx`` (the text ptxas was given) has it. Such errors are a property of the
    PTX (cacheable). Without one (ptxas killed, crashed, out of memory, or a fatal error of its
    own, ``returncode`` in Triton's first line), the failure is the machine's, not cached."""
    found = [m for m in _PTXAS_LINE.finditer(text) if m.group("message") != _PTXAS_ABORTED]
    errors = [m for m in found if m.group("severity") == "error" or (m.group("severity") == "fatal" and m.group("line"))]
    if errors:
        first = errors[0]
        where = ""
        if first.group("line"):
            number = int(first.group("line"))
            lines = ptx.splitlines() if ptx else []
            quoted = lines[number - 1].strip() if 0 < number <= len(lines) else ""
            where = f" (PTX line {number}: {quoted})" if quoted else f" (PTX line {number})"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"ptxas {first.group('severity')}: {first.group('message')}{where}{more}", True
    fatal = [m for m in found if m.group("severity") == "fatal"]
    if fatal:
        return f"ptxas fatal: {fatal[0].group('message')}", False
    return f"ptxas failed: {first_line(text)}", False


def failure(e: Exception, kernel_fn=None, printed: str = "") -> tuple[str, bool]:
    """``(reason, cacheable)`` for an exception of ``triton.compile``: the kernel's fault
    (Triton's front end, an MLIR or LLVM pass, ptxas' diagnostics of the PTX) is cacheable,
    the machine's is not: an OSError (ptxas missing, a file that cannot be written, a full
    disk), MemoryError, a subprocess error, ptxas failing without a diagnostic. ``printed``:
    what Triton printed meanwhile (for a ptxas failure, its error and the PTX: the line a
    ptxas error names is quoted from it)."""
    import subprocess

    if _is_ptxas_error(e):
        text = getattr(e, "error_message", None) or str(e)  # PTXASError's str() adds a prefix
        message, cacheable = _ptxas_message(text, _printed_ptx(printed, text))
    else:
        message = error_line(e, kernel_fn)
        cacheable = not isinstance(e, (OSError, MemoryError, subprocess.SubprocessError))
    reason = f"compile error: {_compat.explain_compile_error(message)}"
    if not cacheable:
        reason += " (a failure of this machine, not of the kernel: not cached)"
    return reason, cacheable


def _source_position(src: str | None, lineno: int, col: int, kernel_fn) -> str | None:
    """``FILE:LINE:COL`` in the file of the JIT function whose source is ``src`` (the kernel,
    or a JIT function among its module's globals), for Triton's ``lineno`` (1 = the ``def``)
    and 0-based ``col`` in that source; None when none has it."""
    if kernel_fn is None or src is None:
        return None
    import inspect

    candidates = [kernel_fn] + [v for v in getattr(kernel_fn.fn, "__globals__", {}).values() if isinstance(v, JITFunction)]
    for jit in candidates:
        if getattr(jit, "src", None) != src:
            continue
        try:
            lines, start = inspect.getsourcelines(jit.fn)
            path = inspect.getsourcefile(jit.fn)
        except (OSError, TypeError):
            return None
        offset = next((i for i, line in enumerate(lines) if re.match(r"\s*def\s", line)), 0)
        indent = len(lines[offset]) - len(lines[offset].lstrip())
        if path and not os.path.relpath(path).startswith(".."):
            path = os.path.relpath(path)
        return f"{path}:{start + offset + lineno - 1}:{col + indent + 1}"
    return None
