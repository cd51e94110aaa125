"""PTX text read as PTX reads: tokens and names (comments and strings skipped), brackets, the
module's statements, and its entries with their parameters, directives and body
(:func:`_parse_module`). The structure every other part of :mod:`autotune_export.cuda.ptx`
works on; PTX ISA: "PTX Syntax" and "Kernel Function Parameters"."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


class PtxError(Exception):
    """A user-facing problem with PTX text or with assembling it (the message is one line)."""


@dataclass(frozen=True)
class PtxParam:
    """One parameter of a PTX kernel entry.

    ``ptx_type`` is the type as written (``.u64``, ``.u32``, ``.f32``, ``.u8``, ``.f64``,
    ``.b32``...); a by-value array parameter (e.g. a host-side TMA descriptor,
    ``.param .align 64 .b8 k_param_0[128]``) is written ``.b8[128]``. ``is_pointer`` is true for
    parameters declared with ``.ptr`` (Triton declares every pointer argument
    ``.param .u64 .ptr .global .align N``).
    """

    index: int
    name: str
    ptx_type: str
    is_pointer: bool


@dataclass(frozen=True)
class PtxEntry:
    """The single kernel entry of a Triton PTX module and the module's header.

    ``reqntid`` is the required block size from ``.reqntid`` (Triton: ``(num_warps * 32,)``),
    ``None`` when absent. ``version`` is the module's ``.version`` (e.g. ``"8.6"``), ``target`` the
    architecture of ``.target`` (e.g. ``"sm_80"``, ``"sm_90a"``).
    """

    name: str
    params: tuple[PtxParam, ...]
    reqntid: tuple[int, ...] | None
    version: str
    target: str


# --------------------------------------------------------------------------------------------
# Lexical helpers

# PTX identifiers: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+. A "word" for renaming purposes
# also swallows dots and '::' so that directives (.global), opcodes (ld.param.b64), state spaces
# (.shared::cta) and numbers (0f3F800000) are single tokens that never equal a symbol name.
_WORD_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z0-9_$%.]+(?:::[A-Za-z0-9_$.]+)*')
_IDENT_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+)$")
_COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
_DEBUG_LINE_RE = re.compile(r"^[ \t]*(?:\.loc|\.file|@@DWARF)\b[^\n]*\n?", re.M)
_VERSION_RE = re.compile(r"^[ \t]*\.version[ \t]+(\S+)[ \t]*(?:\n|$)", re.M)
_TARGET_RE = re.compile(r"^[ \t]*\.target[ \t]+([^\n]*?)[ \t]*(?:\n|$)", re.M)
_ADDRESS_SIZE_RE = re.compile(r"^[ \t]*\.address_size[ \t]+(\S+)[ \t]*(?:\n|$)", re.M)
_LINE_COMMENT_RE = re.compile(r"//[^\n]*")
_SCAN_RE = re.compile(r'[;{}()\[\]"=]')
_BRACE_RE = re.compile(r'[{}"]')
_LINKAGE = (".visible", ".extern", ".weak", ".common")
_VAR_SPACES = (".global", ".const", ".shared", ".local", ".tex")


def _strip_comments(text: str) -> str:
    if '"' not in text and "/*" not in text:
        # Only line comments (Triton's PTX): no string or block comment can hide or open one.
        return _LINE_COMMENT_RE.sub("", text)

    def repl(m: re.Match) -> str:
        s = m.group(0)
        if s.startswith('"'):
            return s
        if s.startswith("/*"):
            return " " + "\n" * s.count("\n")
        return ""

    return _COMMENT_RE.sub(repl, text)


_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$%.")
_TOKEN_END = r"(?![A-Za-z0-9_$%.]|::[A-Za-z0-9_$.])"


def _is_token(text: str, i: int, j: int) -> bool:
    """Whether ``text[i:j]`` (an identifier followed by no word character and no ``::X``)
    is a whole :data:`_WORD_RE` token, as tokenizing all of ``text`` gives it (not inside a
    string literal). Quick when the character before ``i`` cannot end a token and no quote
    precedes it on its line; else that line is tokenized (tokens and strings end at a
    newline)."""
    line = text.rfind("\n", 0, i) + 1
    before = text[i - 1] if i > line else " "
    if before not in _WORD_CHARS and before != ":" and '"' not in text[line:i]:
        return True
    for m in _WORD_RE.finditer(text, line):
        if m.end() > i:
            return m.start() == i and m.end() == j and text[i] != '"'
    return False


def _token_spans(text: str, names, suffix: str = "") -> list[tuple[int, int]]:
    """``(start, end)`` of every occurrence of one of ``names`` (identifiers; each followed by
    what the regular expression ``suffix`` matches) in ``text`` as a whole :data:`_WORD_RE`
    token outside string literals: the tokens that tokenizing all of ``text`` gives, found at
    C speed (the names are searched for, followed neither by a word character nor by ``::X``,
    and only their few occurrences are checked in Python)."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pattern = re.compile("(?:" + alternatives + ")" + suffix + _TOKEN_END)
    return [m.span() for m in pattern.finditer(text) if _is_token(text, m.start(), m.end())]


