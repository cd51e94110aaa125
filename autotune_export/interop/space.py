"""Generated config spaces from Python: ``product(...)``, a list of ``triton.Config``.

The same space as the ``.mlir`` spelling ``configs(product(...) where ...)``
(:mod:`autotune_export.ir.space`, docs/syntax.md), for a kernel's ``triton.autotune``::

    from autotune_export.interop.space import product

    @triton.autotune(configs=product(BLOCK_M=[64, 128, 256], BLOCK_N=[64, 128, 256], BLOCK_K=[32, 64],
                                     GROUP_M=8, num_warps=[4, 8], num_stages=[3, 4],
                                     where="BLOCK_M * BLOCK_N <= 32768"),
                     key=["M", "N", "K"])
    @triton.jit
    def matmul_kernel(...): ...

A list (or tuple, or range) sweeps its values, any other value is fixed. The configs are the
product in keyword order, the first name varying slowest, and only those for which ``where``
holds: a constraint in the ``.mlir`` language (a string, checked here as the front end checks
it) or a Python function of one config's values (``where=lambda c: c["BLOCK_M"] <= 128``; it
gets every name, the Triton options with Triton's defaults where the space does not set them).
``num_warps``, ``num_stages``, ``num_ctas`` and ``maxnreg`` become the ``triton.Config``'s
options, the other names its ``kwargs``. Triton's autotuner runs the list as given;
``launch_to_mlir`` writes the kernel's configs into the module, and
``autotune-export`` prunes them when it builds (docs/limits.md).
"""

from __future__ import annotations

from typing import Any, Callable

from autotune_export.ir import space as space_mod
from autotune_export.ir.params import OPTION_NAMES, TritonDtype

__all__ = ["ConfigSpace", "SpaceError", "product"]

SpaceError = space_mod.SpaceError


class ConfigSpace(list):
    """The ``triton.Config`` list of :func:`product`, with what made it: ``space`` (the
    :class:`autotune_export.ir.space.ConfigSpace`, its names and values and the constraint's
    text when ``where`` was a string), ``size`` (configs of the product) and ``excluded`` (how
    many ``where`` rejected)."""

    space: space_mod.ConfigSpace
    size: int
    excluded: int


def _values(name: str, value: Any) -> tuple[tuple, bool]:
    if isinstance(value, (list, tuple, range)):
        return tuple(value), False
    return (value,), True


def product(*, where: str | Callable[[dict], bool] | None = None, **axes: Any) -> ConfigSpace:
    """The configs of the product of ``axes`` for which ``where`` holds, as ``triton.Config``.

    ``axes``: name -> values (a list, tuple or range: swept, in order) or one value (fixed).
    ``where``: a constraint string (:mod:`autotune_export.ir.space`'s language: Python's
    comparisons, ``and``/``or``/``not``, integer ``+ - * // %``, ``cdiv``/``min``/``max``) or
    a function of a dict of one config's values returning a bool.

    Raises :class:`SpaceError` (a ValueError) for no names, an empty value list, a value listed
    twice for one name (naming it and both positions: the configs would repeat), a value
    Triton cannot take (``num_warps`` not a positive power of two, an option not a positive
    int), a constraint that does not parse or names what the space does not have (the message
    points at the column), and a space the constraint leaves empty."""
    import triton

    if not axes:
        raise SpaceError("product() names nothing: give NAME=[values] or NAME=value")
    triples = []
    for name, value in axes.items():
        values, fixed = _values(name, value)
        values = tuple(TritonDtype.of(v) or v for v in values)
        for i, v in enumerate(values):  # as configs(product(K in [...])) refuses it: a duplicate config
            if any(type(w) is type(v) and w == v for w in values[:i]):
                raise SpaceError(
                    f"'{name}' lists the value {v!r} twice (positions {values.index(v)} and {i}): its configs would repeat"
                )
        for v in values:
            if name in OPTION_NAMES and name != "maxnreg" and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise SpaceError(f"'{name}' must be a positive integer, got {v!r}")
            if name == "num_warps" and v & (v - 1):
                raise SpaceError(f"num_warps must be a power of two, got {v}")
        triples.append((name, values, fixed))
    text = where if isinstance(where, str) else None
    space = space_mod.space_of(triples, text)
    try:
        configs = space.expand()
    except SpaceError as err:
        if text is not None and err.column:
            raise SpaceError(f"{err} (where={text!r}, column {err.column})", err.column) from None
        raise
    if callable(where):
        keep = []
        for cfg in configs:
            env = {**space_mod.defaults(), **dict(cfg)}
            if where(env):
                keep.append(cfg)
        if not keep:
            raise SpaceError(
                f"where={getattr(where, '__name__', 'the function')} leaves no config of the {space.size()} of product(...)"
            )
        configs = keep
    elif where is not None and text is None:
        raise SpaceError(f"where must be a constraint string or a function, got {type(where).__name__}")
    out = ConfigSpace()
    for cfg in configs:
        kwargs = {k: _triton(v) for k, v in cfg if k not in OPTION_NAMES}
        options = {k: v for k, v in cfg if k in OPTION_NAMES}
        out.append(triton.Config(kwargs, **options))
    out.space = space
    out.size = space.size()
    out.excluded = space.size() - len(out)
    return out


def _triton(value: Any) -> Any:
    """A config value as Triton takes it (a :class:`TritonDtype` becomes its ``tl.dtype``)."""
    if isinstance(value, TritonDtype):
        import triton.language as tl

        return getattr(tl, value.name)
    return value
