"""Front end: read ``.mlir`` text holding autotuning extension ops into an MLIR module, and
print modules back with the sugared spelling.

Reading works in three steps:

1. find every ``hal.executable.autotuning.export`` outside comments and strings, and its
   extent (the ``@symbol`` and the ``clause(...)`` groups that follow);
2. parse each occurrence with ``dialects/autotuning.lark`` and check it (clauses, names,
   grid expressions), reporting errors at the exact line and column;
3. replace it by the generic op ``"autotune.export"() {...} : () -> ()`` on the same line
   (padded with the same number of newlines, so every later line is unchanged; a
   :class:`ColumnMap` maps the columns after the op on its last line back) and parse
   the whole text with ``iree.compiler.ir`` (unregistered dialects allowed).

Everything else in the file is ordinary IREE IR, parsed and verified by the installed IREE.
Then every group must sit directly in a ``hal.executable.source`` and have a symbol unique
there (among groups and exports); a ``"autotune.export"`` op written in the generic form by
hand gets the same checks as the sugared op.

Errors follow mlir-opt: ``FILE:LINE:COL: error: expected ',' or ']' in variants(...), found
'@b'`` at the offending token, except that a missing token is reported right after the
previous one when the offending token starts a new line (``Parser::emitWrongTokenError``).
Brackets must nest, so a missing ``)`` stops at the ``}`` of the enclosing region.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import lark

from autotune_export.ir import grid as grid_mod
from autotune_export.ir import space as space_mod
from autotune_export.dialects import grammar
from autotune_export.contract import fits_i64
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location, from_mlir_error
from autotune_export.ir.walk import find_groups
from autotune_export.ir.group import (
    CLAUSE_NAMES,
    GENERIC_OP_NAME,
    NONE_TYPE,
    OPTION_NAMES,
    SUGARED_OP_NAME,
    TORCH_DTYPES,
    TRITON_DTYPES,
    TorchDtype,
    AutotuneGroup,
    Param,
    TritonDtype,
    format_value,
)
from iree.compiler import ir
from iree.compiler.dialects import hal
from autotune_export.frontend import compat
from autotune_export.support.diagnostics import did_you_mean, location_of
from autotune_export.ir.group import descriptor_refusal, symbol

__all__ = ["parse_source", "print_module", "new_context", "find_groups", "SourceFile"]

_CLAUSES = CLAUSE_NAMES  # the op's schema (autotune_export.ir.group.CLAUSES)
#: Attribute of the placeholder op that stands for sugared op N until its attributes are set.
_PENDING = "autotune.pending"
# Triton's type names (``u1`` is what Triton 3.x calls a Python bool, ``*u1`` a bool tensor;
# ``i1`` is accepted too: both are tl.int1).
_POINTER_TYPES = (
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "u1",
    "u8",
    "u16",
    "u32",
    "u64",
    "fp8e4nv",
    "fp8e5",
    "fp16",
    "bf16",
    "fp32",
    "fp64",
)
_SCALAR_TYPES = ("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64")


@dataclass
class SourceFile:
    """An input text and the name diagnostics use for it (``"<stdin>"`` for ``-``).

    ``base_dir`` is where relative ``triton("kernel.py", ...)`` paths resolve: the directory
    of the input file (the current directory for stdin).
    """

    text: str
    name: str
    base_dir: str


def new_context():
    """A fresh ``iree.compiler.ir.Context`` with IREE's dialects and unregistered ops allowed,
    single-threaded: MLIR verifies the functions of a parsed module in parallel, and a
    diagnostic emitted on a worker thread calls our Python handler, which waits for the GIL
    that the parsing thread holds while it waits for the workers (a deadlock the fuzzer hit on
    a mutated module with several invalid functions)."""

    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    ctx.enable_multithreading(False)
    return ctx


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return lark.Lark(
        grammar("autotuning.lark"), parser="lalr", propagate_positions=True, maybe_placeholders=False, cache=True
    )  # lark keeps the LALR tables in a temp file keyed by grammar and options


# --------------------------------------------------------------------------------------------
# Scanning
# --------------------------------------------------------------------------------------------


def _skip_trivia(text: str, i: int) -> int:
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


def _skip_string(text: str, i: int) -> int:
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


def _skip_balanced(text: str, i: int, floor_division: bool = False) -> int:
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
            i = _skip_string(text, i)
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


_IDENT = re.compile(r"[a-z_][a-z0-9_]*")
_SYMBOL = re.compile(r'@(?:[A-Za-z_][A-Za-z0-9_$.]*|"(?:[^"\\\n]|\\.)*")')


def _op_extent(text: str, start: int) -> int:
    """End index of the extension op starting at ``start``.

    The op is its name, the ``@symbol`` and every following ``name(...)`` group (a clause,
    known or not: unknown ones are reported by the parser). A clause keyword that is not
    followed by ``(`` belongs to the op too, so that the parser reports the missing ``(``
    instead of IREE reading the keyword as an op. Without a symbol the op is its name alone.
    """
    i = start + len(SUGARED_OP_NAME)
    j = _skip_trivia(text, i)
    m = _SYMBOL.match(text, j)
    if not m:
        return i
    end = m.end()
    while True:
        j = _skip_trivia(text, end)
        m = _IDENT.match(text, j)
        if not m or (m.end() < len(text) and (text[m.end()].isalnum() or text[m.end()] in "._$")):
            return end
        k = _skip_trivia(text, m.end())
        if k >= len(text) or text[k] != "(":
            return m.end() if m.group(0) in _CLAUSES else end
        end = _skip_balanced(text, k, floor_division=m.group(0) == "grid")


def _clause_spans(text: str) -> list[tuple[str, int, int]]:
    """``(name, start, end)`` of every ``name(...)`` group at the top level of one op's text."""
    spans = []
    i = _skip_trivia(text, len(SUGARED_OP_NAME))
    m = _SYMBOL.match(text, i)
    i = m.end() if m else i
    while i < len(text):
        i = _skip_trivia(text, i)
        m = _IDENT.match(text, i)
        if not m:
            break
        k = _skip_trivia(text, m.end())
        if k >= len(text) or text[k] != "(":
            spans.append((m.group(0), m.start(), m.end()))
            break
        end = _skip_balanced(text, k, floor_division=m.group(0) == "grid")
        spans.append((m.group(0), m.start(), end))
        i = end
    return spans


def _occurrences(text: str):
    """Offsets of the sugared op name outside comments and strings."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
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


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


# --------------------------------------------------------------------------------------------
# Parsing one op
# --------------------------------------------------------------------------------------------

_TOKEN_NAMES = {
    "COMMA": "','",
    "COLON": "':'",
    "EQUAL": "'='",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "SYMBOL": "a symbol (@name)",
    "NAME": "a name",
    "TYPE": "a Triton type (e.g. *fp16, i32)",
    "STRING": "a string",
    "GRID_EXPR": "a grid expression",
    "TENSOR_TYPE": "a tensor type",
    "SIGNED_INT": "an integer",
    "INT": "an integer",
    "SIGNED_FLOAT": "a number",
    "SPECIAL_FLOAT": "a number",
    "SIGNED_NUMBER": "a number",
    "SCALAR_TYPE": "a scalar type (e.g. i32)",
    "TRUE": "'true'",
    "FALSE": "'false'",
    "NONE": "'none'",
    "DTYPE": "a Triton dtype (e.g. tl.float16)",
    "$END": "end of op",
}
_VALUE_TERMINALS = {"SIGNED_INT", "SIGNED_FLOAT", "SPECIAL_FLOAT", "TRUE", "FALSE", "STRING", "NONE", "DTYPE"}


def _expected(expected) -> str:
    """Describe the set of lark terminals the parser accepted, e.g. ``',' or ']'``."""
    expected = set(expected)
    parts: list[str] = []
    clauses = {e for e in expected if e.lower() in _CLAUSES}
    if clauses:
        parts.append("a clause (" + ", ".join(_CLAUSES) + ")")
        expected -= clauses
    if len(expected & _VALUE_TERMINALS) > 2:
        parts.append("a value (integer, number, true, false, string, none or a Triton dtype such as tl.float16)")
        expected -= _VALUE_TERMINALS
    if "SIGNED_NUMBER" in expected:
        expected.discard("SIGNED_INT")
        expected.discard("SIGNED_FLOAT")
    order = list(_TOKEN_NAMES)

    def rank(e: str):  # kinds of tokens first ("a name"), then punctuation in a fixed order
        punct = _TOKEN_NAMES.get(e, "").startswith("'")
        return (punct, order.index(e) if e in order else len(order), e)

    parts += [_TOKEN_NAMES.get(e, repr(e.lower())) for e in sorted(expected, key=rank)]
    parts = list(dict.fromkeys(parts))
    if len(parts) <= 1:
        return parts[0] if parts else "nothing"
    return ", ".join(parts[:-1]) + " or " + parts[-1]


_TOKEN_START = re.compile(
    r'@(?:[A-Za-z_][A-Za-z0-9_$.]*|"(?:[^"\\\n]|\\.)*")|"(?:[^"\\\n]|\\.)*"?|[A-Za-z_][A-Za-z0-9_.]*|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\S'
)


def _describe(text: str, pos: int) -> str:
    """The offending token at ``pos`` as users see it: one word, symbol, string or character.

    (lark's fallback lexer may match a long stretch as one grid-expression token.)"""
    if pos >= len(text):
        return "end of op"
    m = _TOKEN_START.match(text, pos)
    word = m.group(0) if m else text[pos]
    return f"'{word}'"


def _backed_up(text: str, pos: int) -> int:
    """MLIR's rule for "expected X" errors (``Parser::emitWrongTokenError``): when the
    offending token starts a line, report at the end of the previous code instead (past
    blank lines and ``//`` comments), where the missing token belongs. Otherwise ``pos``."""
    i = pos
    while True:
        j = i
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        if j == 0:
            return pos
        if text[j - 1] not in "\r\n":
            return pos if i == pos else j
        j -= 1  # drop the newline; look at the previous line, without its comment
        line_start = text.rfind("\n", 0, j) + 1
        comment = text.find("//", line_start, j)
        i = comment if comment >= 0 else j


def _accepts(err) -> set[str]:
    """The terminals the parser state of ``err`` (an UnexpectedToken) accepts after the
    reductions they trigger (empty when lark cannot tell)."""
    interactive = getattr(err, "interactive_parser", None)
    try:
        return set(interactive.accepts()) if interactive is not None else set()
    except Exception:  # pragma: no cover - lark's interactive parser is best effort here
        return set()


class _OpReader:
    """Turns the lark tree of one op into an AutotuneGroup, checking as it goes."""

    def __init__(self, text: str, filename: str, start_line: int, start_col: int, following: str = "end of file"):
        self.text = text
        self.filename = filename
        self.start_line = start_line
        self.start_col = start_col
        self.following = following  # what comes after the op in the file, for messages
        self.items: dict[str, Location] = {}  # clause items: "signature.x_ptr" -> where (see AutotuneGroup.clause_locations)

    def loc(self, line: int, col: int) -> Location:
        if line == 1:
            col += self.start_col - 1
        return Location(self.filename, line + self.start_line - 1, col)

    def loc_at(self, pos: int) -> Location:
        """Location of offset ``pos`` of the op text."""
        return self.loc(*_line_col(self.text, pos))

    def loc_of(self, node) -> Location:
        meta = node if isinstance(node, lark.Token) else node.meta
        return self.loc(meta.line, meta.column)

    def error(self, node, message: str) -> DiagnosticError:
        return DiagnosticError.at(self.loc_of(node), message)

    def _context(self, pos: int) -> str:
        """`` in name(...)`` for the clause around offset ``pos`` (empty between clauses)."""
        for name, start, end in _clause_spans(self.text):
            paren = self.text.find("(", start, end)
            if 0 <= paren < pos < end or (0 <= paren < pos == end and end == len(self.text)):
                return f" in {name}(...)"
        return ""

    def parse(self) -> tuple[AutotuneGroup, dict[str, Location]]:
        text = self.text
        rest = _skip_trivia(text, len(SUGARED_OP_NAME))
        if not _SYMBOL.match(text, rest):
            # _op_extent stops after the name: look at what follows it in the file.
            raise DiagnosticError.at(
                self.loc_at(len(SUGARED_OP_NAME)),
                f"expected the group's symbol (@name) after '{SUGARED_OP_NAME}'",
            )
        try:
            tree = _parser().parse(text)
        except lark.exceptions.UnexpectedCharacters as err:
            pos = err.pos_in_stream
            raise DiagnosticError.at(
                self.loc_at(pos), f"unexpected character {_describe(text, pos)}{self._context(pos)}"
            ) from None
        except lark.exceptions.UnexpectedToken as err:
            raise self._wrong_token(err) from None
        except lark.exceptions.UnexpectedEOF:  # pragma: no cover - LALR reports UnexpectedToken
            raise DiagnosticError.at(self.loc_at(len(text)), f"{SUGARED_OP_NAME} ends early") from None
        return self.build(tree)

    def _wrong_token(self, err) -> DiagnosticError:
        text = self.text
        tok = err.token
        expected = set(err.expected)
        if tok.type == "$END":
            pos = len(text)
            found = self.following
            # LALR merges the states after a value token (a config's value, a product's value):
            # their lookaheads are the union of every context's. What the parser would really
            # accept here is what survives the reductions.
            accepted = _accepts(err)
            if accepted:
                expected &= accepted
        else:
            pos = tok.start_pos
            found = _describe(text, pos)
        m = _IDENT.match(text, pos) if tok.type != "$END" else None
        if m and any(e.lower() in _CLAUSES for e in expected):
            word = m.group(0)
            after = _skip_trivia(text, m.end())
            if word not in _CLAUSES and after < len(text) and text[after] == "(":
                return DiagnosticError.at(
                    self.loc_at(pos),
                    f"unknown clause '{word}' in {SUGARED_OP_NAME}; expected one of: {', '.join(_CLAUSES)}"
                    + did_you_mean(word, _CLAUSES),
                )
        context = self._context(pos)
        if expected == {"LPAR"}:
            before = text[: _backed_up(text, pos)].rstrip()
            clause = re.search(r"([a-z_]+)$", before)
            if clause and clause.group(1) in _CLAUSES:
                return DiagnosticError.at(self.loc_at(_backed_up(text, pos)), f"expected '(' after '{clause.group(1)}'")
        return DiagnosticError.at(self.loc_at(_backed_up(text, pos)), f"expected {_expected(expected)}{context}, found {found}")

    def build(self, tree) -> tuple[AutotuneGroup, dict[str, Location]]:
        try:
            return self._build(tree)
        except _StringError as err:
            if isinstance(err.token, lark.Token):
                raise DiagnosticError.at(self._offset(err.token, err.offset), str(err)) from None
            raise DiagnosticError.at(self.loc(1, 1), str(err)) from None

    def _build(self, tree) -> tuple[AutotuneGroup, dict[str, Location]]:
        name_tok = tree.children[0]
        group = AutotuneGroup(name=_symbol_name(name_tok), location=self.loc(1, 1))
        clause_locs: dict[str, Location] = {}
        for clause in tree.children[1:]:
            kind = clause.data
            if kind in clause_locs:
                raise DiagnosticError.at(
                    self.loc_of(clause),
                    f"duplicate clause '{kind}'",
                    [Diagnostic("note", "first given here", clause_locs[kind])],
                )
            clause_locs[kind] = self.loc_of(clause)
            getattr(self, "clause_" + kind)(group, clause)
        for key, where in self.items.items():
            clause_locs.setdefault(key, where)
        group.clause_locations = dict(clause_locs)
        self.check(group, clause_locs)
        return group, clause_locs

    # --- clauses ---
    def clause_variants(self, group, node):
        seen: dict[str, lark.Token] = {}
        for tok in node.children:
            name = _symbol_name(tok)
            if name in seen:
                raise DiagnosticError.at(
                    self.loc_of(tok),
                    f"variant @{name} is listed twice",
                    [Diagnostic("note", "first listed here", self.loc_of(seen[name]))],
                )
            seen[name] = tok
        group.variants = list(seen)
        if not group.variants:
            raise self.error(node, "variants([...]) lists no variant")

    def clause_triton(self, group, node):
        path, kernel = (_string(t) for t in node.children)
        self.items["triton.path"] = self.loc_of(node.children[0])
        self.items["triton.kernel"] = self.loc_of(node.children[1])
        if not path:
            raise self.error(node.children[0], "empty kernel path in triton(...)")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel):
            raise self.error(node.children[1], f"'{kernel}' is not a Python identifier")
        group.triton = (path, kernel)

    def clause_kernel_source(self, group, node):
        text = _string(node.children[0])
        if not text.strip():
            raise self.error(
                node.children[0],
                "empty kernel_source(...): it holds the Python text of a module defining the kernel named in triton(...)",
            )
        group.kernel_source = text

    def clause_signature(self, group, node):
        params: list[Param] = []
        seen: dict[str, Any] = {}
        for p in node.children:
            name_tok, type_tok = p.children[0], p.children[1]
            name, typ = str(name_tok), str(type_tok)
            typ, _, hint_text = typ.partition(":")
            hint = int(hint_text) if hint_text else 0
            if name in seen:
                raise DiagnosticError.at(
                    self.loc_of(name_tok),
                    f"parameter '{name}' is declared twice",
                    [Diagnostic("note", "first declared here", self.loc_of(seen[name]))],
                )
            seen[name] = name_tok
            self.items[f"signature.{name}"] = self.loc_of(name_tok)
            base = typ[1:] if typ.startswith("*") else typ
            allowed = _POINTER_TYPES if typ.startswith("*") else _SCALAR_TYPES
            if typ == NONE_TYPE:
                # The call passes None: Triton's JIT makes the argument a constexpr None.
                if hint:
                    raise self.error(type_tok, f"'{name}: {typ}:{hint}': a none parameter takes no specialization hint")
            elif descriptor_refusal(name, typ):
                raise self.error(type_tok, descriptor_refusal(name, typ))
            elif base not in allowed:
                choices = [("*" if typ.startswith("*") else "") + t for t in allowed] + (
                    [] if typ.startswith("*") else [NONE_TYPE]
                )
                raise self.error(
                    type_tok,
                    f"unknown Triton type '{typ}' for parameter '{name}'; expected one of: "
                    + ", ".join(choices)
                    + did_you_mean(typ, choices),
                )
            output = False
            if len(p.children) > 2:
                for flag in p.children[2].children:
                    if str(flag) != "output":
                        raise self.error(flag, f"unknown parameter flag '{flag}'; the only flag is 'output'")
                    output = True
                if output and not typ.startswith("*"):
                    raise self.error(p.children[2], f"'{name}' is marked {{output}} but is not a pointer")
            if hint == 16 and typ not in ("i32", "u32") and not typ.startswith("*"):
                raise self.error(
                    type_tok, f"'{name}: {typ}:16': only pointers and i32/u32 scalars take the divisibility hint ':16'"
                )
            if hint == 1 and typ not in ("i32", "u32"):
                raise self.error(type_tok, f"'{name}: {typ}:1': only i32/u32 scalars take the hint ':1' (equal to 1)")
            params.append(Param(name, typ, output, hint))
        group.signature = params
        if getattr(node.meta, "end_line", None) is not None:  # the closing ')'
            self.items["signature.end"] = self.loc(node.meta.end_line, node.meta.end_column - 1)

    def clause_configs(self, group, node):
        if node.children and not isinstance(node.children[0], lark.Token) and node.children[0].data == "space":
            return self._space(group, node.children[0])
        configs = []
        for index, cfg in enumerate(node.children):
            entries: list[tuple[str, Any]] = []
            seen: dict[str, Any] = {}
            self.items[f"configs.{index}"] = self.loc_of(cfg)
            for entry in cfg.children:
                key_tok, value_node = entry.children
                key = str(key_tok)
                self.items.setdefault(f"configs.{index}.{key}", self.loc_of(key_tok))
                if key in seen:
                    raise self.error(key_tok, f"config key '{key}' is given twice")
                seen[key] = key_tok
                try:
                    value = _value(value_node)
                except _DtypeError as err:
                    raise self.error(err.token, str(err)) from None
                if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
                    raise self.error(key_tok, f"config value {key} = {value} does not fit in 64 bits")
                if key in OPTION_NAMES and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                    raise self.error(key_tok, f"'{key}' must be a positive integer")
                if key == "num_warps" and value & (value - 1):
                    raise self.error(key_tok, f"num_warps must be a power of two, got {value}")
                entries.append((key, value))
            configs.append(entries)
        if not configs:
            raise self.error(node, "configs([]) is empty: give at least one config")
        group.configs = configs

    def _config_value(self, key_tok, value_node) -> Any:
        """A config value of ``key_tok`` (checked as in a config of configs([...]))."""
        key = str(key_tok)
        try:
            value = _value(value_node)
        except _DtypeError as err:
            raise self.error(err.token, str(err)) from None
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            raise self.error(key_tok, f"config value {key} = {value} does not fit in 64 bits")
        if key in OPTION_NAMES and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise self.error(key_tok, f"'{key}' must be a positive integer")
        if key == "num_warps" and value & (value - 1):
            raise self.error(key_tok, f"num_warps must be a power of two, got {value}")
        return value

    def _space(self, group, node):
        """``configs(product(NAME in [v, ...], NAME = v, ...) where CONSTRAINT)``: the space is
        expanded here (:mod:`autotune_export.ir.space`); the group keeps both the space and
        its configs. Errors at the offending name, value or constraint token."""
        axes, seen = [], {}
        where_tok = None
        for child in node.children:
            if isinstance(child, lark.Token):  # the constraint's text
                where_tok = child
                continue
            key_tok, *value_nodes = child.children
            key = str(key_tok)
            if key in seen:
                raise DiagnosticError.at(
                    self.loc_of(key_tok),
                    f"'{key}' is given twice in product(...)",
                    [Diagnostic("note", "first given here", self.loc_of(seen[key]))],
                )
            seen[key] = key_tok
            self.items[f"space.{key}"] = self.loc_of(key_tok)
            values = [self._config_value(key_tok, v) for v in value_nodes]
            if child.data == "axis_values" and not values:
                raise self.error(key_tok, f"'{key} in []' gives no value: the space would be empty")
            if child.data == "axis_values" and len(set(map(repr, values))) != len(values):
                raise self.error(key_tok, f"'{key} in [...]' lists a value twice")
            axes.append((key, values, child.data == "axis_fixed"))
        if not axes:
            raise self.error(node, "product() names nothing: give NAME in [values] or NAME = value")
        where = None
        if where_tok is not None:
            # `//` starts a comment here, as outside grid(...): blanked, offsets kept.
            text = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), str(where_tok))
            self.items["space.where"] = self.loc_of(where_tok)
            where = text
        space = space_mod.space_of(axes, where)
        try:
            configs = space.expand()
        except space_mod.SpaceError as err:
            if where_tok is None or err.column is None:
                raise self.error(node, str(err)) from None
            raise DiagnosticError.at(self._offset(where_tok, (err.column or 1) - 1), str(err)) from None
        group.configs = configs
        group.space = axes
        group.space_where = space_mod.format_constraint(space.constraint()) if where is not None else None
        self.space_size = space.size()

    def clause_workload(self, group, node):
        names = [str(t) for t in node.children]
        for tok in node.children:
            if names.count(str(tok)) > 1:
                raise self.error(tok, f"'{tok}' appears twice in workload(...)")
        group.workload = names
        self._workload_tokens = {str(t): t for t in node.children}
        for tok in node.children:
            self.items[f"workload.{tok}"] = self.loc_of(tok)

    def clause_grid(self, group, node):
        exprs = []
        for tok in node.children:
            text = str(tok)
            lead = len(text) - len(text.lstrip())
            try:
                expr = grid_mod.parse(text)
            except grid_mod.GridError as err:
                col = (err.column or 1) - 1
                raise DiagnosticError.at(self._offset(tok, col), str(err)) from None
            exprs.append((expr, tok, lead))
            self.items[f"grid.{len(exprs) - 1}"] = self._offset(tok, lead)
            for nm in grid_mod.names(expr):
                self.items.setdefault(f"grid.{nm.name}", self._offset(tok, nm.column - 1))
        if not 1 <= len(exprs) <= 3:
            raise self.error(node, f"a grid has 1 to 3 dimensions, got {len(exprs)}")
        group.grid = [grid_mod.format_expr(e) for e, _, _ in exprs]
        self._grid = exprs

    def clause_tune_workload(self, group, node):
        lists = [c for c in node.children if not isinstance(c, lark.Token) and c.data == "tune_list"]
        if lists:
            group.tune_workload = [self._tune_args(lst.children) for lst in lists]
        else:
            group.tune_workload = [self._tune_args(node.children)]

    def _tune_args(self, children) -> list[str]:
        """One workload of ``tune_workload(...)``: MLIR text per host argument."""
        args = []
        for arg in children:
            if arg.data == "tune_tensor":
                tok = arg.children[0]
                if "?" in str(tok) or "*" in str(tok):
                    raise self.error(tok, f"tune_workload values need a static shape (fake data is made of them), got {tok}")
                self._check_mlir(tok, str(tok), "type")
                args.append(str(tok))
            else:
                num, typ = arg.children
                self._check_mlir(num, f"{num} : {typ}", "attribute")
                args.append(f"{num} : {typ}")
        return args

    def clause_choices(self, group, node):
        out, seen = [], {}
        for choice in node.children:
            *values, sym = choice.children
            key = tuple(int(str(v)) for v in values)
            for tok, v in zip(values, key):
                if not fits_i64(v):
                    raise self.error(
                        tok,
                        f"workload value {v} in choices(...) does not fit in a 64-bit signed integer "
                        "(the dispatch's workload values are i64)",
                    )
            if key in seen:
                raise DiagnosticError(
                    [
                        Diagnostic(
                            "error",
                            f"workload [{', '.join(map(str, key))}] is given twice in choices(...)",
                            self.loc_of(sym),
                            [Diagnostic("note", "first given here", self.loc_of(seen[key]))],
                        )
                    ]
                )
            seen[key] = sym
            out.append((key, _symbol_name(sym)))
        group.choices = out

    def _check_mlir(self, node, text: str, kind: str) -> None:
        """Check that ``text`` parses as an MLIR type/attribute (reported at ``node``)."""
        problem = _mlir_problem(text, kind)
        if problem:
            raise self.error(node, f"invalid {'type' if kind == 'type' else 'value'} '{text}' in tune_workload(...): {problem}")

    def clause_specialized(self, group, node):
        symbols = [c for c in node.children if isinstance(c, lark.Token) and c.type == "SYMBOL"]
        group.specialized = [_symbol_name(t) for t in symbols]
        guards = {"divisible_by_16": [], "equal_to_1": []}
        for guard in (c for c in node.children if not isinstance(c, lark.Token)):
            kind = str(guard.children[0])
            if guards[kind]:
                raise self.error(guard, f"'{kind}' is given twice in specialized(...)")
            guards[kind] = [int(t) for t in guard.children[1:]]
        group.divisible = guards["divisible_by_16"]
        group.equal_one = guards["equal_to_1"]
        if not group.divisible and not group.equal_one:
            raise self.error(
                node, "specialized([...]) needs divisible_by_16 = [...] or equal_to_1 = [...] naming the constants it assumes"
            )

    def clause_default(self, group, node):
        group.default = _symbol_name(node.children[0])

    def clause_reset_to_zero(self, group, node):
        self._output_refs(group, node, "reset_to_zero")

    def clause_restore_value(self, group, node):
        self._output_refs(group, node, "restore_value")

    def _output_refs(self, group, node, clause: str) -> None:
        """``reset_to_zero(...)`` / ``restore_value(...)``: parameter names (the triton(...)
        form) or result indices (the variants([...]) form), each once; which form is checked
        with the whole op (:meth:`_check_output_refs`)."""
        seen: dict[str, lark.Token] = {}
        for tok in node.children:
            if str(tok) in seen:
                raise DiagnosticError.at(
                    self.loc_of(tok),
                    f"'{tok}' appears twice in {clause}(...)",
                    [Diagnostic("note", "first given here", self.loc_of(seen[str(tok)]))],
                )
            seen[str(tok)] = tok
            if tok.type == "INT" and not fits_i64(int(tok)):
                raise self.error(tok, f"result index {tok} in {clause}(...) does not fit in a 64-bit signed integer")
            self.items[f"{clause}.{tok}"] = self.loc_of(tok)
        setattr(group, clause, [int(t) if t.type == "INT" else str(t) for t in node.children])
        if not hasattr(self, "_refs"):
            self._refs = {}  # clause -> its tokens, for _check_output_refs
        self._refs[clause] = list(node.children)

    def _check_output_refs(self, group: AutotuneGroup) -> None:
        """The items of reset_to_zero(...) / restore_value(...) name what the form can name:
        result indices in the variants([...]) form (the dispatch checks the range), ``{output}``
        pointers of the signature in the triton(...) form (Triton's autotuner refuses a name
        that is not a kernel argument; IREE can only zero-fill or restore what the dispatch
        returns, its operands being immutable)."""
        for clause, toks in getattr(self, "_refs", {}).items():
            for tok in toks:
                if group.variants is not None:
                    if tok.type != "INT":
                        raise self.error(
                            tok,
                            f"in the variants([...]) form {clause}(...) takes result indices of the group's "
                            f"dispatches (0, 1, ...), not names; '{tok}' is a name",
                        )
                    continue
                if tok.type == "INT":
                    raise self.error(
                        tok,
                        f"in the triton(...) form {clause}(...) names {{output}} parameters of the "
                        f"signature, not result indices; {tok} is an index",
                    )
                if group.signature is None:
                    continue  # reported as a missing signature(...)
                param = next((p for p in group.signature if p.name == str(tok)), None)
                if param is None:
                    raise self.error(
                        tok,
                        f"{clause}(...) names '{tok}', which is not a parameter of the signature "
                        f"({', '.join(p.name for p in group.signature)})"
                        + did_you_mean(str(tok), [p.name for p in group.signature if p.output]),
                    )
                if not (param.is_pointer and param.output):
                    raise self.error(
                        tok,
                        f"{clause}(...) names '{tok}', which is not an {{output}} pointer: IREE treats "
                        "dispatch operands as immutable, so only what the dispatch returns can be "
                        f"{'zero-filled' if clause == 'reset_to_zero' else 'restored'}"
                        + (f"; mark it '{tok}: {param.type} {{output}}'" if param.is_pointer else ""),
                    )

    def _offset(self, tok: lark.Token, col: int) -> Location:
        """Location of character ``col`` (0-based) inside token ``tok``."""
        before = str(tok)[:col]
        line = tok.line + before.count("\n")
        column = (tok.column + col) if "\n" not in before else len(before) - before.rfind("\n")
        return self.loc(line, column)

    # --- whole-op checks ---
    def check(self, group: AutotuneGroup, locs: dict[str, Location]) -> None:
        if group.variants is not None and group.triton is not None:
            raise DiagnosticError.at(locs["triton"], "give either variants([...]) or triton(...), not both")
        if group.variants is None and group.triton is None:
            raise DiagnosticError.at(group.location, f'@{group.name} needs variants([...]) or triton("file.py", "kernel")')
        if group.kernel_source is not None and group.triton is None:
            raise DiagnosticError.at(
                locs["kernel_source"],
                'kernel_source(...) holds the module of the kernel named in triton("file.py", "kernel"); it needs that clause',
            )
        self._check_output_refs(group)
        if group.default is not None and group.variants is not None and group.default not in group.variants:
            raise DiagnosticError.at(locs["default"], f"default(@{group.default}) is not one of the variants")
        if group.choices is not None:
            if group.variants is None:
                raise DiagnosticError.at(
                    locs["choices"],
                    "choices(...) names variants: it applies to the variants([...]) form (autotune-export --tuning-results writes it after materializing)",
                )
            for _, v in group.choices:
                if v not in group.variants:
                    raise DiagnosticError.at(locs["choices"], f"choices(...) picks @{v}, which is not one of the variants")
            if len({len(k) for k, _ in group.choices}) > 1:
                raise DiagnosticError.at(locs["choices"], "every workload of choices(...) must have the same number of values")
        if group.tune_workload is not None and len({len(w) for w in group.tune_workload}) > 1:
            raise DiagnosticError.at(
                locs["tune_workload"],
                "every workload of tune_workload([...], [...]) must give one value per host argument (they differ in length)",
            )
        if group.variants is not None:
            for clause in ("signature", "configs", "workload", "grid"):
                if clause in locs:
                    raise DiagnosticError.at(
                        locs[clause],
                        f"'{clause}' only applies to the triton(...) form; the variants([...]) form takes its layout and workload from the exports",
                    )
            if group.specialized is not None and len(group.specialized) != len(group.variants):
                raise DiagnosticError.at(
                    locs["specialized"],
                    f"specialized([...]) lists {len(group.specialized)} exports for {len(group.variants)} variants; give one per variant, in order",
                )
            return
        if "specialized" in locs:
            raise DiagnosticError.at(
                locs["specialized"],
                "'specialized' only applies to the variants([...]) form; in the triton(...) form write ':16' hints in the signature",
            )
        for clause in ("signature", "workload", "grid"):
            if clause not in locs:
                raise DiagnosticError.at(group.location, f"@{group.name}: the triton(...) form needs a {clause}(...) clause")
        scalars = {p.name: p for p in group.signature if not p.is_pointer and not p.is_none}
        pointers = {p.name for p in group.signature if p.is_pointer}
        nones = {p.name for p in group.signature if p.is_none}
        for name, tok in self._workload_tokens.items():
            if name in pointers:
                raise self.error(tok, f"workload value '{name}' is a pointer; the workload is made of integer scalars")
            if name in nones:
                raise self.error(
                    tok,
                    f"workload value '{name}' is none (the call passes None, so the dispatch does not pass it); the workload is made of integer scalars",
                )
        in_scope = set(group.workload) | set(OPTION_NAMES)
        if group.configs is not None:
            in_scope |= set(group.constexpr_keys())
        for expr, tok, lead in self._grid:
            for nm in grid_mod.names(expr):
                if nm.name in in_scope:
                    continue
                where = self._offset(tok, nm.column - 1)
                if nm.name in scalars:
                    raise DiagnosticError.at(
                        where, f"grid uses '{nm.name}', which is not in workload(...); add it there to use it in the grid"
                    )
                if nm.name in pointers:
                    raise DiagnosticError.at(
                        where,
                        f"grid uses '{nm.name}', which is a pointer; grids are computed from the workload and config constants",
                    )
                if nm.name in nones:
                    raise DiagnosticError.at(
                        where,
                        f"grid uses '{nm.name}', which is none (the call passes None); grids are computed from the workload and config constants",
                    )
                # Without configs([...]) the constexprs come from the kernel's triton.autotune
                # configs; materialize-triton-variants checks the names then.
                if group.configs is not None:
                    if any(nm.name == k for cfg in group.configs for k, _ in cfg):
                        hint = "; it is missing from some configs"
                    else:
                        hint = "; names in a grid are workload values, config constants and " + ", ".join(OPTION_NAMES)
                        hint += did_you_mean(nm.name, sorted(in_scope | set(group.constexpr_keys())))
                    raise DiagnosticError.at(where, f"grid uses unknown name '{nm.name}'{hint}")
            if group.configs is None:
                # Only constant subexpressions can be checked: every name stays symbolic.
                try:
                    grid_mod.fold(expr, {n.name: f"%{n.name}" for n in grid_mod.names(expr)})
                except grid_mod.GridError as err:
                    raise DiagnosticError.at(self._offset(tok, err.column - 1 if err.column else lead), str(err)) from None
                continue
            for cfg in group.configs:
                env = {k: v for k, v in cfg if isinstance(v, int) and not isinstance(v, bool)}
                env.setdefault("num_warps", 4)
                env.setdefault("num_stages", 3)
                env.setdefault("num_ctas", 1)
                try:
                    grid_mod.fold(expr, {**env, **{w: f"%{w}" for w in group.workload}})
                except grid_mod.GridError as err:
                    raise DiagnosticError.at(
                        self._offset(tok, err.column - 1 if err.column else lead),
                        f"{err} for config {{{', '.join(f'{k} = {format_value(v)}' for k, v in cfg)}}}",
                    ) from None


