"""The ``hal.executable.autotuning.export`` op: its schema, its Python model, its two spellings.

MLIR's bindings cannot add an op to IREE's registered ``hal`` dialect (notes/iree-hal-facts.md),
so inside an ``iree.compiler.ir`` module the op lives in an unregistered namespace as the
generic op ``"autotune.export"() {...} : () -> ()``. :data:`CLAUSES` is its schema, one row
per clause: the sugared keyword (a rule of ``dialects/autotuning.lark``, read by the front
end), the :class:`AutotuneGroup` field, the generic op's attribute(s) and how a value is
built as attributes (with the bindings), read back from them, and printed sugared. The
reader, the printer and the builder all go through this table::

    hal.executable.autotuning.export @matmul variants([@matmul_v0, @matmul_v1])

Attribute encoding of the generic op (all optional except ``sym_name``):

==================  =============================================================
``sym_name``        ``"matmul"``
``variants``        ``[@v0, @v1]``
``triton``          ``["kernel.py", "matmul_kernel"]`` (path as written, kernel name)
``kernel_source``   ``"import triton\n..."``: the Python text of a module defining the kernel
                    (a kernel made at run time, captured by ``launch_to_mlir``); the path of
                    ``triton`` then only says where it was written
``signature``       ``[["a", "*fp16"], ["c", "*fp16", "output"], ["M", "i32", "hint16"]]``
``configs``         ``[[["BLOCK_M", 128 : i64], ["num_warps", 8 : i64]], ...]`` (ordered; values
                    below)
``space``           ``[["BLOCK_M", [64 : i64, 128 : i64]], ["GROUP_M", 8 : i64]]``: the
                    generated space ``configs`` was expanded from (``configs(product(...))``,
                    :mod:`autotune_export.ir.space`): per name its values, or one value
                    (``NAME = v``); with ``space_where``, the constraint's canonical text
``workload``        ``["M", "N"]``
``grid``            ``["cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"]`` (canonical text)
``reset_to_zero``   ``["c_ptr"]`` (Triton form: ``{output}`` parameters) or ``[0 : i64]``
                    (RFC form: result indices of the group's dispatches)
``restore_value``   as ``reset_to_zero``
``tune_workload``   ``[tensor<4096x4096xf16>, 64 : i32]`` (one workload; several:
                    ``[[tensor<...>, ...], [tensor<...>, ...]]``)
``choices``         ``[[[4096, 4096, 4096], @v2], [[8192, 128, 8192], @v8]]`` (workload
                    values -> variant, frozen by pin-variants)
``default``         ``@v1``
``specialized``     ``[@v0_s, @v1_s]`` (one per variant, same order)
``divisible``       ``[2, 4]`` (constant ordinals a specialization assumes % 16 == 0)
``equal_one``       ``[3]`` (constant ordinals a specialization assumes == 1)
==================  =============================================================

A ``signature`` type ``none`` (``["w_ptr", "none"]``) is a parameter the call passes ``None``
for: Triton's JIT makes such an argument a constexpr ``None`` (it leaves the kernel's parameter
list), so it is neither a binding nor a constant of the dispatch.

Config values, sugared and as attributes (:func:`format_value`, :func:`attr_to_python`):

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
:data:`TRITON_DTYPES` name) are opaque attributes of the ``autotune`` namespace, so they can
never be confused with a string a user wrote; :class:`TritonDtype` names the dtype without
importing Triton (``autotune_export.cuda.triton_compile`` turns it into the ``tl.dtype``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from iree.compiler import ir

from autotune_export.ir.params import (
    DESCRIPTOR_TYPES,  # noqa: F401
    NONE_TYPE,
    OPTION_DEFAULTS,  # noqa: F401
    OPTION_NAMES,
    TRITON_DTYPES,  # noqa: F401
    TORCH_DTYPES,
    Param,
    TorchDtype,
    TritonDtype,
    descriptor_refusal,  # noqa: F401
    variant_name,
)
from autotune_export.support.diagnostics import Location, location_of, named_locations

__all__ = [
    "GENERIC_OP_NAME",
    "SUGARED_OP_NAME",
    "OPTION_NAMES",
    "CLAUSES",
    "CLAUSE_NAMES",
    "Clause",
    "Param",
    "AutotuneGroup",
    "TritonDtype",
    "TorchDtype",
    "TORCH_DTYPES",
    "TRITON_DTYPES",
    "NONE_TYPE",
    "mlir_string",
    "symbol",
    "format_value",
    "attr_to_python",
    "variant_name",
]

GENERIC_OP_NAME = "autotune.export"
SUGARED_OP_NAME = "hal.executable.autotuning.export"

_OPAQUE_NAMESPACE = "autotune"


# ----- spelling of values in the sugared form -----------------------------------------------
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


# ----- the clause table ---------------------------------------------------------------------
def _i64(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _strings(values) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.StringAttr.get(v) for v in values])


def _symbols(values) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(v) for v in values])


def _read_symbols(attr) -> list[str]:
    return [ir.FlatSymbolRefAttr(a).value for a in attr]


def _read_strings(attr) -> list[str]:
    return [ir.StringAttr(a).value for a in attr]


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


def _value_attr(value: Any) -> ir.Attribute:
    if value is None:
        return _opaque("none")
    if isinstance(value, TritonDtype):
        return _opaque(f"dtype<{value.name}>")
    if isinstance(value, TorchDtype):
        return _opaque(f"torch_dtype<{value.name}>")
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        return _i64(value)
    if isinstance(value, float):
        return ir.FloatAttr.get_f64(value)
    return ir.StringAttr.get(str(value))


def _signature_attr(params: list[Param]) -> ir.Attribute:
    rows = []
    for p in params:
        flags = (["output"] if p.output else []) + ([f"hint{p.hint}"] if p.hint else [])
        rows.append(_strings([p.name, p.type, *flags]))
    return ir.ArrayAttr.get(rows)


def _read_signature(attr) -> list[Param]:
    out = []
    for row in attr:
        name, typ, *flags = _read_strings(row)
        hint = next((int(f[4:]) for f in flags if f.startswith("hint")), 0)
        out.append(Param(name, typ, "output" in flags, hint))
    return out


def _configs_attr(configs) -> ir.Attribute:
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.ArrayAttr.get([ir.StringAttr.get(k), _value_attr(v)]) for k, v in cfg]) for cfg in configs]
    )


def _read_configs(attr) -> list[list[tuple[str, Any]]]:
    out = []
    for cfg in attr:
        entries = []
        for pair in cfg:
            key, value = list(pair)
            entries.append((ir.StringAttr(key).value, attr_to_python(value)))
        out.append(entries)
    return out


def _tune_attr(values: list[str]) -> ir.Attribute:
    # Host-argument types and typed scalars as the user wrote them (checked by the front end).
    return ir.ArrayAttr.get(
        [ir.TypeAttr.get(ir.Type.parse(v)) if v.startswith("tensor<") else ir.Attribute.parse(v) for v in values]
    )


def _read_tune_one(attr) -> list[str]:
    return [str(ir.TypeAttr(a).value) if isinstance(a, ir.TypeAttr) else str(a) for a in attr]


def _tune_workloads_attr(workloads: list[list[str]]) -> ir.Attribute:
    # One workload: its flat list (the spelling of every earlier release); several: a list of lists.
    if len(workloads) == 1:
        return _tune_attr(workloads[0])
    return ir.ArrayAttr.get([_tune_attr(w) for w in workloads])


def _read_tune(attr) -> list[list[str]]:
    items = list(attr)
    if items and all(isinstance(a, ir.ArrayAttr) for a in items):
        return [_read_tune_one(a) for a in items]
    return [_read_tune_one(items)]


def _tune_sugar(workloads: list[list[str]], _indent: str) -> str:
    if len(workloads) == 1:
        return "tune_workload(" + ", ".join(workloads[0]) + ")"
    return "tune_workload(" + ", ".join("[" + ", ".join(w) + "]" for w in workloads) + ")"


def _choices_attr(choices) -> ir.Attribute:
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.ArrayAttr.get([_i64(v) for v in key]), ir.FlatSymbolRefAttr.get(v)]) for key, v in choices]
    )


def _read_choices(attr) -> list[tuple[tuple[int, ...], str]]:
    out = []
    for pair in attr:
        key, sym = list(pair)
        out.append((tuple(int(ir.IntegerAttr(i).value) for i in key), ir.FlatSymbolRefAttr(sym).value))
    return out


def _choices_sugar(choices, _indent: str) -> str:
    return "choices(" + ", ".join("[" + ", ".join(str(v) for v in key) + "] = " + symbol(s) for key, s in choices) + ")"


def _outputs_attr(items) -> ir.Attribute:
    # reset_to_zero / restore_value: parameter names (Triton form) or result indices (RFC form).
    return ir.ArrayAttr.get([_i64(i) if isinstance(i, int) else ir.StringAttr.get(i) for i in items])


def _read_outputs(attr) -> list:
    return [int(ir.IntegerAttr(a).value) if isinstance(a, ir.IntegerAttr) else ir.StringAttr(a).value for a in attr]


def _outputs_sugar(name: str):
    return lambda items, _: f"{name}(" + ", ".join(str(i) for i in items) + ")"


def _space_sugar(group: "AutotuneGroup", indent: str) -> str:
    axes = [
        f"{n} = {format_value(v[0])}" if fixed else f"{n} in [" + ", ".join(format_value(x) for x in v) + "]"
        for n, v, fixed in group.space
    ]
    pad = " " * len("configs(product(")
    text = "configs(product(" + (",\n" + indent + "    " + pad).join(axes) + ")"
    if group.space_where is not None:
        text += "\n" + indent + "    " + " " * len("configs(") + "where " + group.space_where
    return text + ")"


def _space_attrs(group: "AutotuneGroup") -> dict[str, ir.Attribute]:
    attrs = {"configs": _configs_attr(group.configs)}
    if group.space is not None:
        attrs["space"] = ir.ArrayAttr.get(
            [
                ir.ArrayAttr.get(
                    [ir.StringAttr.get(n), _value_attr(v[0]) if fixed else ir.ArrayAttr.get([_value_attr(x) for x in v])]
                )
                for n, v, fixed in group.space
            ]
        )
        if group.space_where is not None:
            attrs["space_where"] = ir.StringAttr.get(group.space_where)
    return attrs


def _read_space(group: "AutotuneGroup", attrs: dict) -> None:
    group.configs = _read_configs(attrs["configs"])
    if "space" in attrs:
        axes = []
        for pair in attrs["space"]:
            key, values = list(pair)
            fixed = not isinstance(values, ir.ArrayAttr)
            axes.append(
                (ir.StringAttr(key).value, [attr_to_python(values)] if fixed else [attr_to_python(v) for v in values], fixed)
            )
        group.space = axes
        group.space_where = ir.StringAttr(attrs["space_where"]).value if "space_where" in attrs else None


def _configs_sugar(configs, indent: str) -> str:
    if not configs:
        return "configs([])"
    pad = " " * len("configs([")
    rows = ["{" + ", ".join(f"{k} = {format_value(v)}" for k, v in cfg) + "}" for cfg in configs]
    return "configs([" + (",\n" + indent + "    " + pad).join(rows) + "])"


def _specialized_sugar(group: "AutotuneGroup") -> str:
    guards = [("divisible_by_16", group.divisible), ("equal_to_1", group.equal_one)]
    return (
        "specialized(["
        + ", ".join(symbol(v) for v in group.specialized)
        + "]"
        + "".join(f", {kind} = [{', '.join(str(i) for i in ids)}]" for kind, ids in guards if ids)
        + ")"
    )


@dataclass(frozen=True)
class Clause:
    """One clause of the op: ``name`` is the sugared keyword, the lark rule and the group's
    field; ``build(group) -> {attribute: ir.Attribute}`` writes the generic op's attributes,
    ``read(group, attrs)`` reads them back into the group (``attrs``: name -> ir.Attribute),
    ``sugar(group, indent) -> str`` prints the clause."""

    name: str
    attributes: tuple[str, ...]
    build: Callable[["AutotuneGroup"], dict[str, ir.Attribute]]
    read: Callable[["AutotuneGroup", dict], None]
    sugar: Callable[["AutotuneGroup", str], str]
    summary: str


def _simple(name: str, to_attr, from_attr, to_sugar, summary: str) -> Clause:
    return Clause(
        name,
        (name,),
        lambda g: {name: to_attr(getattr(g, name))},
        lambda g, a: setattr(g, name, from_attr(a[name])),
        lambda g, indent: to_sugar(getattr(g, name), indent),
        summary,
    )


def _read_specialized(group: "AutotuneGroup", attrs: dict) -> None:
    group.specialized = _read_symbols(attrs["specialized"])
    group.divisible = [int(ir.IntegerAttr(i).value) for i in attrs.get("divisible", [])]
    group.equal_one = [int(ir.IntegerAttr(i).value) for i in attrs.get("equal_one", [])]


#: The op's clauses, in the order they are printed.
CLAUSES: tuple[Clause, ...] = (
    _simple(
        "variants",
        _symbols,
        _read_symbols,
        lambda v, _: "variants([" + ", ".join(symbol(s) for s in v) + "])",
        "the RFC form: exports of the same hal.executable.source",
    ),
    _simple(
        "triton",
        lambda t: _strings(list(t)),
        lambda a: tuple(_read_strings(a)),
        lambda t, _: f"triton({mlir_string(t[0])}, {mlir_string(t[1])})",
        "the Triton kernel: file and name",
    ),
    _simple(
        "kernel_source",
        ir.StringAttr.get,
        lambda a: ir.StringAttr(a).value,
        lambda t, _: f"kernel_source({mlir_string(t)})",
        "the Python text of a module defining the kernel (a kernel made at run time), compiled instead of the file",
    ),
    _simple(
        "signature",
        _signature_attr,
        _read_signature,
        lambda ps, _: "signature(" + ", ".join(p.sugar() for p in ps) + ")",
        "the kernel's non-constexpr parameters",
    ),
    Clause(
        "configs",
        ("configs", "space", "space_where"),
        _space_attrs,
        _read_space,
        lambda g, indent: _space_sugar(g, indent) if g.space is not None else _configs_sugar(g.configs, indent),
        "constexpr values and Triton options per config (a list, or a generated space)",
    ),
    _simple(
        "workload",
        _strings,
        _read_strings,
        lambda w, _: "workload(" + ", ".join(w) + ")",
        "names of the dispatch's workload values",
    ),
    _simple("grid", _strings, _read_strings, lambda g, _: "grid(" + ", ".join(g) + ")", "Triton's launch grid"),
    _simple(
        "reset_to_zero",
        _outputs_attr,
        _read_outputs,
        _outputs_sugar("reset_to_zero"),
        "outputs zero-filled at every dispatch and before every timed run (Triton's reset_to_zero)",
    ),
    _simple(
        "restore_value",
        _outputs_attr,
        _read_outputs,
        _outputs_sugar("restore_value"),
        "in-place outputs restored around every timed run (Triton's restore_value)",
    ),
    _simple(
        "tune_workload",
        _tune_workloads_attr,
        _read_tune,
        _tune_sugar,
        "host-function arguments to tune with (one list per workload)",
    ),
    _simple(
        "choices",
        _choices_attr,
        _read_choices,
        _choices_sugar,
        "frozen choices per workload (the dispatch's workload values), by --tuning-results",
    ),
    _simple(
        "default",
        ir.FlatSymbolRefAttr.get,
        lambda a: ir.FlatSymbolRefAttr(a).value,
        lambda d, _: f"default({symbol(d)})",
        "the variant used until tuned",
    ),
    Clause(
        "specialized",
        ("specialized", "divisible", "equal_one"),
        lambda g: {
            "specialized": _symbols(g.specialized),
            "divisible": ir.ArrayAttr.get([_i64(i) for i in g.divisible or []]),
            "equal_one": ir.ArrayAttr.get([_i64(i) for i in g.equal_one or []]),
        },
        _read_specialized,
        lambda g, _: _specialized_sugar(g),
        "per variant, a specialization taken when the listed constants satisfy the hints",
    ),
)
CLAUSE_NAMES = tuple(c.name for c in CLAUSES)
_KNOWN_ATTRIBUTES = {"sym_name", *(a for c in CLAUSES for a in c.attributes)}


@dataclass
class AutotuneGroup:
    """A group of exports that are variants of one kernel (the RFC's autotuning export).

    Either ``variants`` lists existing ``hal.executable.export`` symbols of the same
    ``hal.executable.source``, or ``triton`` (path, kernel name) with ``signature``,
    ``configs``, ``workload`` and ``grid`` asks materialize-triton-variants to make them.
    ``configs`` are ordered ``(key, value)`` lists: constexpr values and the Triton options in
    :data:`OPTION_NAMES`. ``tune_workload`` holds, per tuning workload, MLIR text of
    host-function arguments (``"tensor<64x64xf16>"``, ``"7 : i32"``) used to tune when the host's
    own argument types are dynamic (several workloads: one choice each, as Triton's autotuner
    keeps one per ``key``). ``choices`` maps the dispatch's workload values to a variant (a
    frozen per-workload table; the dispatch falls back to ``default`` for other workloads). ``default`` is the variant used until tuned (a pinned choice after pin-variants).
    ``reset_to_zero`` / ``restore_value`` (Triton's ``triton.autotune`` arguments): the
    outputs zero-filled at every dispatch / restored around every timed run; names of
    ``{output}`` parameters in the Triton form, result indices of the group's dispatches in the
    RFC form (as jax-triton's ``zeroed_outputs``); ``[]`` says none (overriding the kernel's).
    ``extra``: attributes of a generic op outside the schema (kept, never printed sugared).
    ``kernel_source``: the Python text of a module that defines the kernel ``triton[1]`` (a
    kernel made at run time, captured by :func:`autotune_export.cuda.kernel_capture.capture`);
    when given, the kernel is compiled from it and ``triton[0]`` only says where the kernel was
    written (docs/syntax.md).
    """

    name: str
    variants: list[str] | None = None
    triton: tuple[str, str] | None = None
    kernel_source: str | None = None
    signature: list[Param] | None = None
    configs: list[list[tuple[str, Any]]] | None = None
    #: The generated space ``configs`` was expanded from (``configs(product(...) where ...)``):
    #: per name ``(name, values, fixed)`` in order, and the constraint's canonical text.
    space: list[tuple[str, list[Any], bool]] | None = None
    space_where: str | None = None
    workload: list[str] | None = None
    grid: list[str] | None = None
    reset_to_zero: list[str | int] | None = None
    restore_value: list[str | int] | None = None
    tune_workload: list[list[str]] | None = None
    choices: list[tuple[tuple[int, ...], str]] | None = None
    default: str | None = None
    specialized: list[str] | None = None
    divisible: list[int] | None = None
    equal_one: list[int] | None = None
    location: Location | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Where the user wrote each clause and clause item, for diagnostics: ``"triton"``,
    #: ``"triton.path"``, ``"triton.kernel"``, ``"signature"``, ``"signature.NAME"`` (each
    #: parameter), ``"signature.end"`` (its ``)``), ``"configs"``, ``"configs.I"`` (config I's
    #: ``{``), ``"configs.I.KEY"``, ``"workload.NAME"``, ``"grid"``, ``"grid.D"`` (dimension
    #: D), ``"grid.NAME"`` (a name's first use), ``"reset_to_zero.NAME"``, ... The front end
    #: keeps them in the op's location (a fused location of named parts, read back by
    #: :meth:`from_op`); a group written in the generic form has none. See :meth:`at`.
    clause_locations: dict[str, Location] = field(default_factory=dict, compare=False, repr=False)

    # ----- generic form (bindings) -------------------------------------------------------
    def attributes(self) -> dict[str, ir.Attribute]:
        """The generic op's attributes (inside an ``ir.Context``)."""
        attrs: dict[str, ir.Attribute] = {"sym_name": ir.StringAttr.get(self.name)}
        for clause in CLAUSES:
            if getattr(self, clause.name) is not None:
                attrs.update(clause.build(self))
        attrs.update(self.extra)
        return attrs

    def build(self, loc: ir.Location | None = None, ip: ir.InsertionPoint | None = None) -> ir.Operation:
        """Create the generic ``autotune.export`` op (at ``ip``, else the current insertion
        point; at ``loc``, else the current location)."""
        return ir.Operation.create(GENERIC_OP_NAME, attributes=self.attributes(), loc=loc, ip=ip)

    def replace(self, op: ir.Operation) -> ir.Operation:
        """Replace the generic op ``op`` by one built from this group, at ``op``'s location."""
        with op.context:
            new = self.build(loc=op.location, ip=ir.InsertionPoint(op))
        op.erase()
        return new

    def write_into(self, op: ir.Operation) -> None:
        """Set ``op``'s attributes to this group's (the op stays where it is)."""
        with op.context:
            for name in [op.attributes[i].name for i in range(len(op.attributes))]:
                del op.attributes[name]
            for name, attr in self.attributes().items():
                op.attributes[name] = attr

    @classmethod
    def from_op(cls, op, filename: str | None = None) -> "AutotuneGroup":
        """Read a generic ``autotune.export`` op (``iree.compiler.ir.Operation``). Raises
        KeyError without ``sym_name``, TypeError/ValueError for malformed attributes."""
        raw = {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}
        name = raw["sym_name"]
        if not isinstance(name, ir.StringAttr):
            raise TypeError("sym_name must be a string")
        group = cls(
            name=name.value, location=location_of(op.location, filename), clause_locations=named_locations(op.location, filename)
        )
        for clause in CLAUSES:
            if clause.attributes[0] in raw:
                try:
                    clause.read(group, raw)
                except (ValueError, TypeError, IndexError) as err:
                    raise TypeError(f"attribute '{clause.name}': {err}") from None
        group.extra = {k: v for k, v in raw.items() if k not in _KNOWN_ATTRIBUTES}
        return group

    # ----- sugared form ------------------------------------------------------------------
    def to_sugar(self, indent: str = "") -> str:
        """The sugared spelling, one clause per line after the first (``indent`` prefixes each)."""
        if self.extra:
            raise ValueError(f"group @{self.name} carries attributes with no sugared spelling: {sorted(self.extra)}")
        head = f"{indent}{SUGARED_OP_NAME} {symbol(self.name)}"
        clauses = [c.sugar(self, indent) for c in CLAUSES if getattr(self, c.name) is not None]
        if len(clauses) == 1 and self.variants is not None:
            return f"{head} {clauses[0]}"
        return head + "".join(f"\n{indent}    {c}" for c in clauses)

    # ----- helpers -----------------------------------------------------------------------
    def at(self, *keys: str) -> Location | None:
        """Where to report about a clause: the location of the first of ``keys`` (names of
        :attr:`clause_locations`, most specific first) that the group has, else the op's."""
        for key in keys:
            if key in self.clause_locations:
                return self.clause_locations[key]
        return self.location

    @property
    def is_triton(self) -> bool:
        return self.triton is not None

    def constexpr_keys(self) -> list[str]:
        """Keys that appear in every config and are not Triton options."""
        if not self.configs:
            return []
        keys = [k for k, _ in self.configs[0] if k not in OPTION_NAMES]
        return [k for k in keys if all(any(k == kk for kk, _ in cfg) for cfg in self.configs)]
