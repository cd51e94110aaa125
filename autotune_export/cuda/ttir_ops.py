"""Triton's TTIR as :mod:`autotune_export.cuda.ttir`'s analysis sees it: which ops write, read,
update atomically or derive pointers (the op tables), and the parsed kernel module reduced to
plain records, one :class:`Op` per op and one :class:`Block` per block holding ops.

The TTIR is parsed by the installed Triton's own MLIR bindings (``triton._C.libtriton.ir``,
:func:`parse_module`); the records keep the bindings' value, block and region ids
(``value.id()``), which :mod:`autotune_export.cuda.ttir_origins` turns into a graph.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

__all__ = [
    "WRITE_OPS",
    "READ_OPS",
    "ATOMIC_UPDATE_OPS",
    "POINTER_OPS",
    "LOAD_OPS",
    "BRANCH_OPS",
    "TtirError",
    "Op",
    "Block",
    "collect",
    "parse_module",
    "kernel_name",
    "is_pointer",
    "returns_to_parent",
    "writes_nothing",
]

#: Ops that write memory through their first operand (the rest of their operands are the data).
WRITE_OPS = frozenset(
    {
        "tt.store",
        "tt.atomic_rmw",
        "tt.atomic_cas",
        "tt.atomic_store",
        "tt.descriptor_store",
        "tt.descriptor_reduce",
        "tt.descriptor_scatter",
    }
)
#: Ops whose results are read from memory (they receive whatever was stored).
READ_OPS = frozenset(
    {
        "tt.load",
        "tt.atomic_load",
        "tt.atomic_poll",
        "tt.atomic_rmw",
        "tt.atomic_cas",
        "tt.descriptor_load",
        "tt.descriptor_gather",
    }
)
#: Ops that read-modify-write memory through their first operand: what they leave depends on
#: what it held.
ATOMIC_UPDATE_OPS = frozenset({"tt.atomic_rmw", "tt.atomic_cas"})
#: Ops whose pointer results are exactly derived from their operands (no new pointer appears).
POINTER_OPS = frozenset(
    {
        "tt.addptr",
        "tt.splat",
        "tt.unsplat",
        "tt.broadcast",
        "tt.expand_dims",
        "tt.reshape",
        "tt.trans",
        "tt.join",
        "tt.split",
        "tt.cat",
        "tt.gather",
        "tt.advance",
        "tt.make_tensor_ptr",
        "tt.make_tensor_descriptor",
        "arith.select",
        "tt.bitcast",
        "ttg.convert_layout",
    }
)
#: Ops that write no memory (besides those in WRITE_OPS, ops of the dialects in
#: _PURE_DIALECTS and the structured ops handled one by one).
_NO_WRITE_OPS = (
    frozenset(
        {
            "builtin.module",
            "tt.func",
            "tt.return",
            "tt.call",
            "tt.make_range",
            "tt.get_program_id",
            "tt.get_num_programs",
            "tt.int_to_ptr",
            "tt.ptr_to_int",
            "tt.dot",
            "tt.dot_scaled",
            "tt.fp_to_fp",
            "tt.clampf",
            "tt.precise_sqrt",
            "tt.precise_divf",
            "tt.approx_divf",
            "tt.mulhiui",
            "tt.histogram",
            "tt.reduce",
            "tt.reduce.return",
            "tt.scan",
            "tt.scan.return",
            "tt.map_elementwise",
            "tt.map_elementwise.return",
            "tt.print",
            "tt.assert",
            "tt.grid_dependency_wait",
            "tt.grid_dependency_launch_dependents",
            "gpu.barrier",
        }
    )
    | POINTER_OPS
    | READ_OPS - WRITE_OPS
)
_PURE_DIALECTS = ("arith.", "math.", "index.", "scf.", "cf.")
#: Ops that are pure unless their ``pure`` attribute is false.
_MAYBE_PURE = frozenset({"tt.elementwise_inline_asm", "tt.extern_elementwise"})
BRANCH_OPS = frozenset({"cf.br", "cf.cond_br", "cf.switch"})
#: Ops that read memory through their first operand and give what it held.
LOAD_OPS = frozenset({"tt.load", "tt.descriptor_load", "tt.descriptor_gather"})


class TtirError(Exception):
    """TTIR text that Triton's MLIR parser rejects, or without exactly one public kernel."""


