"""The module of one ``triton_call`` / PyTorch-style launch, built with the bindings: the call's
typed arguments (:class:`CallArg`) and :func:`host_text`, which writes the group's
``hal.executable.source`` and the ``util.func`` that dispatches it (static scalars as
constants, outputs tied to a zero splat, a clone of the aliased input or the host's own
argument). Used by :func:`autotune_export.interop.jax_triton_call.call_to_mlir`."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Sequence

from autotune_export import contract
from autotune_export.frontend.reader import new_context, print_module
from autotune_export.interop.jax_triton_types import ELEMENT_TYPES, JaxTritonError, as_i32, tensor_type
from autotune_export.ir import builders
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import NONE_TYPE
from iree.compiler import ir
from iree.compiler.dialects import arith


@dataclass
class CallArg:
    """One argument or output of the call, typed: its position among the kernel's runtime
    parameters (outputs after the arguments), parameter ``name``, ``value`` (the array spec, the
    static scalar, or None), whether it is an array, its Triton type (``*fp32``, ``i32``,
    ``none``...), and for an array its static ``shape`` and element type ``elem``."""

    index: int  # position among the kernel's runtime parameters
    name: str
    value: Any
    is_array: bool
    triton_type: str
    shape: tuple[int, ...] = ()
    elem: str = ""

    @property
    def tensor_type(self) -> str:
        return tensor_type(self.shape, self.elem)


def _strided_tensors(takes, out_args, host_outs) -> list:
    """The :class:`~autotune_export.contract.StridedTensor` of each array argument that is a
    strided view (``a.value.span``, set by launch_to_mlir), with the host function's argument
    (its place in ``takes``) and result (its place among ``out_args``) that carry it."""
    out = []
    for a in list(takes) + [o for o in out_args if o not in takes]:
        span = getattr(a.value, "span", None)
        if span is None or not span.strided:
            continue
        argument = takes.index(a) if a in takes else None
        result = out_args.index(a) if a in out_args else None
        out.append(
            contract.StridedTensor(a.name, argument, result, list(span.view_shape), list(span.strides), span.kind, a.tensor_type)
        )
    return out


def _ranked_tensor_type(a: CallArg) -> ir.RankedTensorType:
    """``a``'s tensor type (static shape, element type of :data:`DTYPES`), made with the
    bindings in the current context."""
    return ir.RankedTensorType.get(list(a.shape), ELEMENT_TYPES[a.elem]())


def _scalar_constant(a: CallArg) -> ir.Value:
    """``arith.constant`` of static scalar ``a`` at the current insertion point: ``i1``, a
    32-bit integer as signless ``i32`` (a ``u32`` by its bits), a 64-bit one as ``i64``, ``fp32``
    (the value rounded to f32, as the launch passes it) or ``fp64``. Raises JaxTritonError for
    another type."""
    t = a.triton_type
    if t == "i1":
        return arith.ConstantOp(
            ir.IntegerType.get_signless(1), ir.IntegerAttr.get(ir.IntegerType.get_signless(1), int(bool(a.value)))
        ).result
    if t in ("i32", "u32"):
        i32 = ir.IntegerType.get_signless(32)
        return arith.ConstantOp(i32, ir.IntegerAttr.get(i32, as_i32(int(a.value)))).result
    if t in ("i64", "u64"):
        i64 = ir.IntegerType.get_signless(64)
        v = int(a.value) & (2**64 - 1)
        return arith.ConstantOp(i64, ir.IntegerAttr.get(i64, v - 2**64 if v >= 2**63 else v)).result
    if t == "fp32":
        f32 = ir.F32Type.get()
        return arith.ConstantOp(f32, ir.FloatAttr.get(f32, struct.unpack("<f", struct.pack("<f", float(a.value)))[0])).result
    if t == "fp64":
        f64 = ir.F64Type.get()
        return arith.ConstantOp(f64, ir.FloatAttr.get(f64, float(a.value))).result
    raise JaxTritonError(f"cannot pass static {t} argument '{a.name}'")


def _zero_splat(rtype: ir.RankedTensorType) -> ir.Value:
    """``flow.tensor.splat`` of a zero of ``rtype``'s element type, at the current insertion point."""
    elem = rtype.element_type
    if isinstance(elem, ir.IntegerType):
        zero = arith.ConstantOp(elem, ir.IntegerAttr.get(elem, 0)).result
    else:
        zero = arith.ConstantOp(elem, ir.FloatAttr.get(elem, 0.0)).result
    return ir.Operation.create("flow.tensor.splat", results=[rtype], operands=[zero]).result


