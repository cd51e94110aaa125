"""PTX text utilities: read Triton's kernel entry, link variants into one module, run ptxas.

Why PTX text is edited at all, when Triton has IR levels above it (TTIR, TTGIR, LLVM IR): two
things no IR level of Triton exposes. First, linking: IREE wants several Triton compilations
(every config of a kernel, each its own module with an entry of the same name) as ONE object;
Triton compiles one kernel per module and has no linker for its outputs. Second, IREE's calling
convention: the parameter list IREE passes (bindings, then 32-bit constants, nothing hidden)
differs from Triton's (arguments in declaration order, 64-bit scalars, hidden scratch pointers),
and Triton's lowering offers no hook to change it. What can be read from an IR is read there:
the pointers a kernel writes come from its TTIR (:mod:`autotune_export.cuda.ttir`).

IREE's CUDA HAL takes exactly one object per external executable variant ("only one object
reference is supported for external variants"), so every config of a Triton kernel that becomes an
export of one ``hal.executable.source`` must live in ONE PTX module. Triton emits one module per
compilation, each with one ``.visible .entry`` that has the Python function's name. :func:`link`
merges such modules: it renames each entry (and its ``NAME_param_N`` parameters), reorders and
drops parameters to match IREE's calling convention, gives every other module-scope symbol a
per-part prefix, and strips debug information.

Conventions this module bridges:

* IREE CUDA HAL (``iree/hal/drivers/cuda``): kernel parameters are one pointer per binding, in
  binding order, then one 32-bit value per push constant. There is nothing else: no hidden
  pointers, no 64-bit scalars. :func:`link` adapts an entry to that (``LinkPart.adapt``): a
  narrow scalar parameter is declared ``.u32``, a 64-bit scalar becomes two ``.u32``
  parameters reassembled in the kernel, and a pointer can be rounded up to an alignment.
* Triton (3.3+): after the user's non-constexpr arguments come hidden trailing pointers,
  ``global_scratch`` (3.3+) and ``profile_scratch`` (3.5+). They are unused when the matching
  ``metadata.*_scratch_size`` is 0; a kernel that needs global scratch gets it as an extra
  binding (see :mod:`autotune_export.cuda.abi`), placed like any other parameter by ``param_order``.

Everything here works on PTX text with the standard library; Triton is used only to locate its
bundled ``ptxas`` (found without importing Triton).
"""

from __future__ import annotations

import argparse
import bisect
import functools
import importlib.util
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from autotune_export.cuda.targets import CudaTarget, TargetError, parse_target

__all__ = [
    "PtxError",
    "PtxParam",
    "PtxEntry",
    "LinkPart",
    "parse_entry",
    "parse_ptx_version",
    "PtxVersionError",
    "ptx_version_text",
    "module_target",
    "object_architecture",
    "param_is_used",
    "link",
    "assemble",
    "check",
    "check_edits",
    "edit_skeleton",
    "ptxas_path",
]


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


@dataclass(frozen=True)
class LinkPart:
    """One Triton PTX module to link, and how its entry appears in the linked module.

    ``entry``: the new entry name, unique in the linked module (it becomes the export symbol).
    ``param_order``: original parameter indices in their new order (IREE order: binding pointers
    first, then 32-bit constants). ``drop``: original indices to remove (Triton's hidden trailing
    ``global_scratch`` / ``profile_scratch`` pointers). Every original index must appear exactly
    once in ``param_order`` or ``drop``.

    ``adapt`` maps original indices (of ``param_order``) to a rewrite of that parameter:

    * ``"widen"``: a scalar of at most 4 bytes (``.u8``, ``.u16``, ``.b8[2]``...) is declared
      ``.param .u32``; the kernel's ``ld.param.b8``/``.b16`` then reads the low bytes of the
      32-bit value IREE passes (PTX parameters are little-endian);
    * ``"split"``: a 64-bit scalar (``.u64``, ``.s64``, ``.b64``, ``.f64``) becomes two ``.u32``
      parameters, low half first, occupying two consecutive positions; every
      ``ld.param.<64-bit> %d, [p]`` of it becomes ``ld.param.b32`` of both halves and
      ``mov.b64 %d, {lo, hi}`` (in a scoped block declaring the two registers);
    * ``"align:N"``: a 64-bit pointer whose every ``ld.param`` is followed by rounding the loaded
      address up to a multiple of ``N`` (a power of two), for scratch buffers whose binding
      offset IREE aligns less than the kernel needs.
    """

    ptx: str
    entry: str
    param_order: Sequence[int]
    drop: Sequence[int] = ()
    adapt: Mapping[int, str] = field(default_factory=dict)


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
_VERSION_FMT = re.compile(r"^\d+\.\d+$")


