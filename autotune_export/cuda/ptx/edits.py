"""Checking what :func:`autotune_export.cuda.ptx.link` edited: a skeleton of the linked module
(its loads, without the rest of each body) that ``ptxas`` assembles in a fraction of the time
of the whole, and inserting an unused parameter into an entry."""

from __future__ import annotations

import bisect
import re

from autotune_export.cuda.ptx import ptxas
from autotune_export.cuda.ptx.syntax import (
    _BRACE_RE,
    _IDENT_RE,
    _WORD_CHARS,
    _WORD_RE,
    PtxError,
    _parse_module,
    _single_entry,
    _skip_string,
    _token_spans,
)


# --------------------------------------------------------------------------------------------
# Checking the edits of a linked module


_BODY_SCAN_RE = re.compile(r'[{};"]')
_LABEL_RE = re.compile(r"\s*([A-Za-z_$%][A-Za-z0-9_$]*)\s*:(?!:)")
_BODY_DECLS = (".reg", ".local", ".shared", ".param", ".const")
# Statements that load or store a parameter, or name one the way PTX names them (NAME_param_N,
# also a name no declaration has any more), or a placeholder of a rewritten parameter.
_PARAM_REF_RE = re.compile(r"\.param\b|_param_\d")


def _strip_labels(text: str) -> tuple[list[str], str]:
    """``(labels, rest)``: the labels (``$L__BB0_1:``) in front of a statement, and the rest."""
    labels = []
    while True:
        m = _LABEL_RE.match(text)
        if m is None:
            return labels, text
        labels.append(m.group(1))
        text = text[m.end() :]


def _body_statements(body: str) -> list[tuple[int, int]]:
    """``(start, end)`` in ``body`` (an entry's ``{ ... }``) of its top-level statements: each
    ends with a ``;`` at depth 0 (braces inside an instruction, ``mov.b64 %rd1, {%r1, %r2};``,
    are its operands) or is a nested ``{ ... }`` block (one that opens a statement, labels
    aside); trailing labels are a statement of their own. Raises PtxError for an unbalanced
    body."""
    spans, start, end = [], 1, len(body) - 1
    depth = 0  # of braces
    block = False  # whether the open depth-0 brace opened a nested block
    pos = 1
    search = _BODY_SCAN_RE.search
    while True:
        m = search(body, pos, end)
        if m is None:
            break
        c, i = m.group(0), m.start()
        pos = i + 1
        if c == '"':
            pos = _skip_string(body, i)
        elif c == "{":
            if depth == 0:
                head = body[start:i]
                block = not head.strip() or not _strip_labels(head)[1].strip()
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise PtxError("unbalanced '}' in a PTX entry body")
            if depth == 0 and block:
                spans.append((start, pos))
                start = pos
        elif depth == 0:  # ';'
            spans.append((start, pos))
            start = pos
    if depth:
        raise PtxError("unbalanced '{' in a PTX entry body")
    if body[start:end].strip():
        spans.append((start, end))
    return spans


# A declaration that starts its statement (after a boundary and labels): .reg, .local, ...
_DECL_RE = re.compile(
    r"(?:^|[;}])[ \t\n]*(?:[A-Za-z_$%][A-Za-z0-9_$]*[ \t]*:(?!:)[ \t\n]*)*"
    r"(\.(?:reg|local|shared|param|const))[ \t]",
    re.M,
)


