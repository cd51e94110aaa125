"""IREE's dispatch binding rule: which operand or result of a ``flow.dispatch`` becomes which
binding or push constant, and so which kernel parameter. The one home of that rule: the passes,
:mod:`autotune_export.cuda.abi` and the interop front ends call it.

IREE's convention (IREE 3.13; notes/iree-hal-facts.md, "Calling convention of the CUDA driver",
and docs/calling-convention.md), for ``flow.dispatch @ex::@e[workload](args) -> results``:

* **bindings** are the tensor operands, in operand order, then each *untied* result, in result
  order. A result tied to an operand (``-> %x``, the ``tied_operands`` attribute: per result the
  index into ``args`` or -1) is written in place: it reuses that operand's binding and adds none;
* **push constants** are the non-tensor operands, in operand order, each one or two 32-bit
  values (:func:`constant_slots`): ``i32`` as is, ``f32`` bitcast, ``i1``/``i8``/``i16``
  zero-extended, ``f16``/``bf16`` bitcast to ``i16`` and zero-extended, ``i64`` split into its
  low then high half, ``f64`` bitcast to ``i64`` then split (:func:`to_constants`). IREE's CUDA
  HAL passes each constant as 4 bytes, so nothing wider than 32 bits reaches the kernel whole;
* the **kernel** is then called with one pointer per binding, in binding order, then one 32-bit
  value per constant (IREE's ``iree_hal_cuda_native_executable`` launch, plain
  ``cuLaunchKernel``).

A Triton signature meets it this way (:func:`pointer_order`, used by
:func:`autotune_export.cuda.abi.plan`): the pointers bound to tensor operands are the input
pointers and the ``{output}`` pointers written in place, in operand order; then the other
``{output}`` pointers, bound to the untied results in signature order. Which outputs are
written in place, and where, is read off the dispatch (:func:`tied_outputs`): result ``j`` is
the ``j``-th ``{output}`` pointer (docs/calling-convention.md), so a tied result names its
output, which takes the binding of the operand the result is tied to, wherever that operand
is; the other tensor operands bind the input pointers in signature order. The PTX entry's
parameters are put in that binding order (:meth:`autotune_export.cuda.abi.AbiPlan.link_order`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

from iree.compiler import ir
from iree.compiler.dialects import arith, flow

from autotune_export.ir.binding_rule import (
    SCALAR_OPERAND_TYPES,
    constant_slots,
    in_place,
    pointer_order,  # noqa: F401
    result_bindings,
)
from autotune_export.ir.params import Param
from autotune_export.ir.walk import defining_op, isa

__all__ = [
    "SCALAR_OPERAND_TYPES",
    "Binding",
    "DispatchOperands",
    "constant_slots",
    "to_constants",
    "result_bindings",
    "pointer_order",
    "tied_outputs",
    "in_place",
    "result_pointers",
    "result_outputs",
]


def to_constants(value: ir.Value) -> list[ir.Value] | None:
    """The ``i32`` push constants scalar ``value`` becomes (see the module docstring), built at
    the current insertion point and location; None for a type :func:`constant_slots` refuses."""
    t = value.type
    i16, i32, i64 = (ir.IntegerType.get_signless(w) for w in (16, 32, 64))
    if isinstance(t, ir.IntegerType):
        if t.width == 32:
            return [value]
        if t.width in (1, 8, 16):
            return [arith.ExtUIOp(i32, value).result]
        if t.width == 64:
            return _split64(value)
        return None
    if isinstance(t, ir.F32Type):
        return [arith.BitcastOp(i32, value).result]
    if isinstance(t, (ir.F16Type, ir.BF16Type)):
        return [arith.ExtUIOp(i32, arith.BitcastOp(i16, value).result).result]
    if isinstance(t, ir.F64Type):
        return _split64(arith.BitcastOp(i64, value).result)
    return None


def _split64(value: ir.Value) -> list[ir.Value]:
    """``[low, high]`` 32-bit halves of an ``i64``."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    low = arith.TruncIOp(i32, value).result
    high = arith.TruncIOp(i32, arith.ShRUIOp(value, arith.ConstantOp(i64, 32).result).result).result
    return [low, high]


def _is_tensor(value) -> bool:
    return isinstance(value.type, ir.ShapedType)


@dataclass
class Binding:
    """One binding of a dispatch. ``operand``: index into the dispatch's arguments of the
    tensor operand bound here, or None for an untied result; ``result``: the result written
    through it (an untied result, or one tied to the operand), or None for a read-only
    operand. ``undefined``: the kernel gets a buffer of undefined contents (an untied result,
    or an operand made by ``flow.tensor.empty`` / ``flow.tensor.alloca``). ``what``: how
    diagnostics name it (``tensor operand 1 (tensor<4xf32>)``, ``result 0 (...)``)."""

    type: ir.Type
    operand: int | None
    result: int | None
    undefined: bool
    what: str

    @property
    def is_result(self) -> bool:
        return self.result is not None