class PtxVersionError(ValueError, argparse.ArgumentTypeError):
    """A PTX ISA version that :func:`parse_ptx_version` cannot read. A ValueError, and an
    argparse.ArgumentTypeError so that a command using the parser as an argument ``type``
    prints the message as it is."""


def parse_ptx_version(value: str | int) -> int:
    """A PTX ISA version in either spelling the tools accept, as Triton's ``ptx_version``
    option writes it: ``"8.6"``, ``"86"`` and ``86`` all give 86 (major * 10 + minor; ISA
    versions have one minor digit). The one parser behind ``autotune-export --ptx-version`` and
    the jax-triton converter's ``--ptx-version``.

    Raises :class:`PtxVersionError` for anything else (``"8"``, ``"8.10"``, ``"860"``, ``"x"``,
    a bool)."""
    if isinstance(value, bool):
        raise PtxVersionError(f"PTX ISA version must look like 86 or 8.6, got {value!r}")
    text = str(value).strip()
    m = re.fullmatch(r"([1-9])\.(\d)|([1-9]\d)", text)
    if m is None:
        raise PtxVersionError(f"PTX ISA version must look like 86 or 8.6, got {value!r}")
    return int(m.group(3)) if m.group(3) else int(m.group(1)) * 10 + int(m.group(2))


def ptx_version_text(version: str | int) -> str:
    """``86`` (or ``"8.6"``, ``"86"``) as the ``.version`` directive writes it: ``"8.6"``.
    Raises :class:`PtxVersionError` (see :func:`parse_ptx_version`)."""
    v = parse_ptx_version(version)
    return f"{v // 10}.{v % 10}"


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


# --------------------------------------------------------------------------------------------
# Entry inspection


def parse_entry(ptx: str) -> PtxEntry:
    """Parse the one kernel entry of a Triton PTX module.

    Returns the entry's name, its parameters in declaration order (Triton: the non-constexpr
    arguments, then the hidden ``global_scratch`` and ``profile_scratch`` pointers), ``.reqntid``
    (threads per block), and the module's ``.version`` and ``.target`` architecture.

    Raises :class:`PtxError` if the module does not have exactly one ``.entry`` or lacks
    ``.version`` / ``.target``.
    """
    mod, e = _single_entry(ptx)
    if mod.version is None:
        raise PtxError(f"PTX module of {e.name} has no .version")
    if mod.target is None:
        raise PtxError(f"PTX module of {e.name} has no .target")
    reqntid = None
    m = re.search(r"\.reqntid\s+(\d+(?:\s*,\s*\d+)*)", e.directives)
    if m:
        reqntid = tuple(int(x) for x in m.group(1).split(","))
    return PtxEntry(e.name, e.params, reqntid, mod.version, mod.target[0])


def module_target(ptx: str) -> str | None:
    """The architecture of a PTX module's ``.target`` directive (``"sm_80"``, ``"sm_90a"``;
    options such as ``debug`` or ``texmode_independent`` left out), or None when it has none.
    Unlike :func:`parse_entry`, any number of entries is fine (a linked module, a user's
    object). Raises :class:`PtxError` when the module has several ``.target`` directives."""
    found = _TARGET_RE.findall(_strip_comments(ptx))
    if len(found) > 1:
        raise PtxError(f"PTX module has {len(found)} .target directives")
    items = [t.strip() for t in found[0].split(",") if t.strip()] if found else []
    return items[0] if items else None


#: ELF OS ABI of CUDA cubins: 0x33 for the ABI up to CUDA 12 (architecture in e_flags bits
#: 0-7, arch-specific "a" variants flagged by 0x800), 0x41 for the newer one (CUDA 12.8+ for
#: sm_100 and later: architecture in bits 8-15, "a" flagged by 0x8). Checked against the
#: cubins of Triton's bundled ptxas (sm_90a: 0x5a0d5a, sm_100a: 0x600640a).
_ELFOSABI_CUDA_V1, _ELFOSABI_CUDA_V2 = 0x33, 0x41