def is_pointer(type_text: str) -> bool:
    return "!tt.ptr" in type_text or "!tt.tensordesc" in type_text


def returns_to_parent(name: str) -> bool:
    """Whether ``name`` is a terminator giving values back to the op around its region."""
    return name.endswith((".return", ".yield")) and name != "tt.return"


@dataclass
class Op:
    """What the analysis needs of one op (ids are those of the bindings' ``value.id()``)."""

    name: str
    operands: list[int]
    pointer_operands: int  # how many operands are pointer-typed
    results: list[tuple[int, bool]]  # (value id, pointer-typed)
    block: int | None  # id of the block holding the op (None for the module)
    regions: list[int]  # ids of the op's regions
    callee: str | None = None  # tt.call
    function: str | None = None  # tt.func with a body: its name
    impure: bool = False  # tt.elementwise_inline_asm / tt.extern_elementwise without pure


@dataclass
class Block:
    region: int
    args: list[tuple[int, bool]]  # (value id, pointer-typed)


def collect(module) -> tuple[list[Op], dict[int, Block]]:
    """Every op of ``module`` (a Triton ``ir.module``) and every block holding an op."""
    ops: list[Op] = []
    blocks: dict[int, Block] = {}

    def visit(op) -> None:
        block = op.get_block()
        block_id = None
        if block is not None:
            block_id = block.id()
            if block_id not in blocks:
                args = [block.get_argument(i) for i in range(block.get_num_arguments())]
                blocks[block_id] = Block(block.get_parent().id(), [(a.id(), is_pointer(str(a.get_type()))) for a in args])
        operands = [op.get_operand(i) for i in range(op.get_num_operands())]
        results = [op.get_result(i) for i in range(op.get_num_results())]
        rec = Op(
            name=op.get_name(),
            operands=[v.id() for v in operands],
            pointer_operands=sum(is_pointer(str(v.get_type())) for v in operands),
            results=[(r.id(), is_pointer(str(r.get_type()))) for r in results],
            block=block_id,
            regions=[op.get_region(i).id() for i in range(op.get_num_regions())],
        )
        if rec.name == "tt.call":
            rec.callee = op.get_flat_symbol_ref_attr("callee")
        elif rec.name == "tt.func" and op.get_num_regions() and not op.get_region(0).empty():
            rec.function = op.get_str_attr("sym_name")
        elif rec.name in _MAYBE_PURE:
            rec.impure = op.get_bool_attr("pure") is not True
        ops.append(rec)

    module.walk(visit)
    return ops, blocks


def writes_nothing(op: Op) -> bool:
    if op.name in _MAYBE_PURE:
        return not op.impure
    return op.name in _NO_WRITE_OPS or op.name.startswith(_PURE_DIALECTS)


def kernel_name(module, ops: list[Op]) -> str:
    """The kernel: Triton's entry function (the public tt.func; helpers are private)."""
    try:
        name = module.get_entry_func_name()
    except Exception:  # noqa: BLE001 - the bindings raise assorted errors on odd modules
        name = None
    funcs = [op.function for op in ops if op.function is not None]
    if name in funcs:
        return name
    if len(funcs) == 1:
        return funcs[0]
    raise TtirError(f"cannot tell the kernel among the TTIR's functions ({', '.join(funcs) or 'none'})")


def parse_module(ttir_text: str, context):
    """Triton's ``ir.module`` of ``ttir_text`` (the binding parses files, not strings)."""
    from triton._C.libtriton import ir

    fd, path = tempfile.mkstemp(prefix="autotune-export-", suffix=".ttir")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(ttir_text)
        try:
            module = ir.parse_mlir_module(path, context)
        except RuntimeError as err:
            raise TtirError(f"Triton cannot parse the TTIR: {err}") from None
    finally:
        os.unlink(path)
    module.context = context  # as Triton's IRSource does: the module keeps its context alive
    return module
