"""Front end: the literals of the extension op's clauses: MLIR strings and symbols (with MLIR's
escapes), config values (integers, numbers, booleans, strings, none, Triton and torch
dtypes), and MLIR type/attribute text checked with the installed IREE.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from autotune_export.ir.params import TORCH_DTYPES, TRITON_DTYPES, TorchDtype, TritonDtype
from iree.compiler import ir
from autotune_export.support.diagnostics import did_you_mean
from autotune_export.frontend.source import new_context


@functools.lru_cache(maxsize=1)
def _scratch_context():
    return new_context()


def mlir_problem(text: str, kind: str) -> str | None:
    """None when ``text`` parses as an MLIR type (``kind == "type"``) or attribute, else
    MLIR's message (with its notes)."""

    ctx = _scratch_context()
    try:
        with ctx, ir.Location.unknown():
            (ir.Type if kind == "type" else ir.Attribute).parse(text)
    except ir.MLIRError as err:
        diags = getattr(err, "error_diagnostics", [])
        if not diags:
            return str(err).splitlines()[0] if str(err) else "not valid MLIR"
        msgs = [diags[0].message] + [n.message for n in diags[0].notes]
        return "; ".join(msgs)
    except ValueError as err:
        return str(err).splitlines()[0]
    return None


class StringError(ValueError):
    """A malformed MLIR string literal: ``offset`` is where in ``token`` the problem is."""

    def __init__(self, message: str, token, offset: int):
        super().__init__(message)
        self.token = token
        self.offset = offset


def symbol_name(tok) -> str:
    text = str(tok)[1:]
    if text.startswith('"'):
        return string_literal(tok, 1)
    return text


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


def string_literal(tok, start: int = 0) -> str:
    """Decode the MLIR string literal at ``str(tok)[start:]`` (escapes ``\\"``, ``\\\\``,
    ``\\n``, ``\\t`` and ``\\XX`` with two hex digits, as MLIR's lexer). Raises StringError."""
    text = str(tok)
    out: list[str] = []
    i, end = start + 1, len(text) - 1
    while i < end:
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 1 : i + 3]) and i + 3 <= end:
            out.append(chr(int(text[i + 1 : i + 3], 16)))
            i += 3
        else:
            raise StringError(
                f"unknown escape '\\{nxt}' in string literal; MLIR strings take \\\", \\\\, \\n, \\t and \\XX (two hex digits)",
                tok,
                i,
            )
    return "".join(out)


def config_literal(node) -> Any:
    kind = node.data
    tok = node.children[0] if node.children else None
    if kind == "int_value":
        return int(tok)
    if kind == "float_value":
        return float(tok)
    if kind == "true_value":
        return True
    if kind == "false_value":
        return False
    if kind == "none_value":
        return None
    if kind == "dtype_value":
        if str(tok).startswith("torch."):
            name = str(tok)[len("torch.") :]
            if name not in TORCH_DTYPES:
                raise DtypeError(tok, "torch", TORCH_DTYPES)
            return TorchDtype(name)
        name = str(tok)[len("tl.") :]
        if name not in TRITON_DTYPES:
            raise DtypeError(tok)
        return TritonDtype(name)
    return string_literal(tok)


class DtypeError(ValueError):
    """``tl.NAME`` that names no Triton dtype, or ``torch.NAME`` no torch dtype a config value
    may be (``token``: where)."""

    def __init__(self, token, prefix: str = "tl", names=TRITON_DTYPES):
        what = "Triton" if prefix == "tl" else "torch"
        super().__init__(
            f"unknown {what} dtype '{token}' in configs(...); expected one of: "
            + ", ".join(f"{prefix}.{n}" for n in names)
            + did_you_mean(str(token), [f"{prefix}.{n}" for n in names])
        )
        self.token = token
