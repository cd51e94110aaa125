"""``jax.export`` StableHLO with jax-triton calls -> IREE input. Each call arrives with the PTX
jax-triton compiled (in its descriptor), so this front end enters the stages at the bundle
(``docs/architecture.md``): the PTX entries put in IREE's binding order
(:class:`autotune_export.cuda.ptx.LinkPart`), one object (:func:`autotune_export.cuda.bundle.link_object`),
a :class:`~autotune_export.cuda.bundle.Bundle` written by the one builder
(:func:`autotune_export.passes.build_bundle.write_bundle`), and the call rewritten into a
``flow.dispatch`` with the bindings.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from typing import Any, Sequence

from autotune_export.ir import binding as _binding
from iree.compiler import ir
from autotune_export.cuda import ptx as ptx_mod
from autotune_export.cuda.bundle import Bundle, ExportSpec, GroupSpec, link_object
from autotune_export.cuda.targets import TargetError
from autotune_export.cuda.ttir import written_params_from_ttir
from autotune_export.cuda.targets import parse_target
from iree.compiler.dialects import arith
from autotune_export.frontend.reader import SourceFile, new_context, print_module
from autotune_export.interop import jax_triton_proto as proto
from autotune_export.ir.walk import walk
from autotune_export.passes import PassContext, run_pipeline
from autotune_export.passes.build_bundle import write_bundle
from autotune_export.interop.jax_triton_types import JaxTritonError, as_i32, f32_bits


#: ``call_target_name`` values of jax-triton's custom calls (0.3.x, 0.4.x).
TRITON_CALL_TARGETS = ("triton_kernel_call", "triton_kernel_call_ffi")


# --------------------------------------------------------------------------------------------
# jax.export StableHLO -> IREE input


@dataclass
class _Variant:
    """One config of a jax-triton call: its PTX entry and launch."""

    call: Any  # TritonKernelCall
    description: str
    entry: str = ""
    ptx: str = ""
    skipped: str | None = None


def _attrs(op) -> dict:
    return {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}


def _backend_bytes(op) -> bytes | None:

    attrs = _attrs(op)
    for key in ("backend_config", "mhlo.backend_config"):
        attr = attrs.get(key)
        if attr is None:
            continue
        if isinstance(attr, ir.StringAttr):
            return attr.value_bytes
        if isinstance(attr, ir.DictAttr):
            d = ir.DictAttr(attr)
            if "opaque" in d:
                return ir.StringAttr(d["opaque"]).value_bytes
    return None


#: Mnemonic of the elements of a custom call's ``output_operand_aliases``.
_ALIAS_ATTR = "#stablehlo.output_operand_alias<"


def _aliases_of(op) -> dict[int, int]:
    """output index -> operand index, from the custom call's ``output_operand_aliases``.

    The attribute is an ``ArrayAttr`` (read with the bindings) of
    ``#stablehlo.output_operand_alias<output_tuple_indices = [i], operand_index = n,
    operand_tuple_indices = []>``. IREE's Python bindings have no StableHLO attribute classes,
    so the parameters of each element, the text between its ``<`` and the closing ``>``, are
    read as a builtin dictionary attribute (``ir.DictAttr`` of an ``ArrayAttr`` and an
    ``IntegerAttr``). An empty ``output_tuple_indices`` (a call with one, non-tuple result)
    means output 0. Raises JaxTritonError for an element of another kind.
    """

    attrs = _attrs(op)
    out: dict[int, int] = {}
    if "output_operand_aliases" not in attrs:
        return out
    with op.context:
        for elem in ir.ArrayAttr(attrs["output_operand_aliases"]):
            text = str(elem)
            if not (text.startswith(_ALIAS_ATTR) and text.endswith(">")):
                raise JaxTritonError(f"output_operand_aliases: expected {_ALIAS_ATTR}...>, got {text[:80]}")
            try:
                fields = ir.DictAttr(ir.Attribute.parse("{" + text[len(_ALIAS_ATTR) : -1] + "}"))
                outputs = (
                    [ir.IntegerAttr(i).value for i in ir.ArrayAttr(fields["output_tuple_indices"])]
                    if "output_tuple_indices" in fields
                    else []
                )
                operand = ir.IntegerAttr(fields["operand_index"]).value
            except (ir.MLIRError, KeyError, ValueError, TypeError):
                raise JaxTritonError(f"output_operand_aliases: cannot read {text[:120]}") from None
            out[outputs[0] if outputs else 0] = int(operand)
    return out


def _config_fields(description: str) -> dict[str, str]:
    """The ``KEY: VALUE`` items of jax-triton's config description, in order.

    jax-triton describes each config of an autotuned call by Triton's ``str(triton.Config)``:
    ``"BLOCK: 128, num_warps: 4, num_ctas: 1, num_stages: 2, maxnreg: None"`` (the constexpr
    kwargs, then the options), items joined by ``", "``. Values are kept as text (stripped); an
    item without ``:`` or whose key is not an identifier is skipped, and a value holding a
    comma (a tuple) keeps only its first part.
    """
    out: dict[str, str] = {}
    for item in description.split(","):
        key, sep, value = item.partition(":")
        key = key.strip()
        if sep and key.isidentifier() and value.strip():
            out[key] = value.strip()
    return out


#: Config description keys that are Triton options, not constexpr values.
_OPTION_KEYS = (
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "ir_override",
    "num_buffers_warp_spec",
    "num_consumer_groups",
    "reg_dec_producer",
    "reg_inc_consumer",
)


def _variant_suffix(description: str, k: int) -> str:
    """``0_128_w4_s2``: config ``k``'s suffix of its export name, from jax-triton's description
    (see :func:`_config_fields`): ``k``, the constexpr values joined by ``x`` (``.`` spelled
    ``p``, ``-`` spelled ``m``, other non-alphanumerics dropped, ``None`` left out), then
    ``_wN`` / ``_sN`` for num_warps / num_stages. Just ``k`` when the description has no items."""
    pairs = _config_fields(description)
    if not pairs:
        return str(k)
    consts = [v for key, v in pairs.items() if key not in _OPTION_KEYS]
    body = "x".join(re.sub(r"[^A-Za-z0-9]", "", c.replace(".", "p").replace("-", "m")) for c in consts if c not in ("None",))
    tail = "".join(f"_{t}{pairs[key]}" for key, t in (("num_warps", "w"), ("num_stages", "s")) if key in pairs)
    return f"{k}" + (f"_{body}" if body else "") + tail


_REG_BITS = (("%rd", 64), ("%fd", 64), ("%rs", 16), ("%rq", 128), ("%hh", 32), ("%r", 32), ("%f", 32), ("%h", 16))


def _bake_scalar(ptx: str, param: str, bits: int, nbytes: int) -> str:
    """Replace every ``ld.param.T %reg, [param];`` by ``mov.bN %reg, VALUE;``.

    ``bits`` is the value's bit pattern (``nbytes`` wide), moved at the width of the register.
    Raises JaxTritonError when the parameter is used in another way.
    """
    pat = re.compile(r"ld\.param\.([a-z]+)(\d+)\s+(%[A-Za-z0-9_$]+)\s*,\s*\[\s*" + re.escape(param) + r"\s*\]\s*;")

    def repl(m):
        reg = m.group(3)
        width = next((w for prefix, w in _REG_BITS if reg.startswith(prefix) and reg[len(prefix) :][:1].isdigit()), None)
        if width is None:
            raise JaxTritonError(f"cannot bake static parameter {param}: unknown register class of {reg}")
        value = bits & ((1 << (8 * nbytes)) - 1)
        if width < 8 * nbytes:
            value &= (1 << width) - 1
        return f"mov.b{width} {reg}, {value};"

    out = pat.sub(repl, ptx)
    body = out.split(")", 1)[1] if ")" in out else out
    if re.search(r"(?<![A-Za-z0-9_$])" + re.escape(param) + r"(?![A-Za-z0-9_$])", body):
        raise JaxTritonError(f"cannot bake static parameter {param}: the kernel uses it other than by ld.param")
    return out


def _bits_of(kind: str, value: Any) -> tuple[int, int]:
    if kind == "bool_":
        return int(bool(value)), 1
    if kind in ("i64", "u64"):
        return int(value) & (2**64 - 1), 8
    if kind == "f64":
        return struct.unpack("<Q", struct.pack("<d", float(value)))[0], 8
    if kind in ("i32", "u32"):
        return int(value) & 0xFFFFFFFF, 4
    if kind == "f32":
        return f32_bits(value), 4
    raise JaxTritonError(f"unknown scalar parameter kind {kind}")


@dataclass
class _CallPlan:
    """What one jax-triton custom call becomes: the executable source to build
    (:func:`_build_source`, from ``bundle``: its objects, exports and group) and the
    ``flow.dispatch`` replacing the call (:func:`_rewrite_call`).

    ``group``: the symbol the dispatch names (the group of an autotuned call, else the single
    export). ``operands``: per dispatch tensor operand, ``("operand", i)``, ``("zeros", type)``
    or ``("clone", i)``; ``constants``: the 32-bit constants (signed i32 values); ``tied``: per
    result, the dispatch operand it is tied to or -1. ``loc``: the custom call's location.
    """

    op: Any
    index: int
    exe: str
    group: str
    variants: list[_Variant]
    loc: Any
    bundle: Bundle
    operands: list  # ("operand", i) | ("zeros", type) | ("clone", i)
    constants: list[int]
    tied: list[int]  # per result: argument index or -1


def _plan_call(
    op,
    index: int,
    msg,
    *,
    arch_limit: int | None,
    object_format: str,
    ptx_version: str | None,
    name_prefix: str,
    device: Any | None,
) -> _CallPlan:
    """Plan the rewrite of custom call ``op`` (the ``index``-th jax-triton call) whose decoded
    descriptor is ``msg``. ``device`` (a :class:`autotune_export.cuda.targets.CudaTarget`, or
    None) is the GPU the result runs on: PTX that cannot run there is refused; configs needing
    more than ``arch_limit`` bytes of shared memory are skipped. Raises JaxTritonError."""

    kind = msg.WhichOneof("value")
    if kind == "kernel_call":
        raw = [(msg.kernel_call, "")]
    else:
        raw = [(c.kernel_call, c.description) for c in msg.autotuned_kernel_call.configs]
    if not raw:
        raise JaxTritonError(f"triton call {index} has no configs")
    kname = re.sub(r"[^A-Za-z0-9_]", "_", raw[0][0].kernel.kernel_name or "triton_kernel")
    loc = f"triton call {index} ('{raw[0][0].kernel.kernel_name}')"
    operands = list(op.operands)
    n_in, n_out = len(operands), len(op.results)
    aliases = _aliases_of(op)  # output -> operand

    # Parameters: identical kinds (and scalar values) across configs.
    first = raw[0][0].parameters
    kinds = [p.WhichOneof("value") for p in first]
    for call, _ in raw[1:]:
        if [p.WhichOneof("value") for p in call.parameters] != kinds:
            raise JaxTritonError(f"{loc}: configs disagree on the kernel parameters")
    array_params = [i for i, kd in enumerate(kinds) if kd == "array"]
    if len(array_params) == n_in + n_out:
        own_alias_param = True  # 0.3.x: every output has its own pointer
    elif len(array_params) == n_in + n_out - len(aliases):
        own_alias_param = False  # 0.4.x: an aliased output is its input's pointer
    else:
        raise JaxTritonError(
            f"{loc}: the descriptor lists {len(array_params)} array parameters, but the call has {n_in} operands and {n_out} results"
        )
    zeroed: set[int] = set()  # output indices
    param_of_output: dict[int, int] = {}
    param_of_input = {i: array_params[i] for i in range(n_in)}
    rest = array_params[n_in:]
    j = 0
    for o in range(n_out):
        if o in aliases and not own_alias_param:
            continue
        param_of_output[o] = rest[j]
        j += 1
    for call, _ in raw:
        for o, pidx in param_of_output.items():
            if call.parameters[pidx].array.bytes_to_zero:
                zeroed.add(o)
        for i, pidx in param_of_input.items():
            if call.parameters[pidx].array.bytes_to_zero:
                raise JaxTritonError(f"{loc}: input {i} is to be zeroed; only outputs can be")

    # Operands of the dispatch: call operands, then one tensor per tied output.
    # Operands are kept as indices into the call's operands: values are read when rewriting,
    # after earlier calls (whose results this one may use) were replaced.
    disp_operands: list = [("operand", i) for i in range(n_in)]
    tied = [-1] * n_out
    binding_of_param: dict[int, int] = {pidx: i for i, pidx in param_of_input.items()}
    for o in range(n_out):
        rtype = op.results[o].type
        if o in zeroed:
            disp_operands.append(("zeros", rtype))
        elif o in aliases and own_alias_param:
            disp_operands.append(("clone", aliases[o]))
        elif o in aliases:
            tied[o] = aliases[o]
            continue
        else:
            continue
        tied[o] = len(disp_operands) - 1
    # IREE's binding rule (autotune_export.ir.binding): a tied output writes through its
    # operand's binding, the untied ones through bindings after the tensor operands.
    slots = _binding.result_bindings(tied, range(len(disp_operands)))
    for o, pidx in param_of_output.items():
        binding_of_param[pidx] = slots[o]
    n_bindings = len(disp_operands) + sum(1 for t in tied if t < 0)

    # Scalars: 32-bit ones are constants, the others are baked into the PTX.
    constants: list[int] = []
    const_params: list[int] = []
    baked: list[tuple[int, int, int]] = []  # (param index, bits, nbytes)
    for pidx, kd in enumerate(kinds):
        if kd == "array":
            continue
        values = {repr(getattr(call.parameters[pidx], kd)) for call, _ in raw}
        if len(values) != 1:
            raise JaxTritonError(f"{loc}: configs pass different values to scalar parameter {pidx}")
        bits, nbytes = _bits_of(kd, getattr(first[pidx], kd))
        if kd in ("i32", "u32", "f32"):
            constants.append(as_i32(bits))
            const_params.append(pidx)
        else:
            baked.append((pidx, bits, nbytes))
    order_known = [None] * n_bindings
    for pidx, b in binding_of_param.items():
        order_known[b] = pidx
    order = order_known + const_params
    if any(o is None for o in order):  # pragma: no cover - bindings are complete by construction
        raise JaxTritonError(f"{loc}: internal error: unmapped binding")

    variants: list[_Variant] = []
    written: set[int] = set()
    parts = []
    nparams = len(kinds)
    for k, (call, desc) in enumerate(raw):
        kern = call.kernel
        v = _Variant(call, desc)
        variants.append(v)
        ptx = kern.ptx
        if not ptx:
            v.skipped = "the descriptor carries no PTX (a ROCm kernel?)"
            continue
        if kern.HasField("num_ctas") and kern.num_ctas > 1:
            v.skipped = f"num_ctas = {kern.num_ctas} needs a cluster launch, which IREE's CUDA HAL does not do"
            continue
        if kern.HasField("global_scratch_size") and kern.global_scratch_size > 0:
            v.skipped = f"needs {kern.global_scratch_size} bytes of global scratch per program, which IREE does not pass"
            continue
        if arch_limit is not None and kern.shared_mem_bytes > arch_limit:
            v.skipped = f"needs {kern.shared_mem_bytes} bytes of shared memory, over the target's {arch_limit}"
            continue
        try:
            entry = ptx_mod.parse_entry(ptx)
        except ptx_mod.PtxError as err:
            raise JaxTritonError(f"{loc}, config {k}: {err}") from None
        if device is not None:
            try:
                runs = _arch_runs_on(entry.target, device)
            except TargetError as err:
                raise JaxTritonError(f"{loc}, config {k}: the PTX's .target: {err}") from None
            if not runs:
                raise JaxTritonError(f"{loc}, config {k}: the PTX targets {entry.target}, which does not run on {device.name}")
        if len(entry.params) < nparams:
            raise JaxTritonError(f"{loc}, config {k}: the PTX entry has {len(entry.params)} parameters, the descriptor {nparams}")
        for pidx, bits, nbytes in baked:
            ptx = _bake_scalar(ptx, entry.params[pidx].name, bits, nbytes)
        # Pointers the kernel writes through, from its TTIR (descriptor field 5; its function's
        # arguments are the descriptor's parameters). Without TTIR, when the analysis cannot
        # tell, or when it names a parameter that is not an array (the two lists disagree),
        # every pointer parameter counts as written.
        wr = written_params_from_ttir(kern.ttir) if kern.ttir else None
        written |= set(array_params) if wr is None or not wr <= set(array_params) else wr
        v.ptx = ptx
        v.entry = f"{name_prefix}{kname}" + (f"_{_variant_suffix(desc, k)}" if kind != "kernel_call" else "")
        drop = [pidx for pidx, _, _ in baked] + list(range(nparams, len(entry.params)))
        parts.append(ptx_mod.LinkPart(ptx, v.entry, order, drop))
    live = [v for v in variants if v.skipped is None]
    if not live:
        reasons = "; ".join(f"config {k}: {v.skipped}" for k, v in enumerate(variants))
        raise JaxTritonError(f"{loc}: no config can run under IREE ({reasons})")
    try:
        # The link stage's object (no check of the linker's edits: the descriptor's PTX was not
        # assembled by this toolkit; no memo).
        obj = link_object(parts, object_format=object_format, ptx_version=ptx_version, check=False, jobs=1)
    except ptx_mod.PtxError as err:
        raise JaxTritonError(f"{loc}: {err}") from None

    written_bindings = {binding_of_param[p] for p in written if p in binding_of_param}
    tied_operands = {t for t in tied if t >= 0}
    read_only = [b < n_in and b not in tied_operands and b not in written_bindings for b in range(n_bindings)]

    exe = f"{name_prefix}{kname}_ex{index}"
    exports = []
    for ordinal, v in enumerate(live):
        call, kern = v.call, v.call.kernel
        entry = ptx_mod.parse_entry(v.ptx)
        threads = entry.reqntid[0] if entry.reqntid else int(kern.num_warps) * 32
        grid = (int(call.grid_0), int(call.grid_1), int(call.grid_2))
        exports.append(
            ExportSpec(name=v.entry, ordinal=ordinal, threads=(threads,), shared=(int(kern.shared_mem_bytes),), count=grid)
        )
    group_name = f"{name_prefix}{kname}"
    group = None
    if kind != "kernel_call":
        # bytes_to_zero (jax-triton's zeroed_outputs): the results tied to zero splats.
        zeroed_results = [o for o, t in enumerate(tied) if t >= 0 and disp_operands[t][0] == "zeros"]
        group = GroupSpec(name=group_name, variants=[v.entry for v in live], reset_to_zero=zeroed_results or None)
    bundle = Bundle(exe, (obj,), tuple(exports), read_only, len(constants), (), group)
    target_symbol = group_name if kind != "kernel_call" else live[0].entry
    return _CallPlan(
        op,
        index,
        exe,
        target_symbol,
        variants,
        op.location,
        bundle=bundle,
        operands=disp_operands,
        constants=constants,
        tied=tied,
    )


def _build_source(plan: _CallPlan, ip) -> None:
    """Build the call's ``hal.executable.source`` at ``ip`` (inside its context, at the call's
    location): the bundle written by the one builder
    (:func:`autotune_export.passes.build_bundle.write_bundle`): the one object (PTX string or
    cubin bytes) keyed by the generic CUDA target, the group op of an autotuned call, then one
    export per config with the shared pipeline layout, a count region returning the constant
    grid, the block size and the dynamic shared memory."""
    with plan.loc:
        write_bundle(plan.bundle, ip=ip)


def _arch_runs_on(ptx_target: str, device: Any) -> bool:
    """Whether PTX whose ``.target`` is ``ptx_target`` (``sm_80``, ``sm_90a``) can be
    JIT-compiled for ``device`` (a :class:`autotune_export.cuda.targets.CudaTarget`):
    arch-specific PTX (``a`` suffix) only on its own architecture, other PTX on its
    architecture and newer ones (any ``sm_XY``, also one the toolkit does not compile for).
    Raises TargetError for a ``.target`` not spelled ``sm_XY[a]``."""
    built = parse_target(ptx_target, supported_only=False)
    if built.suffix == "a":
        return built.capability == device.capability
    return built.capability <= device.capability


def _rewrite_call(plan: _CallPlan) -> None:

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
        payload = _backend_bytes(op)
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
            _plan_call(
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
