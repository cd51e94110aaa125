"""Grid expressions: Triton's launch grid as a function of the dispatch workload.

A grid expression (``grid(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N))`` in the extension syntax) is
parsed with ``dialects/grid.lark`` into a small tree, checked against the names in scope,
evaluated on integers (for tests and tuning), and built with the bindings' ``arith`` op classes
on ``index`` values (:class:`autotune_export.ir.builders.CountBuilder`,
:func:`~autotune_export.ir.builders.count_builder`; this module imports no IREE) inside a
``hal.executable.export`` workgroup-count region, where each grid dimension becomes
one workgroup-count dimension (Triton launches ``grid[0] * num_ctas`` blocks in x; with
``num_ctas == 1`` that is IREE's workgroup count x).

Semantics follow Python/Triton integer arithmetic: ``//`` floors, ``%`` takes the sign of the
divisor, ``cdiv(a, b)`` is the ceiling of ``a / b`` (``arith.ceildivsi``), which is
``triton.cdiv``'s ``(a + b - 1) // b`` for every positive ``b`` (the only divisors a launch
grid uses). ``names``/``Name.column`` and ``BinOp.column`` are 1-based positions in the text
(``//``, ``%`` and ``cdiv`` keep theirs, so that a division by zero can be pointed at).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence, Union

import lark
from autotune_export.dialects import grammar

__all__ = [
    "GridError",
    "Expr",
    "parse",
    "expr_from_tree",
    "format_expr",
    "names",
    "evaluate",
    "fold",
    "check_grid",
    "fold_with",
    "check_dims",
]


class GridError(ValueError):
    """A malformed grid expression, an unknown name, or a division by zero.

    ``column`` is the 1-based position of the problem inside the expression text (its
    offset + 1; the column when the text is one line), when known.
    """

    def __init__(self, message: str, column: int | None = None):
        super().__init__(message)
        self.column = column


@dataclass(frozen=True)
class Num:
    value: int


@dataclass(frozen=True)
class Name:
    name: str
    column: int = field(default=0, compare=False)  # positions do not take part in equality


@dataclass(frozen=True)
class BinOp:
    op: str  # "+", "-", "*", "//", "%", "cdiv", "min", "max"
    lhs: "Expr"
    rhs: "Expr"
    column: int = field(default=0, compare=False)  # of the operator or callee (1-based; 0: unknown)


@dataclass(frozen=True)
class Neg:
    operand: "Expr"


Expr = Union[Num, Name, BinOp, Neg]


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return lark.Lark(grammar("grid.lark"), parser="lalr", propagate_positions=True, cache=True)


_BINOPS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}


def _build(tree) -> Expr:
    if isinstance(tree, lark.Token):
        raise AssertionError(f"unexpected token {tree!r}")
    kind = tree.data
    if kind == "number":
        return Num(int(tree.children[0]))
    if kind == "name":
        tok = tree.children[0]
        return Name(str(tok), tok.start_pos + 1)
    if kind in _BINOPS:
        operands = [c for c in tree.children if not isinstance(c, lark.Token)]
        op_tok = next((c for c in tree.children if isinstance(c, lark.Token)), None)
        column = op_tok.start_pos + 1 if op_tok is not None else 0
        return BinOp(_BINOPS[kind], _build(operands[0]), _build(operands[1]), column)
    if kind == "neg":
        return Neg(_build(tree.children[0]))
    if kind == "call":
        callee_tok = tree.children[0]
        callee = str(callee_tok).removeprefix("triton.")
        return BinOp(callee, _build(tree.children[1]), _build(tree.children[2]), callee_tok.start_pos + 1)
    raise AssertionError(f"unexpected grid node {kind}")


def expr_from_tree(tree) -> Expr:
    """The Expr of a parse tree of grid.lark's ``expr`` rule, inside another grammar that
    appends to grid.lark's rules (the constraints of a config space, dialects/space.lark);
    columns are 1-based offsets into the text that grammar parsed."""
    return _build(tree)


def parse(text: str) -> Expr:
    """Parse one grid expression. Raises GridError (with the column) on a syntax error."""
    try:
        return _build(_parser().parse(text))
    except lark.exceptions.UnexpectedInput as err:
        pos = getattr(err, "pos_in_stream", None)
        token = getattr(err, "token", None)
        if not text.strip():
            raise GridError("empty grid expression", 1) from None
        if isinstance(err, lark.exceptions.UnexpectedEOF) or pos is None or pos < 0 or getattr(token, "type", None) == "$END":
            end = len(text.rstrip())
            raise GridError(f"incomplete grid expression '{text.strip()}'", end + 1) from None
        m = _TOKEN.match(text, pos)
        bad = m.group(0) if m else text[pos : pos + 1]
        callee = re.search(r"([A-Za-z_][A-Za-z0-9_.]*)\s*$", text[:pos])
        if bad == "(" and callee:
            raise GridError(
                f"unknown function '{callee.group(1)}' in grid expression; the functions are cdiv, min and max",
                callee.start(1) + 1,
            ) from None
        raise GridError(f"unexpected '{bad}' in grid expression", pos + 1) from None


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|\d+|//|\S")


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "//": 2, "%": 2}


def format_expr(expr: Expr, parent: int = 0) -> str:
    """Print ``expr`` canonically (minimal parentheses, single spaces); parse(format(e)) == e."""
    if isinstance(expr, Num):
        return str(expr.value)
    if isinstance(expr, Name):
        return expr.name
    if isinstance(expr, Neg):
        return "-" + format_expr(expr.operand, 3)
    if expr.op in ("cdiv", "min", "max"):
        return f"{expr.op}({format_expr(expr.lhs)}, {format_expr(expr.rhs)})"
    prec = _PRECEDENCE[expr.op]
    text = f"{format_expr(expr.lhs, prec)} {expr.op} {format_expr(expr.rhs, prec + 1)}"
    return f"({text})" if prec < parent else text


def names(expr: Expr) -> list[Name]:
    """Every name the expression uses, in order of appearance (with their columns)."""
    if isinstance(expr, Name):
        return [expr]
    if isinstance(expr, Neg):
        return names(expr.operand)
    if isinstance(expr, BinOp):
        return names(expr.lhs) + names(expr.rhs)
    return []


def _apply(op: str, a: int, b: int, column: int | None = None) -> int:
    if op in ("//", "%", "cdiv") and b == 0:
        raise GridError(_division_by_zero(op), column or None)
    return {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "//": lambda: a // b,
        "%": lambda: a % b,
        "cdiv": lambda: -((-a) // b),
        "min": lambda: min(a, b),
        "max": lambda: max(a, b),
    }[op]()


def evaluate(expr: Expr, env: Mapping[str, int]) -> int:
    """Evaluate on integers. Raises GridError for unknown names and division by zero."""
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Name):
        if expr.name not in env:
            raise GridError(f"unknown name '{expr.name}' in grid expression", expr.column)
        return int(env[expr.name])
    if isinstance(expr, Neg):
        return -evaluate(expr.operand, env)
    return _apply(expr.op, evaluate(expr.lhs, env), evaluate(expr.rhs, env), expr.column)


def _division_by_zero(op: str) -> str:
    what = f"{op}(..., 0)" if op == "cdiv" else f"'{op} 0'"
    return f"division by zero in grid expression ({what})"


def fold_with(expr: Expr, values: Mapping[str, object], binary: Callable[[str, object, object], object]):
    """Fold ``expr`` bottom-up: constant subtrees become Python ints (Python semantics, via
    :func:`_apply`); a node with a symbolic operand (any value in ``values`` that is not an
    int) becomes ``binary(op, lhs, rhs)``, called lhs subtree first, then rhs subtree, then
    the node (``-x`` is ``binary("-", 0, x)``). Raises GridError for unknown names and for a
    division by a value known to be zero."""
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Name):
        if expr.name not in values:
            raise GridError(f"unknown name '{expr.name}' in grid expression", expr.column)
        return values[expr.name]
    if isinstance(expr, Neg):
        inner = fold_with(expr.operand, values, binary)
        return -inner if isinstance(inner, int) else binary("-", 0, inner)
    lhs, rhs = fold_with(expr.lhs, values, binary), fold_with(expr.rhs, values, binary)
    if expr.op in ("//", "%", "cdiv") and isinstance(rhs, int) and rhs == 0:
        raise GridError(_division_by_zero(expr.op), expr.column or None)
    if isinstance(lhs, int) and isinstance(rhs, int):
        return _apply(expr.op, lhs, rhs, expr.column)
    return binary(expr.op, lhs, rhs)


_SYMBOLIC = object()


def fold(expr: Expr, values: Mapping[str, object]) -> int | None:
    """The value of ``expr`` when every name it uses has an int in ``values``; None when it
    depends on a symbolic name (a value in ``values`` that is not an int, e.g. a workload
    value known only at the dispatch). Checks what can be checked without the symbolic
    values: raises GridError for unknown names and for a division by a constant zero (the
    errors :class:`autotune_export.ir.builders.CountBuilder` raises for the same inputs)."""
    value = fold_with(expr, values, lambda op, lhs, rhs: _SYMBOLIC)
    return value if isinstance(value, int) else None


def check_dims(grid: Sequence[Expr]) -> None:
    if not 1 <= len(grid) <= 3:
        raise GridError(f"a grid has 1 to 3 dimensions, got {len(grid)}")


def check_grid(grid: Sequence[Expr], values: Mapping[str, object]) -> None:
    """Raise the GridError that :meth:`autotune_export.ir.builders.CountBuilder.build_grid` would raise for ``grid`` and
    ``values`` (names as in :func:`fold`), without building anything: wrong number of
    dimensions, unknown names, division by a constant zero."""
    check_dims(grid)
    for expr in grid:
        fold(expr, values)
