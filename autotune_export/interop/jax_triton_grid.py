"""A jax-triton call's grid as grid expressions: a constant, the grid callable re-run on
symbols, or a per-config selection, each checked against the callable's value for every
config (:func:`grid_expressions`).
"""

from __future__ import annotations

from typing import Any

from autotune_export.ir import grid as grid_mod
from autotune_export.interop.jax_triton_types import JaxTritonError


# --------------------------------------------------------------------------------------------
# Grid expressions from a grid callable


class _NotTraceable(Exception):
    pass


class _Sym:
    """An integer expression over config constants, built by running the grid callable."""

    def __init__(self, text: str, prec: int = 9):
        self.text, self.prec = text, prec

    @staticmethod
    def wrap(v: Any) -> "_Sym":
        if isinstance(v, _Sym):
            return v
        if isinstance(v, bool) or not isinstance(v, int):
            raise _NotTraceable(f"non-integer {v!r}")
        return _Sym(str(v) if v >= 0 else f"(0 - {-v})")

    def _bin(self, op: str, other: Any, prec: int, swap: bool = False) -> "_Sym":
        a, b = (self.wrap(other), self) if swap else (self, self.wrap(other))
        lhs = a.text if a.prec >= prec else f"({a.text})"
        rhs = b.text if b.prec > prec else f"({b.text})"
        return _Sym(f"{lhs} {op} {rhs}", prec)

    __add__ = lambda s, o: s._bin("+", o, 1)  # noqa: E731
    __radd__ = lambda s, o: s._bin("+", o, 1, True)  # noqa: E731
    __sub__ = lambda s, o: s._bin("-", o, 1)  # noqa: E731
    __rsub__ = lambda s, o: s._bin("-", o, 1, True)  # noqa: E731
    __mul__ = lambda s, o: s._bin("*", o, 2)  # noqa: E731
    __rmul__ = lambda s, o: s._bin("*", o, 2, True)  # noqa: E731
    __floordiv__ = lambda s, o: s._bin("//", o, 2)  # noqa: E731
    __rfloordiv__ = lambda s, o: s._bin("//", o, 2, True)  # noqa: E731
    __mod__ = lambda s, o: s._bin("%", o, 2)  # noqa: E731
    __rmod__ = lambda s, o: s._bin("%", o, 2, True)  # noqa: E731

    def __neg__(self):
        return _Sym("0", 9)._bin("-", self, 1)

    def __pos__(self):
        return self

    def _refuse(self, *_):
        raise _NotTraceable("operation not expressible in a grid expression")

    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __int__ = __index__ = __float__ = __bool__ = __round__ = __trunc__ = __floor__ = __ceil__ = _refuse
    __and__ = __or__ = __xor__ = __lshift__ = __rshift__ = _refuse

    def __eq__(self, other):  # pragma: no cover - only reached by odd grid callables
        self._refuse()

    __hash__ = object.__hash__


def normalize_grid(g: Any) -> tuple:
    if isinstance(g, (int, _Sym)) and not isinstance(g, bool):
        g = (g,)
    g = tuple(g)
    if not 1 <= len(g) <= 3:
        raise JaxTritonError(f"`grid` should have one to three dimensions, got {len(g)}")
    return g + (1,) * (3 - len(g))


def grid_expressions(grid: Any, metas: list[dict[str, Any]], envs: list[dict[str, int]]) -> tuple[list[str], str]:
    """Grid clause expressions valid for every config, and how they were found.

    ``metas[i]`` is what the grid callable receives for config i (jax-triton: metaparams and
    the config's kwargs); ``envs[i]`` the integer constants a grid expression may name for
    config i (what materialize-triton-variants puts in scope). Strategies, first that works:
    ``constant`` (every config has the same grid), ``traced`` (the callable, run on symbols,
    gives integer arithmetic over the constants), ``selected`` (a sum over configs of grid
    value times an indicator ``1 - min(1, sum((K - k_i) * (K - k_i)))`` that is 1 only for
    config i's constants). Each result is checked by evaluating it for every config.
    """
    concrete = []
    for meta in metas:
        g = grid(dict(meta)) if callable(grid) else grid
        g = normalize_grid(g)
        for d in g:
            if isinstance(d, bool) or not isinstance(d, int):
                try:
                    d2 = int(d)
                except Exception:
                    raise JaxTritonError(f"grid dimension {d!r} is not an integer") from None
                if d2 != d:
                    raise JaxTritonError(f"grid dimension {d!r} is not an integer")
        concrete.append(tuple(int(d) for d in g))

    def trim(dims):
        dims = list(dims)
        while len(dims) > 1 and dims[-1] == "1":
            dims.pop()
        return dims

    if all(c == concrete[0] for c in concrete):
        return trim(str(d) for d in concrete[0]), "constant"

    def check(exprs: list[str]) -> bool:
        try:
            parsed = [grid_mod.parse(e) for e in exprs]
            return all(tuple(grid_mod.evaluate(p, env) for p in parsed) == c for env, c in zip(envs, concrete))
        except grid_mod.GridError:
            return False

    if callable(grid):
        try:
            sym_meta = {k: (_Sym(k) if k in envs[0] and all(k in e for e in envs) else v) for k, v in metas[0].items()}
            traced = normalize_grid(grid(sym_meta))
            exprs = [_Sym.wrap(d).text if not isinstance(d, int) else str(d) for d in traced]
            exprs = [grid_mod.format_expr(grid_mod.parse(e)) for e in exprs]
            if check(exprs):
                return trim(exprs), "traced"
        except (_NotTraceable, grid_mod.GridError, KeyError, TypeError, ValueError, ArithmeticError):
            pass

    keys = [k for k in envs[0] if all(k in e for e in envs)]
    seen: dict[tuple, tuple] = {}
    for env, c in zip(envs, concrete):
        key = tuple(env[k] for k in keys)
        if seen.setdefault(key, c) != c:
            raise JaxTritonError(
                "the grid differs between configs that agree on every integer constant "
                f"({', '.join(keys) or 'none'}); a grid expression cannot tell them apart"
            )
    exprs = []
    for dim in range(3):
        if all(c[dim] == concrete[0][dim] for c in concrete):
            exprs.append(str(concrete[0][dim]))
            continue
        terms = []
        for key, c in seen.items():
            if c[dim] == 0:
                continue
            dist = " + ".join(f"({k} - {v}) * ({k} - {v})" for k, v in zip(keys, key)) or "0"
            terms.append(f"{c[dim]} * (1 - min(1, {dist}))")
        exprs.append(" + ".join(terms) or "0")
    exprs = [grid_mod.format_expr(grid_mod.parse(e)) for e in exprs]
    if not check(exprs):  # pragma: no cover - the construction is exact
        raise JaxTritonError("could not express the per-config grid as a grid expression")
    return trim(exprs), "selected"