@dataclass
class DispatchOperands:
    """The operand groups of a ``flow.dispatch`` (``flow.DispatchOp``'s accessors): workload,
    arguments, argument dims (dynamic sizes of the tensor arguments, in order), result dims;
    ``tied``: per result, the index of the argument it is tied to, or -1."""

    workload: list
    arguments: list
    argument_dims: list
    result_dims: list
    tied: list[int]
    result_types: list

    @classmethod
    def of(cls, dispatch) -> "DispatchOperands":
        view = dispatch.operation.opview  # flow.DispatchOp
        tied = [-1] * len(dispatch.results)
        if view.tied_operands is not None:
            tied = [int(ir.IntegerAttr(a).value) for a in view.tied_operands]
            tied += [-1] * (len(dispatch.results) - len(tied))
        return cls(
            list(view.workload),
            list(view.arguments),
            list(view.argument_dims),
            list(view.result_dims),
            tied,
            [r.type for r in dispatch.results],
        )

    def scalars(self) -> list:
        """The non-tensor arguments: the push constants, in order (before the 32-bit split)."""
        return [a for a in self.arguments if not _is_tensor(a)]

    def tensor_positions(self) -> list[int]:
        """Indices into :attr:`arguments` of the tensor operands, in order."""
        return [i for i, a in enumerate(self.arguments) if _is_tensor(a)]

    def untied_results(self) -> list[int]:
        return [j for j, t in enumerate(self.tied) if t < 0]

    def bindings(self) -> list[Binding]:
        """The bindings in IREE's order: tensor operands in operand order, then untied results."""
        by_operand = {t: j for j, t in enumerate(self.tied) if t >= 0}
        out = []
        for n, i in enumerate(self.tensor_positions()):
            a = self.arguments[i]
            op = defining_op(a)
            fresh = op is not None and isa(op, flow.TensorEmptyOp, flow.TensorAllocaOp)
            out.append(Binding(a.type, i, by_operand.get(i), fresh, f"tensor operand {n} ({a.type})"))
        for j in self.untied_results():
            t = self.result_types[j]
            out.append(Binding(t, None, j, True, f"result {j} ({t})"))
        return out

    def num_constants(self) -> int | None:
        """32-bit push constants the scalar arguments make; None when one has no spelling."""
        slots = [constant_slots(a.type) for a in self.scalars()]
        return None if any(s is None for s in slots) else sum(slots)


def tied_outputs(signature: Sequence[Param], dispatch) -> tuple[str, ...]:
    """The pointers bound to the tensor operands of ``dispatch``, in operand order: its input
    pointers and the ``{output}`` pointers it writes in place (for :func:`pointer_order`).

    When the dispatch has one result per ``{output}`` pointer, result ``j`` is output ``j``
    (docs/calling-convention.md): an operand that result ``j`` is tied to (``-> %x``) binds
    output ``j``, written in place, wherever it is among the operands; the other operands bind
    the input pointers in signature order. With more results than outputs (input pointers
    written in place take results too), the in-place outputs are the first set, in signature
    order, whose operand bindings, in signature order, all carry a result. When the counts do
    not fit the signature (the binding count checks report that), or nothing is in place: the
    input pointers (and the outputs found in place) in signature order."""
    parts = DispatchOperands.of(dispatch)
    pointers = [p for p in signature if p.is_pointer]
    outputs = [p.name for p in pointers if p.output]
    inputs = [p.name for p in pointers if not p.output]

    def in_signature_order(names) -> tuple[str, ...]:
        return tuple(p.name for p in pointers if not p.output or p.name in names)

    if not any(t >= 0 for t in parts.tied):
        return in_signature_order(())
    positions = parts.tensor_positions()
    if len(parts.tied) == len(outputs):
        by_operand = {t: outputs[j] for j, t in enumerate(parts.tied) if t >= 0}
        plain = iter(inputs)
        order = [by_operand[i] if i in by_operand else next(plain, None) for i in positions]
        if None in order or next(plain, None) is not None:
            return in_signature_order(by_operand.values())
        return tuple(order)
    bindings = parts.bindings()
    operands = [b for b in bindings if b.operand is not None]
    untied = len(bindings) - len(operands)
    k = len(operands) - len(inputs)
    if 0 < k <= len(outputs) and len(outputs) - k == untied:
        for names in itertools.combinations(outputs, k):
            order = in_signature_order(names)
            if all(operands[order.index(n)].is_result for n in names):
                return order
    return in_signature_order(())


def result_pointers(signature: Sequence[Param], tied, dispatch) -> list[Param] | None:
    """Per result of ``dispatch``, the ``{output}`` pointer it returns (a tied result: the
    pointer bound to its operand; an untied one: the next output bound to a result), for the
    outputs ``tied`` written in place; None when the dispatch's bindings do not match the
    signature's (the binding count checks report that)."""
    as_operands, as_results = pointer_order(signature, tied)
    parts = DispatchOperands.of(dispatch)
    positions = parts.tensor_positions()
    if len(positions) != len(as_operands) or len(parts.untied_results()) != len(as_results):
        return None
    ordinals = result_bindings(parts.tied, positions)
    if ordinals is None:
        return None
    in_binding_order = as_operands + as_results
    return [in_binding_order[b] for b in ordinals]


def result_outputs(signature: Sequence[Param], tied, dispatch) -> list[str] | None:
    """:func:`result_pointers` by name."""
    found = result_pointers(signature, tied, dispatch)
    return None if found is None else [p.name for p in found]
