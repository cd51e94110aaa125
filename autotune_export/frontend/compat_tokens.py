"""MLIR tokens for :mod:`autotune_export.frontend.compat`: the text split into tokens (strings
and ``//`` comments never looked into; offsets in characters of the text), brackets matched,
and the line-keeping edits of a text (:class:`Edits`: a replacement never adds lines)."""

from __future__ import annotations

import re
from typing import NamedTuple

from autotune_export.support.diagnostics import Location

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<comment>//[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"?)
  | (?P<hash>\#[A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<at>@(?:[A-Za-z_][A-Za-z0-9_$.]*|"(?:[^"\\\n]|\\.)*"?))
  | (?P<value>%[A-Za-z0-9_$.\-]+(?:\#[0-9]+)?)
  | (?P<block>\^[A-Za-z0-9_$.\-]+)
  | (?P<bang>![A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<id>[A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<number>[0-9][A-Za-z0-9_.]*)
  | (?P<arrow>->)
  | (?P<punct>[\s\S])
    """,
    re.VERBOSE,
)

_OPEN = {"(": ")", "[": "]", "{": "}"}


class Tok(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


def lex(text: str) -> list[Tok]:
    return [
        Tok(kind, m.group(), m.start(), m.end())
        for m in _TOKEN.finditer(text)
        if (kind := m.lastgroup) != "ws" and kind != "comment"
    ]


def match_brackets(toks: list[Tok]) -> dict[int, int]:
    """Index of the closing token of every ``(``, ``[`` and ``{`` that is properly closed.
    At a closer that does not match the innermost opener the openers it skips stay unmatched."""
    out: dict[int, int] = {}
    stack: list[int] = []
    for i, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.text in _OPEN:
            stack.append(i)
        elif t.text in ")]}":
            # Unwind to the innermost opener of this kind (brackets of garbage stay unmatched).
            for depth in range(len(stack) - 1, -1, -1):
                if _OPEN[toks[stack[depth]].text] == t.text:
                    out[stack[depth]] = i
                    del stack[depth:]
                    break
    return out


def match_angle(toks: list[Tok], i: int, limit: int | None = None) -> int | None:
    """``toks[i]`` is ``<``: index of its ``>`` (nesting ``<>`` only; ``->`` is its own token)."""
    depth = 0
    end = len(toks) if limit is None else limit
    for j in range(i, end):
        t = toks[j]
        if t.kind != "punct":
            continue
        if t.text == "<":
            depth += 1
        elif t.text == ">":
            depth -= 1
            if depth == 0:
                return j
    return None


def is_token(toks: list[Tok], i: int, text: str, kind: str | None = None) -> bool:
    return 0 <= i < len(toks) and toks[i].text == text and (kind is None or toks[i].kind == kind)


def one_line(text: str) -> str:
    """``text`` (a span of MLIR) on one line: comments dropped, line breaks made spaces."""
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "comment":
            continue
        out.append(" " if kind == "ws" and "\n" in m.group(0) else m.group(0))
    return re.sub(r"  +", " ", "".join(out)).strip()


def offset_location(text: str, filename: str, offset: int) -> Location:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Location(filename, line, col)


class Edits:
    """Non-overlapping replacements of spans of one text, each padded to its span's line count."""

    def __init__(self, text: str):
        self.text = text
        self.items: list[tuple[int, int, str]] = []

    def replace(self, start: int, end: int, new: str) -> None:
        lines = self.text.count("\n", start, end)
        have = new.count("\n")
        if have > lines:  # never add lines: keep what follows where it was
            new = new.replace("\n", " ")
            have = 0
        self.items.append((start, end, new + "\n" * (lines - have)))

    def insert(self, at: int, new: str) -> None:
        self.items.append((at, at, new.replace("\n", " ")))

    def apply(self) -> str:
        items = sorted(self.items, key=lambda e: (e[0], e[1]))
        out, pos = [], 0
        for start, end, new in items:
            if start < pos:  # overlapping edit: a bug here, never silently garbled output
                raise AssertionError(f"overlapping compat edits at offset {start}")
            out.append(self.text[pos:start])
            out.append(new)
            pos = end
        out.append(self.text[pos:])
        return "".join(out)

    def new_offset(self, old: int) -> int:
        """Where offset ``old`` (not inside an edited span) lands after :meth:`apply`."""
        delta = sum(len(new) - (end - start) for start, end, new in self.items if end <= old)
        return old + delta
