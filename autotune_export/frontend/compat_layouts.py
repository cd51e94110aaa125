"""Pre-3.0 pipeline layouts for :mod:`autotune_export.frontend.compat`: a
``#hal.pipeline.layout<push_constants = N, sets = [...]>`` body (any spelling IREE used) read
with a small lark grammar and written in its 3.x spelling, bindings of all sets in (set,
binding) order (:func:`normalize_layout`), and every such layout of a text rewritten in place
(:func:`rewrite_layouts`, the first phase of :func:`~autotune_export.frontend.compat.normalize`)."""

from __future__ import annotations

import functools
import re

import lark

from autotune_export.frontend.compat_tokens import Edits, is_token, lex, match_angle, offset_location
from autotune_export.support.diagnostics import DiagnosticError


_LAYOUT_GRAMMAR = r"""
start: [item ("," item)*]
?item: "push_constants" "=" INT          -> push_constants
     | "sets" "=" "[" [set ("," set)*] "]" -> sets
     | "flags" "=" flags                 -> layout_flags
set: SET_NAME? "<" INT "," "bindings" "=" "[" [binding ("," binding)*] "]" ("," "flags" "=" flags)? ">"
binding: BINDING_NAME? "<" INT "," NAME ("," flags)? ">"
flags: NAME | STRING
SET_NAME: "#hal.descriptor_set.layout"
BINDING_NAME: "#hal.descriptor_set.binding"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
STRING: /"[^"\\\n]*"/
%import common.INT
%import common.WS
%ignore WS
COMMENT: /\/\/[^\n]*/
%ignore COMMENT
"""

_TERMINALS = {
    "COMMA": "','",
    "EQUAL": "'='",
    "LESSTHAN": "'<'",
    "MORETHAN": "'>'",
    "LSQB": "'['",
    "RSQB": "']'",
    "INT": "an integer",
    "NAME": "a name",
    "STRING": "a string",
    "SET_NAME": "#hal.descriptor_set.layout",
    "BINDING_NAME": "#hal.descriptor_set.binding",
    "$END": "the end of the layout",
    "PUSH_CONSTANTS": "'push_constants'",
    "SETS": "'sets'",
    "FLAGS": "'flags'",
    "BINDINGS": "'bindings'",
}
_BINDING_FLAGS = ("ReadOnly", "Indirect")
_DESCRIPTOR_TYPES = ("storage_buffer", "uniform_buffer")


@functools.lru_cache(maxsize=1)
def _layout_parser() -> lark.Lark:
    return lark.Lark(_LAYOUT_GRAMMAR, parser="lalr", propagate_positions=True, cache=True)


class _LayoutError(ValueError):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


def _flag_names(node, allowed: tuple[str, ...], what: str) -> list[str]:
    tok = node.children[0]
    text = str(tok).strip('"')
    names = [n.strip() for n in text.split("|") if n.strip() and n.strip() != "None"]
    for n in names:
        if n not in allowed:
            raise _LayoutError(f"unknown {what} flag '{n}'; expected {' or '.join(allowed)}", tok.start_pos)
    return names


@functools.lru_cache(maxsize=256)
def _normalize_layout_cached(body: str):
    return normalize_layout(body)


