"""Accept input written for older IREE releases: rewrite it into the syntax of the installed
IREE (3.13), keeping every line where it was so that diagnostics keep their line numbers.

What is rewritten (see notes/iree-hal-facts.md, "Text syntax moves between releases"):

* ``hal.executable.source private @ex attributes {objects = ...} {`` (before 3.13's strict
  properties) becomes ``hal.executable.source private @ex <{objects = ...}> {``; other
  (discardable) attributes of the dictionary stay in ``attributes {...}``.
* ``hal.executable.export ... attributes {workgroup_size = ..., workgroup_local_memory = ...,
  subgroup_size = ...}`` becomes ``... <{workgroup_size = ..., ...}>``, wherever the dictionary
  is: after the ``count`` region (3.4 to 3.12) or, before 3.4, between ``layout(...)`` and the
  count region; such a dictionary is moved after the region, onto the line of its closing ``}``.
* the pre-3.4 count region, an unnamed region after the export,
  ``{ ^bb0(%device: !hal.device, %w: index): ... hal.return %x, %y, %z : index, index, index }``,
  becomes ``count(%device: !hal.device, %w: index) -> (index, index, index) { ... }``.
* the pre-3.0 layouts with descriptor sets,
  ``#hal.pipeline.layout<push_constants = N, sets = [#hal.descriptor_set.layout<0, bindings =
  [#hal.descriptor_set.binding<0, storage_buffer, ReadOnly>, ...]>]>``, in any of the spellings
  IREE used (``#hal.executable.layout`` before the pipeline rename, the set and binding
  attributes written out or as bare ``<...>``, binding flags ``ReadOnly``, ``Indirect`` or
  ``"ReadOnly|Indirect"``, set ``flags = Indirect``), become
  ``#hal.pipeline.layout<constants = N, bindings = [#hal.pipeline.binding<storage_buffer,
  ReadOnly>, ...]>``: the bindings of all sets in (set, binding) order, which is the order
  IREE's CUDA HAL passed them in.
* an export's ``hal.interface.bindings = [#hal.interface.binding<set, binding>, ...]`` (gone
  from IREE 3.x, where dispatch operands bind in order) is dropped when it maps the operands
  in that order; any other mapping is an error. The same attribute on a ``flow.dispatch``
  (``flow.dispatch @ex::@f[...](...) {hal.interface.bindings = [...]} : ...``, as IREE's 2023
  samples/custom_dispatch/cuda wrote it) is dropped when its bindings ascend in (set,
  binding) order, which is the order 3.x binds the tensors in.
* a module's ``hal.device.targets = [...]`` (the 2023 samples name their devices and
  executable targets there, e.g. ``#hal.device.target<"cuda", {executable_targets =
  [#sm_52, #sm_80]}>``) is dropped: the device and architecture come from the command line
  (``--target``, ``--backend``), and IREE 3.13 would take the module's targets instead, for
  which it has no code-generation description ("missing GPU target" for any dispatch it
  generates itself). Object keys with ``target_arch`` stay: one executable variant per
  architecture (split-architectures).

How: the text is split into MLIR tokens (strings and ``//`` comments are never looked into),
brackets are matched, and only the token patterns above are touched; a pre-3.0 layout body is
read with a small lark grammar. Input that does not have these shapes is left as it is, so the
installed IREE reports whatever is wrong with it. A replacement never has more lines than what
it replaces and is padded with newlines to the same count, so only columns of the rewritten
lines move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autotune_export.frontend.compat_layouts import normalize_layout, rewrite_layouts
from autotune_export.frontend.compat_tokens import (
    Edits,
    Tok,
    is_token,
    lex,
    match_brackets,
    offset_location,
    one_line,
)
from autotune_export.support.diagnostics import DiagnosticError

__all__ = ["normalize", "normalize_layout"]

# Quick tests: text without any of these is returned unchanged without being tokenized.
_LAYOUT_TRIGGERS = re.compile(r"push_constants|#hal\.executable\.layout|\bsets\b")
_OP_TRIGGERS = re.compile(r"\battributes\b|\^|hal\.interface\.bindings|hal\.device\.targets")

#: Inherent attributes (MLIR properties) that used to be written in ``attributes {...}``.
_SOURCE_PROPS = frozenset({"objects"})
_EXPORT_PROPS = frozenset({"workgroup_size", "subgroup_size", "workgroup_local_memory", "source_locs"})
_VISIBILITY = frozenset({"public", "private", "nested"})


@dataclass
class _Entry:
    key: str
    first: int  # token indices, inclusive
    last: int


def _dict_entries(toks: list[Tok], open_i: int, close_i: int) -> list[_Entry] | None:
    """Entries of the attribute dictionary ``toks[open_i] == '{'`` .. ``toks[close_i]``, split at
    top-level commas (``<...>`` of dialect attributes nests too). None when it does not look
    like one (then nothing is rewritten)."""
    entries: list[_Entry] = []
    depth = 0
    start = open_i + 1
    for j in range(open_i + 1, close_i + 1):
        t = toks[j]
        at_end = j == close_i
        if not at_end and t.kind == "punct":
            if t.text in "([{<":
                depth += 1
            elif t.text in ")]}>":
                depth -= 1
        if at_end or (depth == 0 and t.kind == "punct" and t.text == ","):
            if j > start:
                key = toks[start]
                if key.kind not in ("id", "string"):
                    return None
                if j - start > 1 and toks[start + 1].text != "=":
                    return None
                entries.append(_Entry(key.text.strip('"'), start, j - 1))
            elif not at_end:
                return None  # ", ," or "{,"
            start = j + 1
    return entries


def _entry_text(text: str, toks: list[Tok], e: _Entry) -> str:
    return text[toks[e.first].start : toks[e.last].end]


def _interface_bindings(toks: list[Tok], e: _Entry) -> list[tuple[int, int]] | None:
    """The (set, binding) pairs of ``hal.interface.bindings = [#hal.interface.binding<S, B>, ...]``."""
    seq = toks[e.first : e.last + 1]
    if len(seq) < 4 or seq[1].text != "=" or seq[2].text != "[" or seq[-1].text != "]":
        return None
    out = []
    k = 3
    while k < len(seq) - 1:
        chunk = [t.text for t in seq[k : k + 6]]
        if len(chunk) < 6 or chunk[0] != "#hal.interface.binding" or chunk[1] != "<" or chunk[3] != "," or chunk[5] != ">":
            return None
        if not (chunk[2].isdigit() and chunk[4].isdigit()):
            return None
        out.append((int(chunk[2]), int(chunk[4])))
        k += 6
        if k < len(seq) - 1:
            if seq[k].text != ",":
                return None
            k += 1
    return out


class _OpRewriter:
    def __init__(self, text: str, filename: str, by_alias, by_offset, toks=None):
        self.text = text
        self.filename = filename
        self.toks = toks if toks is not None else lex(text)
        self.match = match_brackets(self.toks)
        self.edits = Edits(text)
        self.by_alias = by_alias
        self.by_offset = by_offset

    def error(self, offset: int, message: str) -> DiagnosticError:
        return DiagnosticError.at(offset_location(self.text, self.filename, offset), message)

    def run(self) -> str:
        toks = self.toks
        for i, t in enumerate(toks):
            if t.kind != "id":
                continue
            if t.text == "hal.executable.source":
                self.source(i)
            elif t.text == "hal.executable.export":
                self.export(i)
            elif t.text == "flow.dispatch":
                self.dispatch(i)
            elif t.text in ("module", "builtin.module"):
                self.module(i)
        return self.edits.apply() if self.edits.items else self.text

    def _after_symbol(self, i: int) -> int | None:
        toks = self.toks
        j = i + 1
        if j < len(toks) and toks[j].kind == "id" and toks[j].text in _VISIBILITY:
            j += 1
        if j < len(toks) and toks[j].kind == "at":
            return j + 1
        return None

    def _dict_at(self, j: int) -> tuple[int, int] | None:
        """``attributes {...}`` at token ``j``: indices of ``{`` and ``}``."""
        if is_token(self.toks, j, "attributes", "id") and is_token(self.toks, j + 1, "{", "punct") and (j + 1) in self.match:
            return j + 1, self.match[j + 1]
        return None

    def _split(self, open_i: int, close_i: int, props: frozenset[str], layout_keys=None, export=None):
        """``<{properties}> attributes {others}`` for a dictionary (either part may be absent;
        ``hal.interface.bindings`` of an export is checked and dropped), or None to leave it."""
        entries = _dict_entries(self.toks, open_i, close_i)
        if entries is None:
            return None
        inherent, rest = [], []
        for e in entries:
            if e.key in props:
                inherent.append(_entry_text(self.text, self.toks, e))
            elif e.key == "hal.interface.bindings" and export is not None:
                self._check_interface_bindings(e, layout_keys)
            else:
                rest.append(_entry_text(self.text, self.toks, e))
        parts = []
        if inherent:
            parts.append("<{" + ", ".join(inherent) + "}>")
        if rest:
            parts.append("attributes {" + ", ".join(rest) + "}")
        return " ".join(parts)

    def _check_interface_bindings(self, e: _Entry, layout_keys) -> None:
        pairs = _interface_bindings(self.toks, e)
        where = self.toks[e.first].start
        if pairs is None:
            raise self.error(where, "hal.interface.bindings is not a list of #hal.interface.binding<set, binding>")
        expected = layout_keys if layout_keys is not None else [(0, k) for k in range(len(pairs))]
        if pairs != list(expected)[: len(pairs)] or (layout_keys is not None and len(pairs) != len(layout_keys)):
            order = ", ".join(f"<{s}, {b}>" for s, b in expected)
            raise self.error(
                where,
                "hal.interface.bindings maps dispatch operands to bindings out of order; IREE 3.x binds "
                f"them in the layout's order ({order or 'no bindings'}): reorder the layout's bindings instead",
            )

    def source(self, i: int) -> None:
        j = self._after_symbol(i)
        if j is None:
            return
        d = self._dict_at(j)
        if d is None:
            return
        self._rewrite_dict_in_place(j, d, _SOURCE_PROPS)

    def _rewrite_dict_in_place(self, attr_i: int, d: tuple[int, int], props, layout_keys=None, export=None) -> None:
        open_i, close_i = d
        entries = _dict_entries(self.toks, open_i, close_i)
        if entries is None:
            return
        keys = [e.key for e in entries]
        if not any(k in props for k in keys) and "hal.interface.bindings" not in keys:
            return
        toks = self.toks
        if all(k in props for k in keys):
            # Keep the dictionary's text (comments, lines) as it is: `attributes {` -> `<{`.
            self.edits.replace(toks[attr_i].start, toks[open_i].end, "<{")
            self.edits.replace(toks[close_i].start, toks[close_i].end, "}>")
            return
        split = self._split(open_i, close_i, props, layout_keys, export)
        if split is None:
            return
        self.edits.replace(toks[attr_i].start, toks[close_i].end, split)

    def _layout_keys(self, open_i: int, close_i: int):
        """(set, binding) order of the layout inside ``layout(...)``, when it was rewritten."""
        toks = self.toks
        if close_i - open_i == 2 and toks[open_i + 1].kind == "hash":
            return self.by_alias.get(toks[open_i + 1].text)
        if close_i - open_i > 1:
            return self.by_offset.get(toks[open_i + 1].start)
        return None

    def export(self, i: int) -> None:
        toks, match = self.toks, self.match
        j = self._after_symbol(i)
        if j is None:
            return
        dict_span = None  # (index of 'attributes', '{', '}')
        region_end = None  # index of the '}' closing the last region
        old_region = None  # ('{' index, '}' index) of a pre-3.4 count region
        layout_keys = None
        has_props = False
        n = len(toks)
        while j < n:
            t = toks[j]
            if t.kind == "id" and t.text in ("ordinal", "layout", "fallback") and is_token(toks, j + 1, "(", "punct"):
                close = match.get(j + 1)
                if close is None:
                    return
                if t.text == "layout":
                    layout_keys = self._layout_keys(j + 1, close)
                j = close + 1
            elif t.kind == "id" and t.text in ("condition", "count") and is_token(toks, j + 1, "(", "punct"):
                close = match.get(j + 1)
                if close is None:
                    return
                k = close + 1
                while k < n and not (toks[k].kind == "punct" and toks[k].text in "{}"):
                    k += 1
                if k >= n or toks[k].text != "{" or k not in match:
                    return
                region_end = match[k]
                j = region_end + 1
            elif t.kind == "punct" and t.text == "<" and is_token(toks, j + 1, "{", "punct") and (j + 1) in match:
                if not is_token(toks, match[j + 1] + 1, ">"):
                    return
                has_props = True
                j = match[j + 1] + 2
            elif (d := self._dict_at(j)) is not None:
                if dict_span is not None:
                    return
                dict_span = (j, *d)
                j = d[1] + 1
            elif (
                t.kind == "punct"
                and t.text == "{"
                and j in match
                and region_end is None
                and old_region is None
                and j + 1 < n
                and toks[j + 1].kind == "block"
            ):
                old_region = (j, match[j])
                region_end = match[j]
                j = match[j] + 1
            else:
                break
        if old_region is not None:
            self._count_region(*old_region)
        if dict_span is None:
            return
        attr_i, open_i, close_i = dict_span
        if has_props:
            return  # both spellings: let IREE report it
        if region_end is not None and attr_i < region_end:
            # Before the region (pre-3.4): move the dictionary after the region's '}'.
            entries = _dict_entries(toks, open_i, close_i)
            if entries is None:
                return
            split = self._split(open_i, close_i, _EXPORT_PROPS, layout_keys, export=True)
            if split is None:
                return
            self.edits.replace(toks[attr_i].start, toks[close_i].end, "")
            if split:
                self.edits.insert(toks[region_end].end, " " + one_line(split))
            return
        self._rewrite_dict_in_place(attr_i, (open_i, close_i), _EXPORT_PROPS, layout_keys, export=True)

    def _drop_entries(self, open_i: int, close_i: int, drop, start: int) -> None:
        """Remove the entries ``drop(entry)`` selects from the dictionary ``toks[open_i]`` ..
        ``toks[close_i]``; the whole text from token ``start`` to the ``}`` when none is left."""
        toks = self.toks
        entries = _dict_entries(toks, open_i, close_i)
        if entries is None:
            return
        kept = [e for e in entries if not drop(e)]
        if len(kept) == len(entries):
            return
        if not kept:
            self.edits.replace(toks[start - 1].end if start > 0 else toks[start].start, toks[close_i].end, "")
            return
        self.edits.replace(
            toks[open_i].start, toks[close_i].end, "{" + ", ".join(_entry_text(self.text, toks, e) for e in kept) + "}"
        )

    def dispatch(self, i: int) -> None:
        """``flow.dispatch ... (operands) {hal.interface.bindings = [...]} : ...``: the attribute
        dropped when its (set, binding) pairs ascend (see the module doc)."""
        toks, match = self.toks, self.match
        j, n = i + 1, len(toks)
        if is_token(toks, j, "{", "punct") and j in match:  # {@a::@b, @c::@d}
            j = match[j] + 1
        else:  # @a::@b
            while j < n and (toks[j].kind == "at" or is_token(toks, j, ":", "punct")):
                j += 1
        if is_token(toks, j, "[", "punct") and j in match:  # the workload
            j = match[j] + 1
        if not (is_token(toks, j, "(", "punct") and j in match):
            return
        j = match[j] + 1
        if not (is_token(toks, j, "{", "punct") and j in match):
            return
        open_i, close_i = j, match[j]

        def drop(e: _Entry) -> bool:
            if e.key != "hal.interface.bindings":
                return False
            pairs = _interface_bindings(toks, e)
            if pairs is None:
                raise self.error(
                    toks[e.first].start, "hal.interface.bindings is not a list of #hal.interface.binding<set, binding>"
                )
            if any(a >= b for a, b in zip(pairs, pairs[1:])):
                raise self.error(
                    toks[e.first].start,
                    "hal.interface.bindings maps dispatch tensors to bindings out of order; IREE 3.x binds the tensor "
                    "operands, then the results, in the layout's order: reorder the operands or the layout instead",
                )
            return True

        self._drop_entries(open_i, close_i, drop, open_i)

    def module(self, i: int) -> None:
        """``module @m attributes {hal.device.targets = [...], ...}``: that entry dropped."""
        j = i + 1
        if j < len(self.toks) and self.toks[j].kind == "at":
            j += 1
        d = self._dict_at(j)
        if d is None:
            return
        self._drop_entries(d[0], d[1], lambda e: e.key == "hal.device.targets", j)

    def _count_region(self, open_i: int, close_i: int) -> None:
        """``{ ^bb0(args): ...}`` -> ``count(args) -> (index, index, index) { ...}``."""
        toks = self.toks
        label = open_i + 1
        k = label + 1
        args = ""
        if is_token(toks, k, "(", "punct") and k in self.match:
            args = one_line(self.text[toks[k].end : toks[self.match[k]].start])
            k = self.match[k] + 1
        if not is_token(toks, k, ":", "punct") or k >= close_i:
            return
        self.edits.replace(toks[open_i].start, toks[k].end, f"count({args}) -> (index, index, index) {{")


def normalize(text: str, filename: str = "-") -> str:
    """``text`` with the older IREE spellings above rewritten into IREE 3.13's.

    Every line stays where it was (a rewritten span keeps its number of line breaks). Text
    that has none of them is returned unchanged. Raises DiagnosticError (locations name
    ``filename``) for an old spelling that has no 3.13 equivalent: a malformed pre-3.0 layout,
    a binding declared twice, or ``hal.interface.bindings`` that reorder dispatch operands."""
    by_alias: dict = {}
    by_offset: dict = {}
    toks = None
    if _LAYOUT_TRIGGERS.search(text):
        new, by_alias, by_offset, toks = rewrite_layouts(text, filename)
        if new is not text:
            text, toks = new, None
    if not _OP_TRIGGERS.search(text):
        return text
    return _OpRewriter(text, filename, by_alias, by_offset, toks).run()