@functools.lru_cache(maxsize=1)
def _scratch_context():
    return new_context()


def _mlir_problem(text: str, kind: str) -> str | None:
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


class _StringError(ValueError):
    """A malformed MLIR string literal: ``offset`` is where in ``token`` the problem is."""

    def __init__(self, message: str, token, offset: int):
        super().__init__(message)
        self.token = token
        self.offset = offset


def _symbol_name(tok) -> str:
    text = str(tok)[1:]
    if text.startswith('"'):
        return _string(tok, 1)
    return text


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


def _string(tok, start: int = 0) -> str:
    """Decode the MLIR string literal at ``str(tok)[start:]`` (escapes ``\\"``, ``\\\\``,
    ``\\n``, ``\\t`` and ``\\XX`` with two hex digits, as MLIR's lexer). Raises _StringError."""
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
            raise _StringError(
                f"unknown escape '\\{nxt}' in string literal; MLIR strings take \\\", \\\\, \\n, \\t and \\XX (two hex digits)",
                tok,
                i,
            )
    return "".join(out)


def _value(node) -> Any:
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
                raise _DtypeError(tok, "torch", TORCH_DTYPES)
            return TorchDtype(name)
        name = str(tok)[len("tl.") :]
        if name not in TRITON_DTYPES:
            raise _DtypeError(tok)
        return TritonDtype(name)
    return _string(tok)