def normalize_layout(body: str) -> tuple[str, list[tuple[int, int]]]:
    """The 3.x spelling of a pre-3.0 layout whose text inside ``<...>`` is ``body``, e.g.
    ``push_constants = 1, sets = [<0, bindings = [<0, storage_buffer, ReadOnly>]>]``, and the
    ``(set, binding)`` pairs of its bindings in the order of the new ``bindings = [...]``.

    Raises ValueError (with an ``offset`` into ``body`` when it has one) for a malformed layout
    or one that names a binding twice."""
    try:
        tree = _layout_parser().parse(body)
    except lark.exceptions.UnexpectedInput as err:
        pos = getattr(err, "pos_in_stream", None)
        token = getattr(err, "token", None)
        if pos is None or (token is not None and getattr(token, "type", "") == "$END"):
            pos = len(body)
        m = re.compile(r'"[^"\n]*"?|[A-Za-z_][A-Za-z0-9_.]*|[0-9]+|\S').match(body, pos)
        found = f"'{m.group(0)}'" if m else "the end of the layout"
        expected = sorted({_TERMINALS.get(e, e.lower()) for e in getattr(err, "expected", ()) or ()})
        hint = f"expected {' or '.join(expected)}, " if expected and len(expected) <= 4 else ""
        raise _LayoutError(f"{hint}found {found}", pos) from None
    constants = 0
    flags: list[str] = []
    bindings: dict[tuple[int, int], tuple[str, list[str], int]] = {}
    seen_items: set[str] = set()
    for item in tree.children:
        if item is None:
            continue
        if item.data in seen_items:
            raise _LayoutError(f"'{item.data.removeprefix('layout_')}' is given twice", item.meta.start_pos)
        seen_items.add(item.data)
        if item.data == "push_constants":
            constants = int(item.children[0])
        elif item.data == "layout_flags":
            flags += _flag_names(item.children[0], ("Indirect",), "layout")
        else:
            for st in item.children:
                if st is None:
                    continue
                parts = [c for c in st.children if not (isinstance(c, lark.Token) and c.type == "SET_NAME")]
                set_no = int(parts[0])
                for b in parts[1:]:
                    if b is None:
                        continue
                    if isinstance(b, lark.Tree) and b.data == "flags":
                        flags += _flag_names(b, ("Indirect",), "descriptor set")
                        continue
                    bparts = [c for c in b.children if not (isinstance(c, lark.Token) and c.type == "BINDING_NAME")]
                    number, dtype = int(bparts[0]), str(bparts[1])
                    if dtype not in _DESCRIPTOR_TYPES:
                        raise _LayoutError(
                            f"unknown descriptor type '{dtype}'; expected {' or '.join(_DESCRIPTOR_TYPES)}", bparts[1].start_pos
                        )
                    bflags = (
                        _flag_names(bparts[2], _BINDING_FLAGS, "binding") if len(bparts) > 2 and bparts[2] is not None else []
                    )
                    key = (set_no, number)
                    if key in bindings:
                        raise _LayoutError(f"set {set_no} binding {number} is declared twice", b.meta.start_pos)
                    bindings[key] = (dtype, bflags, b.meta.start_pos)
    items = []
    if constants:
        items.append(f"constants = {constants}")
    rendered = []
    for key in sorted(bindings):
        dtype, bflags, _ = bindings[key]
        ordered = [f for f in _BINDING_FLAGS if f in bflags]
        if len(ordered) > 1:
            rendered.append(f'#hal.pipeline.binding<{dtype}, "{"|".join(ordered)}">')
        elif ordered:
            rendered.append(f"#hal.pipeline.binding<{dtype}, {ordered[0]}>")
        else:
            rendered.append(f"#hal.pipeline.binding<{dtype}>")
    items.append("bindings = [" + ", ".join(rendered) + "]")
    if flags:
        items.append("flags = Indirect")
    return "#hal.pipeline.layout<" + ", ".join(items) + ">", sorted(bindings)


_LAYOUT_NAMES = ("#hal.pipeline.layout", "#hal.executable.layout")


def rewrite_layouts(text: str, filename: str):
    """Phase 1: every pre-3.0 layout attribute in its 3.x spelling.

    Returns the new text (``text`` itself when nothing changed), the (set, binding) order of
    layouts bound to an alias (``#name = #hal.pipeline.layout<...>``) and of the others by
    their offset in the new text, and the tokens of ``text``."""
    toks = lex(text)
    edits = Edits(text)
    by_alias: dict[str, list[tuple[int, int]]] = {}
    by_offset: dict[int, list[tuple[int, int]]] = {}
    pending: list[tuple[int, list[tuple[int, int]]]] = []
    for i, t in enumerate(toks):
        if t.kind != "hash" or t.text not in _LAYOUT_NAMES or not is_token(toks, i + 1, "<") or toks[i + 1].start != t.end:
            continue
        close = match_angle(toks, i + 1)
        if close is None:
            continue
        first = toks[i + 2] if i + 2 < close else None
        old = t.text == "#hal.executable.layout" or (first is not None and first.text in ("push_constants", "sets"))
        if not old:
            continue
        body_start, body_end = toks[i + 1].end, toks[close].start
        try:
            new, keys = _normalize_layout_cached(text[body_start:body_end])
        except _LayoutError as err:
            raise DiagnosticError.at(
                offset_location(text, filename, body_start + err.offset),
                f"malformed pre-3.0 layout {t.text}<push_constants = N, sets = [...]>: {err}",
            ) from None
        edits.replace(t.start, toks[close].end, new)
        if i >= 2 and toks[i - 1].text == "=" and toks[i - 2].kind == "hash":
            by_alias[toks[i - 2].text] = keys
        else:
            pending.append((t.start, keys))
    if not edits.items:
        return text, by_alias, by_offset, toks
    for start, keys in pending:
        by_offset[edits.new_offset(start)] = keys
    return edits.apply(), by_alias, by_offset, toks
