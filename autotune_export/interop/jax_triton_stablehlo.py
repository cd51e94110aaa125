"""``jax.export`` StableHLO with jax-triton calls -> IREE input. Each call arrives with the PTX
jax-triton compiled (in its descriptor), so this front end enters the stages at the bundle
(``docs/architecture.md``): per call (:mod:`.jax_triton_call_plan`, reading the call with
:mod:`.jax_triton_custom_call`) the PTX entries put in IREE's binding order
(:class:`autotune_export.cuda.ptx.LinkPart`), one object
(:func:`autotune_export.cuda.bundle.link_object`) and a :class:`~autotune_export.cuda.bundle.Bundle`;
here the bundle written by the one builder (:func:`autotune_export.passes.build_bundle.write_bundle`)
and the call rewritten into a ``flow.dispatch`` with the bindings.
"""

from __future__ import annotations

import os
from typing import Sequence

from iree.compiler import ir
from iree.compiler.dialects import arith

from autotune_export.cuda.targets import TargetError, parse_target
from autotune_export.frontend.reader import SourceFile, new_context, print_module
from autotune_export.interop import jax_triton_proto as proto
from autotune_export.interop.jax_triton_call_plan import CallPlan, plan_call
from autotune_export.interop.jax_triton_custom_call import backend_bytes
from autotune_export.interop.jax_triton_types import JaxTritonError
from autotune_export.ir.walk import walk
from autotune_export.passes import PassContext, run_pipeline
from autotune_export.passes.build_bundle import write_bundle


#: ``call_target_name`` values of jax-triton's custom calls (0.3.x, 0.4.x).
TRITON_CALL_TARGETS = ("triton_kernel_call", "triton_kernel_call_ffi")


def _build_source(plan: CallPlan, ip) -> None:
    """Build the call's ``hal.executable.source`` at ``ip`` (inside its context, at the call's
    location): the bundle written by the one builder
    (:func:`autotune_export.passes.build_bundle.write_bundle`): the one object (PTX string or
    cubin bytes) keyed by the generic CUDA target, the group op of an autotuned call, then one
    export per config with the shared pipeline layout, a count region returning the constant
    grid, the block size and the dynamic shared memory."""
    with plan.loc:
        write_bundle(plan.bundle, ip=ip)


