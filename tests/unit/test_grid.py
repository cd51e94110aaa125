"""Tests of autotune_export.ir.grid: parsing and printing grid expressions, evaluating them with
Python's integer semantics, and building them as the arith ops of a count region (checked op
by op and by interpreting the built ops)."""

from __future__ import annotations

import math
import random

import pytest

from autotune_export.ir import grid as G
from autotune_export.ir.grid import BinOp, GridError, Name, Neg, Num


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
# Building count regions (arith ops through the bindings)


_INTERPRET = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": cdiv_ceil,
    "arith.minsi": min,
    "arith.maxsi": max,
}


def build_export(grid: list[str], constants: dict[str, int], workload: list[str]):
    """A module with one ``hal.executable.export`` whose count region is built from ``grid``;
    returns (module, the export op). The module verifies."""
    from iree.compiler import ir

    from autotune_export.ir import builders, hal_attrs

    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        source = builders.executable_source("ex", ip=ir.InsertionPoint(module.body))
        exprs = [G.parse(g) for g in grid]
        G.check_grid(exprs, {**constants, **{w: None for w in workload}})
        op = builders.export(
            "k", 0, hal_attrs.pipeline_layout([True], 1), workload,
            builders.count_builder(exprs, constants, workload), workgroup_size=[128, 1, 1], ip=builders.source_block(source),
        )
        assert module.operation.verify()
    return module, op


def count_ops(export) -> list[tuple[str, list[str]]]:
    """The count region's ops as (name, [operand kinds]): block arguments as ``%<index>``
    (``%1`` is the first workload value), results of earlier ops as ``#<position>``, and
    constants with their value as ``=<value>``."""
    block = export.regions[0].blocks[0]
    where = {block.arguments[i]: f"%{i}" for i in range(len(block.arguments))}
    out = []
    for k, op in enumerate(block.operations):
        op = op.operation
        if op.name == "arith.constant":
            out.append((op.name, [f"={op.attributes['value'].value}"]))
        else:
            out.append((op.name, [where[v] for v in op.operands]))
        for r in op.results:
            where[r] = f"#{k}"
    return out


def run_count(export, workload: list[int]) -> list[int]:
    """Interpret the count region on Python ints; returns the ``hal.return`` values."""
    block = export.regions[0].blocks[0]
    values = {block.arguments[i + 1]: w for i, w in enumerate(workload)}
    for op in block.operations:
        op = op.operation
        for r in op.results:
            assert str(r.type) == "index"
        if op.name == "arith.constant":
            values[op.results[0]] = op.attributes["value"].value
        elif op.name == "hal.return":
            return [values[v] for v in op.operands]
        else:
            a, b = (values[v] for v in op.operands)
            values[op.results[0]] = _INTERPRET[op.name](a, b)
    raise AssertionError("no hal.return")


def test_count_builder_ops():
    module, export = build_export(["cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"], {"BLOCK_M": 128, "BLOCK_N": 64}, ["M", "N"])
    assert count_ops(export) == [
        ("arith.constant", ["=128"]),
        ("arith.ceildivsi", ["%1", "#0"]),
        ("arith.constant", ["=64"]),
        ("arith.ceildivsi", ["%2", "#2"]),
        ("arith.muli", ["#1", "#3"]),
        ("arith.constant", ["=1"]),
        ("hal.return", ["#4", "#5", "#5"]),
    ]
    text = str(module)
    assert "count(%arg0: !hal.device, %arg1: index, %arg2: index) -> (index, index, index)" in text
    assert "workgroup_size = [128 : index, 1 : index, 1 : index]" in text
    assert run_count(export, [1000, 70]) == [8 * 2, 1, 1]


def test_count_builder_python_modulo_and_negation():
    _, export = build_export(["-M % 3"], {}, ["M"])
    assert count_ops(export) == [
        ("arith.constant", ["=0"]),
        ("arith.subi", ["#0", "%1"]),
        ("arith.constant", ["=3"]),
        ("arith.floordivsi", ["#1", "#2"]),
        ("arith.muli", ["#3", "#2"]),
        ("arith.subi", ["#1", "#4"]),
        ("arith.constant", ["=1"]),
        ("hal.return", ["#5", "#6", "#6"]),
    ]
    for m in range(-5, 6):
        assert run_count(export, [m])[0] == (-m) % 3


