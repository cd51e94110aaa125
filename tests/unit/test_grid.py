"""Tests of autotune_export.ir.grid: parsing and printing grid expressions, evaluating them with
Python's integer semantics, and emitting them as arith ops (checked by interpreting the
emitted lines)."""

from __future__ import annotations

import math
import random
import re

import pytest

from autotune_export.ir import grid as G
from autotune_export.ir.grid import BinOp, CountEmitter, GridError, Name, Neg, Num


def cdiv_ceil(a: int, b: int) -> int:
    return math.ceil(a / b) if abs(a) < 2**50 else -((-a) // b)


PY_ENV = {"cdiv": lambda a, b: -((-a) // b), "min": min, "max": max}


def py_eval(text: str, env: dict[str, int]) -> int:
    """Evaluate grid text as Python (``triton.cdiv`` renamed; min/max are Python's)."""
    return eval(text.replace("triton.cdiv", "cdiv"), {"__builtins__": {}}, {**PY_ENV, **env})


# --------------------------------------------------------------------------------------------
# Parsing and printing


@pytest.mark.parametrize(
    "text, expected",
    [
        ("M", Name("M")),
        ("42", Num(42)),
        ("a + b * c", BinOp("+", Name("a"), BinOp("*", Name("b"), Name("c")))),
        ("(a + b) * c", BinOp("*", BinOp("+", Name("a"), Name("b")), Name("c"))),
        ("a - b - c", BinOp("-", BinOp("-", Name("a"), Name("b")), Name("c"))),
        ("a // b % c", BinOp("%", BinOp("//", Name("a"), Name("b")), Name("c"))),
        ("-a // 2", BinOp("//", Neg(Name("a")), Num(2))),
        ("--a", Neg(Neg(Name("a")))),
        ("cdiv(M, BLOCK)", BinOp("cdiv", Name("M"), Name("BLOCK"))),
        ("triton.cdiv(M, 4)", BinOp("cdiv", Name("M"), Num(4))),
        ("min(a, max(b, 1))", BinOp("min", Name("a"), BinOp("max", Name("b"), Num(1)))),
        ("  cdiv( M ,\n  BLOCK )  ", BinOp("cdiv", Name("M"), Name("BLOCK"))),
        # a name that merely starts like a function is a name
        ("minimum + cdivx", BinOp("+", Name("minimum"), Name("cdivx"))),
    ],
)
def test_parse(text, expected):
    assert G.parse(text) == expected


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("((cdiv(M,BLOCK_M)) * triton.cdiv(N , BLOCK_N))", "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"),
        ("(a + b) + c", "a + b + c"),
        ("a + (b + c)", "a + (b + c)"),
        ("a - (b - c)", "a - (b - c)"),
        ("a * (b // c)", "a * (b // c)"),
        ("(a * b) // c", "a * b // c"),
        ("-(a + b)", "-(a + b)"),
        ("-(-a)", "--a"),
        ("a - -b", "a - -b"),
        ("(M + 1) // 2", "(M + 1) // 2"),
        ("max(N,1)", "max(N, 1)"),
    ],
)
def test_format_canonical(text, canonical):
    expr = G.parse(text)
    assert G.format_expr(expr) == canonical
    assert G.parse(canonical) == expr
    assert G.format_expr(G.parse(canonical)) == canonical


def random_expr(rng: random.Random, depth: int) -> G.Expr:
    if depth == 0 or rng.random() < 0.2:
        return Num(rng.randint(0, 9)) if rng.random() < 0.4 else Name(rng.choice("abc"))
    kind = rng.random()
    if kind < 0.1:
        return Neg(random_expr(rng, depth - 1))
    op = rng.choice(["+", "-", "*", "//", "%", "cdiv", "min", "max"])
    return BinOp(op, random_expr(rng, depth - 1), random_expr(rng, depth - 1))


def test_round_trip_and_python_semantics_random():
    """parse(format(e)) == e, and evaluate agrees with Python on the printed text."""
    rng = random.Random(1234)
    checked = 0
    for _ in range(400):
        expr = random_expr(rng, 4)
        text = G.format_expr(expr)
        assert G.parse(text) == expr, text
        env = {"a": rng.randint(-20, 20), "b": rng.randint(-20, 20), "c": rng.randint(1, 20)}
        try:
            expected = py_eval(text, env)
        except ZeroDivisionError:
            with pytest.raises(GridError, match="division by zero"):
                G.evaluate(expr, env)
            continue
        assert G.evaluate(expr, env) == expected, (text, env)
        checked += 1
    assert checked > 200


@pytest.mark.parametrize(
    "text, column, message",
    [
        ("cdiv(n, )", 9, "unexpected ')' in grid expression"),
        ("n $ 2", 3, "unexpected '$' in grid expression"),
        ("n +", 4, "incomplete grid expression 'n +'"),
        ("cdiv(n, 2", 10, "incomplete grid expression"),
        ("ceil(n, 2)", 1, "unknown function 'ceil' in grid expression; the functions are cdiv, min and max"),
        ("n + foo (2)", 5, "unknown function 'foo'"),
        ("n 2", 3, "unexpected '2'"),
        ("  ", 1, "empty grid expression"),
        ("cdiv(a)", 7, "unexpected ')'"),
        ("a\n  + + ", 7, "unexpected '+'"),  # no unary plus; position across lines
    ],
)
def test_parse_errors(text, column, message):
    with pytest.raises(GridError) as info:
        G.parse(text)
    assert message in str(info.value)
    assert info.value.column == column


def test_positions():
    """Names, operators and callees keep their 1-based positions (not part of equality)."""
    expr = G.parse("cdiv(M, BLOCK) * (N //\n 0)")
    assert [(n.name, n.column) for n in G.names(expr)] == [("M", 6), ("BLOCK", 9), ("N", 19)]
    assert expr.lhs.column == 1  # cdiv
    assert expr.rhs.column == 21  # '//' on the first line
    assert G.names(G.parse("3 + 4")) == []
    assert G.names(G.parse("a + a")) == [Name("a"), Name("a")]


# --------------------------------------------------------------------------------------------
# Evaluation


@pytest.mark.parametrize("a", [-7, -6, -1, 0, 1, 6, 7])
@pytest.mark.parametrize("b", [-3, -2, -1, 1, 2, 3])
def test_evaluate_integer_semantics(a, b):
    env = {"a": a, "b": b}
    assert G.evaluate(G.parse("a // b"), env) == a // b
    assert G.evaluate(G.parse("a % b"), env) == a % b
    assert G.evaluate(G.parse("-a // b"), env) == -a // b
    assert G.evaluate(G.parse("min(a, b) - max(a, b)"), env) == min(a, b) - max(a, b)
    # cdiv is the ceiling of a / b ...
    assert G.evaluate(G.parse("cdiv(a, b)"), env) == cdiv_ceil(a, b)
    # ... which is triton.cdiv, (a + b - 1) // b, for the positive divisors grids use
    if b > 0:
        assert G.evaluate(G.parse("triton.cdiv(a, b)"), env) == (a + b - 1) // b


def test_evaluate_errors():
    with pytest.raises(GridError, match="unknown name 'K' in grid expression") as info:
        G.evaluate(G.parse("cdiv(M, 4) + K"), {"M": 8})
    assert info.value.column == 14
    for text, column in [("M // 0", 3), ("M % (2 - 2)", 3), ("cdiv(M, 0)", 1)]:
        with pytest.raises(GridError, match="division by zero") as info:
            G.evaluate(G.parse(text), {"M": 8})
        assert info.value.column == column


def test_evaluate_big_workloads():
    env = {"M": 2**40 + 3, "BLOCK": 128}
    assert G.evaluate(G.parse("cdiv(M, BLOCK)"), env) == -(-(2**40 + 3) // 128)


# --------------------------------------------------------------------------------------------
# Emission


_LINE = re.compile(r"^\s*(%\w+) = (arith\.\w+) (.*) : index$")


def run_arith(lines: list[str], args: dict[str, int]) -> dict[str, int]:
    """Interpret emitted ``arith`` lines on Python ints (index = 64-bit, values stay small)."""
    values = {f"%{k}": v for k, v in args.items()}
    for line in lines:
        m = _LINE.match(line)
        assert m, line
        result, op, operands = m.groups()
        assert result not in values, f"{result} defined twice"
        if op == "arith.constant":
            values[result] = int(operands)
            continue
        a, b = (values[x.strip()] for x in operands.split(","))
        values[result] = {
            "arith.addi": lambda: a + b,
            "arith.subi": lambda: a - b,
            "arith.muli": lambda: a * b,
            "arith.floordivsi": lambda: a // b,
            "arith.ceildivsi": lambda: cdiv_ceil(a, b),
            "arith.minsi": lambda: min(a, b),
            "arith.maxsi": lambda: max(a, b),
        }[op]()
    return values


def test_count_emitter_text():
    em = CountEmitter({"BLOCK_M": 128, "BLOCK_N": 64, "M": "%M", "N": "%N"}, indent="  ")
    x, y, z = em.emit_grid([G.parse("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)")])
    assert em.lines == [
        "  %c128 = arith.constant 128 : index",
        "  %g1 = arith.ceildivsi %M, %c128 : index",
        "  %c64 = arith.constant 64 : index",
        "  %g2 = arith.ceildivsi %N, %c64 : index",
        "  %g3 = arith.muli %g1, %g2 : index",
        "  %c1 = arith.constant 1 : index",
    ]
    assert (x, y, z) == ("%g3", "%c1", "%c1")


def test_count_emitter_python_modulo_and_negation():
    em = CountEmitter({"M": "%M"}, indent="")
    result = em.emit(G.parse("-M % 3"))
    assert em.lines == [
        "%c0 = arith.constant 0 : index",
        "%g1 = arith.subi %c0, %M : index",
        "%c3 = arith.constant 3 : index",
        "%g3 = arith.floordivsi %g1, %c3 : index",
        "%g4 = arith.muli %g3, %c3 : index",
        "%g2 = arith.subi %g1, %g4 : index",
    ]
    for m in range(-5, 6):
        assert run_arith(em.lines, {"M": m})[result] == (-m) % 3


def test_count_emitter_constant_folding():
    em = CountEmitter({"BLOCK": 128, "num_warps": 4})
    x, y, z = em.emit_grid([G.parse("cdiv(1000, BLOCK) * num_warps"), G.parse("-7 // 2"), G.parse("-7 % 3")])
    # Everything folds to constants, each made once; Python semantics for // and %.
    assert em.lines == [
        "  %c32 = arith.constant 32 : index",
        "  %c_4 = arith.constant -4 : index",
        "  %c2 = arith.constant 2 : index",
    ]
    assert (x, y, z) == ("%c32", "%c_4", "%c2")
    em = CountEmitter({"n": "%n"})
    em.emit_grid([G.parse("n"), G.parse("1"), G.parse("2 - 1")])
    assert em.lines == ["  %c1 = arith.constant 1 : index"]  # one constant for both


def test_count_emitter_agrees_with_evaluate_random():
    rng = random.Random(99)
    for _ in range(300):
        expr = random_expr(rng, 4)
        env = {"a": rng.randint(-30, 30), "b": rng.randint(1, 30), "c": rng.randint(1, 9)}
        const = {"c": env["c"]}  # a config constant, folded; a and b are workload values
        try:
            expected = G.evaluate(expr, env)
        except GridError:
            expected = None
        em = CountEmitter({**const, "a": "%a", "b": "%b"})
        try:
            name = em.emit(expr)
        except GridError as err:
            # only a division by a value known to be zero while emitting
            assert "division by zero" in str(err)
            assert expected is None
            continue
        if expected is None:
            continue  # divides by a workload value that is zero for this env: a run-time matter
        assert run_arith(em.lines, {"a": env["a"], "b": env["b"]})[name] == expected, G.format_expr(expr)


def test_count_emitter_errors():
    with pytest.raises(GridError, match="unknown name 'BLOCK'") as info:
        CountEmitter({"M": "%M"}).emit(G.parse("cdiv(M, BLOCK)"))
    assert info.value.column == 9
    with pytest.raises(GridError, match=r"division by zero in grid expression \(cdiv\(\.\.\., 0\)\)"):
        CountEmitter({"M": "%M", "B": 0}).emit(G.parse("cdiv(M, B)"))
    with pytest.raises(GridError, match=r"division by zero in grid expression \('// 0'\)"):
        CountEmitter({"M": "%M"}).emit(G.parse("M // (4 - 4)"))
    with pytest.raises(GridError, match=r"\('% 0'\)"):
        CountEmitter({}).emit(G.parse("7 % 0"))
    with pytest.raises(GridError, match="a grid has 1 to 3 dimensions, got 4"):
        CountEmitter({}).emit_grid([G.parse("1")] * 4)
    with pytest.raises(GridError, match="got 0"):
        CountEmitter({}).emit_grid([])
