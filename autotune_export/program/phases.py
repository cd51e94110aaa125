"""IREE's phases as :func:`autotune_export.program.build.build_program` runs them: one
``iree-compile`` phase on a text, its failure as :class:`IreeFailure` or as a diagnostic
(located in the user's input for the first phase, unlocated for the texts the build generates)."""

from __future__ import annotations

import re

from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.tools.iree_compiler import iree_diagnostics

__all__ = ["IreeFailure", "compile_bytes", "compile_generated", "compile_input", "one_line"]


class IreeFailure(Exception):
    """iree-compile refused ``text``: ``error`` is the tool's report; :meth:`diagnostic` the
    failure as the main command reports it (:func:`autotune_export.tools.iree_compiler.iree_diagnostics`:
    the first ``error:`` and its notes, or for a failure without one, such as an unknown
    ``--iree-compile-arg`` flag, the tool's own first line); ``str()`` that message on one line."""

    def __init__(self, error, text: str):
        self.error, self.text = error, text
        message = self.diagnostic(None).diagnostics[0].message.removeprefix("iree-compile failed: ")
        super().__init__(one_line(message))

    def diagnostic(self, source_name: str | None) -> DiagnosticError:
        """The failure as a DiagnosticError. ``source_name``: ``text`` is the user's input, read
        by iree-compile from stdin, so its ``<stdin>:line:col`` positions are located there
        (iree_diagnostics' ``-``); None: ``text`` is generated and positions name the function."""
        report = str(self.error)
        if source_name is not None:
            report = re.sub(r"^(\s*)<stdin>:(\d+):(\d+):", r"\1-:\2:\3:", report, flags=re.M)
        return iree_diagnostics(report, self.text, source_name, None)


#: At most this many characters of iree-compile's message go into one of ours: MLIR prints the
#: offending op after the message ("failed to legalize operation ...: %5 = flow.tensor.encode
#: ..."), kilobytes of IR on one line for an op with large operands or attributes.
MESSAGE_CAP = 300


def one_line(message: str) -> str:
    """``message``'s first line, cut at :data:`MESSAGE_CAP` characters (the cut said, with how
    many characters were left out)."""
    first = message.strip().split("\n", 1)[0]
    if len(first) <= MESSAGE_CAP:
        return first
    return f"{first[:MESSAGE_CAP].rstrip()} ... ({len(first) - MESSAGE_CAP} more characters)"


def compile_bytes(text: str, args: list[str]) -> bytes:
    """One iree-compile run of ``text`` with ``args``; its output. Raises IreeFailure."""
    from iree.compiler.tools import CompilerToolError, compile_str

    try:
        return compile_str(text, extra_args=args)
    except CompilerToolError as err:
        raise IreeFailure(err, text) from None


def compile_generated(text: str, args: list[str]) -> str:
    """One iree-compile phase on text this module generated, its output as text. Raises
    DiagnosticError (no location: the lines are not the user's)."""
    try:
        return compile_bytes(text, args).decode()
    except IreeFailure as err:
        raise DiagnosticError.at(None, f"iree-compile failed on the program between phases: {err}") from None


def compile_input(text: str, args: list[str], source_name: str) -> str:
    """One iree-compile phase on the user's input, its output as text. Raises DiagnosticError
    located in the input (``source_name``), as the main command reports iree-compile's errors."""
    try:
        return compile_bytes(text, args).decode()
    except IreeFailure as err:
        raise err.diagnostic(source_name) from None