class _DtypeError(ValueError):
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


# --------------------------------------------------------------------------------------------
# Whole files
# --------------------------------------------------------------------------------------------


class ColumnMap:
    """Maps columns of the rewritten text (generic ops) back to the input's columns.

    A generic op is longer than the sugared text it replaces, so on the line where an op
    ends, what follows it moves right. Lines never move. ``segments[line]`` lists
    ``(new_col, orig_col, inside_op)`` starts of stretches, in order.
    """

    def __init__(self):
        self.segments: dict[int, list[tuple[int, int, bool]]] = {}

    def add(self, line: int, new_col: int, orig_col: int, inside_op: bool) -> None:
        self.segments.setdefault(line, [(1, 1, False)]).append((new_col, orig_col, inside_op))

    def column(self, line: int, col: int) -> int:
        """The input's column of column ``col`` of ``line`` in the rewritten text."""
        best = (1, 1, False)
        for seg in self.segments.get(line, ()):
            if seg[0] <= col:
                best = seg
        new_col, orig_col, inside = best
        return orig_col if inside else orig_col + (col - new_col)

    def __call__(self, loc: Location) -> Location:
        return Location(loc.file, loc.line, self.column(loc.line, loc.col))


def _lower(source: SourceFile) -> tuple[str, list[tuple[AutotuneGroup, dict[str, Location]]], ColumnMap]:
    text = source.text
    out: list[str] = []
    out_len = 0
    last_nl = -1  # offset of the last newline written to ``out``
    groups = []
    colmap = ColumnMap()
    pos = 0

    def emit(piece: str) -> None:
        nonlocal out_len, last_nl
        nl = piece.rfind("\n")
        if nl >= 0:
            last_nl = out_len + nl
        out.append(piece)
        out_len += len(piece)

    for start in _occurrences(text):
        if start < pos:
            continue
        end = _op_extent(text, start)
        line, col = _line_col(text, start)
        after = _skip_trivia(text, end)
        following = _describe(text, after) if after < len(text) else "end of file"
        reader = _OpReader(text[start:end], source.name, line, col, following)
        group, locs = reader.parse()
        groups.append((group, locs))
        # A placeholder generic op at the sugared op's position; parse_source sets its
        # attributes from the group with the bindings (the clause table), no op text.
        generic = f'"{GENERIC_OP_NAME}"() {{{_PENDING} = {len(groups) - 1} : i64}} : () -> () loc("-":{line}:{col})'
        emit(text[pos:start])
        new_col = out_len - last_nl
        colmap.add(line, new_col, col, True)
        emit(generic)
        newlines = text.count("\n", start, end)
        emit("\n" * newlines)
        end_line, end_col = _line_col(text, end)
        colmap.add(end_line, out_len - last_nl, end_col, False)
        pos = end
    emit(text[pos:])
    return "".join(out), groups, colmap


