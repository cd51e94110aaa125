"""Front end: the words of the op's syntax errors, as mlir-opt writes them: what the parser
expected (lark's terminals named as users read them), the offending token, and MLIR's rule
for where a missing token is reported (``Parser::emitWrongTokenError``).
"""

from __future__ import annotations

import re

from autotune_export.ir.group_clauses import CLAUSE_NAMES

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


def describe_expected(expected) -> str:
    """Describe the set of lark terminals the parser accepted, e.g. ``',' or ']'``."""
    expected = set(expected)
    parts: list[str] = []
    clauses = {e for e in expected if e.lower() in CLAUSE_NAMES}
    if clauses:
        parts.append("a clause (" + ", ".join(CLAUSE_NAMES) + ")")
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


def describe_token(text: str, pos: int) -> str:
    """The offending token at ``pos`` as users see it: one word, symbol, string or character.

    (lark's fallback lexer may match a long stretch as one grid-expression token.)"""
    if pos >= len(text):
        return "end of op"
    m = _TOKEN_START.match(text, pos)
    word = m.group(0) if m else text[pos]
    return f"'{word}'"


def backed_up(text: str, pos: int) -> int:
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


def accepted_terminals(err) -> set[str]:
    """The terminals the parser state of ``err`` (an UnexpectedToken) accepts after the
    reductions they trigger (empty when lark cannot tell)."""
    interactive = getattr(err, "interactive_parser", None)
    try:
        return set(interactive.accepts()) if interactive is not None else set()
    except Exception:  # pragma: no cover - lark's interactive parser is best effort here
        return set()
