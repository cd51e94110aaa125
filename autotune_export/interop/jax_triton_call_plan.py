"""The plan of one jax-triton custom call (:func:`plan_call`): its configs' PTX entries put in
IREE's binding order (:class:`autotune_export.cuda.ptx.LinkPart`) and linked into one object
(:func:`autotune_export.cuda.bundle.link_object`), the :class:`~autotune_export.cuda.bundle.Bundle`
of its executable source, and the operands, constants and tied results of the
``flow.dispatch`` that replaces the call (:class:`CallPlan`). The StableHLO front end
(:func:`autotune_export.interop.jax_triton_stablehlo.convert_stablehlo`) builds and rewrites
from the plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from autotune_export.cuda import ptx as ptx_mod
from autotune_export.cuda.bundle import Bundle, ExportSpec, GroupSpec, link_object
from autotune_export.cuda.targets import TargetError, parse_target
from autotune_export.cuda.ttir import written_params_from_ttir
from autotune_export.interop.jax_triton_custom_call import aliases_of, variant_suffix
from autotune_export.interop.jax_triton_scalars import bake_scalar, scalar_bits
from autotune_export.interop.jax_triton_types import JaxTritonError, as_i32
from autotune_export.ir import binding as _binding

__all__ = ["CallPlan", "ConfigVariant", "plan_call"]


@dataclass
class ConfigVariant:
    """One config of a jax-triton call: its launch (``call``, the descriptor's
    ``TritonKernelCall``) and ``description`` (Triton's ``str(triton.Config)``), then its PTX
    entry's name and PTX, or why it was ``skipped``."""

    call: Any  # TritonKernelCall
    description: str
    entry: str = ""
    ptx: str = ""
    skipped: str | None = None


@dataclass
class CallPlan:
    """What one jax-triton custom call becomes: the executable source to build (from
    ``bundle``: its objects, exports and group) and the ``flow.dispatch`` replacing the call,
    both made by :func:`autotune_export.interop.jax_triton_stablehlo.convert_stablehlo`.

    ``group``: the symbol the dispatch names (the group of an autotuned call, else the single
    export). ``operands``: per dispatch tensor operand, ``("operand", i)``, ``("zeros", type)``
    or ``("clone", i)``; ``constants``: the 32-bit constants (signed i32 values); ``tied``: per
    result, the dispatch operand it is tied to or -1. ``loc``: the custom call's location.
    """

    op: Any
    index: int
    exe: str
    group: str
    variants: list[ConfigVariant]
    loc: Any
    bundle: Bundle
    operands: list  # ("operand", i) | ("zeros", type) | ("clone", i)
    constants: list[int]
    tied: list[int]  # per result: argument index or -1


def plan_call(
    op,
    index: int,
    msg,
    *,
    arch_limit: int | None,
    object_format: str,
    ptx_version: str | None,
    name_prefix: str,
    device: Any | None,
) -> CallPlan:
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
    aliases = aliases_of(op)  # output -> operand

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
        bits, nbytes = scalar_bits(kd, getattr(first[pidx], kd))
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

    variants: list[ConfigVariant] = []
    written: set[int] = set()
    parts = []
    nparams = len(kinds)
    for k, (call, desc) in enumerate(raw):
        kern = call.kernel
        v = ConfigVariant(call, desc)
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
            ptx = bake_scalar(ptx, entry.params[pidx].name, bits, nbytes)
        # Pointers the kernel writes through, from its TTIR (descriptor field 5; its function's
        # arguments are the descriptor's parameters). Without TTIR, when the analysis cannot
        # tell, or when it names a parameter that is not an array (the two lists disagree),
        # every pointer parameter counts as written.
        wr = written_params_from_ttir(kern.ttir) if kern.ttir else None
        written |= set(array_params) if wr is None or not wr <= set(array_params) else wr
        v.ptx = ptx
        v.entry = f"{name_prefix}{kname}" + (f"_{variant_suffix(desc, k)}" if kind != "kernel_call" else "")
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
    return CallPlan(
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
