"""Generated config spaces: a product of values per name, filtered by a constraint.

The ``configs`` clause takes, besides a list of configs, a space::

    configs(product(BLOCK_M in [64, 128, 256], BLOCK_N in [64, 128, 256], BLOCK_K in [32, 64],
                    GROUP_M = 8, num_warps in [4, 8], num_stages in [3, 4])
            where BLOCK_M * BLOCK_N <= 32768 and BLOCK_K <= BLOCK_N)

``NAME in [v, ...]`` sweeps the values, ``NAME = v`` fixes one (values as in a config: integers,
numbers, true/false, strings, none, Triton dtypes). The configs are the Cartesian product in
the order written, the first name varying slowest (``itertools.product``, nested loops), each
config's entries in the axes' order, and only those for which the constraint holds. The same
space from Python: :func:`autotune_export.interop.space.product`.

A constraint is Python's boolean and comparison syntax (``and``, ``or``, ``not``, ``<``, ``<=``,
``==``, ``!=``, ``>=``, ``>``, chained comparisons as in Python) over the grid expressions'
integer arithmetic (:mod:`autotune_export.ir.grid`: ``+ - * // %``, unary minus, ``cdiv``,
``min``, ``max``; in a ``.mlir`` file ``//`` starts a comment, as everywhere outside
``grid(...)``). Its names are the space's names and the Triton options with Triton's defaults
(``num_warps`` 4, ``num_stages`` 3, ``num_ctas`` 1) when the space does not set them; a name
bound to a value that is not an integer (a dtype, a string) cannot be used in a constraint.
``true``/``false`` values count as 1/0, as Python's bools do, and so do the literals ``true``/``false``
in a constraint (``FLAG == true``).

Errors are :class:`SpaceError` with the 1-based column in the constraint's text when known.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

import lark

from autotune_export.dialects import grammar
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.group_values import format_value
from autotune_export.ir.params import OPTION_DEFAULTS

__all__ = [
    "SpaceError",
    "MAX_PRODUCT",
    "Axis",
    "ConfigSpace",
    "Constraint",
    "parse_constraint",
    "format_constraint",
    "constraint_names",
    "holds",
    "defaults",
]


#: The most configs a product may enumerate (before its constraint): a bound on the front end's
#: work, far above what is worth compiling (each config is a Triton compile).
MAX_PRODUCT = 100_000


class SpaceError(ValueError):
    """A malformed space or constraint: a syntax error, a name the space does not have, a value
    a constraint cannot compute with, or a space with no config. ``column`` is the 1-based
    position in the constraint's text when the problem is there."""

    def __init__(self, message: str, column: int | None = None):
        super().__init__(message)
        self.column = column


@dataclass(frozen=True)
class Compare:
    """``operands[0] ops[0] operands[1] ops[1] ...`` (Python's chained comparison)."""

    operands: tuple
    ops: tuple[str, ...]


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or"
    lhs: "Constraint"
    rhs: "Constraint"


@dataclass(frozen=True)
class Not:
    operand: "Constraint"


Constraint = Union[Compare, BoolOp, Not]


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    # The arithmetic is grid.lark's (its rules, terminals and ignores), without its start rule.
    arithmetic = re.sub(r"(?m)^\?start:.*$", "", grammar("grid.lark"))
    return lark.Lark(arithmetic + "\n" + grammar("space.lark"), start="constraint", parser="lalr", cache=True)


def _build(tree) -> Constraint:
    kind = tree.data
    if kind in ("or_", "and_"):
        return BoolOp(kind[:-1], _build(tree.children[0]), _build(tree.children[1]))
    if kind == "not_":
        return Not(_build(tree.children[0]))
    if kind == "comparison":
        operands = tuple(grid_mod.expr_from_tree(c) for c in tree.children if not isinstance(c, lark.Token))
        ops = tuple(str(c) for c in tree.children if isinstance(c, lark.Token))
        return Compare(operands, ops)
    raise AssertionError(f"unexpected constraint node {kind}")


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|\d+|//|[<>=!]=|\S")


