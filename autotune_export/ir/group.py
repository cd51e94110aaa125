"""The ``hal.executable.autotuning.export`` op: its Python model and its two spellings.

MLIR's bindings cannot add an op to IREE's registered ``hal`` dialect (notes/iree-hal-facts.md),
so inside an ``iree.compiler.ir`` module the op lives in an unregistered namespace as the
generic op ``"autotune.export"() {...} : () -> ()``. :class:`AutotuneGroup` converts between
that generic op's attributes and the sugared spelling users write and read::

    hal.executable.autotuning.export @matmul variants([@matmul_v0, @matmul_v1])

Attribute encoding of the generic op (all optional except ``sym_name``):

==================  =============================================================
``sym_name``        ``"matmul"``
``variants``        ``[@v0, @v1]``
``triton``          ``["kernel.py", "matmul_kernel"]`` (path as written, kernel name)
``signature``       ``[["a", "*fp16"], ["c", "*fp16", "output"], ["M", "i32"]]``
``configs``         ``[[["BLOCK_M", 128 : i64], ["num_warps", 8 : i64]], ...]`` (ordered)
``workload``        ``["M", "N"]``
``grid``            ``["cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"]`` (canonical text)
``tune_workload``   ``[tensor<4096x4096xf16>, 64 : i32]``
``default``         ``@v1``
``specialized``     ``[@v0_s, @v1_s]`` (one per variant, same order)
``divisible``       ``[2, 4]`` (constant ordinals a specialization assumes % 16 == 0)
``equal_one``       ``[3]`` (constant ordinals a specialization assumes == 1)
==================  =============================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from autotune_export.support.diagnostics import Location, location_of

__all__ = [
    "GENERIC_OP_NAME",
    "SUGARED_OP_NAME",
    "OPTION_NAMES",
    "Param",
    "AutotuneGroup",
    "mlir_string",
    "attr_to_python",
]

GENERIC_OP_NAME = "autotune.export"
SUGARED_OP_NAME = "hal.executable.autotuning.export"

#: Config keys that are Triton compile options, not constexpr arguments (triton.Config fields).
OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg")


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
    import re

    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return "@" + name
    return "@" + mlir_string(name)


def attr_to_python(attr) -> Any:
    """Convert an ``iree.compiler.ir`` attribute to plain Python (str/int/float/bool/list/dict).

    Symbol references become ``"@name"`` strings; types become their text.
    Raises TypeError for attribute kinds the extension op never uses.
    """
    from iree.compiler import ir

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


@dataclass
class Param:
    """One non-constexpr parameter of a Triton kernel: ``name: type [{output}]``.

    ``type`` is Triton's spelling (``*fp16`` pointer, ``i32`` scalar; see triton.compile's
    signature strings). ``output`` marks a pointer whose buffer is a dispatch result.
    """

    name: str
    type: str
    output: bool = False
    hint: int = 0  # Triton AOT signature hint: 16 (divisible by 16), 1 (equal to 1), 0 (none)

    @property
    def divisible(self) -> bool:
        return self.hint == 16

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("*")

    def sugar(self) -> str:
        hint = f":{self.hint}" if self.hint else ""
        return f"{self.name}: {self.type}{hint}" + (" {output}" if self.output else "")


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if "n" in text:  # inf / nan
            return text
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa:  # MLIR's float literals need a '.': 1e+16 -> 1.0e+16
            mantissa += ".0"
        return mantissa + e + exponent
    return mlir_string(str(value))


def _value_attr(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{_format_value(value)} : f64"
    return mlir_string(str(value))


@dataclass
class AutotuneGroup:
    """A group of exports that are variants of one kernel (the RFC's autotuning export).

    Either ``variants`` lists existing ``hal.executable.export`` symbols of the same
    ``hal.executable.source``, or ``triton`` (path, kernel name) with ``signature``,
    ``configs``, ``workload`` and ``grid`` asks materialize-triton-variants to make them.
    ``configs`` are ordered ``(key, value)`` lists: constexpr values and the Triton options in
    :data:`OPTION_NAMES`. ``tune_workload`` holds MLIR text of host-function arguments
    (``"tensor<64x64xf16>"``, ``"7 : i32"``) used to tune when the host's own argument types are
    dynamic. ``default`` is the variant used until tuned (a pinned choice after pin-variants).
    """

    name: str
    variants: list[str] | None = None
    triton: tuple[str, str] | None = None
    signature: list[Param] | None = None
    configs: list[list[tuple[str, Any]]] | None = None
    workload: list[str] | None = None
    grid: list[str] | None = None
    tune_workload: list[str] | None = None
    default: str | None = None
    specialized: list[str] | None = None
    divisible: list[int] | None = None
    equal_one: list[int] | None = None
    location: Location | None = None
    extra: dict[str, str] = field(default_factory=dict)

    # ----- generic form ------------------------------------------------------------------
    def to_generic(self) -> str:
        """The generic op text ``"autotune.export"() {...} : () -> ()`` (no location)."""
        attrs = [f"sym_name = {mlir_string(self.name)}"]
        if self.variants is not None:
            attrs.append("variants = [" + ", ".join(symbol(v) for v in self.variants) + "]")
        if self.triton is not None:
            attrs.append(f"triton = [{mlir_string(self.triton[0])}, {mlir_string(self.triton[1])}]")
        if self.signature is not None:
            items = []
            for p in self.signature:
                flags = (['"output"'] if p.output else []) + ([f'"hint{p.hint}"'] if p.hint else [])
                parts = [mlir_string(p.name), mlir_string(p.type)] + flags
                items.append("[" + ", ".join(parts) + "]")
            attrs.append("signature = [" + ", ".join(items) + "]")
        if self.configs is not None:
            cfgs = []
            for cfg in self.configs:
                cfgs.append("[" + ", ".join(f"[{mlir_string(k)}, {_value_attr(v)}]" for k, v in cfg) + "]")
            attrs.append("configs = [" + ", ".join(cfgs) + "]")
        if self.workload is not None:
            attrs.append("workload = [" + ", ".join(mlir_string(w) for w in self.workload) + "]")
        if self.grid is not None:
            attrs.append("grid = [" + ", ".join(mlir_string(g) for g in self.grid) + "]")
        if self.tune_workload is not None:
            attrs.append("tune_workload = [" + ", ".join(self.tune_workload) + "]")
        if self.default is not None:
            attrs.append(f"default = {symbol(self.default)}")
        if self.specialized is not None:
            attrs.append("specialized = [" + ", ".join(symbol(v) for v in self.specialized) + "]")
            attrs.append("divisible = [" + ", ".join(f"{i} : i64" for i in self.divisible or []) + "]")
            attrs.append("equal_one = [" + ", ".join(f"{i} : i64" for i in self.equal_one or []) + "]")
        for key, value in sorted(self.extra.items()):
            attrs.append(f"{key} = {value}")
        return f'"{GENERIC_OP_NAME}"() {{{", ".join(attrs)}}} : () -> ()'

    @classmethod
    def from_op(cls, op, filename: str | None = None) -> "AutotuneGroup":
        """Read a generic ``autotune.export`` op (``iree.compiler.ir.Operation``)."""
        attrs = {}
        raw = {}
        for i in range(len(op.attributes)):
            named = op.attributes[i]
            raw[named.name] = named.attr
            attrs[named.name] = attr_to_python(named.attr)
        group = cls(name=attrs["sym_name"], location=location_of(op.location, filename))
        if "variants" in attrs:
            group.variants = [v.removeprefix("@") for v in attrs["variants"]]
        if "triton" in attrs:
            group.triton = (attrs["triton"][0], attrs["triton"][1])
        if "signature" in attrs:
            group.signature = [
                Param(p[0], p[1], "output" in p[2:], next((int(f[4:]) for f in p[2:] if f.startswith("hint")), 0))
                for p in attrs["signature"]
            ]
        if "configs" in attrs:
            group.configs = [[(k, v) for k, v in cfg] for cfg in attrs["configs"]]
        if "workload" in attrs:
            group.workload = list(attrs["workload"])
        if "grid" in attrs:
            group.grid = list(attrs["grid"])
        if "tune_workload" in raw:
            from iree.compiler import ir

            group.tune_workload = [_attr_text(a) for a in raw["tune_workload"]]
        if "default" in attrs:
            group.default = attrs["default"].removeprefix("@")
        if "specialized" in attrs:
            group.specialized = [v.removeprefix("@") for v in attrs["specialized"]]
            group.divisible = [int(i) for i in attrs.get("divisible", [])]
            group.equal_one = [int(i) for i in attrs.get("equal_one", [])]
        known = {"sym_name", "variants", "triton", "signature", "configs", "workload", "grid", "tune_workload", "default",
                 "specialized", "divisible", "equal_one"}
        group.extra = {k: str(raw[k]) for k in raw if k not in known}
        return group

    # ----- sugared form ------------------------------------------------------------------
    def to_sugar(self, indent: str = "") -> str:
        """The sugared spelling, one clause per line after the first (``indent`` prefixes each)."""
        head = f"{indent}{SUGARED_OP_NAME} {symbol(self.name)}"
        clauses: list[str] = []
        if self.variants is not None:
            clauses.append("variants([" + ", ".join(symbol(v) for v in self.variants) + "])")
        if self.triton is not None:
            clauses.append(f"triton({mlir_string(self.triton[0])}, {mlir_string(self.triton[1])})")
        if self.signature is not None:
            clauses.append("signature(" + ", ".join(p.sugar() for p in self.signature) + ")")
        if self.configs is not None:
            if not self.configs:
                clauses.append("configs([])")
            else:
                pad = " " * (len("configs(["))
                rows = ["{" + ", ".join(f"{k} = {_format_value(v)}" for k, v in cfg) + "}" for cfg in self.configs]
                body = (",\n" + indent + "    " + pad).join(rows)
                clauses.append("configs([" + body + "])")
        if self.workload is not None:
            clauses.append("workload(" + ", ".join(self.workload) + ")")
        if self.grid is not None:
            clauses.append("grid(" + ", ".join(self.grid) + ")")
        if self.tune_workload is not None:
            clauses.append("tune_workload(" + ", ".join(self.tune_workload) + ")")
        if self.default is not None:
            clauses.append(f"default({symbol(self.default)})")
        if self.specialized is not None:
            guards = [("divisible_by_16", self.divisible), ("equal_to_1", self.equal_one)]
            clauses.append(
                "specialized([" + ", ".join(symbol(v) for v in self.specialized) + "]"
                + "".join(f", {kind} = [{', '.join(str(i) for i in ids)}]" for kind, ids in guards if ids)
                + ")"
            )
        if self.extra:
            raise ValueError(f"group @{self.name} carries attributes with no sugared spelling: {sorted(self.extra)}")
        if len(clauses) == 1 and self.variants is not None:
            return f"{head} {clauses[0]}"
        return head + "".join(f"\n{indent}    {c}" for c in clauses)

    # ----- helpers -----------------------------------------------------------------------
    @property
    def is_triton(self) -> bool:
        return self.triton is not None

    def constexpr_keys(self) -> list[str]:
        """Keys that appear in every config and are not Triton options."""
        if not self.configs:
            return []
        keys = [k for k, _ in self.configs[0] if k not in OPTION_NAMES]
        return [k for k in keys if all(any(k == kk for kk, _ in cfg) for cfg in self.configs)]


def _attr_text(attr) -> str:
    from iree.compiler import ir

    if isinstance(attr, ir.TypeAttr):
        return str(attr.value)
    return str(attr)
