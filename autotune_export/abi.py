"""Layout and calling convention: how a Triton kernel's parameters meet IREE's dispatch ABI.

IREE's CUDA HAL launches an external kernel with one pointer per binding, in binding order,
then one 32-bit value per push constant (notes/iree-hal-facts.md, "Calling convention"). At a
``flow.dispatch`` site the bindings are the tensor operands in operand order, then each untied
result; the constants are the non-tensor operands in order. A Triton kernel takes its
parameters in declaration order (pointers and scalars interleaved, constexprs removed, hidden
``global_scratch``/``profile_scratch`` pointers appended since Triton 3.3/3.5).

:func:`plan` maps one onto the other: the signature's input pointers become the leading
bindings, its ``{output}`` pointers the result bindings, and its scalars the constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from .group import Param

__all__ = ["AbiError", "AbiPlan", "plan", "layout_attr", "SUPPORTED_SCALARS", "MLIR_ELEMENT_TYPES"]

#: Triton scalar types passed as one 32-bit IREE constant (fp32 is bitcast to i32 at the
#: dispatch site by lower-autotuning-dispatch).
SUPPORTED_SCALARS = ("i32", "u32", "fp32")

#: Triton element type -> MLIR element type (for tensors at dispatch sites and fake data).
MLIR_ELEMENT_TYPES = {
    "i1": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
    "u8": "i8", "u16": "i16", "u32": "i32", "u64": "i64",
    "fp8e4nv": "f8E4M3FN", "fp8e5": "f8E5M2",
    "fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64",
}


class AbiError(ValueError):
    """A signature that IREE's dispatch ABI cannot carry (message names the parameter)."""


@dataclass(frozen=True)
class AbiPlan:
    """Where each kernel parameter goes.

    ``order``: indices into the signature (non-constexpr parameters) in IREE's order.
    ``inputs``/``outputs``/``scalars``: signature indices of each class, in signature order.
    """

    signature: tuple[Param, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    scalars: tuple[int, ...]

    @property
    def order(self) -> tuple[int, ...]:
        return self.inputs + self.outputs + self.scalars

    @property
    def num_bindings(self) -> int:
        return len(self.inputs) + len(self.outputs)

    @property
    def num_constants(self) -> int:
        return len(self.scalars)

    def binding_params(self) -> list[Param]:
        return [self.signature[i] for i in self.inputs + self.outputs]

    def read_only(self, written: Iterable[int]) -> list[bool]:
        """Per binding: True when the kernel never writes through it.

        ``written`` holds signature indices of pointers the PTX may store through
        (:func:`autotune_export.ptx.written_params`, mapped to signature indices).
        Outputs are never read-only.
        """
        written = set(written)
        return [i in self.inputs and i not in written for i in self.inputs + self.outputs]


def plan(signature: Sequence[Param]) -> AbiPlan:
    """Split a signature into bindings and constants. Raises AbiError for unsupported scalars."""
    inputs, outputs, scalars = [], [], []
    for i, p in enumerate(signature):
        if p.is_pointer:
            (outputs if p.output else inputs).append(i)
        elif p.type in SUPPORTED_SCALARS:
            scalars.append(i)
        else:
            raise AbiError(
                f"parameter '{p.name}' has type {p.type}; IREE passes 32-bit constants, so only "
                f"{', '.join(SUPPORTED_SCALARS)} scalars are supported"
            )
    if not outputs:
        raise AbiError("the signature marks no pointer as {output}: a dispatch needs at least one result")
    return AbiPlan(tuple(signature), tuple(inputs), tuple(outputs), tuple(scalars))


def layout_attr(read_only: Sequence[bool], num_constants: int) -> str:
    """``#hal.pipeline.layout<...>`` text (IREE 3.x spelling) for the given bindings."""
    bindings = ", ".join(
        "#hal.pipeline.binding<storage_buffer, ReadOnly>" if ro else "#hal.pipeline.binding<storage_buffer>" for ro in read_only
    )
    head = f"constants = {num_constants}, " if num_constants else ""
    return f"#hal.pipeline.layout<{head}bindings = [{bindings}]>"