class _Statements:
    """The top-level statements of an entry body (as :func:`_body_statements` splits it),
    looked up by position: ``span(i)`` is the ``(start, end)`` of the statement holding
    ``body[i]``. Without string literals in the body only its braces are walked in Python
    (the ``;`` are found by ``str.rfind``/``str.find``); with them, every statement."""

    def __init__(self, body: str):
        self.body, self.end = body, len(body) - 1
        self.blocks: list[tuple[int, int]] = []  # (statement start, end) of nested blocks
        self.spans: list[tuple[int, int]] | None = None
        if '"' in body:
            self.spans = _body_statements(body)
            self.starts = [a for a, _ in self.spans]
            return
        depth, block, scan, cur, opened = 0, False, 1, 1, 0
        for m in _BRACE_RE.finditer(body, 1, self.end):
            i = m.start()
            if m.group(0) == "{":
                if depth == 0:
                    q = body.rfind(";", scan, i)
                    if q >= 0:
                        cur = q + 1
                    head = body[cur:i]
                    block = not head.strip() or not _strip_labels(head)[1].strip()
                    opened = cur
                depth += 1
            else:
                depth -= 1
                if depth < 0:
                    raise PtxError("unbalanced '}' in a PTX entry body")
                if depth == 0:
                    scan = i + 1
                    if block:
                        self.blocks.append((opened, i + 1))
                        cur = i + 1
        if depth:
            raise PtxError("unbalanced '{' in a PTX entry body")
        self.block_starts = [a for a, _ in self.blocks]

    def span(self, i: int) -> tuple[int, int]:
        if self.spans is not None:
            return self.spans[bisect.bisect_right(self.starts, i) - 1]
        k = bisect.bisect_right(self.block_starts, i) - 1
        if k >= 0 and i < self.blocks[k][1]:
            return self.blocks[k]
        low = self.blocks[k][1] if k >= 0 else 1  # the end of the block before, or the body's start
        a = max(low, self.body.rfind(";", low, i) + 1)
        b = self.body.find(";", i, self.end)
        nxt = self.block_starts[k + 1] if k + 1 < len(self.blocks) else self.end
        return a, (b + 1 if 0 <= b < nxt else nxt)

    def after(self, b: int) -> tuple[int, int] | None:
        """The statement after the one ending at ``b`` when it starts on that line."""
        j = b
        while j < self.end and self.body[j] in " \t\r":
            j += 1
        return None if j >= self.end or self.body[j] == "\n" else self.span(j)

    def before(self, a: int) -> tuple[int, int] | None:
        """The statement before the one starting at ``a`` when that one starts on its line."""
        t = self.body[a : self.end]
        if a <= 1 or "\n" in t[: len(t) - len(t.lstrip())]:
            return None
        return self.span(a - 1)


def _skeleton_body(body: str, watched, entries) -> str:
    """The statements of ``body`` that :func:`edit_skeleton` keeps, then ``ret;``:
    ``watched`` are the names whose statements stay, ``entries`` the entry names of the
    module (a ``<entry>__name`` the linker made stays too, declared or not)."""
    index = _Statements(body)
    # Positions that make their statement stay, found by regular expressions over the body;
    # only those few statements are looked at one by one.
    hits = [i for i, _ in _token_spans(body, watched)] if watched else []
    hits += [i for i, _ in _token_spans(body, entries, r"__[A-Za-z0-9_$]+")] if entries else []
    hits += [m.start() for m in _PARAM_REF_RE.finditer(body)]
    keep = {index.span(i) for i in hits}
    for m in _DECL_RE.finditer(body, 1, len(body) - 1):  # top-level declarations (not in blocks)
        a, b = index.span(m.start(1))
        if _strip_labels(body[a:b])[1].lstrip().startswith("."):
            keep.add((a, b))
    # Statements written on one line go together (a rewritten load is a few statements in
    # place of one: ld.param; add; and).
    todo = list(keep)
    while todo:
        a, b = todo.pop()
        for other in (index.before(a), index.after(b)):
            if other is not None and other not in keep:
                keep.add(other)
                todo.append(other)
    lines = []
    for a, b in sorted(keep):
        _, text = _strip_labels(body[a:b])
        if text.strip():
            lines.append("\t" + text.strip())
    kept_text = "\n".join(lines)
    # Labels a kept statement branches to (a name defined as "name:" in the body), defined
    # before the final ret.
    names = {w for w in _WORD_RE.findall(kept_text) if _IDENT_RE.match(w) and w[0] != "%"} - set(watched)
    labels = [
        w
        for w in sorted(names)
        if any(
            m.start() == 0 or body[m.start() - 1] not in _WORD_CHARS for m in re.finditer(re.escape(w) + r"[ \t]*:(?!:)", body)
        )
    ]
    return "{\n" + "\n".join(lines + [f"{lab}:" for lab in labels] + ["\tret;"]) + "\n}"