def lower_extension_syntax(source: SourceFile) -> tuple[str, list[tuple[AutotuneGroup, dict[str, Location]]]]:
    """Replace every sugared op by its generic form, keeping every line where it was.

    Returns the rewritten text and the parsed groups (with clause locations).
    Raises DiagnosticError for malformed ops.
    """
    text, groups, _ = _lower(source)
    return text, groups


def parse_source(source: SourceFile, context=None):
    """Parse ``source`` into an ``iree.compiler.ir.Module``.

    Input written for older IREE releases is first rewritten into the installed IREE's
    syntax by :func:`autotune_export.frontend.compat.normalize` (lines unchanged).
    Also checks that every extension op sits directly inside a ``hal.executable.source`` and
    that symbols of groups are unique there (among groups and exports).
    Raises DiagnosticError (locations name ``source.name``) for any syntax or verifier error.
    """

    # Older IREE spellings -> the installed IREE's, every line kept where it was.
    source = SourceFile(compat.normalize(source.text, source.name), source.name, source.base_dir)
    generic_text, groups, colmap = _lower(source)
    ctx = context or new_context()
    try:
        module = ir.Module.parse(generic_text, ctx)
    except ir.MLIRError as err:
        raise from_mlir_error(err, source.name, remap=colmap) from None
    try:
        module.operation.verify()
    except ir.MLIRError as err:
        raise from_mlir_error(err, source.name, remap=colmap) from None
    for op in find_groups(module):
        if _PENDING in op.attributes:
            group = groups[int(op.attributes[_PENDING].value)][0]
            group.write_into(op)
            with ctx:
                op.location = _with_clauses(op.location, group)
    seen: dict[tuple[int, str], Location | None] = {}
    sugared = {(g.location.line, g.location.col) for g, _ in groups if g.location is not None}
    for op, parent in find_groups(module, with_parent=True):
        grp = _checked_group(op, source.name, colmap, sugared)
        if parent is None or not isinstance(parent.opview, hal.ExecutableSourceOp):
            where = parent.name if parent is not None else "the module"
            raise DiagnosticError.at(
                grp.location, f"{SUGARED_OP_NAME} must be directly inside a hal.executable.source, not {where}"
            )
        key = (id(parent), grp.name)
        if key not in seen:
            exports = _export_locations(parent, source.name, colmap)
            for name, loc in exports.items():
                seen.setdefault((id(parent), name), loc)
        if key in seen:
            first = seen[key]
            notes = [Diagnostic("note", f"@{grp.name} is first defined here", first)] if first else []
            raise DiagnosticError.at(grp.location, f"redefinition of symbol @{grp.name} in {_source_name(parent)}", notes)
        seen[key] = grp.location
    return module