def parse_constraint(text: str) -> Constraint:
    """Parse a constraint. Raises SpaceError (with the column) on a syntax error."""
    if not text.strip():
        raise SpaceError("empty constraint after 'where'", 1)
    try:
        return _build(_parser().parse(text))
    except lark.exceptions.UnexpectedInput as err:
        pos = getattr(err, "pos_in_stream", None)
        token = getattr(err, "token", None)
        if isinstance(err, lark.exceptions.UnexpectedEOF) or pos is None or pos < 0 or getattr(token, "type", None) == "$END":
            end = len(text.rstrip())
            if not re.search(r"(<=|>=|==|!=|<|>)", text):
                raise SpaceError(
                    f"constraint '{text.strip()}' compares nothing: write a comparison such as 'BLOCK_M * BLOCK_N <= 32768'", 1
                ) from None
            raise SpaceError(f"incomplete constraint '{text.strip()}'", end + 1) from None
        m = _TOKEN.match(text, pos)
        bad = m.group(0) if m else text[pos : pos + 1]
        callee = re.search(r"([A-Za-z_][A-Za-z0-9_.]*)\s*$", text[:pos])
        if bad == "(" and callee and callee.group(1) not in ("and", "or", "not"):
            raise SpaceError(
                f"unknown function '{callee.group(1)}' in constraint; the functions are cdiv, min and max", callee.start(1) + 1
            ) from None
        if bad == "=":
            raise SpaceError("unexpected '=' in constraint; compare with '=='", pos + 1) from None
        if bad in ("&&", "&", "||", "|", "!"):
            raise SpaceError(f"unexpected '{bad}' in constraint; combine comparisons with 'and', 'or', 'not'", pos + 1) from None
        raise SpaceError(f"unexpected '{bad}' in constraint", pos + 1) from None


def format_constraint(c: Constraint, parent: int = 0) -> str:
    """Canonical text (single spaces, minimal parentheses); parse(format(c)) == c."""
    if isinstance(c, Compare):
        parts = [grid_mod.format_expr(c.operands[0])]
        for op, operand in zip(c.ops, c.operands[1:]):
            parts += [op, grid_mod.format_expr(operand)]
        return " ".join(parts)
    if isinstance(c, Not):
        return "not " + format_constraint(c.operand, 3)
    prec = 1 if c.op == "or" else 2
    text = f"{format_constraint(c.lhs, prec)} {c.op} {format_constraint(c.rhs, prec + 1)}"
    return f"({text})" if prec < parent else text


def constraint_names(c: Constraint) -> list[grid_mod.Name]:
    """Every name the constraint uses, in order (with its column in the text)."""
    if isinstance(c, Compare):
        return [n for e in c.operands for n in grid_mod.names(e)]
    if isinstance(c, Not):
        return constraint_names(c.operand)
    return constraint_names(c.lhs) + constraint_names(c.rhs)


_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
}


def holds(c: Constraint, env: Mapping[str, int]) -> bool:
    """Whether ``c`` holds for the integer values ``env`` (Python semantics: chained
    comparisons, short-circuit ``and``/``or``). Raises SpaceError for an unknown name or a
    division by zero (with the column)."""
    if isinstance(c, Compare):
        try:
            left = grid_mod.evaluate(c.operands[0], env)
            for op, operand in zip(c.ops, c.operands[1:]):
                right = grid_mod.evaluate(operand, env)
                if not _COMPARE[op](left, right):
                    return False
                left = right
            return True
        except grid_mod.GridError as err:
            raise SpaceError(str(err).replace("grid expression", "constraint"), err.column) from None
    if isinstance(c, Not):
        return not holds(c.operand, env)
    if c.op == "and":
        return holds(c.lhs, env) and holds(c.rhs, env)
    return holds(c.lhs, env) or holds(c.rhs, env)


#: The literals ``true``/``false`` in a constraint (``FLAG == true``): 1/0, as a ``true``/``false``
#: value counts (docs/syntax.md); a space's own name of that spelling would take precedence.
CONSTANTS: dict[str, int] = {"true": 1, "false": 0}


def defaults() -> dict[str, int]:
    """The Triton options a constraint may use without the space setting them (Triton's
    defaults, :data:`autotune_export.ir.group.OPTION_DEFAULTS`)."""
    return {k: v for k, v in OPTION_DEFAULTS.items() if isinstance(v, int)}


@dataclass(frozen=True)
class Axis:
    """One name of a space: ``values`` in order; ``fixed`` when written ``NAME = v`` (one value)."""

    name: str
    values: tuple
    fixed: bool = False

    def sugar(self) -> str:
        if self.fixed:
            return f"{self.name} = {format_value(self.values[0])}"
        return f"{self.name} in [" + ", ".join(format_value(v) for v in self.values) + "]"


