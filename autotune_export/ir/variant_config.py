"""A variant's Triton config on its export (:data:`autotune_export.contract.VARIANT_CONFIG_ATTR`):
written by materialize-triton-variants, read by emit-autotune-initializer (the reflection's
``configs`` and the fingerprints) and ``inspect``. The IR carries it, so a pipeline split into
two commands sees the same configs as one.

The attribute is an array of ``[key, value]`` arrays in the config's order: the key a string,
the value an ``i64`` integer, an ``f64`` float, a bool, a string, or ``unit`` for None (the
values :func:`autotune_export.contract.config_json` keeps; anything else is its text).
"""

from __future__ import annotations

from iree.compiler import ir

from autotune_export.contract import VARIANT_CONFIG_ATTR, config_json

__all__ = ["config_attr", "export_config"]


def _value_attr(value) -> ir.Attribute:
    if value is None:
        return ir.UnitAttr.get()
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get_f64(value)
    return ir.StringAttr.get(str(value))


def config_attr(config) -> ir.ArrayAttr:
    """The attribute of ``config`` (``[(key, value), ...]``), in the current context. Integers
    beyond 64 bits are kept as their text."""
    entries = []
    for key, value in config_json(config):
        if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < (1 << 63):
            value = str(value)
        entries.append(ir.ArrayAttr.get([ir.StringAttr.get(key), _value_attr(value)]))
    return ir.ArrayAttr.get(entries)


def _value(attr: ir.Attribute):
    if isinstance(attr, ir.UnitAttr):
        return None
    if isinstance(attr, ir.BoolAttr):
        return bool(attr.value)
    if isinstance(attr, ir.IntegerAttr):
        return int(attr.value)
    if isinstance(attr, ir.FloatAttr):
        return float(attr.value)
    if isinstance(attr, ir.StringAttr):
        return attr.value
    raise ValueError(f"{VARIANT_CONFIG_ATTR}: unexpected value {attr}")


def export_config(export) -> list | None:
    """The config recorded on ``export`` as JSON (``[[key, value], ...]``), or None when it
    has none (an RFC-form variant). Raises ValueError for an attribute of another shape."""
    if VARIANT_CONFIG_ATTR not in export.attributes:
        return None
    attr = export.attributes[VARIANT_CONFIG_ATTR]
    if not isinstance(attr, ir.ArrayAttr) or not all(isinstance(e, ir.ArrayAttr) and len(e) == 2 for e in attr):
        raise ValueError(f"{VARIANT_CONFIG_ATTR} is not an array of [key, value] arrays: {attr}")
    out = []
    for entry in attr:
        key, value = entry[0], entry[1]
        if not isinstance(key, ir.StringAttr):
            raise ValueError(f"{VARIANT_CONFIG_ATTR}: key {key} is not a string")
        out.append([key.value, _value(value)])
    return out