def test_count_builder_constant_folding():
    _, export = build_export(["cdiv(1000, BLOCK) * num_warps", "-7 // 2", "-7 % 3"], {"BLOCK": 128, "num_warps": 4}, [])
    # Everything folds to constants, each made once; Python semantics for // and %.
    assert count_ops(export) == [
        ("arith.constant", ["=32"]),
        ("arith.constant", ["=-4"]),
        ("arith.constant", ["=2"]),
        ("hal.return", ["#0", "#1", "#2"]),
    ]
    _, export = build_export(["n", "1", "2 - 1"], {}, ["n"])
    assert count_ops(export) == [("arith.constant", ["=1"]), ("hal.return", ["%1", "#0", "#0"])]  # one constant for both


def test_count_builder_workload_shadows_constants():
    _, export = build_export(["n * 2"], {"n": 5}, ["n"])
    assert run_count(export, [7]) == [14, 1, 1]


def test_count_builder_agrees_with_evaluate_random():
    from iree.compiler import ir

    from autotune_export.ir import builders, hal_attrs

    rng = random.Random(99)
    checked = 0
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        source = builders.executable_source("ex", ip=ir.InsertionPoint(module.body))
        layout = hal_attrs.pipeline_layout([], 0)
        for i in range(300):
            expr = random_expr(rng, 4)
            env = {"a": rng.randint(-30, 30), "b": rng.randint(1, 30), "c": rng.randint(1, 9)}
            const = {"c": env["c"]}  # a config constant, folded; a and b are workload values
            try:
                expected = G.evaluate(expr, env)
            except GridError:
                expected = None
            try:
                G.check_grid([expr], {**const, "a": None, "b": None})
            except GridError as err:
                # only a division by a value known to be zero while building
                assert "division by zero" in str(err)
                assert expected is None
                continue
            export = builders.export(f"k{i}", i, layout, ["a", "b"], builders.count_builder([expr], const, ["a", "b"]),
                                     ip=builders.source_block(source))
            if expected is None:
                continue  # divides by a workload value that is zero for this env: a run-time matter
            assert run_count(export, [env["a"], env["b"]])[0] == expected, G.format_expr(expr)
            checked += 1
        assert module.operation.verify()
    assert checked > 150


def test_fold():
    assert G.fold(G.parse("cdiv(1000, B) * 2"), {"B": 128}) == 16
    assert G.fold(G.parse("cdiv(M, B)"), {"M": "%M", "B": 128}) is None
    assert G.fold(G.parse("-7 % 3"), {}) == 2


def test_fold_and_check_errors():
    with pytest.raises(GridError, match="unknown name 'BLOCK'") as info:
        G.fold(G.parse("cdiv(M, BLOCK)"), {"M": None})
    assert info.value.column == 9
    with pytest.raises(GridError, match=r"division by zero in grid expression \(cdiv\(\.\.\., 0\)\)"):
        G.fold(G.parse("cdiv(M, B)"), {"M": None, "B": 0})
    with pytest.raises(GridError, match=r"division by zero in grid expression \('// 0'\)"):
        G.fold(G.parse("M // (4 - 4)"), {"M": None})
    with pytest.raises(GridError, match=r"\('% 0'\)"):
        G.fold(G.parse("7 % 0"), {})
    with pytest.raises(GridError, match="a grid has 1 to 3 dimensions, got 4"):
        G.check_grid([G.parse("1")] * 4, {})
    with pytest.raises(GridError, match="got 0"):
        G.check_grid([], {})


def test_count_builder_errors():
    """CountBuilder raises what check_grid raises (it is what materialize checks first)."""
    from iree.compiler import ir

    from autotune_export.ir import builders

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            with pytest.raises(GridError, match="unknown name 'BLOCK'"):
                builders.CountBuilder({}).build(G.parse("cdiv(8, BLOCK)"))
            with pytest.raises(GridError, match="division by zero"):
                builders.CountBuilder({"B": 0}).build(G.parse("cdiv(8, B)"))
            with pytest.raises(GridError, match="got 4"):
                builders.CountBuilder({}).build_grid([G.parse("1")] * 4)
        assert len(list(module.body.operations)) == 0  # nothing built: errors come before ops