def _with_clauses(loc, group: AutotuneGroup):
    """``loc`` (the op's position) fused with one named location per clause and clause item
    (``loc(fused["-":3:3, "triton"("-":4:7), "triton.kernel"("-":4:22), ...])``, positions in
    the parser's buffer ``-`` as the op's own), so that passes reading the op report at the
    clause (:meth:`AutotuneGroup.at`); :func:`location_of` still gives the op's position."""
    parts = [
        ir.Location.name(key, childLoc=ir.Location.file("-", where.line, where.col))
        for key, where in group.clause_locations.items()
    ]
    return ir.Location.fused([loc, *parts]) if parts else loc


def _checked_group(op, filename: str, colmap: ColumnMap, sugared: set[tuple[int, int]]) -> AutotuneGroup:
    """The group of a generic ``autotune.export`` op. One the user wrote in the generic form
    (not made from the sugared op here) gets the sugared op's checks: it is printed sugared
    and read back."""

    loc = location_of(op.location, filename)
    if loc is not None and (loc.line, loc.col) in sugared:
        return AutotuneGroup.from_op(op, filename)  # made here; its loc(...) is the input's
    if loc is not None and loc.file == filename:
        loc = colmap(loc)  # the parser's position in the rewritten text
    what = f'generic "{GENERIC_OP_NAME}" op'
    try:
        group = AutotuneGroup.from_op(op, filename)
        if not isinstance(group.name, str):
            raise TypeError("sym_name must be a string")
        sugar = group.to_sugar()
    except KeyError as err:
        raise DiagnosticError.at(
            loc, f"{what} without the attribute {err}; write the op as {SUGARED_OP_NAME} @name ..."
        ) from None
    except (TypeError, ValueError, IndexError, AttributeError) as err:
        raise DiagnosticError.at(loc, f"malformed {what}: {err}; write the op as {SUGARED_OP_NAME} @name ...") from None
    try:
        _OpReader(sugar, filename, 1, 1).parse()
    except DiagnosticError as err:
        first = err.diagnostics[0]
        raise DiagnosticError.at(loc, f"invalid {what}: {first.message}") from None
    group.location = loc
    return group


