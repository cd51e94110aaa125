"""Typed accessors and walking over ``iree.compiler.ir`` modules: the symbols, executables,
exports, groups, dispatch sites and functions the passes look at, read with the bindings.

Ops are told apart by their generated classes (:func:`isa`: IREE's ``flow``, ``hal``,
``util`` ... op classes of ``iree.compiler.dialects``), never by comparing their names as
strings; only the extension op, which has no class (``autotune.export``, see ir/group.py), is
known by :data:`~autotune_export.ir.group.GENERIC_OP_NAME`."""

from __future__ import annotations

from typing import Iterator

from iree.compiler import ir
from iree.compiler.dialects import flow, func, hal, util

from autotune_export.ir.group import GENERIC_OP_NAME

__all__ = [
    "isa",
    "FUNCTION_OPS",
    "walk",
    "defining_op",
    "sym_name",
    "executable_sources",
    "exports_of",
    "groups_of",
    "dispatch_sites",
    "entry_point_refs",
    "find_groups",
    "enclosing_function",
    "module_functions",
]


#: The function ops a host may be: IREE's ``util.func`` and upstream's ``func.func`` (jax.export).
FUNCTION_OPS = (util.FuncOp, func.FuncOp)


def isa(op, *classes: type) -> bool:
    """Whether ``op`` (an ``ir.Operation`` or any op view) is an op of one of ``classes``
    (generated op classes such as ``flow.DispatchOp``): the context's registered dialects
    give each op its class (``Operation.opview``)."""
    return isinstance(op.operation.opview, classes)


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
    return [op.operation for op in module.body.operations if isa(op, hal.ExecutableSourceOp)]


def exports_of(source) -> dict:
    """``hal.executable.export`` ops of a source (or variant), by symbol name, in order."""
    out = {}
    for op in source.regions[0].blocks[0].operations:
        op = op.operation
        if isa(op, hal.ExecutableExportOp):
            out[sym_name(op)] = op
    return out


def groups_of(source) -> list:
    """Generic ``autotune.export`` ops directly inside a source."""
    return [op.operation for op in source.regions[0].blocks[0].operations if op.operation.name == GENERIC_OP_NAME]


def entry_point_refs(dispatch) -> list[tuple[str, str]]:
    """``(executable, export)`` pairs a ``flow.dispatch`` names."""
    refs = []
    for ref in dispatch.attributes["entry_points"]:
        path = ir.SymbolRefAttr(ref).value  # @ex::@name -> ["ex", "name"]
        refs.append((path[0], path[-1]))
    return refs


def dispatch_sites(module) -> list:
    """All ``flow.dispatch`` ops of the module, in textual order."""
    return [op for op in walk(module.operation) if isa(op, flow.DispatchOp)]


def module_functions(module) -> dict:
    """Top-level ``util.func``/``func.func`` ops by name."""
    out = {}
    for op in module.body.operations:
        op = op.operation
        if isa(op, *FUNCTION_OPS):
            out[sym_name(op)] = op
    return out


def enclosing_function(op):
    """The ``util.func``/``func.func`` holding ``op`` (or None)."""
    parent = op.parent
    while parent is not None and not isa(parent, *FUNCTION_OPS):
        parent = parent.operation.parent
    return parent.operation if parent is not None else None


def find_groups(module, with_parent: bool = False):
    """All generic ``autotune.export`` ops of ``module`` in textual order; with
    ``with_parent``, ``(op, parent op)`` pairs (parent None at the module's top level; ops of
    one parent share one parent object)."""
    found = []

    def visit(op, parent):
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    if child.name == GENERIC_OP_NAME:
                        found.append((child, parent))
                    visit(child, child)

    visit(module.operation, None)
    return found if with_parent else [op for op, _ in found]


def defining_op(value):
    """The operation (``ir.Operation``) defining ``value``, or None for a block argument."""
    owner = value.owner
    if isinstance(owner, ir.OpView):
        return owner.operation
    return owner if isinstance(owner, ir.Operation) else None
