"""IREE's phases as :func:`autotune_export.program.build.build_program` runs them: one
``iree-compile`` phase on a text, its failure as :class:`IreeFailure` or as a diagnostic
(located in the user's input for the first phase, unlocated for the texts the build generates)."""

from __future__ import annotations

import re

from autotune_export.support.diagnostics import DiagnosticError

__all__ = ["IreeFailure", "compile_bytes", "compile_generated", "compile_input"]


class IreeFailure(Exception):
    """iree-compile refused a text: the first ``error:`` line of its output."""


def compile_bytes(text: str, args: list[str]) -> bytes:
    from iree.compiler.tools import CompilerToolError, compile_str

    try:
        return compile_str(text, extra_args=args)
    except CompilerToolError as err:
        lines = [ln.strip() for ln in str(err).splitlines() if "error:" in ln]
        raise IreeFailure(lines[0] if lines else str(err).strip().splitlines()[0]) from None


def compile_generated(text: str, args: list[str]) -> str:
    """One iree-compile phase on text this module generated, its output as text. Raises
    DiagnosticError (no location: the lines are not the user's)."""
    try:
        return compile_bytes(text, args).decode()
    except IreeFailure as err:
        raise DiagnosticError.at(None, f"iree-compile failed on the program between phases: {err}") from None


def compile_input(text: str, args: list[str], source_name: str) -> str:
    """One iree-compile phase, its output as text. Raises DiagnosticError naming the input."""
    try:
        return compile_bytes(text, args).decode()
    except IreeFailure as err:
        message = str(err)
        m = re.match(r"(?:-|<stdin>):(\d+):(\d+): error: (.*)", message)
        if m:
            from autotune_export.support.diagnostics import Location

            raise DiagnosticError.at(
                Location(source_name, int(m.group(1)), int(m.group(2))), f"iree-compile failed: {m.group(3)}"
            ) from None
        raise DiagnosticError.at(None, f"iree-compile failed: {message}") from None
