"""IREE's dispatch binding rule as plain data (no ``iree.compiler`` import, so that the kernel
stages can use it: :mod:`autotune_export.cuda.abi`): which Triton scalar type a dispatch operand
carries, how many 32-bit constants it becomes, which binding a result is written through and in
which order a signature's pointers are bound. :mod:`autotune_export.ir.binding` reads the rule
off a ``flow.dispatch`` and re-exports these names; the module docstring there states the
rule."""

from __future__ import annotations

from typing import Sequence

from autotune_export.ir.params import Param


#: Triton scalar type -> the MLIR type of the dispatch operand that carries it (a Triton
#: ``u1``, like ``i1``, is an ``i1`` operand; MLIR integers are signless, so ``uN`` is ``iN``).
#: An operand of another type would reach the kernel as the wrong bits: a float read as an
#: integer, or half of a 64-bit value.
SCALAR_OPERAND_TYPES: dict[str, str] = {
    "i1": "i1",
    "u1": "i1",
    "i8": "i8",
    "u8": "i8",
    "i16": "i16",
    "u16": "i16",
    "i32": "i32",
    "u32": "i32",
    "i64": "i64",
    "u64": "i64",
    "fp16": "f16",
    "bf16": "bf16",
    "fp32": "f32",
    "fp64": "f64",
}

_SLOTS = {"i1": 1, "i8": 1, "i16": 1, "i32": 1, "f16": 1, "bf16": 1, "f32": 1, "i64": 2, "f64": 2}


def constant_slots(mlir_type) -> int | None:
    """32-bit push constants a scalar dispatch operand of ``mlir_type`` (an ``ir.Type`` or its
    spelling) becomes: 1 for ``i1``/``i8``/``i16``/``i32``/``f16``/``bf16``/``f32``, 2 for
    ``i64``/``f64`` (low half first); None when IREE's ABI has no spelling for it (``index``,
    vectors, wider integers...)."""
    return _SLOTS.get(str(mlir_type).strip())


def result_bindings(tied: Sequence[int], tensor_positions: Sequence[int]) -> list[int] | None:
    """Per result of a dispatch, the ordinal of the binding it is written through: a result
    tied to argument ``t`` (``tied[j] = t``, an index into the dispatch's arguments) reuses
    ``t``'s binding, its place among the tensor operands (``tensor_positions``: their indices
    into the arguments, in order); the untied results (-1) follow the tensor operands, in result
    order. None when a result is tied to an argument that is not a tensor operand."""
    positions = list(tensor_positions)
    out, next_untied = [], len(positions)
    for t in tied:
        if t < 0:
            out.append(next_untied)
            next_untied += 1
        elif t in positions:
            out.append(positions.index(t))
        else:
            return None
    return out


def pointer_order(pointers: Sequence[Param], tied) -> tuple[list[Param], list[Param]]:
    """``(bound to operands, bound to untied results)``: the signature's pointers in binding
    order, for ``tied``: the names of the pointers bound to the tensor operands in operand order
    (a tuple, as :func:`tied_outputs` gives it: the input pointers and the ``{output}``
    pointers written in place), or a set of the ``{output}`` pointers written in place (the
    input pointers and those outputs then bind to the operands in signature order). The other
    outputs bind to the untied results, in signature order."""
    pointers = [p for p in pointers if p.is_pointer]
    by_name = {p.name: p for p in pointers}
    inputs = {p.name for p in pointers if not p.output}
    ordered = isinstance(tied, (tuple, list)) and all(n in by_name for n in tied) and inputs <= set(tied)
    if ordered:
        as_operands = [by_name[n] for n in tied]
    else:
        as_operands = [p for p in pointers if not p.output or p.name in tied]
    as_results = [p for p in pointers if p.output and p.name not in tied]
    return as_operands, as_results


def in_place(signature: Sequence[Param], tied) -> list[str]:
    """The ``{output}`` pointers of ``tied`` (:func:`tied_outputs`) written in place."""
    outputs = {p.name for p in signature if p.is_pointer and p.output}
    return [n for n in tied if n in outputs]