def edit_skeleton(ptx: str) -> str:
    """What of a linked module :func:`link` and :func:`insert_param` may have changed, as a
    PTX module that ptxas checks in milliseconds: the header, every module-scope declaration
    and definition as it is, and every entry with its parameter list and directives whose body
    keeps only the register (and other) declarations, the statements that name a parameter or
    a module-scope symbol or load a parameter (the parameter loads, rewritten ``split``/
    ``align`` loads and the uses of renamed ``global_smem`` or ``.func`` names: every token the
    linker renames), the statements written on the same line as one of those, the labels they
    branch to, and ``ret;``.

    Everything else of a body is Triton's code with comments and debug lines removed, which
    Triton's own ptxas run (the cubin stage of ``triton.compile``) already assembled; the
    linker's own checks cover the rest (entry names unique, symbols that collide, dropped
    parameters unused). Raises :class:`PtxError` when the module does not parse."""
    mod = _parse_module(ptx)
    module_names = {n for st in mod.stmts for n in st.names}
    entry_names = {e.name for e in mod.entries}
    made = {n for n in module_names if any(n.startswith(en + "__") for en in entry_names)}
    out = []
    if mod.version is not None:
        out.append(f".version {mod.version}")
    if mod.target is not None:
        out.append(f".target {', '.join(mod.target)}")
    if mod.address_size is not None:
        out.append(f".address_size {mod.address_size}")
    entries = {e.stmt_index: e for e in mod.entries}
    for k, st in enumerate(mod.stmts):
        e = entries.get(k)
        if e is None:
            out.append(st.text)
            continue
        # The linker's <entry>__ names are found by their prefix; the rest by name.
        watched = {e.name} | {p.name for p in e.params} | (module_names - made)
        head = f"{e.prefix.strip()} .entry {e.name}(" if e.prefix.strip() else f".entry {e.name}("
        text = head + ("\n" + ",\n".join("\t" + d for d in e.param_decls) + "\n)" if e.param_decls else ")")
        if e.directives:
            text += "\n" + e.directives
        out.append(text + "\n" + _skeleton_body(e.body, watched, entry_names))
    return "\n\n".join(out) + "\n"


def check_edits(ptx: str, arch: str) -> bytes:
    """Assemble :func:`edit_skeleton` of ``ptx`` for ``arch``: the check of a linked module
    whose every part Triton's ptxas already assembled. Returns the skeleton's cubin (what a
    cache may keep as the proof of the check). Raises :class:`PtxError` with ptxas's first
    error lines, the offending line of the skeleton quoted."""
    skeleton = edit_skeleton(ptx)
    try:
        return ptxas.assemble(skeleton, arch)
    except PtxError as err:
        log = getattr(err, "stderr", "") or ""
        m = re.search(r"input\.ptx, line (\d+)", log)
        lines = skeleton.split("\n")
        if m and 0 < int(m.group(1)) <= len(lines):
            raise PtxError(f"{err} (the linked PTX reads: {lines[int(m.group(1)) - 1].strip()!r})") from None
        raise


def insert_param(ptx: str, position: int, ptx_type: str = ".u32") -> str:
    """Insert an unused parameter at ``position`` (0-based) of the module's single entry.

    Used for a variant specialized on an integer equal to 1: Triton's JIT makes such an
    argument a constexpr, so it leaves the PTX parameter list, while IREE still passes every
    dispatch constant; the placeholder keeps the specialized entry's parameters aligned with
    its unspecialized sibling (identical layouts). The placeholder is named
    ``<entry>_unused_<position>``. Raises :class:`PtxError` when the module has no single entry
    or ``position`` is past the end of the list.
    """
    _, e = _single_entry(ptx)
    if not 0 <= position <= len(e.params):
        raise PtxError(f"entry {e.name} has {len(e.params)} parameters; cannot insert at {position}")
    m = re.search(r"\.entry\s+" + re.escape(e.name) + r"\s*\(", ptx)
    if m is None:
        raise PtxError(f"cannot find the parameter list of entry {e.name}")
    start = m.end()
    depth, end = 1, start
    while depth and end < len(ptx):
        depth += {"(": 1, ")": -1}.get(ptx[end], 0)
        end += 1
    inner = ptx[start : end - 1]
    decls = [d for d in inner.split(",")] if inner.strip() else []
    placeholder = f"\n\t.param {ptx_type} {e.name}_unused_{position}"
    if position == len(decls):
        decls.append(placeholder + ("\n" if not decls else ""))
        if len(decls) > 1:
            decls[-2] = decls[-2].rstrip()
            decls[-1] = placeholder + "\n"
    else:
        decls.insert(position, placeholder)
    return ptx[:start] + ",".join(decls) + ptx[end - 1 :]
