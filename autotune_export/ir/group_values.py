"""Values of the ``hal.executable.autotuning.export`` op (:mod:`autotune_export.ir.group`), sugared
and as attributes: strings and symbols spelled as MLIR spells them (:func:`mlir_string`,
:func:`symbol`), config values printed sugared (:func:`format_value`), built as attributes
(:func:`value_attr`) and read back (:func:`attr_to_python`).

Config values, sugared and as attributes (:func:`format_value`, :func:`value_attr`,
:func:`attr_to_python`):

==================  ==========================  ==========================================
Python              sugared                     attribute
==================  ==========================  ==========================================
``128``             ``128``                     ``128 : i64``
``0.5``             ``0.5``, ``inf``, ``nan``   ``0.5 : f64``
``True``            ``true`` / ``false``        ``true``
``"text"``          ``"text"``                  ``"text"``
``None``            ``none``                    ``#autotune.none``
``TritonDtype``     ``tl.float16``              ``#autotune.dtype<float16>``
``TorchDtype``      ``torch.float16``           ``#autotune.torch_dtype<float16>``
==================  ==========================  ==========================================

``None`` and Triton dtypes (``tl.float16``, ``tl.float8e4nv``, ``tl.int64``..., every
:data:`~autotune_export.ir.params.TRITON_DTYPES` name) are opaque attributes of the ``autotune`` namespace, so they can
never be confused with a string a user wrote; :class:`TritonDtype` names the dtype without
importing Triton (``autotune_export.cuda.triton_compile`` turns it into the ``tl.dtype``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from iree.compiler import ir

from autotune_export.ir.params import TorchDtype, TritonDtype

__all__ = ["mlir_string", "symbol", "format_value", "attr_to_python", "value_attr", "i64_attr"]

_OPAQUE_NAMESPACE = "autotune"


def mlir_string(text: str) -> str:
    """Quote ``text`` as an MLIR string literal (``\\"``, ``\\\\`` and ``\\XX`` hex escapes)."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):02X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def symbol(name: str) -> str:
    """Spell a symbol reference: ``@name``, or ``@"quoted name"`` when not a bare identifier."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return "@" + name
    return "@" + mlir_string(name)


def format_value(value: Any) -> str:
    """A config value as the sugared op spells it: ``128``, ``0.5``, ``1.0e+16``, ``inf``,
    ``-inf``, ``nan``, ``true``, ``"text"``, ``none``, ``tl.float16``."""
    if value is None:
        return "none"
    if isinstance(value, (TritonDtype, TorchDtype)):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        mantissa, e, exponent = repr(value).partition("e")
        if "." not in mantissa:  # MLIR's float literals need a '.': 1e+16 -> 1.0e+16
            mantissa += ".0"
        return mantissa + e + exponent
    return mlir_string(str(value))


def attr_to_python(attr) -> Any:
    """Convert an ``iree.compiler.ir`` attribute to plain Python (str/int/float/bool/list/dict).

    Symbol references become ``"@name"`` strings; types become their text;
    ``#autotune.none`` is None and ``#autotune.dtype<float16>`` a :class:`TritonDtype`.
    Raises TypeError for attribute kinds the extension op never uses.
    """
    if isinstance(attr, ir.OpaqueAttr) and attr.dialect_namespace == _OPAQUE_NAMESPACE:
        return _read_opaque(attr)
    for cls, conv in (
        (ir.FlatSymbolRefAttr, lambda a: "@" + a.value),
        (ir.StringAttr, lambda a: a.value),
        (ir.BoolAttr, lambda a: bool(a.value)),
        (ir.IntegerAttr, lambda a: int(a.value)),
        (ir.FloatAttr, lambda a: float(a.value)),
        (ir.TypeAttr, lambda a: str(a.value)),
        (ir.UnitAttr, lambda a: True),
    ):
        if isinstance(attr, cls):
            return conv(attr)
    if isinstance(attr, ir.ArrayAttr):
        return [attr_to_python(a) for a in attr]
    if isinstance(attr, ir.DictAttr):
        return {attr[i].name: attr_to_python(attr[i].attr) for i in range(len(attr))}
    raise TypeError(f"unsupported attribute {attr}")


def i64_attr(value: int) -> ir.Attribute:
    """``value : i64`` (inside an ``ir.Context``)."""
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _opaque(data: str) -> ir.Attribute:
    return ir.OpaqueAttr.get(_OPAQUE_NAMESPACE, data.encode(), ir.NoneType.get())


def _read_opaque(attr) -> Any:
    data = bytes(attr.data).decode()
    if data == "none":
        return None
    m = re.fullmatch(r"dtype<([A-Za-z0-9_]+)>", data)
    if m:
        return TritonDtype(m.group(1))  # ValueError for an unknown dtype
    m = re.fullmatch(r"torch_dtype<([A-Za-z0-9_]+)>", data)
    if m:
        return TorchDtype(m.group(1))
    raise TypeError(f"unsupported attribute #{_OPAQUE_NAMESPACE}.{data}")


def value_attr(value: Any) -> ir.Attribute:
    """A config value as an attribute (the table above; inside an ``ir.Context``): None, Triton
    and torch dtypes as opaque ``#autotune`` attributes, bools, ints as ``i64``, floats as
    ``f64``, anything else as its string."""
    if value is None:
        return _opaque("none")
    if isinstance(value, TritonDtype):
        return _opaque(f"dtype<{value.name}>")
    if isinstance(value, TorchDtype):
        return _opaque(f"torch_dtype<{value.name}>")
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        return i64_attr(value)
    if isinstance(value, float):
        return ir.FloatAttr.get_f64(value)
    return ir.StringAttr.get(str(value))