def _source_name(source) -> str:
    if "sym_name" in source.attributes:
        return symbol(source.attributes["sym_name"].value)
    return "the executable"


def _export_locations(source, filename: str, colmap: ColumnMap) -> dict[str, Location | None]:
    """Symbol -> location of the ``hal.executable.export`` ops of a source."""

    out = {}
    for block in source.regions[0].blocks:
        for child in block.operations:
            child = child.operation
            if isinstance(child.opview, hal.ExecutableExportOp) and "sym_name" in child.attributes:
                loc = location_of(child.location, filename)
                out[child.attributes["sym_name"].value] = colmap(loc) if loc and loc.file == filename else loc
    return out


def print_module(module, filename: str | None = None, debug_info: bool = False) -> str:
    """Print ``module`` with the installed IREE's syntax and the sugared extension ops."""
    groups = [AutotuneGroup.from_op(op, filename) for op in find_groups(module)]
    text = module.operation.get_asm(enable_debug_info=debug_info, assume_verified=True)
    # IREE 3.13 prints a data-only #hal.executable.object<{data = ...}> as '<{, data = ...}>',
    # which it cannot parse back; drop the stray comma.
    text = text.replace("#hal.executable.object<{, ", "#hal.executable.object<{")
    # MLIR prints each generic op on one line of its own, in the order find_groups walks.
    it = iter(groups)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        body = line.lstrip(" \t")
        if body.startswith(f'"{GENERIC_OP_NAME}"()'):
            lines[i] = next(it).to_sugar(line[: len(line) - len(body)])
    return "\n".join(lines)