def _rewrite_call(plan: CallPlan) -> None:

    op = plan.op
    with op.context, op.location:
        point = ir.InsertionPoint(op)
        i32 = ir.IntegerType.get_signless(32)
        args = []
        for item in plan.operands:
            if item[0] == "zeros":
                rtype = ir.RankedTensorType(item[1])
                elem = rtype.element_type
                with point:
                    if isinstance(elem, ir.IntegerType):
                        zero = arith.ConstantOp(elem, ir.IntegerAttr.get(elem, 0)).result
                    else:
                        zero = arith.ConstantOp(elem, ir.FloatAttr.get(elem, 0.0)).result
                    args.append(ir.Operation.create("flow.tensor.splat", results=[rtype], operands=[zero], ip=point).result)
            elif item[0] == "clone":
                value = op.operands[item[1]]
                args.append(ir.Operation.create("flow.tensor.clone", results=[value.type], operands=[value], ip=point).result)
            else:
                args.append(op.operands[item[1]])
        for c in plan.constants:
            with point:
                args.append(arith.ConstantOp(i32, ir.IntegerAttr.get(i32, c)).result)
        attrs = {
            "entry_points": ir.ArrayAttr.get([ir.SymbolRefAttr.get([plan.exe, plan.group])]),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(args), 0, 0]),
        }
        if any(t >= 0 for t in plan.tied):
            index = ir.IndexType.get()
            attrs["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(index, t) for t in plan.tied])
        new = ir.Operation.create(
            "flow.dispatch", results=[r.type for r in op.results], operands=args, attributes=attrs, ip=point
        )
        for old, repl in zip(op.results, new.results):
            old.replace_all_uses_with(repl)
        op.erase()


def convert_stablehlo(
    text_or_bytes: str | bytes,
    *,
    target: str | None = None,
    lower: bool = True,
    object_format: str = "ptx",
    ptx_version: str | int | None = None,
    call_targets: Sequence[str] = TRITON_CALL_TARGETS,
    filename: str = "<stablehlo>",
) -> str:
    """Turn a ``jax.export`` module with jax-triton calls into IREE input (text).

    ``text_or_bytes``: ``exported.mlir_module()`` text, or MLIR bytecode of a StableHLO module
    (``ir.Module.parse(bytes)``; the VHLO portable artifact in ``exported.mlir_module_serialized``
    is not readable by IREE's bindings: pass the text). Every ``stablehlo.custom_call`` whose
    target is in ``call_targets`` is replaced by a ``flow.dispatch`` into a new
    ``hal.executable.source`` that embeds the call's PTX (all configs linked into one module):

    * one config: one export; the dispatch names it;
    * several configs (``triton.autotune``): one export per config and a
      ``hal.executable.autotuning.export`` group over them, lowered (``lower=True``, the
      default) by verify-autotuning-groups, emit-autotune-initializer and
      lower-autotuning-dispatch into IREE's condition/fallback chain with ``@__autotune``.

    ``target`` (``"sm_80"``, read by :func:`autotune_export.cuda.targets.parse_target`; one
    of its supported architectures): the GPU the result will run on; configs needing more
    shared memory than it has are dropped, and PTX built for a newer architecture (or
    arch-specific PTX, ``sm_90a``, for another one) is refused.
    ``object_format="cubin"`` embeds a cubin assembled by Triton's ptxas instead of PTX;
    ``ptx_version`` (``"8.6"``, ``"86"`` or ``86``, as ``autotune-export --ptx-version``:
    :func:`autotune_export.cuda.ptx.parse_ptx_version`) rewrites the linked PTX's ``.version``.
    ``lower=False`` returns
    the module with the groups still in the sugared form (the CLI's input).

    Each executable source is built with the bindings (:mod:`autotune_export.ir.builders`,
    :mod:`autotune_export.ir.hal_attrs`) and placed at the top of the module, in call order.
    A binding is ``ReadOnly`` when it is an untied input that no config writes through,
    according to the TTIR the descriptor carries
    (:func:`autotune_export.cuda.ttir.written_params_from_ttir`); without TTIR, or when the
    analysis cannot tell, every pointer counts as written.

    The result is what ``iree-compile --iree-input-type=stablehlo --iree-hal-target-device=cuda
    --iree-cuda-target=sm_80`` accepts. Raises JaxTritonError (an unsupported ``target``
    included; DiagnosticError from the passes).
    """

    if object_format not in ("ptx", "cubin"):
        raise JaxTritonError(f"object_format must be 'ptx' or 'cubin', got {object_format!r}")
    device = None
    if target is not None:
        try:
            device = parse_target(target)
        except TargetError as err:
            raise JaxTritonError(str(err)) from None
    ctx = new_context()
    if isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(text_or_bytes)
        try:
            module = ir.Module.parse(data if data.startswith(b"ML\xefR") else data.decode(), ctx)
        except ir.MLIRError as err:
            raise JaxTritonError(
                f"cannot parse the module: {str(err).splitlines()[0]} (jax.export's mlir_module_serialized is a VHLO "
                "portable artifact; pass exported.mlir_module() text instead)"
            ) from None
    else:
        try:
            module = ir.Module.parse(text_or_bytes, ctx)
        except ir.MLIRError as err:
            raise JaxTritonError(f"cannot parse the module: {err}") from None

    arch_limit = device.max_shared_memory if device is not None else None

    calls = []
    for op in walk(module.operation):
        if op.name != "stablehlo.custom_call":
            continue
        tname = ir.StringAttr(op.attributes["call_target_name"]).value
        if tname not in call_targets:
            continue
        payload = backend_bytes(op)
        if payload is None:
            raise JaxTritonError(f"custom call @{tname} has no backend_config bytes")
        try:
            msg = proto.decode_backend_config(payload)
        except proto.ProtoError as err:
            raise JaxTritonError(f"custom call @{tname} #{len(calls)}: {err}") from None
        calls.append((op, msg))

    plans = []
    for index, (op, msg) in enumerate(calls):
        plans.append(
            plan_call(
                op,
                index,
                msg,
                arch_limit=arch_limit,
                object_format=object_format,
                ptx_version=ptx_version,
                name_prefix="",
                device=device,
            )
        )
    if plans:
        # The executable sources go first in the module, in call order.
        first = next(iter(module.body.operations), None)
        with ctx:
            point = ir.InsertionPoint(first.operation) if first is not None else ir.InsertionPoint(module.body)
            for plan in plans:
                _build_source(plan, point)
    for plan in plans:
        _rewrite_call(plan)
    with ctx, ir.Location.unknown():
        module.operation.verify()
    if lower and plans:
        pctx = PassContext(source=SourceFile(text="", name=filename, base_dir=os.getcwd()), remark=lambda diag: None)
        run_pipeline(
            [
                "zero-fill-outputs",
                "verify-autotuning-groups",
                "emit-autotune-initializer",
                "lower-autotuning-dispatch",
                "split-architectures",
            ],
            pctx,
            module,
            target=target or "sm_80",
        )
    return print_module(module, filename)
