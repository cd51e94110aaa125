"""Scalar parameters of a jax-triton call that IREE does not pass as 32-bit push constants
(64-bit integers and floats, bools): their value, the same in every config, baked into the PTX
(:func:`bake_scalar`) as the bit pattern :func:`scalar_bits` gives.
"""

from __future__ import annotations

import re
import struct
from typing import Any

from autotune_export.interop.jax_triton_types import JaxTritonError, f32_bits

__all__ = ["bake_scalar", "scalar_bits"]


_REG_BITS = (("%rd", 64), ("%fd", 64), ("%rs", 16), ("%rq", 128), ("%hh", 32), ("%r", 32), ("%f", 32), ("%h", 16))


def bake_scalar(ptx: str, param: str, bits: int, nbytes: int) -> str:
    """Replace every ``ld.param.T %reg, [param];`` by ``mov.bN %reg, VALUE;``.

    ``bits`` is the value's bit pattern (``nbytes`` wide), moved at the width of the register.
    Raises JaxTritonError when the parameter is used in another way.
    """
    pat = re.compile(r"ld\.param\.([a-z]+)(\d+)\s+(%[A-Za-z0-9_$]+)\s*,\s*\[\s*" + re.escape(param) + r"\s*\]\s*;")

    def repl(m):
        reg = m.group(3)
        width = next((w for prefix, w in _REG_BITS if reg.startswith(prefix) and reg[len(prefix) :][:1].isdigit()), None)
        if width is None:
            raise JaxTritonError(f"cannot bake static parameter {param}: unknown register class of {reg}")
        value = bits & ((1 << (8 * nbytes)) - 1)
        if width < 8 * nbytes:
            value &= (1 << width) - 1
        return f"mov.b{width} {reg}, {value};"

    out = pat.sub(repl, ptx)
    body = out.split(")", 1)[1] if ")" in out else out
    if re.search(r"(?<![A-Za-z0-9_$])" + re.escape(param) + r"(?![A-Za-z0-9_$])", body):
        raise JaxTritonError(f"cannot bake static parameter {param}: the kernel uses it other than by ld.param")
    return out


def scalar_bits(kind: str, value: Any) -> tuple[int, int]:
    if kind == "bool_":
        return int(bool(value)), 1
    if kind in ("i64", "u64"):
        return int(value) & (2**64 - 1), 8
    if kind == "f64":
        return struct.unpack("<Q", struct.pack("<d", float(value)))[0], 8
    if kind in ("i32", "u32"):
        return int(value) & 0xFFFFFFFF, 4
    if kind == "f32":
        return f32_bits(value), 4
    raise JaxTritonError(f"unknown scalar parameter kind {kind}")
