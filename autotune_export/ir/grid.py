"""Grid expressions: Triton's launch grid as a function of the dispatch workload.

A grid expression (``grid(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N))`` in the extension syntax) is
parsed with ``dialects/grid.lark`` into a small tree, checked against the names in scope,
evaluated on integers (for tests and tuning), and emitted as ``arith`` ops on ``index`` values
inside a ``hal.executable.export`` workgroup-count region, where each grid dimension becomes
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

__all__ = ["GridError", "Expr", "parse", "format_expr", "names", "evaluate", "CountEmitter"]


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
    return lark.Lark(grammar("grid.lark"), parser="lalr", propagate_positions=True)


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


_ARITH = {
    "+": "arith.addi",
    "-": "arith.subi",
    "*": "arith.muli",
    "//": "arith.floordivsi",
    "%": "arith.remsi",  # not emitted: Python's % is lowered through floordivsi (see _binary)
    "cdiv": "arith.ceildivsi",
    "min": "arith.minsi",
    "max": "arith.maxsi",
}


class CountEmitter:
    """Emit grid expressions as ``arith`` ops on ``index`` values (MLIR text lines).

    ``values`` maps each name in scope to an int (a config constant, folded) or to the SSA
    name of an ``index`` value (a workload argument of the count region, e.g. ``"%M"``).
    Constant subtrees are folded in Python, so a grid of constants emits one constant.
    Raises GridError for unknown names and for division by a constant zero.
    """

    def __init__(self, values: Mapping[str, Union[int, str]], indent: str = "  "):
        self.values = dict(values)
        self.indent = indent
        self.lines: list[str] = []
        self._constants: dict[int, str] = {}
        self._counter = 0

    def _fresh(self) -> str:
        self._counter += 1
        return f"%g{self._counter}"

    def constant(self, value: int) -> str:
        """SSA name of an ``index`` constant, created once per value."""
        if value not in self._constants:
            name = f"%c{value}" if value >= 0 else f"%c_{-value}"
            self._constants[value] = name
            self.lines.append(f"{self.indent}{name} = arith.constant {value} : index")
        return self._constants[value]

    def _fold(self, expr: Expr) -> Union[int, str]:
        if isinstance(expr, Num):
            return expr.value
        if isinstance(expr, Name):
            if expr.name not in self.values:
                raise GridError(f"unknown name '{expr.name}' in grid expression", expr.column)
            return self.values[expr.name]
        if isinstance(expr, Neg):
            inner = self._fold(expr.operand)
            if isinstance(inner, int):
                return -inner
            return self._binary("-", 0, inner)
        lhs, rhs = self._fold(expr.lhs), self._fold(expr.rhs)
        if expr.op in ("//", "%", "cdiv") and rhs == 0:
            raise GridError(_division_by_zero(expr.op), expr.column or None)
        if isinstance(lhs, int) and isinstance(rhs, int):
            return _apply(expr.op, lhs, rhs, expr.column)
        return self._binary(expr.op, lhs, rhs)

    def _binary(self, op: str, lhs, rhs) -> str:
        a = self.constant(lhs) if isinstance(lhs, int) else lhs
        b = self.constant(rhs) if isinstance(rhs, int) else rhs
        result = self._fresh()
        if op == "%":
            # Python's % takes the divisor's sign: r = a - floordiv(a, b) * b.
            q = self._fresh()
            p = self._fresh()
            self.lines.append(f"{self.indent}{q} = arith.floordivsi {a}, {b} : index")
            self.lines.append(f"{self.indent}{p} = arith.muli {q}, {b} : index")
            self.lines.append(f"{self.indent}{result} = arith.subi {a}, {p} : index")
            return result
        self.lines.append(f"{self.indent}{result} = {_ARITH[op]} {a}, {b} : index")
        return result

    def emit(self, expr: Expr) -> str:
        """Emit ``expr``; return the SSA name of its ``index`` result."""
        value = self._fold(expr)
        return self.constant(value) if isinstance(value, int) else value

    def emit_grid(self, grid: Sequence[Expr]) -> tuple[str, str, str]:
        """Emit up to three grid dimensions; missing ones are 1 (Triton's convention)."""
        if not 1 <= len(grid) <= 3:
            raise GridError(f"a grid has 1 to 3 dimensions, got {len(grid)}")
        dims = [self.emit(e) for e in grid]
        while len(dims) < 3:
            dims.append(self.constant(1))
        return tuple(dims)  # type: ignore[return-value]
