"""Small helpers over ``iree.compiler.ir`` shared by the passes."""

from __future__ import annotations

from typing import Iterator

from autotune_export.frontend.reader import find_groups
from autotune_export.ir.group import AutotuneGroup

__all__ = [
    "walk",
    "sym_name",
    "executable_sources",
    "exports_of",
    "groups_of",
    "dispatch_sites",
    "entry_point_refs",
    "parse_detached",
    "replace_group",
    "enclosing_function",
    "module_functions",
]


def walk(op) -> Iterator:
    """Every operation nested in ``op`` (pre-order, ``op`` excluded)."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from walk(child)


def sym_name(op) -> str | None:
    """The ``sym_name`` of an op, or None."""
    if "sym_name" in op.attributes:
        return op.attributes["sym_name"].value
    return None


def executable_sources(module) -> list:
    """Top-level ``hal.executable.source`` ops."""
    return [op.operation for op in module.body.operations if op.operation.name == "hal.executable.source"]


def exports_of(source) -> dict:
    """``hal.executable.export`` ops of a source (or variant), by symbol name, in order."""
    out = {}
    for op in source.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "hal.executable.export":
            out[sym_name(op)] = op
    return out


def groups_of(source) -> list:
    """Generic ``autotune.export`` ops directly inside a source."""
    return [op.operation for op in source.regions[0].blocks[0].operations if op.operation.name == "autotune.export"]


def entry_point_refs(dispatch) -> list[tuple[str, str]]:
    """``(executable, export)`` pairs a ``flow.dispatch`` names."""
    refs = []
    for ref in dispatch.attributes["entry_points"]:
        text = str(ref)  # @ex::@name
        parts = [p.lstrip("@").strip('"') for p in text.split("::")]
        refs.append((parts[0], parts[-1]))
    return refs


def dispatch_sites(module) -> list:
    """All ``flow.dispatch`` ops of the module, in textual order."""
    return [op for op in walk(module.operation) if op.name == "flow.dispatch"]


def module_functions(module) -> dict:
    """Top-level ``util.func``/``func.func`` ops by name."""
    out = {}
    for op in module.body.operations:
        op = op.operation
        if op.name in ("util.func", "func.func"):
            out[sym_name(op)] = op
    return out


def enclosing_function(op):
    """The ``util.func``/``func.func`` holding ``op`` (or None)."""
    parent = op.parent
    while parent is not None and parent.operation.name not in ("util.func", "func.func"):
        parent = parent.operation.parent
    return parent.operation if parent is not None else None


def parse_detached(text: str, context) -> list:
    """Parse ``text`` as a module and return its top-level ops, detached (to insert elsewhere)."""
    from iree.compiler import ir

    module = ir.Module.parse(text, context)
    ops = [op.operation for op in module.body.operations]
    return [op.detach_from_parent() for op in ops]


def replace_group(op, group: AutotuneGroup):
    """Replace a generic ``autotune.export`` op by one built from ``group``; keeps the location."""
    from iree.compiler import ir

    with op.context:
        new = ir.Operation.parse(group.to_generic() + " " + _loc_text(op.location))
    ir.InsertionPoint(op).insert(new)
    op.erase()
    return new


def _loc_text(location) -> str:
    text = str(location)
    return text if text.startswith("loc(") else "loc(unknown)"


__all__ += ["find_groups"]