def _rename(text: str, mapping: dict[str, str]) -> str:
    """Replace whole identifier tokens (never parts of longer identifiers, never in strings)."""
    if not mapping:
        return text
    out, last = [], 0
    for i, j in _token_spans(text, mapping):
        out.append(text[last:i])
        out.append(mapping[text[i:j]])
        last = j
    out.append(text[last:])
    return "".join(out)


def _words(text: str) -> set[str]:
    return set(_WORD_RE.findall(text))


def _skip_string(text: str, i: int) -> int:
    """``text[i]`` is a quote; return the index after the closing quote."""
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == '"':
            return j + 1
        j += 1
    raise PtxError("unterminated string literal in PTX")


def _depths(text: str, start: int = 0):
    """``(index, depth after the character)`` for each character of ``text`` from ``start``
    outside string literals; ``({[`` open a level and ``)}]`` close one."""
    depth, pos, n = 0, start, len(text)
    while pos < n:
        c = text[pos]
        if c == '"':
            pos = _skip_string(text, pos)
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        yield pos, depth
        pos += 1


def _match_close(text: str, i: int) -> int:
    """``text[i]`` is an opening bracket; return the index just after its matching close."""
    for pos, depth in _depths(text, i):
        if depth == 0:
            return pos + 1
    raise PtxError(f"unbalanced '{text[i]}' in PTX")


