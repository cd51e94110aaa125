"""Front end, step 1: find the sugared extension ops in ``.mlir`` text (outside comments and
strings) and their extents, without parsing them: the op's name, its ``@symbol`` and the
``clause(...)`` groups that follow (:mod:`autotune_export.frontend.reader` drives the steps).
"""

from __future__ import annotations

import re

from autotune_export.ir.group import SUGARED_OP_NAME
from autotune_export.ir.group_clauses import CLAUSE_NAMES


def skip_trivia(text: str, i: int) -> int:
    """Skip whitespace and ``//`` comments."""
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        else:
            break
    return i


def skip_string(text: str, i: int) -> int:
    """``text[i]`` is a double quote: return the index after the closing quote."""
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        elif text[i] == "\n":
            return i  # unterminated: let the parser report it
        else:
            i += 1
    return i


def skip_balanced(text: str, i: int, floor_division: bool = False) -> int:
    """``text[i]`` is ``(``: return the index after its matching ``)``.

    Brackets must nest: at a closing bracket that does not match the innermost open one (the
    ``}`` ending the enclosing region, when a ``)`` is missing) the group ends before it, and
    so does it at the end of the text; the parser then reports what is missing.
    ``//`` starts a comment, except with ``floor_division`` (inside ``grid(...)``, where it is
    Python's floor division, as in Triton grid lambdas).
    """
    closers = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    while i < len(text):
        c = text[i]
        if c == '"':
            i = skip_string(text, i)
            continue
        if not floor_division and text.startswith("//", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
            continue
        if c in closers:
            stack.append(closers[c])
        elif c in ")]}":
            if not stack or c != stack[-1]:
                return i
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return i


IDENT = re.compile(r"[a-z_][a-z0-9_]*")
SYMBOL = re.compile(r'@(?:[A-Za-z_][A-Za-z0-9_$.]*|"(?:[^"\\\n]|\\.)*")')


def op_extent(text: str, start: int) -> int:
    """End index of the extension op starting at ``start``.

    The op is its name, the ``@symbol`` and every following ``name(...)`` group (a clause,
    known or not: unknown ones are reported by the parser). A clause keyword that is not
    followed by ``(`` belongs to the op too, so that the parser reports the missing ``(``
    instead of IREE reading the keyword as an op. Without a symbol the op is its name alone.
    """
    i = start + len(SUGARED_OP_NAME)
    j = skip_trivia(text, i)
    m = SYMBOL.match(text, j)
    if not m:
        return i
    end = m.end()
    while True:
        j = skip_trivia(text, end)
        m = IDENT.match(text, j)
        if not m or (m.end() < len(text) and (text[m.end()].isalnum() or text[m.end()] in "._$")):
            return end
        k = skip_trivia(text, m.end())
        if k >= len(text) or text[k] != "(":
            return m.end() if m.group(0) in CLAUSE_NAMES else end
        end = skip_balanced(text, k, floor_division=m.group(0) == "grid")


def clause_spans(text: str) -> list[tuple[str, int, int]]:
    """``(name, start, end)`` of every ``name(...)`` group at the top level of one op's text."""
    spans = []
    i = skip_trivia(text, len(SUGARED_OP_NAME))
    m = SYMBOL.match(text, i)
    i = m.end() if m else i
    while i < len(text):
        i = skip_trivia(text, i)
        m = IDENT.match(text, i)
        if not m:
            break
        k = skip_trivia(text, m.end())
        if k >= len(text) or text[k] != "(":
            spans.append((m.group(0), m.start(), m.end()))
            break
        end = skip_balanced(text, k, floor_division=m.group(0) == "grid")
        spans.append((m.group(0), m.start(), end))
        i = end
    return spans


def occurrences(text: str):
    """Offsets of the sugared op name outside comments and strings."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = skip_string(text, i)
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith(SUGARED_OP_NAME, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.")):
            end_name = i + len(SUGARED_OP_NAME)
            if end_name >= n or not (text[end_name].isalnum() or text[end_name] in "_."):
                yield i
            i = end_name
        else:
            i += 1


def line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col