def host_text(
    group: AutotuneGroup,
    exe: str,
    func: str,
    call_args,
    out_args,
    aliases,
    zeroed,
    target,
    how,
    origin: str,
    host_outs: Sequence[str] = (),
) -> str:
    """The module of one call, built with the bindings and printed (the group in its sugared
    form): ``hal.executable.source @exe`` holding ``group``, and ``util.func public @func``
    that dispatches it. The host function takes the array arguments (in call order; with
    ``host_outs``, those outputs too, every tensor in kernel parameter order) and returns the
    outputs in kernel order. Dispatch operands: the arguments in kernel order (static scalars
    as constants, None left out), then, when any output is tied (``zeroed``, ``aliases``,
    ``host_outs``), one operand per output that its result is tied to: a zero splat (zeroed),
    a clone of the aliased input, the host's own argument (``host_outs``), else an empty
    tensor."""
    from autotune_export.ir import functions

    arrays = [a for a in call_args if a.is_array]
    alias_of = {dst: src for src, dst in aliases.items()}
    takes = arrays + [o for o in out_args if o.name in host_outs]
    if host_outs:
        order = [p.name for p in group.signature]
        takes.sort(key=lambda a: order.index(a.name))  # kernel parameter order
    tie_all = bool(zeroed) or bool(aliases) or bool(host_outs)
    header = [
        f"// Generated by {origin} from kernel '{group.triton[1]}'.",
        f"// Compile: autotune-export THIS.mlir --emit vmfb --target {target} -o OUT.vmfb",
        f"// Grid: {how} ({len(group.configs)} config{'s' if len(group.configs) != 1 else ''}).",
    ]
    for a in call_args + out_args:
        span = getattr(a.value, "span", None) if a.is_array else None
        if span is not None and span.strided:
            header.append(
                f"// Strided: '{a.name}' is a {span.describe()} ({span.kind}); the module's "
                f"{'result' if a in out_args and a.name not in host_outs else 'argument'} is its storage "
                f"span from its first element, {a.tensor_type}; the strides are passed as given "
                '(docs/call-sites.md, "Strided tensors").'
            )
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        top = ir.InsertionPoint(module.body)
        source = builders.executable_source(exe, ip=top)
        group.build(ip=builders.source_block(source))
        in_types = [_ranked_tensor_type(a) for a in takes]
        res_types = [_ranked_tensor_type(o) for o in out_args]

        def body(params: list) -> list:
            value_of = {id(a): v for a, v in zip(takes, params)}
            operands = []
            for a in call_args:
                if a.triton_type == NONE_TYPE:
                    continue  # a constexpr None: not passed
                operands.append(value_of[id(a)] if a.is_array else _scalar_constant(a))
            tied = []
            for j, o in enumerate(out_args):
                if not tie_all:
                    tied.append(-1)
                    continue
                rtype = res_types[j]
                if o.name in host_outs:
                    operands.append(value_of[id(o)])
                elif j in zeroed:
                    operands.append(_zero_splat(rtype))
                elif j in alias_of:
                    src = value_of[id(arrays[alias_of[j]])]
                    operands.append(ir.Operation.create("flow.tensor.clone", results=[rtype], operands=[src]).result)
                else:
                    operands.append(ir.Operation.create("flow.tensor.empty", results=[rtype], operands=[]).result)
                tied.append(len(operands) - 1)
            attrs = {
                "entry_points": ir.ArrayAttr.get([ir.SymbolRefAttr.get([exe, group.name])]),
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(operands), 0, 0]),
            }
            if tie_all:
                attrs["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), t) for t in tied])
            dispatch = ir.Operation.create("flow.dispatch", results=res_types, operands=operands, attributes=attrs)
            return list(dispatch.results)

        strided = _strided_tensors(takes, out_args, host_outs)
        attributes = None
        if strided:
            attributes = {
                "iree.reflection": ir.DictAttr.get({contract.STRIDED_KEY: ir.StringAttr.get(contract.encode_strided(strided))})
            }
        functions.util_func(func, in_types, res_types, body, attributes=attributes, ip=top)
        module.operation.verify()
        lines = print_module(module).rstrip("\n").split("\n")
        if lines[0] == "module {" and lines[-1] == "}":  # the top-level ops without the implicit module
            lines = [line[2:] if line.startswith("  ") else line for line in lines[1:-1]]
            lines = [x for i, line in enumerate(lines) for x in ([line, ""] if line == "}" and i + 1 < len(lines) else [line])]
        return "\n".join(header) + "\n\n" + "\n".join(lines) + "\n"
