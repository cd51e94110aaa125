"""Layout and calling convention: how a Triton kernel's parameters meet IREE's dispatch ABI.

IREE's CUDA HAL launches an external kernel with one pointer per binding, in binding order,
then one 32-bit value per push constant, each written as 4 bytes into an 8-byte slot that is
not zeroed (notes/iree-hal-facts.md, "Calling convention"). At a ``flow.dispatch`` site the
bindings are the tensor operands in operand order, then each untied result; the constants are
the non-tensor operands in order (IREE's binding rule, :mod:`autotune_export.ir.binding`: this
module applies it to Triton signatures and PTX entries). A Triton kernel takes its parameters in declaration order
(pointers and scalars interleaved, constexprs removed, hidden ``global_scratch`` /
``profile_scratch`` pointers appended since Triton 3.3/3.5).

:func:`plan` maps one onto the other:

* the signature's input pointers become the leading bindings, its ``{output}`` pointers the
  result bindings, in signature order;
* a kernel that needs global scratch (Triton metadata ``global_scratch_size > 0``) gets one
  more binding, the LAST one: an extra untied result of the dispatch, sized
  ``grid x size + align - 1`` bytes at the dispatch site (lower-autotuning-dispatch); the
  kernel rounds the pointer up to ``align`` itself (:func:`autotune_export.cuda.ptx.link`, adapt
  ``align:N``), so IREE's own binding-offset alignment does not matter;
* scalars become constants, one 32-bit constant each (:data:`SCALARS`), except 64-bit scalars
  (``i64``, ``u64``, ``fp64``), which take two: the low then the high 32 bits. The PTX entry is
  adapted to match (:meth:`AbiPlan.adapt`): a narrow parameter (``i1``/``i8`` ``.u8``,
  ``i16`` ``.u16``, ``fp16``/``bf16`` ``.b8[2]``) is declared ``.u32``, so the kernel's
  ``ld.param.b8``/``.b16`` reads the low bytes of the 32-bit constant (little-endian); a 64-bit
  parameter becomes two ``.u32`` parameters that the kernel reassembles with
  ``mov.b64 %rd, {lo, hi}`` where it loaded the original.

At the dispatch site (lower-autotuning-dispatch) an operand of each scalar type becomes its
32-bit constants as :func:`autotune_export.ir.binding.to_constants` builds them; the operand's
type must be the parameter's (:func:`operand_matches`).

:func:`refusal` names, in one line, why a compiled variant cannot be launched by IREE at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from autotune_export.ir import binding_rule
from autotune_export.ir.params import Param, descriptor_refusal
from autotune_export.ir.markers import SCRATCH_ATTR  # re-exported for the passes

__all__ = [
    "AbiError",
    "AbiPlan",
    "ScalarAbi",
    "SCALARS",
    "SUPPORTED_SCALARS",
    "MLIR_ELEMENT_TYPES",
    "plan",
    "layout_attr",
    "constant_slots",
    "refusal",
    "SCRATCH_ATTR",
]


@dataclass(frozen=True)
class ScalarAbi:
    """How one Triton scalar type travels.

    ``bits``: the value's width; ``slots``: 32-bit IREE constants it takes (2 for 64-bit
    values: low half first); ``adapt``: how the PTX parameter is rewritten ("" keeps it,
    ``widen`` declares it ``.u32``, ``split`` makes two ``.u32``); ``ptx``: the PTX parameter
    types Triton declares for it (checked, so a surprise is an error rather than garbage).
    """

    triton: str
    bits: int
    slots: int
    adapt: str
    ptx: tuple[str, ...]


def _scalars() -> dict[str, ScalarAbi]:
    table = {}
    for name, bits, adapt, ptx in (
        ("i1", 1, "widen", (".u8", ".s8", ".b8", ".pred")),
        ("u1", 1, "widen", (".u8", ".s8", ".b8", ".pred")),  # Triton 3.x's name of a Python bool
        ("i8", 8, "widen", (".u8", ".s8", ".b8")),
        ("u8", 8, "widen", (".u8", ".s8", ".b8")),
        ("i16", 16, "widen", (".u16", ".s16", ".b16")),
        ("u16", 16, "widen", (".u16", ".s16", ".b16")),
        ("fp16", 16, "widen", (".b8[2]", ".b16", ".f16", ".u16")),
        ("bf16", 16, "widen", (".b8[2]", ".b16", ".bf16", ".u16")),
        ("i32", 32, "", (".u32", ".s32", ".b32")),
        ("u32", 32, "", (".u32", ".s32", ".b32")),
        ("fp32", 32, "", (".f32", ".b32", ".u32")),
        ("i64", 64, "split", (".u64", ".s64", ".b64")),
        ("u64", 64, "split", (".u64", ".s64", ".b64")),
        ("fp64", 64, "split", (".f64", ".b64", ".u64")),
    ):
        table[name] = ScalarAbi(name, bits, 2 if bits == 64 else 1, adapt, ptx)
    return table


#: Triton scalar type -> how it is passed (see the module docstring).
SCALARS: dict[str, ScalarAbi] = _scalars()

#: The scalar types a signature may use (kept for callers of the first version of this module).
SUPPORTED_SCALARS = tuple(SCALARS)

#: Triton element type -> MLIR element type (for tensors at dispatch sites and fake data).
MLIR_ELEMENT_TYPES = {
    "i1": "i1",
    "u1": "i1",
    "i8": "i8",
    "i16": "i16",
    "i32": "i32",
    "i64": "i64",
    "u8": "i8",
    "u16": "i16",
    "u32": "i32",
    "u64": "i64",
    "fp8e4nv": "f8E4M3FN",
    "fp8e5": "f8E5M2",
    "fp16": "f16",
    "bf16": "bf16",
    "fp32": "f32",
    "fp64": "f64",
}


class AbiError(ValueError):
    """A signature that IREE's dispatch ABI cannot carry (message names the parameter)."""