def object_architecture(data: bytes | str) -> CudaTarget | None:
    """The CUDA architecture an executable object is for: a cubin's (ELF e_flags), or a PTX
    module's ``.target``. None for anything else (not PTX or a CUDA ELF, or no ``.target``)
    and for spellings that are not ``sm_XY``/``sm_XYa``."""
    if isinstance(data, (bytes, bytearray)):
        raw = bytes(data)
        if raw.startswith(b"\x7fELF"):
            if len(raw) < 52 or raw[4] != 2:  # ELFCLASS64 is all ptxas writes
                return None
            flags = int.from_bytes(raw[48:52], "little")
            if raw[7] == _ELFOSABI_CUDA_V2:
                return CudaTarget((flags >> 8) & 0xFF, "a" if flags & 0x8 else "")
            if raw[7] == _ELFOSABI_CUDA_V1:
                return CudaTarget(flags & 0xFF, "a" if flags & 0x800 else "")
            return None
        try:
            data = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        arch = module_target(data)
        return parse_target(arch, supported_only=False) if arch else None
    except (PtxError, TargetError):
        return None


def _uses_token(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a whole token outside string literals."""
    return name in text and bool(_token_spans(text, (name,)))


def param_is_used(ptx: str, index: int) -> bool:
    """Whether the entry's body refers to parameter ``index`` (0-based, declaration order).

    A parameter is used when its name appears as a whole identifier in the body, e.g. in
    ``ld.param.b64 %rd1, [k_param_3]`` or ``mov.b64 %rd2, k_param_3``. Triton's hidden
    ``global_scratch`` / ``profile_scratch`` pointers are unused unless the kernel needs scratch
    memory, which an IREE dispatch cannot provide.

    Raises :class:`PtxError` if the module does not have exactly one entry or ``index`` is out of
    range.
    """
    _, e = _single_entry(ptx)
    if not 0 <= index < len(e.params):
        raise PtxError(f"entry {e.name} has {len(e.params)} parameters; index {index} is out of range")
    name = e.params[index].name
    return _uses_token(e.body, name) or _uses_token(e.directives, name)


# --------------------------------------------------------------------------------------------
# Linking


def _version_key(v: str) -> tuple[int, int]:
    a, b = v.split(".")
    return int(a), int(b)


def _tidy(text: str) -> str:
    """Strip trailing blanks and collapse runs of empty lines (deterministic layout)."""
    lines = [ln.rstrip() for ln in text.strip("\n").split("\n")]
    out: list[str] = []
    for ln in lines:
        if not ln and out and not out[-1]:
            continue
        out.append(ln)
    return "\n".join(out)


def _normalize(text: str) -> str:
    return " ".join(text.split())


def link(parts: Sequence[LinkPart], *, ptx_version: str | int | None = None) -> str:
    """Link Triton PTX modules (one ``.entry`` each) into one PTX module with one entry per part.

    The result is what IREE's CUDA HAL loads as the single object of a ``hal.executable.source``
    (export symbol = entry name). For each part:

    * the entry is renamed to ``part.entry`` and its parameters are reordered per
      ``part.param_order`` (IREE: one pointer per binding, then one 32-bit value per constant)
      and renamed ``<entry>_param_<new position>``, references in the body included;
    * parameters in ``part.drop`` (Triton's hidden ``global_scratch`` / ``profile_scratch``)
      are removed; a dropped parameter that the body uses is an error;
    * every other module-scope symbol (``.global`` / ``.const`` / ``.shared`` variables,
      ``.extern .shared global_smem[]``, ``.func`` definitions and prototypes) gets the prefix
      ``<entry>__`` so that parts never collide; ``.extern .func`` declarations (``vprintf``,
      ``__assertfail``) keep their names and are emitted once;
    * debug information is dropped (``.loc``, ``.file``, ``@@DWARF``, ``.section .debug_*``,
      and ``, debug`` in ``.target``); function-local labels are kept.

    All parts must have the same ``.target`` and ``.address_size``. The header's ``.version`` is
    ``ptx_version`` (``"8.6"``, ``"86"`` or ``86``: :func:`parse_ptx_version`) if given, else the
    highest version among the parts. The output
    is deterministic: the same parts give byte-identical text.

    Raises :class:`PtxError` on: no parts, a part without exactly one entry, mismatched targets or
    address sizes, invalid or duplicate entry names, a ``param_order``/``drop`` that is not a
    partition of the parameter indices, a dropped parameter used by the kernel, or symbol
    collisions.
    """
    if not parts:
        raise PtxError("link() needs at least one part")
    if ptx_version is not None:
        try:
            ptx_version = ptx_version_text(ptx_version)
        except PtxVersionError as err:
            raise PtxError(f"ptx_version: {err}") from None

    parsed = []
    for k, part in enumerate(parts):
        mod, e = _single_entry(part.ptx)
        if mod.version is None or not _VERSION_FMT.match(mod.version):
            raise PtxError(f"part {k} ({e.name}): missing or malformed .version")
        if mod.target is None:
            raise PtxError(f"part {k} ({e.name}): missing .target")
        parsed.append((mod, e))

    target = parsed[0][0].target
    address_size = parsed[0][0].address_size
    for k, (mod, e) in enumerate(parsed):
        if mod.target != target:
            raise PtxError(
                f"cannot link PTX for different targets: part 0 is {', '.join(target)}, "
                f"part {k} ({e.name}) is {', '.join(mod.target)}"
            )
        if mod.address_size != address_size:
            raise PtxError(
                f"cannot link PTX with different .address_size: part 0 has {address_size}, "
                f"part {k} ({e.name}) has {mod.address_size}"
            )
    version = ptx_version or max((m.version for m, _ in parsed), key=_version_key)

    # Entry names.
    seen_entries: dict[str, int] = {}
    for k, part in enumerate(parts):
        if not isinstance(part.entry, str) or not _IDENT_RE.match(part.entry) or part.entry.startswith("%"):
            raise PtxError(f"part {k}: {part.entry!r} is not a valid PTX entry name")
        if part.entry in seen_entries:
            raise PtxError(f"entry name {part.entry!r} is used by parts {seen_entries[part.entry]} and {k}")
        seen_entries[part.entry] = k

    externs: dict[str, str] = {}  # name -> normalized declaration
    extern_texts: list[str] = []
    owners: dict[str, str] = {}  # every module-scope name in the output -> who defines it
    for name in seen_entries:
        owners[name] = f"entry {name}"
    bodies: list[str] = []

    for k, (part, (mod, e)) in enumerate(zip(parts, parsed)):
        n = len(e.params)
        order = [int(i) for i in part.param_order]
        drop = [int(i) for i in part.drop]
        every = order + drop
        bad = [i for i in every if not 0 <= i < n]
        if bad:
            raise PtxError(f"part {part.entry}: parameter index {bad[0]} out of range (entry {e.name} has {n} parameters)")
        if len(set(every)) != len(every):
            dup = next(i for i in every if every.count(i) > 1)
            raise PtxError(f"part {part.entry}: parameter {dup} appears more than once in param_order/drop")
        if len(every) != n:
            missing = sorted(set(range(n)) - set(every))
            raise PtxError(
                f"part {part.entry}: parameters {missing} of {e.name} are neither in param_order nor in drop"
            )
        for i in drop:
            if param_is_used(part.ptx, i):
                raise PtxError(
                    f"kernel {e.name} (entry {part.entry}) uses hidden parameter {e.params[i].name} "
                    f"(global scratch); not supported"
                )
        adapt = _check_adapt(part, e, order)

        mapping: dict[str, str] = {e.name: part.entry}
        new_names: dict[int, list[str]] = {}
        new_pos = 0
        for old in order:
            width = 2 if adapt.get(old) == "split" else 1
            new_names[old] = [f"{part.entry}_param_{new_pos + j}" for j in range(width)]
            new_pos += width
            # Split and aligned parameters are renamed to a placeholder first; their loads are
            # rewritten after renaming (the new names may equal other old names).
            mapping[e.params[old].name] = _placeholder(old) if adapt.get(old, "widen") != "widen" else new_names[old][0]
        prefix = f"{part.entry}__"
        local_stmts: list[tuple[_Stmt, bool]] = []  # (stmt, hoisted extern)
        for s in mod.stmts:
            keep_name = _keeps_name(s)
            if s.kind in ("func", "var"):
                for nm in s.names:
                    if keep_name:
                        continue
                    mapping.setdefault(nm, prefix + nm)
            local_stmts.append((s, keep_name))

        # Register names and detect collisions.
        part_defined: set[str] = set()
        for s, keep in local_stmts:
            if s.kind not in ("func", "var"):
                continue
            for nm in s.names:
                out = nm if keep else mapping[nm]
                if keep:
                    norm = _normalize(s.text)
                    if nm in externs:
                        if externs[nm] != norm:
                            raise PtxError(f"parts declare external symbol {nm} differently")
                        continue
                    if nm in owners:
                        raise PtxError(f"external symbol {nm} collides with {owners[nm]}")
                    externs[nm] = norm
                    owners[nm] = f"extern {nm}"
                    extern_texts.append(_tidy(s.text))
                    continue
                if out in part_defined:
                    continue  # prototype then definition of one .func
                if out in owners:
                    raise PtxError(f"symbol {out} of part {part.entry} collides with {owners[out]}")
                owners[out] = f"symbol {out} of part {part.entry}"
                part_defined.add(out)

        chunk = [f"// {part.entry}: entry {e.name} of Triton PTX part {k}"]
        for s, keep in local_stmts:
            if keep:
                continue
            if s.kind == "entry":
                chunk.append(_relink_entry(e, order, mapping, adapt, new_names))
            else:
                chunk.append(_tidy(_rename(s.text, mapping)))
        bodies.append("\n\n".join(chunk))

    header = [
        "//",
        f"// Linked by autotune_export.cuda.ptx: {len(parts)} Triton kernel(s), one .entry each",
        "//",
        "",
        f".version {version}",
        f".target {', '.join(target)}",
    ]
    if address_size is not None:
        header.append(f".address_size {address_size}")
    out = "\n".join(header) + "\n\n"
    if extern_texts:
        out += "\n\n".join(extern_texts) + "\n\n"
    out += "\n\n".join(bodies) + "\n"
    return out


def _keeps_name(s: _Stmt) -> bool:
    """External functions and variables (vprintf, __assertfail) are resolved by name: keep it.

    ``.extern .shared`` arrays (Triton's dynamic ``global_smem[]``) are not external symbols but
    views of the launch's dynamic shared memory; they are renamed per part like any variable.
    """
    if not s.extern or s.kind not in ("func", "var"):
        return False
    return s.kind == "func" or ".shared" not in s.text.split()[:4]


_ADAPT_WIDEN_TYPES = {".u8", ".s8", ".b8", ".u16", ".s16", ".b16", ".f16", ".bf16", ".u32", ".s32", ".b32", ".f32",
                      ".b8[1]", ".b8[2]", ".b8[4]", ".pred"}
_ADAPT_SPLIT_TYPES = {".u64", ".s64", ".b64", ".f64"}


def _placeholder(index: int) -> str:
    return f"__autotune_abi_param_{index}"


def _check_adapt(part: LinkPart, e: _EntryInfo, order: list[int]) -> dict[int, str]:
    adapt: dict[int, str] = {}
    for key, kind in dict(part.adapt or {}).items():
        i = int(key)
        if i not in order:
            raise PtxError(f"part {part.entry}: adapted parameter {i} is not in param_order")
        p = e.params[i]
        if kind == "widen":
            if p.is_pointer or p.ptx_type not in _ADAPT_WIDEN_TYPES:
                raise PtxError(f"part {part.entry}: cannot widen parameter {p.name} ({p.ptx_type}) to .u32")
        elif kind == "split":
            if p.is_pointer or p.ptx_type not in _ADAPT_SPLIT_TYPES:
                raise PtxError(f"part {part.entry}: cannot split parameter {p.name} ({p.ptx_type}) into two .u32")
        elif kind.startswith("align:"):
            try:
                n = int(kind.split(":", 1)[1])
            except ValueError:
                n = 0
            if n < 1 or n & (n - 1):
                raise PtxError(f"part {part.entry}: alignment in {kind!r} must be a power of two")
            if p.ptx_type not in (".u64", ".b64", ".s64"):
                raise PtxError(f"part {part.entry}: cannot align parameter {p.name} ({p.ptx_type}): not a 64-bit pointer")
        else:
            raise PtxError(f"part {part.entry}: unknown parameter adaptation {kind!r} (expected widen, split or align:N)")
        adapt[i] = kind
    return adapt


_LD_PARAM_64 = r"ld\.param(?:\.[A-Za-z0-9_]+)*?\.(?:b64|u64|s64|f64)\s+(%[A-Za-z0-9_$]+)\s*,\s*\[\s*{name}\s*(?:\+\s*0\s*)?\]\s*;"


def _rewrite_loads(body: str, index: int, kind: str, names: list[str], e: _EntryInfo, entry: str) -> str:
    """Rewrite the 64-bit ``ld.param`` loads of a split or aligned parameter (named by its
    placeholder in ``body``)."""
    token = _placeholder(index)
    pattern = re.compile(_LD_PARAM_64.format(name=re.escape(token)))
    if kind == "split":
        lo, hi = names

        def repl(m: re.Match) -> str:
            d = m.group(1)
            return (f"{{ .reg .b32 %abi_lo, %abi_hi; ld.param.b32 %abi_lo, [{lo}]; ld.param.b32 %abi_hi, [{hi}]; "
                    f"mov.b64 {d}, {{%abi_lo, %abi_hi}}; }}")
    else:
        n = int(kind.split(":", 1)[1])

        def repl(m: re.Match) -> str:
            d = m.group(1)
            return f"ld.param.b64 {d}, [{names[0]}]; add.s64 {d}, {d}, {n - 1}; and.b64 {d}, {d}, {-n};"

    out = pattern.sub(repl, body)
    if token in _words(out):
        what = "split it into two 32-bit halves" if kind == "split" else "align it"
        raise PtxError(
            f"entry {entry}: parameter {e.params[index].name} is used other than by a 64-bit ld.param; cannot {what}"
        )
    return out


def _relink_entry(e: _EntryInfo, order: list[int], mapping: dict[str, str], adapt: dict[int, str] | None = None,
                  new_names: dict[int, list[str]] | None = None) -> str:
    adapt = adapt or {}
    decls = []
    for old in order:
        decl = e.param_decls[old]
        kind = adapt.get(old)
        if kind == "widen":
            decls.append(f"\t.param .u32 {new_names[old][0]}")
        elif kind == "split":
            decls.extend(f"\t.param .u32 {n}" for n in new_names[old])
        else:
            target = new_names[old][0] if new_names else mapping[e.params[old].name]
            decls.append("\t" + _rename(decl, {e.params[old].name: target}))
    head = f"{e.prefix.strip()} .entry {mapping[e.name]}(" if e.prefix.strip() else f".entry {mapping[e.name]}("
    text = head + ("\n" + ",\n".join(decls) + "\n)" if decls else ")")
    if e.directives:
        text += "\n" + _tidy(e.directives)
    body = _rename(e.body, mapping)
    for old, kind in adapt.items():
        if kind != "widen":
            body = _rewrite_loads(body, old, kind, new_names[old], e, mapping[e.name])
    text += "\n" + _tidy(body)
    return text


# --------------------------------------------------------------------------------------------
# ptxas


def _triton_bin(tool: str) -> str:
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        raise PtxError(f"triton is not installed; set TRITON_{tool.upper().replace('-', '_')}_PATH to a {tool} binary")
    return os.path.join(list(spec.submodule_search_locations)[0], "backends", "nvidia", "bin", tool)


def ptxas_path() -> str:
    """Path of the ptxas used by :func:`assemble`.

    ``$TRITON_PTXAS_PATH`` if set (Triton's own override), else the ptxas bundled with Triton,
    ``triton/backends/nvidia/bin/ptxas`` (CUDA 12.8, PTX ISA up to 8.7, in Triton 3.6 and 3.7;
    CUDA 12.9, up to 8.8, in 3.8 and 3.9). Triton is located without being imported.
    """
    env = os.environ.get("TRITON_PTXAS_PATH")
    if env:
        return env
    return _triton_bin("ptxas")


def _gpu_name(arch: str) -> str:
    """``arch`` as ptxas's ``--gpu-name`` (``sm_80``, ``sm_90a``); PtxError for a target that
    :func:`autotune_export.cuda.targets.parse_target` refuses."""
    try:
        return parse_target(arch).name
    except TargetError as err:
        raise PtxError(str(err)) from None


def assemble(ptx: str, arch: str, *, output: str = "cubin", threads: int = 1) -> bytes:
    """Assemble PTX text with Triton's bundled ptxas for ``arch`` (``"sm_80"``, ``"sm_90a"``;
    any spelling :func:`autotune_export.cuda.targets.parse_target` accepts).

    ``output="cubin"`` returns the ELF cubin bytes (loadable by ``cuModuleLoadData``, e.g. as a
    ``dense<...> : vector<Nxi8>`` HAL executable object); ``output="sass"`` returns the SASS
    listing of that cubin (bundled ``nvdisasm``) as UTF-8 bytes. Runs with no GPU and no driver.
    ``threads`` > 1 lets ptxas optimize that many functions at once (``--split-compile``; the
    cubin is byte-identical to a one-thread run: checked with the bundled ptxas of CUDA 12.9).

    Raises :class:`PtxError` for an unsupported ``arch``, or if ptxas is missing or rejects the
    PTX; the message carries the first lines of ptxas's stderr (the temporary file name
    replaced by ``input.ptx``).
    """
    if output not in ("cubin", "sass"):
        raise PtxError(f"unknown assemble output {output!r} (expected 'cubin' or 'sass')")
    gpu = _gpu_name(arch)
    exe = ptxas_path()
    if not os.path.isfile(exe):
        raise PtxError(f"ptxas not found at {exe}")
    with tempfile.TemporaryDirectory(prefix="autotune-ptxas-") as tmp:
        src = os.path.join(tmp, "input.ptx")
        dst = os.path.join(tmp, "output.cubin")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ptx)
        split = [f"--split-compile={int(threads)}"] if threads and int(threads) > 1 else []
        proc = subprocess.run([exe, *split, f"--gpu-name={gpu}", src, "-o", dst], capture_output=True, text=True)
        if proc.returncode != 0:
            log = (proc.stderr or proc.stdout or "").replace(src, "input.ptx")
            lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
            detail = " | ".join(lines[:3]) or f"exit status {proc.returncode}"
            if len(lines) > 3:
                detail += f" | ... ({len(lines) - 3} more lines)"
            err = PtxError(f"ptxas --gpu-name={gpu} failed: {detail}")
            err.stderr = log  # type: ignore[attr-defined]
            raise err
        with open(dst, "rb") as f:
            cubin = f.read()
        if output == "cubin":
            return cubin
        nvdisasm = os.environ.get("TRITON_NVDISASM_PATH") or os.path.join(os.path.dirname(exe), "nvdisasm")
        proc = subprocess.run([nvdisasm, "-c", dst], capture_output=True)
        if proc.returncode != 0:
            first = proc.stderr.decode(errors="replace").strip().splitlines()[:1]
            raise PtxError(f"nvdisasm failed: {first[0] if first else proc.returncode}")
        return proc.stdout


def check(ptx: str, arch: str) -> None:
    """Assemble ``ptx`` for ``arch`` and discard the result: a validity check that needs no GPU.

    Raises :class:`PtxError` with ptxas's first error lines if the PTX does not assemble.
    """
    assemble(ptx, arch)


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
        text = text[m.end():]


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
_DECL_RE = re.compile(r"(?:^|[;}])[ \t\n]*(?:[A-Za-z_$%][A-Za-z0-9_$]*[ \t]*:(?!:)[ \t\n]*)*"
                      r"(\.(?:reg|local|shared|param|const))[ \t]", re.M)


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
    labels = [w for w in sorted(names)
              if any(m.start() == 0 or body[m.start() - 1] not in _WORD_CHARS
                     for m in re.finditer(re.escape(w) + r"[ \t]*:(?!:)", body))]
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
        return assemble(skeleton, arch)
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


def entry_text(ptx: str, name: str) -> str | None:
    """The code of entry ``name`` of a PTX module with the entry's own name replaced by
    ``@ENTRY`` (PTX names parameters after their entry: ``NAME_param_0``): the module's
    ``.version``/``.target``, the parameter declarations, the directives (``.reqntid`` ...) and
    the body. None when the module has no such entry or is not PTX. Two variants whose texts
    are equal run the same code, whatever they are called; the tuning cache keys timings on it."""
    try:
        mod = _parse_module(ptx)
    except (PtxError, TypeError):
        return None
    entry = next((e for e in mod.entries if e.name == name), None)
    if entry is None:
        return None
    text = "\n".join([str(mod.version), " ".join(mod.target or ()), *entry.param_decls, entry.directives, entry.body])
    return re.sub(rf"(?<![\w$]){re.escape(name)}(?![\w$])", "@ENTRY", text)
