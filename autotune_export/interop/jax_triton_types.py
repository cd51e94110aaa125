"""The jax-triton bridges' errors and the types of a call's arguments: numpy/JAX dtypes as
Triton types and MLIR element types, static scalars' types and bit patterns.
"""

from __future__ import annotations

import math
import struct
from typing import Any, Sequence

from iree.compiler import ir


class JaxTritonError(ValueError):
    """A triton_call or exported program that cannot be bridged (the message says why)."""


class KernelNotImportableError(JaxTritonError):
    """The kernel has no importable ``file.py`` + attribute name (notebook cell, closure, ...)."""


# --------------------------------------------------------------------------------------------
# Types

#: numpy dtype name -> (Triton type, MLIR element type)
DTYPES = {
    "bool": ("i1", "i1"),
    "int8": ("i8", "i8"),
    "int16": ("i16", "i16"),
    "int32": ("i32", "i32"),
    "int64": ("i64", "i64"),
    "uint8": ("u8", "i8"),
    "uint16": ("u16", "i16"),
    "uint32": ("u32", "i32"),
    "uint64": ("u64", "i64"),
    "float16": ("fp16", "f16"),
    "bfloat16": ("bf16", "bf16"),
    "float32": ("fp32", "f32"),
    "float64": ("fp64", "f64"),
    "float8_e4m3fn": ("fp8e4nv", "f8E4M3FN"),
    "float8_e5m2": ("fp8e5", "f8E5M2"),
}
#: MLIR element type (the second half of :data:`DTYPES`) -> its constructor in the bindings.
ELEMENT_TYPES = {
    "i1": lambda: ir.IntegerType.get_signless(1),
    "i8": lambda: ir.IntegerType.get_signless(8),
    "i16": lambda: ir.IntegerType.get_signless(16),
    "i32": lambda: ir.IntegerType.get_signless(32),
    "i64": lambda: ir.IntegerType.get_signless(64),
    "f16": ir.F16Type.get,
    "bf16": ir.BF16Type.get,
    "f32": ir.F32Type.get,
    "f64": ir.F64Type.get,
    "f8E4M3FN": ir.Float8E4M3FNType.get,
    "f8E5M2": ir.Float8E5M2Type.get,
}
ITEMSIZE = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}


def dtype_name(dtype: Any) -> str:
    """Canonical numpy name of a dtype-like (np.dtype, jnp type, ml_dtypes type, string)."""
    name = getattr(dtype, "name", None)
    if not isinstance(name, str):
        name = getattr(dtype, "__name__", None) or str(dtype)
    name = str(name).lower()
    aliases = {
        "float": "float32",
        "f32": "float32",
        "f16": "float16",
        "half": "float16",
        "bf16": "bfloat16",
        "i32": "int32",
        "int": "int32",
        "bool_": "bool",
        "i1": "bool",
    }
    return aliases.get(name, name)


def array_types(dtype: Any, what: str) -> tuple[str, str]:
    name = dtype_name(dtype)
    if name not in DTYPES:
        raise JaxTritonError(f"{what} has dtype {name}, which has no Triton pointer type here (supported: {', '.join(DTYPES)})")
    return DTYPES[name]


def tensor_type(shape: Sequence[int], elem: str) -> str:
    dims = [int(d) for d in shape]
    for d in dims:
        if d < 0:
            raise JaxTritonError(f"shape {tuple(shape)} is not static")
    return "tensor<" + "".join(f"{d}x" for d in dims) + elem + ">"


def scalar_type(value: Any) -> str:
    """Triton type of a static Python scalar (jax-triton's rules; floats as fp32 when exact).
    A value carrying a ``triton_type`` string (launch.py's Triton-JIT-typed ints) has that type."""
    forced = getattr(value, "triton_type", None)
    if isinstance(forced, str):
        return forced
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return "i32"
        if 2**31 <= value < 2**32:
            return "u32"
        if -(2**63) <= value < 2**63:
            return "i64"
        if 2**63 <= value < 2**64:
            return "u64"
        raise JaxTritonError(f"integer {value} does not fit 64 bits")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or struct.unpack("<f", struct.pack("<f", value))[0] == value:
            return "fp32"
        return "fp64"
    raise JaxTritonError(f"cannot type static argument {value!r} ({type(value).__name__})")


def f32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(value)))[0]


def as_i32(value: int) -> int:
    """A 32-bit value as a signed i32 (MLIR's arith.constant range)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value
