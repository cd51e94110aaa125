"""Front end, step 2a: the text of one sugared op, where each of its characters is in the file
(:class:`OpSyntax`: the op's position in the file, so locations point at the user's line and
column) and its lark tree (``dialects/autotuning.lark``), a syntax error reported at the exact
line and column (:mod:`.syntax_errors` words it). :class:`~autotune_export.frontend.clauses.OpReader`
reads the tree into a group.
"""

from __future__ import annotations

import functools
import re

import lark

from autotune_export.dialects import grammar
from autotune_export.frontend.scanning import IDENT, SYMBOL, clause_spans, line_col, skip_trivia
from autotune_export.frontend.syntax_errors import accepted_terminals, backed_up, describe_expected, describe_token
from autotune_export.ir.group import SUGARED_OP_NAME
from autotune_export.ir.group_clauses import CLAUSE_NAMES
from autotune_export.support.diagnostics import DiagnosticError, Location, did_you_mean

__all__ = ["OpSyntax"]


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return lark.Lark(
        grammar("autotuning.lark"), parser="lalr", propagate_positions=True, maybe_placeholders=False, cache=True
    )  # lark keeps the LALR tables in a temp file keyed by grammar and options


class OpSyntax:
    """One sugared op's text (``text``, starting at ``start_line``:``start_col`` of ``filename``;
    ``following`` says what comes after it in the file, for messages): locations of its offsets
    and tokens, and its lark tree (:meth:`parse_tree`)."""

    def __init__(self, text: str, filename: str, start_line: int, start_col: int, following: str = "end of file"):
        self.text = text
        self.filename = filename
        self.start_line = start_line
        self.start_col = start_col
        self.following = following  # what comes after the op in the file, for messages

    def loc(self, line: int, col: int) -> Location:
        if line == 1:
            col += self.start_col - 1
        return Location(self.filename, line + self.start_line - 1, col)

    def loc_at(self, pos: int) -> Location:
        """Location of offset ``pos`` of the op text."""
        return self.loc(*line_col(self.text, pos))

    def loc_of(self, node) -> Location:
        meta = node if isinstance(node, lark.Token) else node.meta
        return self.loc(meta.line, meta.column)

    def error(self, node, message: str) -> DiagnosticError:
        return DiagnosticError.at(self.loc_of(node), message)

    def offset(self, tok: lark.Token, col: int) -> Location:
        """Location of character ``col`` (0-based) inside token ``tok``."""
        before = str(tok)[:col]
        line = tok.line + before.count("\n")
        column = (tok.column + col) if "\n" not in before else len(before) - before.rfind("\n")
        return self.loc(line, column)

    def _context(self, pos: int) -> str:
        """`` in name(...)`` for the clause around offset ``pos`` (empty between clauses)."""
        for name, start, end in clause_spans(self.text):
            paren = self.text.find("(", start, end)
            if 0 <= paren < pos < end or (0 <= paren < pos == end and end == len(self.text)):
                return f" in {name}(...)"
        return ""

    def parse_tree(self) -> lark.Tree:
        """The op's lark tree (``dialects/autotuning.lark``); a syntax error is a DiagnosticError at
        the offending character or token, worded by :mod:`.syntax_errors`."""
        text = self.text
        rest = skip_trivia(text, len(SUGARED_OP_NAME))
        if not SYMBOL.match(text, rest):
            # op_extent stops after the name: look at what follows it in the file.
            raise DiagnosticError.at(
                self.loc_at(len(SUGARED_OP_NAME)),
                f"expected the group's symbol (@name) after '{SUGARED_OP_NAME}'",
            )
        try:
            tree = _parser().parse(text)
        except lark.exceptions.UnexpectedCharacters as err:
            pos = err.pos_in_stream
            raise DiagnosticError.at(
                self.loc_at(pos), f"unexpected character {describe_token(text, pos)}{self._context(pos)}"
            ) from None
        except lark.exceptions.UnexpectedToken as err:
            raise self._wrong_token(err) from None
        except lark.exceptions.UnexpectedEOF:  # pragma: no cover - LALR reports UnexpectedToken
            raise DiagnosticError.at(self.loc_at(len(text)), f"{SUGARED_OP_NAME} ends early") from None
        return tree

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
            accepted = accepted_terminals(err)
            if accepted:
                expected &= accepted
        else:
            pos = tok.start_pos
            found = describe_token(text, pos)
        m = IDENT.match(text, pos) if tok.type != "$END" else None
        if m and any(e.lower() in CLAUSE_NAMES for e in expected):
            word = m.group(0)
            after = skip_trivia(text, m.end())
            if word not in CLAUSE_NAMES and after < len(text) and text[after] == "(":
                return DiagnosticError.at(
                    self.loc_at(pos),
                    f"unknown clause '{word}' in {SUGARED_OP_NAME}; expected one of: {', '.join(CLAUSE_NAMES)}"
                    + did_you_mean(word, CLAUSE_NAMES),
                )
        context = self._context(pos)
        if expected == {"LPAR"}:
            before = text[: backed_up(text, pos)].rstrip()
            clause = re.search(r"([a-z_]+)$", before)
            if clause and clause.group(1) in CLAUSE_NAMES:
                return DiagnosticError.at(self.loc_at(backed_up(text, pos)), f"expected '(' after '{clause.group(1)}'")
        return DiagnosticError.at(
            self.loc_at(backed_up(text, pos)), f"expected {describe_expected(expected)}{context}, found {found}"
        )