def _skip_braces(text: str, i: int) -> int:
    """``text[i]`` is ``{``; return the index just after its matching ``}``, counting braces
    only (outside string literals)."""
    depth, pos, search = 0, i, _BRACE_RE.search
    while True:
        m = search(text, pos)
        if m is None:
            rest = text[i:].strip()
            raise PtxError(f"unterminated PTX statement at module scope: {rest[:60]!r}")
        c = m.group(0)
        if c == '"':
            pos = _skip_string(text, m.start())
            continue
        pos = m.end()
        depth += 1 if c == "{" else -1
        if depth == 0:
            return pos


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside (), [], {} and strings."""
    out, start = [], 0
    for i, depth in _depths(text):
        if depth == 0 and text[i] == sep:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


# --------------------------------------------------------------------------------------------
# Module structure


@dataclass(frozen=True)
class _Stmt:
    kind: str  # "entry" | "func" | "var" | "other"
    text: str  # statement text, comments and debug lines removed, trailing ';' kept
    names: tuple[str, ...]  # module-scope symbols it defines or declares
    extern: bool  # declared .extern


@dataclass(frozen=True)
class _EntryInfo:
    stmt_index: int
    prefix: str  # linkage before ".entry" (".visible ")
    name: str
    param_decls: tuple[str, ...]  # each declaration, stripped, without the trailing comma
    params: tuple[PtxParam, ...]
    directives: str  # between ')' and '{' (.reqntid, .maxnreg, ...)
    body: str  # '{ ... }' inclusive


@dataclass(frozen=True)
class _Module:
    version: str | None
    target: tuple[str, ...] | None  # (arch, modifiers...) without "debug"
    address_size: str | None
    stmts: tuple[_Stmt, ...]
    entries: tuple[_EntryInfo, ...]


def _split_statements(text: str) -> list[str]:
    """Split module-scope text into statements.

    A statement ends with ';' at depth 0, or with the '}' that closes a function body or a
    section (not an initializer: '= { ... };' runs to its ';').
    """
    stmts: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        depth = 0
        saw_eq = False
        end = None
        pos = i
        while pos < n:
            m = _SCAN_RE.search(text, pos)
            if m is None:
                break
            c = m.group(0)
            pos = m.end()
            if c == '"':
                pos = _skip_string(text, m.start())
            elif c == "{" and depth == 0 and not saw_eq:
                # A function body or a section: only braces (and strings) matter up to its
                # end; the ';', brackets and parentheses inside are not scanned one by one.
                end = _skip_braces(text, m.start())
                break
            elif c in "([{":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == "}":
                depth -= 1
                if depth == 0 and not saw_eq:
                    end = pos
                    break
            elif c == "=" and depth == 0:
                saw_eq = True
            elif c == ";" and depth == 0:
                end = pos
                break
        if end is None:
            rest = text[start:].strip()
            raise PtxError(f"unterminated PTX statement at module scope: {rest[:60]!r}")
        stmts.append(text[start:end])
        i = end
    return stmts


def _func_name(stmt: str, kw_end: int) -> str:
    """Name of a '.func' statement; ``kw_end`` is the offset just after '.func'."""
    i = kw_end
    n = len(stmt)
    while i < n and stmt[i].isspace():
        i += 1
    if i < n and stmt[i] == "(":  # return parameter list
        i = _match_close(stmt, i)
        while i < n and stmt[i].isspace():
            i += 1
    m = re.compile(r"[A-Za-z_$%][A-Za-z0-9_$]*").match(stmt, i)
    if not m:
        raise PtxError(f"cannot find the name of a .func: {stmt[:80]!r}")
    return m.group(0)


def _parse_param(index: int, decl: str) -> PtxParam:
    words = decl.replace("[", " [").split()
    name = None
    ptx_type = None
    is_pointer = False
    array = ""
    for w in words:
        if w.startswith("["):
            array = w
        elif w == ".ptr":
            is_pointer = True
        elif w.startswith("."):
            if w in (".param", ".align", ".global", ".shared", ".const", ".local", ".reg"):
                continue
            if ptx_type is None:
                ptx_type = w
        elif w[0].isdigit():
            continue
        else:
            name = w
    if name is None or ptx_type is None:
        raise PtxError(f"cannot parse entry parameter declaration {decl.strip()!r}")
    return PtxParam(index, name, ptx_type + array, is_pointer)


def _parse_entry_stmt(idx: int, stmt: str) -> _EntryInfo:
    m = re.search(r"\.entry\s+([A-Za-z_$%][A-Za-z0-9_$]*)\s*", stmt)
    if not m:
        raise PtxError("malformed .entry")
    name = m.group(1)
    prefix = stmt[: m.start()]
    pos = m.end()
    param_decls: tuple[str, ...] = ()
    if pos < len(stmt) and stmt[pos] == "(":
        close = _match_close(stmt, pos)
        inner = stmt[pos + 1 : close - 1]
        param_decls = tuple(p.strip() for p in _split_top(inner) if p.strip())
        pos = close
    brace = stmt.find("{", pos)
    if brace < 0 or not stmt.rstrip().endswith("}"):
        raise PtxError(f"entry {name} has no body (a declaration is not a kernel)")
    directives = stmt[pos:brace].strip()
    body = stmt[brace:].rstrip()
    params = tuple(_parse_param(i, d) for i, d in enumerate(param_decls))
    return _EntryInfo(idx, prefix, name, param_decls, params, directives, body)


def _classify(stmt: str) -> _Stmt:
    toks = stmt.split(None, 8)
    linkage = []
    k = 0
    while k < len(toks) and toks[k] in _LINKAGE:
        linkage.append(toks[k])
        k += 1
    extern = ".extern" in linkage
    head = toks[k] if k < len(toks) else ""
    if head.startswith(".entry"):
        return _Stmt("entry", stmt, (), extern)
    if head.startswith(".func"):
        kw = stmt.index(".func") + len(".func")
        return _Stmt("func", stmt, (_func_name(stmt, kw),), extern)
    if head in _VAR_SPACES:
        decl = _split_top(stmt.rstrip().rstrip(";"), "=")[0]
        decl = re.sub(r"\[[^\]]*\]", " ", decl)
        names = tuple(w for w in _WORD_RE.findall(decl) if not w.startswith(".") and not w[0].isdigit() and not w.startswith('"'))
        return _Stmt("var", stmt, names, extern)
    return _Stmt("other", stmt, (), extern)


def _clean(ptx: str) -> str:
    """Remove comments and line debug directives (.loc, .file, @@DWARF)."""
    text = _strip_comments(ptx)
    if ".loc" in text or ".file" in text or "@@DWARF" in text:
        text = _DEBUG_LINE_RE.sub("", text)
    return text


@functools.lru_cache(maxsize=128)
def _parse_module(ptx: str) -> _Module:
    if not isinstance(ptx, str):
        raise PtxError(f"PTX must be text, got {type(ptx).__name__}")
    text = _clean(ptx)

    def header(regex: re.Pattern, what: str) -> str | None:
        nonlocal text
        if text.count(what) <= 1:  # the usual case: one search, no second pass to remove it
            m = regex.search(text)
            if m is None:
                return None
            text = text[: m.start()] + text[m.end() :]
            return m.group(1).strip()
        found = regex.findall(text)
        if len(found) > 1:
            raise PtxError(f"PTX module has {len(found)} {what} directives")
        text = regex.sub("", text)
        return found[0].strip() if found else None

    version = header(_VERSION_RE, ".version")
    target_s = header(_TARGET_RE, ".target")
    address_size = header(_ADDRESS_SIZE_RE, ".address_size")
    target = None
    if target_s is not None:
        items = [t.strip() for t in target_s.split(",") if t.strip()]
        target = tuple([items[0]] + [t for t in items[1:] if t != "debug"]) if items else None

    stmts: list[_Stmt] = []
    entries: list[_EntryInfo] = []
    for raw in _split_statements(text):
        s = _classify(raw.strip())
        if s.kind == "other" and s.text.startswith(".section"):
            continue  # DWARF: .section .debug_* { ... }
        if s.kind == "entry":
            entries.append(_parse_entry_stmt(len(stmts), s.text))
        stmts.append(s)
    return _Module(version, target, address_size, tuple(stmts), tuple(entries))


def _single_entry(ptx: str) -> tuple[_Module, _EntryInfo]:
    mod = _parse_module(ptx)
    if len(mod.entries) != 1:
        names = ", ".join(e.name for e in mod.entries) or "none"
        raise PtxError(f"expected exactly one .entry in the PTX module, found {len(mod.entries)} ({names})")
    return mod, mod.entries[0]