@dataclass(frozen=True)
class AbiPlan:
    """Where each kernel parameter goes.

    ``inputs``/``outputs``/``scalars``: signature indices of each class, in signature order:
    ``inputs`` are the pointers bound to the dispatch's tensor operands (the plain pointers and
    the ``{output}`` pointers written in place, whose operand a result is tied to: ``tied``),
    ``outputs`` those bound to its untied results.
    ``scratch``: the kernel's hidden ``global_scratch`` pointer is passed as the last binding.
    ``order`` lists signature indices in IREE's order (bindings, then constants; the scratch
    binding, having no signature index, is not in it: see :meth:`link_order`).
    """

    signature: tuple[Param, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    scalars: tuple[int, ...]
    scratch: bool = False
    tied: tuple[int, ...] = ()

    @property
    def order(self) -> tuple[int, ...]:
        return self.inputs + self.outputs + self.scalars

    @property
    def num_bindings(self) -> int:
        return len(self.inputs) + len(self.outputs) + int(self.scratch)

    @property
    def num_constants(self) -> int:
        return sum(SCALARS[self.signature[i].type].slots for i in self.scalars)

    def constant_offsets(self) -> list[int]:
        """Per scalar (in :attr:`scalars` order): the ordinal of its first 32-bit constant."""
        out, at = [], 0
        for i in self.scalars:
            out.append(at)
            at += SCALARS[self.signature[i].type].slots
        return out

    def binding_params(self) -> list[Param]:
        return [self.signature[i] for i in self.inputs + self.outputs]

    def read_only(self, written: Iterable[int]) -> list[bool]:
        """Per binding: True when the kernel never writes through it.

        ``written`` holds signature indices of pointers the PTX may store through
        (:func:`autotune_export.cuda.ttir.written_params_from_ttir`, mapped to signature indices).
        Outputs and the scratch binding are never read-only.
        """
        written = set(written)
        flags = [i in self.inputs and i not in self.tied and i not in written for i in self.inputs + self.outputs]
        return flags + [False] * int(self.scratch)

    def link_order(self, num_ptx_params: int) -> tuple[list[int], list[int], dict[int, str]]:
        """``(param_order, drop, adapt)`` for :class:`autotune_export.cuda.ptx.LinkPart`.

        ``num_ptx_params`` is the length of the entry's parameter list: the signature's
        parameters, then Triton's hidden pointers (``global_scratch`` first). With
        :attr:`scratch`, the hidden ``global_scratch`` pointer is kept as the last binding (also
        in variants that do not use it, so that every variant has the same layout); the other
        hidden pointers are dropped. ``adapt`` maps parameter indices to ``widen``/``split``
        for scalars whose PTX parameter is not one 32-bit value.
        """
        nsig = len(self.signature)
        if num_ptx_params < nsig:
            raise AbiError(f"the PTX entry has {num_ptx_params} parameters, the signature {nsig}")
        hidden = list(range(nsig, num_ptx_params))
        keep = []
        if self.scratch:
            if not hidden:
                raise AbiError("the kernel needs global scratch but its PTX entry has no hidden global_scratch parameter")
            keep = [hidden.pop(0)]
        order = list(self.inputs + self.outputs) + keep + list(self.scalars)
        adapt = {i: SCALARS[self.signature[i].type].adapt for i in self.scalars if SCALARS[self.signature[i].type].adapt}
        return order, hidden, adapt

    def check_ptx_types(self, ptx_types: Sequence[str]) -> None:
        """Check that each scalar's PTX parameter type is what Triton declares for its type
        (so the adaptation reads the right bits). ``ptx_types[i]`` is the type of parameter
        ``i`` as :class:`autotune_export.cuda.ptx.PtxParam` spells it. Raises AbiError."""
        for i in self.scalars:
            p = self.signature[i]
            abi = SCALARS[p.type]
            got = ptx_types[i]
            if got not in abi.ptx:
                raise AbiError(
                    f"parameter '{p.name}' ({p.type}) is a {got} parameter in the PTX; expected "
                    f"{' or '.join(abi.ptx)}: the signature's type does not match the kernel's"
                )


def plan(signature: Sequence[Param], *, scratch: bool = False, tied: Iterable[str] = ()) -> AbiPlan:
    """Split a signature into bindings and constants.

    IREE binds a dispatch's tensor operands first, in operand order, then its untied results
    (a result tied to an operand, ``-> %x``, reuses that operand's binding): IREE's binding
    rule, whose one home is :mod:`autotune_export.ir.binding`. So the pointers bound to operands
    come first: the plain pointers and the ``{output}`` pointers named in ``tied`` (written in
    place: the dispatch passes their tensor as an operand and ties a result to it), in the
    order ``tied`` gives when it is a tuple of every operand-bound pointer
    (:func:`autotune_export.ir.binding.tied_outputs`), else in signature order; then the
    other ``{output}`` pointers, bound to the untied results
    (:func:`autotune_export.ir.binding_rule.pointer_order`).

    ``none`` parameters (the call passes None: Triton's JIT makes them constexpr None, so they
    are not parameters of the PTX entry) are neither: they are left out, and the plan's
    :attr:`AbiPlan.signature` and indices are those of the remaining parameters.

    Raises AbiError for a scalar type IREE cannot carry, a tensor-descriptor parameter, a
    specialization hint on a float, or a signature without outputs.
    """
    signature = [p for p in signature if not p.is_none]
    # IREE's binding order (autotune_export.ir.binding_rule.pointer_order): the pointers bound to the
    # tensor operands, then those bound to the untied results.
    as_operands, as_results = binding_rule.pointer_order(signature, tied if isinstance(tied, (tuple, list)) else frozenset(tied))
    index = {id(p): i for i, p in enumerate(signature)}
    inputs, outputs = [index[id(p)] for p in as_operands], [index[id(p)] for p in as_results]
    scalars = []
    for i, p in enumerate(signature):
        if p.is_pointer:
            continue
        refusal = descriptor_refusal(p.name, p.type)
        if refusal:
            raise AbiError(refusal)
        if p.type not in SCALARS:
            raise AbiError(
                f"parameter '{p.name}' has type {p.type}; IREE passes buffers and 32-bit constants, "
                f"so scalars must be one of {', '.join(SCALARS)}"
            )
        if p.hint and p.type.startswith(("fp", "bf")):
            raise AbiError(
                f"parameter '{p.name}' ({p.type}) has hint ':{p.hint}'; specialization hints apply to integers and pointers"
            )
        if p.output:
            raise AbiError(f"parameter '{p.name}' is a scalar ({p.type}); only pointers can be {{output}}")
        scalars.append(i)
    tied_indices = tuple(i for i in inputs if signature[i].output)
    if not outputs and not tied_indices:
        raise AbiError("the signature marks no pointer as {output}: a dispatch needs at least one result")
    return AbiPlan(tuple(signature), tuple(inputs), tuple(outputs), tuple(scalars), scratch, tied_indices)


def layout_attr(read_only: Sequence[bool], num_constants: int) -> str:
    """``#hal.pipeline.layout<...>`` text (IREE 3.x spelling) for the given bindings."""
    bindings = ", ".join(
        "#hal.pipeline.binding<storage_buffer, ReadOnly>" if ro else "#hal.pipeline.binding<storage_buffer>" for ro in read_only
    )
    head = f"constants = {num_constants}, " if num_constants else ""
    return f"#hal.pipeline.layout<{head}bindings = [{bindings}]>"


def constant_slots(mlir_type: str) -> int | None:
    """32-bit IREE constants a dispatch operand of MLIR type ``mlir_type`` becomes, or None
    when IREE's ABI has no spelling for it (:func:`autotune_export.ir.binding_rule.constant_slots`)."""
    return binding_rule.constant_slots(mlir_type)


def operand_matches(param: Param, mlir_type: str) -> bool:
    """Whether a dispatch operand of ``mlir_type`` carries scalar parameter ``param``: its
    type is :data:`autotune_export.ir.binding_rule.SCALAR_OPERAND_TYPES` of the parameter's (an
    ``f32`` for ``fp32``, an ``i64`` for ``i64``/``u64``...). Another type of the same width
    would reach the kernel as the wrong bits (a float read as an integer), so it does not."""
    return binding_rule.SCALAR_OPERAND_TYPES.get(param.type) == str(mlir_type).strip()


def refusal(metadata: Mapping, ptx_params: Sequence | None = None, arch: int | None = None) -> str | None:
    """Why IREE cannot launch a compiled Triton variant, in one line; None when it can.

    ``metadata``: Triton's compiled metadata (or the subset autotune_export caches);
    ``ptx_params``: the entry's :class:`autotune_export.cuda.ptx.PtxParam` list (signature
    parameters first), to find by-value parameters other than 2-byte fp16/bf16 scalars.
    IREE's CUDA HAL launches with plain ``cuLaunchKernel``: a grid of blocks, dynamic shared
    memory, buffer pointers and 32-bit constants, nothing else. ``launch_pdl`` is not refused:
    launches are stream-ordered, so the previous grid has finished before the kernel starts and
    its ``griddepcontrol.wait`` has nothing to wait for (correct, without PDL's overlap).
    """
    num_ctas = int(metadata.get("num_ctas") or 1)
    if num_ctas > 1:
        return f"num_ctas = {num_ctas}: IREE launches no thread-block clusters"
    if metadata.get("launch_cooperative_grid"):
        return "launch_cooperative_grid: the kernel needs a cooperative launch (grid-wide sync), which IREE does not do"
    if metadata.get("tensordesc_meta"):
        return (
            "the kernel takes host-side tensor descriptors (TMA CUtensorMap by value), which IREE's dispatch ABI cannot "
            "carry; use device-side tl.make_tensor_descriptor"
        )
    if int(metadata.get("profile_scratch_size") or 0) > 0:
        return f"needs {metadata['profile_scratch_size']} bytes of profile scratch per program (instrumentation), which IREE does not pass"
    tmem = int(metadata.get("tmem_size") or 0)
    if tmem and arch is not None and arch < 100:
        return f"uses {tmem} bytes of tensor memory, which sm_{arch} does not have"
    for p in ptx_params or ():
        t = getattr(p, "ptx_type", "")
        if "[" in t and t != ".b8[2]":
            return (
                f"PTX parameter {p.name} is a by-value {t} block (a host-side TMA descriptor): IREE passes only buffer "
                "pointers and 32-bit constants"
            )
    return None
