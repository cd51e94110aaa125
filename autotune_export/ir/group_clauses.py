"""The clause table of the ``hal.executable.autotuning.export`` op (:mod:`autotune_export.ir.group`):
:data:`CLAUSES`, one :class:`Clause` per clause, with the sugared keyword (a rule of
``dialects/autotuning.lark``, read by the front end), the :class:`~autotune_export.ir.group.AutotuneGroup`
field, the generic op's attribute(s), and how a value is built as attributes (with the
bindings), read back from them and printed sugared. The reader, the printer and the builder
all go through this table.

Attribute encoding of the generic op (all optional except ``sym_name``):

==================  =============================================================
``sym_name``        ``"matmul"``
``variants``        ``[@v0, @v1]``
``triton``          ``["kernel.py", "matmul_kernel"]`` (path as written, kernel name)
``kernel_source``   ``"import triton\n..."``: the Python text of a module defining the kernel
                    (a kernel made at run time, captured by ``launch_to_mlir``); the path of
                    ``triton`` then only says where it was written
``signature``       ``[["a", "*fp16"], ["c", "*fp16", "output"], ["M", "i32", "hint16"]]``
``configs``         ``[[["BLOCK_M", 128 : i64], ["num_warps", 8 : i64]], ...]`` (ordered; values:
                    :mod:`autotune_export.ir.group_values`)
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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from iree.compiler import ir

from autotune_export.ir.group_values import attr_to_python, format_value, i64_attr, mlir_string, symbol, value_attr
from autotune_export.ir.params import Param

__all__ = ["CLAUSES", "CLAUSE_NAMES", "KNOWN_ATTRIBUTES", "Clause"]

#: What the clauses read and write: an :class:`autotune_export.ir.group.AutotuneGroup` (that
#: module imports this one, so the type is named here, not imported).
Group = Any


def _strings(values) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.StringAttr.get(v) for v in values])


def _symbols(values) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(v) for v in values])


def _read_symbols(attr) -> list[str]:
    return [ir.FlatSymbolRefAttr(a).value for a in attr]


def _read_strings(attr) -> list[str]:
    return [ir.StringAttr(a).value for a in attr]


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
        [ir.ArrayAttr.get([ir.ArrayAttr.get([ir.StringAttr.get(k), value_attr(v)]) for k, v in cfg]) for cfg in configs]
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
        [ir.ArrayAttr.get([ir.ArrayAttr.get([i64_attr(v) for v in key]), ir.FlatSymbolRefAttr.get(v)]) for key, v in choices]
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
    return ir.ArrayAttr.get([i64_attr(i) if isinstance(i, int) else ir.StringAttr.get(i) for i in items])


def _read_outputs(attr) -> list:
    return [int(ir.IntegerAttr(a).value) if isinstance(a, ir.IntegerAttr) else ir.StringAttr(a).value for a in attr]


def _outputs_sugar(name: str):
    return lambda items, _: f"{name}(" + ", ".join(str(i) for i in items) + ")"


def _space_sugar(group: Group, indent: str) -> str:
    axes = [
        f"{n} = {format_value(v[0])}" if fixed else f"{n} in [" + ", ".join(format_value(x) for x in v) + "]"
        for n, v, fixed in group.space
    ]
    pad = " " * len("configs(product(")
    text = "configs(product(" + (",\n" + indent + "    " + pad).join(axes) + ")"
    if group.space_where is not None:
        text += "\n" + indent + "    " + " " * len("configs(") + "where " + group.space_where
    return text + ")"


def _space_attrs(group: Group) -> dict[str, ir.Attribute]:
    attrs = {"configs": _configs_attr(group.configs)}
    if group.space is not None:
        attrs["space"] = ir.ArrayAttr.get(
            [
                ir.ArrayAttr.get(
                    [ir.StringAttr.get(n), value_attr(v[0]) if fixed else ir.ArrayAttr.get([value_attr(x) for x in v])]
                )
                for n, v, fixed in group.space
            ]
        )
        if group.space_where is not None:
            attrs["space_where"] = ir.StringAttr.get(group.space_where)
    return attrs


def _read_space(group: Group, attrs: dict) -> None:
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


def _specialized_sugar(group: Group) -> str:
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
    build: Callable[[Group], dict[str, ir.Attribute]]
    read: Callable[[Group, dict], None]
    sugar: Callable[[Group, str], str]
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


def _read_specialized(group: Group, attrs: dict) -> None:
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
            "divisible": ir.ArrayAttr.get([i64_attr(i) for i in g.divisible or []]),
            "equal_one": ir.ArrayAttr.get([i64_attr(i) for i in g.equal_one or []]),
        },
        _read_specialized,
        lambda g, _: _specialized_sugar(g),
        "per variant, a specialization taken when the listed constants satisfy the hints",
    ),
)
CLAUSE_NAMES = tuple(c.name for c in CLAUSES)
#: Every attribute of the generic op the schema knows (the others are a group's ``extra``).
KNOWN_ATTRIBUTES = {"sym_name", *(a for c in CLAUSES for a in c.attributes)}
