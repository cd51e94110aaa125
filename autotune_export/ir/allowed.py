"""What a group's dispatch may run: its ``autotune.allowed`` attribute
(:data:`autotune_export.ir.markers.ALLOWED_ATTR`), read by emit-autotune-initializer,
lower-autotuning-dispatch and ``inspect`` (one reader, so all three agree)."""

from __future__ import annotations

from autotune_export.ir.markers import ALLOWED_ATTR
from iree.compiler import ir

__all__ = ["allowed_indices", "allowed_names"]


def allowed_names(dispatch) -> list[str] | None:
    """The variant names (exports of the group's executable) in ``dispatch``'s
    :data:`ALLOWED_ATTR`, in its order (Triton's order for that dispatch's arguments; the first
    is what it runs for any other choice); None without the attribute. Raises ValueError when
    the attribute is not a non-empty array of symbol references."""
    if ALLOWED_ATTR not in dispatch.attributes:
        return None
    attr = dispatch.attributes[ALLOWED_ATTR]
    try:
        names = [ir.FlatSymbolRefAttr(a).value for a in ir.ArrayAttr(attr)]
    except (ValueError, TypeError):
        names = []
    if not names:
        raise ValueError(f"{ALLOWED_ATTR} must be a non-empty list of variants ([@variant, ...]), not {attr}")
    return names


def allowed_indices(dispatch, variants: list[str]) -> list[int] | None:
    """:func:`allowed_names` as indices into ``variants`` (the group's variants, in order).
    Raises ValueError when the attribute is malformed or names another symbol."""
    names = allowed_names(dispatch)
    if names is None:
        return None
    unknown = [n for n in names if n not in variants]
    if unknown:
        raise ValueError(f"{ALLOWED_ATTR} names @{unknown[0]}, which is not a variant of the group")
    return [variants.index(n) for n in names]