@dataclass
class ConfigSpace:
    """A product of :class:`Axis` values filtered by ``where`` (a constraint's text, or None).

    :meth:`check` validates it; :meth:`expand` gives the configs. ``excluded`` after
    :meth:`expand`: the configs of the product the constraint rejected (their count is
    ``size() - len(configs)``)."""

    axes: list[Axis]
    where: str | None = None
    _constraint: Constraint | None = field(default=None, repr=False, compare=False)

    def size(self) -> int:
        """How many configs the product has before the constraint."""
        n = 1
        for a in self.axes:
            n *= len(a.values)
        return n

    def constraint(self) -> Constraint | None:
        if self.where is None:
            return None
        if self._constraint is None:
            self._constraint = parse_constraint(self.where)
        return self._constraint

    def check(self) -> None:
        """Raise SpaceError for: no axis, a name given twice, an empty value list, a product of
        more than :data:`MAX_PRODUCT` configs, a constraint
        that does not parse or uses a name that is neither the space's nor a Triton option, or
        a name bound to a value a constraint cannot compute with (a dtype, a string, none)."""
        if not self.axes:
            raise SpaceError("product() names nothing: give NAME in [values] or NAME = value")
        seen = set()
        for a in self.axes:
            if a.name in seen:
                raise SpaceError(f"'{a.name}' is given twice in product(...)")
            seen.add(a.name)
            if not a.values:
                raise SpaceError(f"'{a.name} in []' has no value: the space would be empty")
        if self.size() > MAX_PRODUCT:
            raise SpaceError(
                f"product(...) has {self.size()} configs, more than {MAX_PRODUCT}: give fewer values "
                "(the constraint filters the product after it is enumerated)"
            )
        c = self.constraint()
        if c is None:
            return
        known = {a.name: a for a in self.axes}
        for nm in constraint_names(c):
            if nm.name in known:
                bad = [v for v in known[nm.name].values if not isinstance(v, int)]
                if bad:
                    raise SpaceError(
                        f"constraint uses '{nm.name}', whose value {format_value(bad[0])} is not an integer; "
                        "constraints compute on integers",
                        nm.column,
                    )
            elif nm.name not in defaults() and nm.name not in CONSTANTS:
                from autotune_export.support.diagnostics import did_you_mean

                names = sorted({*known, *defaults()})
                options = [k for k in defaults() if k not in known]
                raise SpaceError(
                    f"constraint uses unknown name '{nm.name}'; its names are the space's "
                    f"({', '.join(known)})"
                    + (f" and {', '.join(options)} (Triton's defaults)" if options else "")
                    + did_you_mean(nm.name, names),
                    nm.column,
                )

    def expand(self) -> list[list[tuple[str, Any]]]:
        """The configs (ordered ``(key, value)`` lists) of the product for which the constraint
        holds, in product order. Raises SpaceError (after :meth:`check`'s errors) for a
        division by zero in the constraint and for a space the constraint leaves empty."""
        self.check()
        c = self.constraint()
        names = [a.name for a in self.axes]
        out = []
        for values in itertools.product(*(a.values for a in self.axes)):
            if c is not None:
                env = {**CONSTANTS, **defaults(), **{k: int(v) for k, v in zip(names, values) if isinstance(v, int)}}
                if not holds(c, env):
                    continue
            out.append(list(zip(names, values)))
        if not out:
            raise SpaceError(
                f"the constraint leaves no config of the {self.size()} of product(...): "
                f"'{format_constraint(c)}' is false for every one",
                1,
            )
        return out

    def sugar(self) -> str:
        """``product(A in [1, 2], B = 3) where A <= B`` (the constraint in canonical form)."""
        text = "product(" + ", ".join(a.sugar() for a in self.axes) + ")"
        if self.where is not None:
            text += " where " + format_constraint(self.constraint())
        return text


def space_of(axes: Sequence[tuple[str, Sequence[Any], bool]], where: str | None) -> ConfigSpace:
    """A ConfigSpace from ``(name, values, fixed)`` triples (a fixed name has one value)."""
    return ConfigSpace([Axis(n, tuple(v), fixed) for n, v, fixed in axes], where)
