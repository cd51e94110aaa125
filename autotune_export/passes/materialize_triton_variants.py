"""materialize-triton-variants: turn each ``triton(...)`` group into real exports.

The Triton form enters the stages (``docs/architecture.md``) at the start; this pass reads the
group and its dispatches off the IR, runs the stages and reports their diagnostics:

1. plan (here, from the IR): load the kernel file and check the signature against the
   kernel's parameters; the launch model (:func:`autotune_export.cuda.launch_model.launch_variants`)
   expands the configs (the group's, else the ``triton.autotune`` configs of the kernel after
   its ``prune_configs_by``, one remark per config pruned) and applies ``triton.heuristics``
   and the ``def``'s defaults; one :class:`~autotune_export.cuda.triton_compile.VariantSpec`
   per config and target (two with scalar ``:16``/``:1`` hints: Triton's JIT specialization);
2. compile (:func:`autotune_export.cuda.triton_compile.compile_variants`): every config with
   ``triton.compile`` for the target, in parallel, through the content-addressed cache;
3. link (:func:`autotune_export.cuda.link.link_group`, returning its diagnostics): prune
   configs that cannot run (shared memory over the target's limit, ``num_ctas > 1``, compile
   errors, and what :func:`..abi.refusal` names: cooperative launch, host-side TMA
   descriptors, profile scratch), one remark each; link the surviving PTX into ONE module
   per target (IREE takes one object per external variant), parameters in IREE's order
   (:mod:`..abi`: narrow scalars widened to 32 bits, 64-bit scalars split into two 32-bit
   constants, Triton's hidden global scratch kept as the last binding when a variant needs it,
   the other hidden pointers dropped); ptxas checks what the linker changed (each variant was
   assembled in ``triton.compile``), or assembles the whole module for ``object_format=cubin``;
   the result is a :class:`~autotune_export.cuda.bundle.Bundle`;
4. check the dispatches against what the variants write (from their TTIR), then build
   (:func:`autotune_export.passes.build_bundle.write_bundle`): one ``hal.executable.export``
   per variant (identical layout, count region from the grid, ``workgroup_size = [num_warps *
   32, 1, 1]``, ``workgroup_local_memory = shared``; variants that need global scratch carry
   ``autotune.global_scratch = [bytes per program, alignment]`` for lower-autotuning-dispatch)
   and the group rewritten into the ``variants([...])`` form.

Dispatches to a group are checked against its signature (IREE's binding rule:
:mod:`autotune_export.ir.binding`): each scalar operand must have the parameter's MLIR type
(:data:`~autotune_export.ir.binding.SCALAR_OPERAND_TYPES`: ``f32`` for ``fp32``, ``i64`` for
``i64``/``u64``...; another type of the same width would reach the kernel as the wrong bits); a
result tied to an operand binds its output there, wherever the operand is; each tensor
bound to a pointer (tensor operands, then untied results, against the signature's input
pointers, then its ``{output}`` pointers) must have the pointer's element type
(:data:`POINTER_ELEMENT_TYPES`); an ``{output}`` pointer must be bound to a result (an untied
one, or an operand tied to a result, ``-> %x``), and so must every pointer the kernel writes
(from its TTIR): IREE treats a dispatch's operands as immutable.

``reset_to_zero`` / ``restore_value`` (the op's clauses, else the kernel's
``triton.autotune(reset_to_zero=..., restore_value=...)``) are applied to the dispatches before
their bindings are planned: :func:`autotune_export.passes.zero_outputs.zero_fill_triton` ties
every output of a zero-filled group to a new operand at its place in the signature (a zero
fill for the zeroed ones); the materialized group keeps them as result indices.

What cannot run is refused before anything compiles: more than
:data:`~autotune_export.cuda.targets.MAX_BINDINGS` bindings or
:data:`~autotune_export.cuda.targets.MAX_CONSTANTS` constants (errors at the group), and
configs of more than :data:`~autotune_export.cuda.targets.MAX_THREADS_PER_BLOCK` threads per
block (``num_warps * 32``; pruned with a remark, as configs over the shared-memory limit are).
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from typing import Any

from autotune_export.cuda import abi, link
from autotune_export.cuda.link import keep_at_most, resources_refusal, threads_refusal  # noqa: F401  (re-exported)
from autotune_export.cuda.targets import MAX_BINDINGS, MAX_CONSTANTS, TargetError, check_ptx_version, parse_targets
from autotune_export.ir import binding
from autotune_export.ir import grid as grid_mod
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError
from autotune_export.ir.group import OPTION_NAMES, AutotuneGroup
from autotune_export.support.diagnostics import did_you_mean, location_of
from autotune_export.ir.walk import (
    dispatch_sites,
    entry_point_refs,
    executable_sources,
    exports_of,
    groups_of,
    sym_name,
)
from autotune_export.passes.base import ModulePass, PassContext, register
from autotune_export.passes import zero_outputs
from autotune_export.passes.bench_entries import mark_fake_zeros
from autotune_export.passes.build_bundle import write_bundle
from iree.compiler import ir

__all__ = ["MaterializeTritonVariants"]


def targets_of(target: str) -> list[tuple[str, int]]:
    """``[(name, compute capability)]`` of a ``--target``: one architecture (``sm_80``) or a
    comma-separated list (``sm_80,sm_90``: one object per architecture, chosen per device when
    the module loads; see split-architectures). Raises DiagnosticError for unknown or
    unsupported targets (:func:`autotune_export.cuda.targets.parse_targets`)."""
    try:
        return [(t.name, t.capability) for t in parse_targets(target)]
    except TargetError as err:
        raise DiagnosticError.at(None, str(err)) from None


#: Pointee of a Triton pointer type -> the MLIR element types a tensor bound to it may have.
#: Triton loads and stores ``*i1`` (``*u1``, a bool tensor) as one byte per element
#: (``pointer_type<int1>`` is treated as ``pointer_type<int8>`` in triton/language/semantic.py),
#: and IREE keeps ``i1`` tensors one byte per element: both ``i1`` and ``i8`` tensors fit.
POINTER_ELEMENT_TYPES: dict[str, tuple[str, ...]] = {
    "i1": ("i1", "i8"),
    "u1": ("i1", "i8"),
    "i8": ("i8",),
    "u8": ("i8",),
    "i16": ("i16",),
    "u16": ("i16",),
    "i32": ("i32",),
    "u32": ("i32",),
    "i64": ("i64",),
    "u64": ("i64",),
    "fp16": ("f16",),
    "bf16": ("bf16",),
    "fp32": ("f32",),
    "fp64": ("f64",),
    "fp8e4nv": ("f8E4M3FN",),
    "fp8e5": ("f8E5M2",),
}


def _dispatch_bindings(d) -> list[binding.Binding]:
    """The bindings of ``flow.dispatch`` ``d`` in IREE's order (:mod:`autotune_export.ir.binding`)."""
    return binding.DispatchOperands.of(d).bindings()


def _tied_outputs(ctx: PassContext, group: AutotuneGroup, dispatches) -> tuple[str, ...]:
    """The pointers bound to the tensor operands of the dispatches, in operand order: the input
    pointers and the ``{output}`` pointers written in place
    (:func:`autotune_export.ir.binding.tied_outputs`). Every dispatch must agree (one layout).
    Raises DiagnosticError at a dispatch that binds them otherwise than an earlier one."""
    found: tuple | None = None
    for d in dispatches:
        choice = binding.tied_outputs(group.signature, d)
        if found is not None and choice != found:
            mine, theirs = binding.in_place(group.signature, choice), binding.in_place(group.signature, found)
            what = (
                f"writes {', '.join(mine) or 'no output'} in place, an earlier one {', '.join(theirs) or 'none'}"
                if set(mine) != set(theirs)
                else f"passes its tensors for ({', '.join(choice)}), an earlier one for ({', '.join(found)})"
            )
            raise DiagnosticError.at(
                location_of(d.location, ctx.source.name),
                f"this dispatch to @{group.name} {what}: all dispatches of a group share one layout",
            )
        found = choice
    return found if found is not None else tuple(p.name for p in group.signature if p.is_pointer and not p.output)


def _conversion(have: str, want: str) -> str:
    """The arith op that converts a scalar of MLIR type ``have`` to ``want`` (for hints)."""
    fa, fb = have.startswith(("f", "bf")), want.startswith(("f", "bf"))
    wa, wb = int(have.lstrip("bfi") or 0), int(want.lstrip("bfi") or 0)
    if fa and fb:
        return "extf" if wb > wa else "truncf"
    if fa:
        return "fptosi"
    if fb:
        return "sitofp"
    return "extsi" if wb > wa else "trunci"


def _config_location(group: AutotuneGroup, index: int | None, key: str | None = None):
    """Where config ``index`` (its ``key``; None: the configs) was written: its entry in
    configs([...]), or the kernel's name in triton(...) when the configs are its
    triton.autotune's."""
    if group.configs is None:
        return group.at("triton.kernel", "triton")
    keys = ([f"configs.{index}.{key}"] if key is not None and index is not None else []) + (
        [f"configs.{index}"] if index is not None else []
    )
    return group.at(*keys, "configs")


def _signature_mismatch_at(group: AutotuneGroup, declared: list[str], kernel_params: list[str]):
    """Where a signature(...) that does not list ``kernel_params`` goes wrong: the first
    entry that differs, else its ``)`` (a parameter is missing), else the clause."""
    for i, name in enumerate(declared):
        if i >= len(kernel_params) or name != kernel_params[i]:
            return group.at(f"signature.{name}", "signature")
    return group.at("signature.end", "signature")


def _signature_hint(declared: list[str], kernel_params: list[str], constexprs: list[str]) -> str:
    """What to change in a signature(...) that differs from the kernel's parameters: a
    misspelt name ("did you mean"), a constexpr listed as a parameter, or the first one
    missing. Empty when nothing more specific can be said."""
    for i, name in enumerate(declared):
        if i < len(kernel_params) and name == kernel_params[i]:
            continue
        if name in constexprs:
            return f"; '{name}' is a constexpr of the kernel: give it in configs([...]), not in signature(...)"
        if name not in kernel_params:
            hint = did_you_mean(name, [p for p in kernel_params if p not in declared])
            if not hint and i < len(kernel_params) and kernel_params[i] not in declared:
                hint = f"; did you mean '{kernel_params[i]}'?"  # the kernel's parameter at that place
            return hint or f"; the kernel has no parameter '{name}'"
        if i < len(kernel_params):
            return f"; parameter {i} is '{kernel_params[i]}' in the kernel (the signature lists them in the kernel's order)"
        break
    missing = [p for p in kernel_params if p not in declared]
    return f"; add '{missing[0]}'" if missing else ""


def _config_entries(cfg: dict) -> list[tuple[str, Any]]:
    """A config of :attr:`LoadedKernel.default_configs` as the group's entries: its constexpr
    values, then the options it sets (num_warps, num_stages, num_ctas, maxnreg)."""
    entries = list(cfg.get("kwargs", {}).items())
    for opt in OPTION_NAMES:
        if cfg.get(opt) is not None:
            entries.append((opt, cfg[opt]))
    return entries


def _config_text(entries) -> str:
    return "{" + ", ".join(f"{k} = {v}" for k, v in entries) + "}"


# --------------------------------------------------------------------------------------------
# Scalar arguments the tuning workload determines (what prune_configs_by may read)

_UNKNOWN = object()


def _signed(value: int, width: int | None) -> int:
    """``value`` wrapped to a signed ``width``-bit integer (i1: 0 or 1); unchanged for None."""
    if width is None:
        return value
    if width == 1:
        return value & 1
    m = 1 << width
    value %= m
    return value - m if value >= m >> 1 else value


def _width(t) -> int | None:
    if isinstance(t, ir.IndexType):
        return 64
    if isinstance(t, ir.IntegerType):
        return t.width
    return None


def _scalar_attr(a):
    if isinstance(a, ir.BoolAttr):
        return bool(a.value)
    if isinstance(a, (ir.IntegerAttr, ir.FloatAttr)):
        return a.value
    return _UNKNOWN


def _div_trunc(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


#: Integer ops of the arith dialect, on Python ints (operands of the ``...ui`` ops read unsigned).
_INT_OPS = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _div_trunc,
    "arith.divui": lambda a, b: a // b,
    "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": lambda a, b: -((-a) // b),
    "arith.ceildivui": lambda a, b: -((-a) // b),
    "arith.remsi": lambda a, b: a - b * _div_trunc(a, b),
    "arith.remui": lambda a, b: a % b,
    "arith.maxsi": max,
    "arith.minsi": min,
    "arith.maxui": max,
    "arith.minui": min,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b,
    "arith.shrsi": lambda a, b: a >> b,
    "arith.shrui": lambda a, b: a >> b,
}
_FLOAT_OPS = {
    "arith.addf": lambda a, b: a + b,
    "arith.subf": lambda a, b: a - b,
    "arith.mulf": lambda a, b: a * b,
    "arith.divf": lambda a, b: a / b,
    "arith.maximumf": max,
    "arith.minimumf": min,
    "arith.maxnumf": max,
    "arith.minnumf": min,
}


def _evaluate(value, entry, workload, depth: int = 0):
    """The Python value of the host's SSA ``value`` on the tuning workload: ``entry`` is the
    host function's entry block, ``workload`` one tune_workload (a list of attributes, one per
    host argument) or None. Follows constants, host arguments with a tune_workload scalar,
    ``tensor.dim`` of a static shape (the value's type, or the argument's tune_workload type),
    and arith's integer/float arithmetic, comparisons of integers, casts and select; anything else
    is ``_UNKNOWN``."""
    if depth > 64:
        return _UNKNOWN
    if isinstance(value, ir.BlockArgument):
        if value.owner != entry or workload is None or value.arg_number >= len(workload):
            return _UNKNOWN
        return _scalar_attr(workload[value.arg_number])
    op = value.owner
    name = op.operation.name
    operands = list(op.operands)
    if name == "arith.constant":
        return _scalar_attr(op.attributes["value"])
    if name == "tensor.dim":
        index = _evaluate(operands[1], entry, workload, depth + 1)
        if not isinstance(index, int) or isinstance(index, bool):
            return _UNKNOWN
        src = operands[0]
        shaped = src.type
        if isinstance(src, ir.BlockArgument) and src.owner == entry and workload is not None and src.arg_number < len(workload):
            given = workload[src.arg_number]
            if isinstance(given, ir.TypeAttr):
                shaped = given.value
        if not isinstance(shaped, ir.RankedTensorType) or not 0 <= index < shaped.rank or shaped.is_dynamic_dim(index):
            return _UNKNOWN
        return shaped.shape[index]
    args = [_evaluate(o, entry, workload, depth + 1) for o in operands]
    if any(a is _UNKNOWN for a in args):
        return _UNKNOWN
    out_width = _width(value.type)
    in_width = _width(operands[0].type) if operands else None
    try:
        if name in _INT_OPS:
            a, b = args
            if name.endswith("ui") and in_width is not None:
                a, b = a % (1 << in_width), b % (1 << in_width)
            return _signed(_INT_OPS[name](int(a), int(b)), out_width)
        if name in _FLOAT_OPS:
            return _FLOAT_OPS[name](float(args[0]), float(args[1]))
        if name == "arith.negf":
            return -float(args[0])
        if name == "arith.select":
            return args[1] if args[0] else args[2]
        if name == "arith.cmpi":
            a, b = int(args[0]), int(args[1])
            predicate = int(op.attributes["predicate"].value)  # arith::CmpIPredicate: eq ne slt sle sgt sge ult ule ugt uge
            if predicate >= 6 and in_width is not None:
                a, b = a % (1 << in_width), b % (1 << in_width)
            return [a == b, a != b, a < b, a <= b, a > b, a >= b, a < b, a <= b, a > b, a >= b][predicate]
        if name in ("arith.index_cast", "arith.extsi", "arith.trunci"):
            return _signed(int(args[0]), out_width)
        if name in ("arith.index_castui", "arith.extui"):
            return _signed(int(args[0]) % (1 << in_width), out_width) if in_width else _UNKNOWN
        if name == "arith.sitofp":
            return float(args[0])
        if name == "arith.uitofp":
            return float(int(args[0]) % (1 << in_width)) if in_width else _UNKNOWN
        if name in ("arith.fptosi", "arith.fptoui"):
            return int(args[0])
        if name in ("arith.extf", "arith.truncf"):
            return float(args[0])
    except (ArithmeticError, ValueError, TypeError):
        return _UNKNOWN
    return _UNKNOWN


def _as_parameter(triton_type: str, value):
    """``value`` as the kernel receives a scalar of ``triton_type``: a bool for ``u1``/``i1``,
    an int wrapped to the type's width (unsigned for ``uN``), a float (rounded to fp32/fp16)."""
    import struct

    if triton_type in ("u1", "i1"):
        return bool(value)
    if triton_type.startswith(("i", "u")):
        if isinstance(value, float):
            return _UNKNOWN
        width = int(triton_type[1:])
        return int(value) % (1 << width) if triton_type.startswith("u") else _signed(int(value), width)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _UNKNOWN
    if triton_type in ("fp32", "fp16"):
        fmt = "f" if triton_type == "fp32" else "e"
        try:
            return struct.unpack(fmt, struct.pack(fmt, float(value)))[0]
        except OverflowError:
            return float("inf") if value > 0 else float("-inf")
    return float(value)


def _tune_workloads(op) -> list:
    """The group's tune_workload attribute as one list of attributes per workload (one or
    several); ``[None]`` without one."""
    if "tune_workload" not in op.attributes:
        return [None]
    items = list(op.attributes["tune_workload"])
    if items and all(isinstance(a, ir.ArrayAttr) for a in items):
        return [list(a) for a in items]
    return [items]


def _dispatch_scalars(source, op, group: AutotuneGroup) -> list[tuple[str, int | None, dict[str, Any], set[str]]]:
    """What each launch of the group passes its scalar parameters: one entry per dispatch to
    the group (in the module's order) and per ``tune_workload`` (or one, without), as
    ``(label, workload index or None, {parameter: value, or _UNKNOWN}, names known only from
    the tuning workload)``; the pointer parameters whose tensor's shape is known have it there
    too, a tuple (:func:`_bound_shapes`). A value is :func:`_evaluate` of the dispatch's operand on the
    workload, as the kernel receives it (:func:`_as_parameter`); a name is "from the tuning
    workload" when it is known with the workload and not without (a dynamic shape). The label
    names the dispatch by its host function and line (``dispatch 1 in @f (line 12)``) and the
    workload (``tune_workload 0``) when there are several."""
    from autotune_export.ir.walk import enclosing_function

    exe = sym_name(source)
    module = source.parent
    scalars = [p for p in group.signature if not p.is_pointer and not p.is_none]
    workloads = _tune_workloads(op)
    out = []
    dispatches = [d for d in dispatch_sites(module) if (exe, group.name) in entry_point_refs(d)]
    for k, site in enumerate(dispatches):
        host = enclosing_function(site)
        given = [a for a in site.opview.arguments if not isinstance(a.type, ir.RankedTensorType)]
        if host is None or len(given) != len(scalars):
            continue  # _check_dispatches reports a dispatch that does not fit the signature
        entry = host.regions[0].blocks[0]
        where = location_of(site.location, None)
        line = f" (line {where.line})" if where is not None and getattr(where, "line", None) else ""
        label = f"dispatch {k} in @{sym_name(host)}{line}"
        static = {p.name: _evaluate(v, entry, None) for p, v in zip(scalars, given)}
        shapes = _bound_shapes(group, site, entry, None)
        for w, workload in enumerate(workloads):
            values, from_workload = _bound_shapes(group, site, entry, workload), set()
            from_workload.update(name for name in values if name not in shapes)
            for p, v in zip(scalars, given):
                x = _evaluate(v, entry, workload)
                values[p.name] = _UNKNOWN if x is _UNKNOWN else _as_parameter(p.type, x)
                if values[p.name] is not _UNKNOWN and static[p.name] is _UNKNOWN:
                    from_workload.add(p.name)
            tag = f", tune_workload {w}" if len(workloads) > 1 else ""
            out.append((label + tag, w if workload is not None else None, values, from_workload))
    return out


def _bound_shapes(group: AutotuneGroup, site, entry, workload) -> dict[str, tuple[int, ...]]:
    """The shape of the tensor dispatch ``site`` binds to each pointer parameter of the group,
    by IREE's binding rule (:mod:`autotune_export.ir.binding`: tensor operands, then untied
    results): static dimensions from its type (``tensor<64x128xf16>``: ``(64, 128)``), dynamic
    ones from the dispatch's dimension operands, :func:`_evaluate`-d on ``workload`` (a
    ``tune_workload``, or None) in the host function whose entry block is ``entry``; a pointer
    whose shape is not known so is left out. What the heuristics and pruners then see of that
    tensor (``.shape``, ``.numel()``, dense ``.stride()``) is
    :class:`~autotune_export.cuda.launch_model.TensorArgument`'s."""
    try:
        pointers = abi.plan(group.signature, tied=binding.tied_outputs(group.signature, site)).binding_params()
    except abi.AbiError:
        return {}  # the plan reports it
    operands = binding.DispatchOperands.of(site)
    bindings = operands.bindings()
    if len(bindings) != len(pointers):
        return {}  # _check_dispatches reports it

    def dims(types, dynamic) -> list:
        """Per type, its dimensions (dynamic ones taken in order from ``dynamic``), or None."""
        dynamic, out = list(dynamic), []
        for t in types:
            if not isinstance(t, ir.RankedTensorType):
                out.append(None)
                continue
            shape = []
            for k in range(t.rank):
                if not t.is_dynamic_dim(k):
                    shape.append(int(t.shape[k]))
                elif dynamic:
                    x = _evaluate(dynamic.pop(0), entry, workload)
                    shape.append(x if isinstance(x, int) and not isinstance(x, bool) else None)
                else:
                    shape.append(None)
            out.append(shape)
        return out

    args = dims([a.type for a in operands.arguments], operands.argument_dims)
    results = dims(operands.result_types, operands.result_dims)
    out = {}
    for p, b in zip(pointers, bindings):
        shape = args[b.operand] if b.operand is not None else results[b.result]
        if shape is not None and all(d is not None for d in shape):
            out[p.name] = tuple(shape)
    return out


def _autotuner_outputs(ctx: PassContext, group: AutotuneGroup, kernel, tc) -> None:
    """Fill the group's ``reset_to_zero`` / ``restore_value`` (each one the op omits) from the
    kernel's outermost ``triton.autotune`` (``AutotuneWrapper``): the op's clause wins, as a
    call's explicit argument does. As in Triton's autotuner, a name the call passes None for is
    skipped, and a user ``pre_hook`` replaces both (a remark says so: autotune-export cannot run
    the hook). A ``restore_value`` name of a pointer the dispatch only reads (not ``{output}``)
    is left out with a remark: Triton copies it back unchanged (gemlite's GEMV kernels name their
    inputs there). Raises DiagnosticError at the group for any other name that is not an
    ``{output}`` pointer of the signature (only what a dispatch returns can be zero-filled or
    restored)."""
    tuner = next((w for w in kernel.wrappers if isinstance(w, tc.AutotuneWrapper)), None)
    if tuner is None or (group.reset_to_zero is not None and group.restore_value is not None):
        return
    kname = group.triton[1]
    given = {c: list(getattr(tuner, c)) for c in ("reset_to_zero", "restore_value") if getattr(group, c) is None}
    if tuner.pre_hook is not None:
        if any(given.values()):
            ctx.emit_remark(
                Diagnostic(
                    "remark",
                    f"@{group.name}: the triton.autotune of '{kname}' has a pre_hook, which replaces its "
                    f"{' and '.join(c for c, v in given.items() if v)} (as in Triton); autotune-export cannot run "
                    "the hook: give reset_to_zero(...) / restore_value(...) on the op",
                    group.location,
                )
            )
        return
    by_name = {p.name: p for p in group.signature}
    for clause, names in given.items():
        kept = []
        for name in names:
            p = by_name.get(name)
            if p is not None and p.is_none:
                continue  # Triton's default hooks skip an argument passed as None
            if clause == "restore_value" and p is not None and p.is_pointer and not p.output:
                # Triton's restore_value copies the argument back after each timed run: for one
                # the dispatch only reads (an immutable operand) there is nothing to restore.
                ctx.emit_remark(
                    Diagnostic(
                        "remark",
                        f"@{group.name}: the triton.autotune of '{kname}' names '{name}' in restore_value, "
                        "which the dispatch only reads (not an {output} pointer): restoring it changes "
                        "nothing, left out",
                        group.location,
                    )
                )
                continue
            if p is None or not (p.is_pointer and p.output):
                what = "not a parameter of the signature" if p is None else "not an {output} pointer"
                raise DiagnosticError.at(
                    group.location,
                    f"the triton.autotune of '{kname}' names '{name}' in {clause}, which is {what} of @{group.name}: IREE "
                    "treats dispatch operands as immutable, so only what the dispatch returns can be "
                    f"{'zero-filled' if clause == 'reset_to_zero' else 'restored'}; mark it {{output}}, or give "
                    f"{clause}(...) on the op to override the kernel's",
                )
            kept.append(name)
        if kept:
            setattr(group, clause, kept)


def _result_indices(item) -> tuple[list[int] | None, list[int] | None]:
    """The group's ``reset_to_zero`` / ``restore_value`` names as the RFC form's result
    indices: the result of each dispatch bound to that ``{output}`` pointer (IREE's binding
    rule: a tied result at its operand's binding, the untied ones after the tensor operands, in
    the order of :func:`autotune_export.cuda.abi.plan`). ``(None, None)`` parts where a clause
    is absent, or the dispatches return the outputs in different orders (the zero fills are at
    the dispatches already; the clause only records them)."""
    group = item.group
    orders = [o for o in (binding.result_outputs(group.signature, item.tied, d) for d in item.dispatches) if o is not None]
    if not orders:
        orders = [[p.name for p in group.signature if p.is_pointer and p.output]]
    if any(o != orders[0] for o in orders):
        return None, None
    order = orders[0]

    def indices(names):
        return None if names is None else [order.index(n) for n in names if n in order]

    return indices(group.reset_to_zero), indices(group.restore_value)


@dataclass
class _Planned:
    """One group being materialized."""

    source: Any
    op: Any
    group: AutotuneGroup
    configs: list[list[tuple[str, Any]]]
    constexprs: list[dict[str, Any]]
    specs: list[Any]
    first_spec: int
    archs: list[tuple[str, int]] = dataclasses.field(default_factory=list)
    dispatches: list[Any] = dataclasses.field(default_factory=list)  # flow.dispatch ops naming the group
    tied: tuple = ()  # the pointers bound to the tensor operands, in operand order (see _tied_outputs)


@register
@dataclass
class MaterializeTritonVariants(ModulePass):
    """Options: ``target`` CUDA architecture(s) of the variants (``sm_80``, ``sm_90``, or
    ``sm_80,sm_90``: one object each); ``jobs`` worker processes (None: one per core);
    ``executor`` a ``concurrent.futures.Executor`` to compile in (overrides ``jobs``; not
    settable from a spec); ``object_format`` ``ptx`` (driver JIT at load) or ``cubin``
    (assembled by Triton's ptxas); ``ptx_version`` PTX ISA pinned in every variant (86 = 8.6,
    which the CUDA 13.0 driver loads); ``cache_dir`` / ``use_cache`` the content-addressed
    variant cache (:mod:`autotune_export.cuda.triton_compile`); ``max_spills`` prunes variants
    that spill more (Triton's ``n_spills``; None: keep them) and ``max_variants`` keeps at most
    that many configs per group (:func:`~autotune_export.cuda.link.keep_at_most`; None: every
    one), so large generated spaces stay practical (docs/limits.md)."""

    name = "materialize-triton-variants"
    summary = "compile each config of a triton(...) group and create one export per variant"

    target: str = "sm_80"
    jobs: int | None = None
    executor: object | None = None
    object_format: str = "ptx"
    ptx_version: int | None = 86
    cache_dir: str | None = None
    use_cache: bool = True
    max_spills: int | None = None
    max_variants: int | None = None

    def apply(self, ctx: PassContext, module) -> None:
        from autotune_export.cuda import triton_compile as tc
        from autotune_export.cuda import workers

        try:
            workers.check_jobs(self.jobs)
        except ValueError as err:
            raise DiagnosticError.at(None, f"{self.name}: {err}") from None
        planned: list[_Planned] = []
        all_specs: list[Any] = []
        for source in executable_sources(module):
            for op in groups_of(source):
                item = self.plan_group(ctx, module, source, op)
                if item is None:
                    continue
                item.first_spec = len(all_specs)
                all_specs.extend(item.specs)
                planned.append(item)
        if not planned:
            return
        # Configs that cannot launch are pruned without compiling them.
        refused = {i: threads_refusal(sp.num_warps) for i, sp in enumerate(all_specs)}
        todo = [i for i, reason in refused.items() if reason is None]
        try:
            compiled_list = (
                tc.compile_variants(
                    [all_specs[i] for i in todo],
                    jobs=self.jobs,
                    executor=self.executor,
                    cache_dir=self.cache_dir,
                    use_cache=self.use_cache,
                )
                if todo
                else []
            )
        except tc.CacheDirError as err:
            raise DiagnosticError.at(None, str(err)) from None
        results: list[Any] = [None] * len(all_specs)
        for i, r in zip(todo, compiled_list):
            results[i] = r
        for i, reason in refused.items():
            if reason is not None:
                results[i] = tc.PrunedVariant(all_specs[i], reason)
        compiled = sum(1 for r in results if isinstance(r, tc.CompiledVariant) and not r.cached)
        cached = sum(1 for r in results if getattr(r, "cached", False))
        ctx.stats["compiled"] = ctx.stats.get("compiled", 0) + compiled
        ctx.stats["cached"] = ctx.stats.get("cached", 0) + cached
        for item in planned:
            mine = results[item.first_spec : item.first_spec + len(item.specs)]
            self._materialize(ctx, item, mine, tc)

    def plan_group(self, ctx: PassContext, module, source, op) -> _Planned | None:
        """What :meth:`apply` does for group op ``op`` of ``source`` before anything is
        compiled: the kernel loaded and checked against the signature, the configs expanded
        (``prune_configs_by``, heuristics, constexpr defaults), ``reset_to_zero`` applied to the
        dispatches (:func:`~autotune_export.passes.zero_outputs.zero_fill_triton`: ``module``
        changes), the outputs written in place found and the dispatches checked against the
        signature. None for a group in the ``variants([...])`` form. ``autotune-export check``
        runs the same plan in Triton's interpreter. Raises DiagnosticError."""
        from autotune_export.cuda import triton_compile as tc

        group = AutotuneGroup.from_op(op, ctx.source.name)
        if not group.is_triton:
            return None
        self._check_ptx_version()
        item = self._plan(ctx, source, op, group, tc)
        item.dispatches = [d for d in dispatch_sites(module) if (sym_name(source), group.name) in entry_point_refs(d)]
        item.tied = _tied_outputs(ctx, group, item.dispatches)
        # reset_to_zero / restore_value (zero-fill-outputs' rewrite, for the Triton form):
        # afterwards every output of a zero-filled group is written in place.
        if zero_outputs.zero_fill_triton(ctx, module, sym_name(source), group, item.tied):
            item.dispatches = [d for d in dispatch_sites(module) if (sym_name(source), group.name) in entry_point_refs(d)]
            item.tied = _tied_outputs(ctx, group, item.dispatches)
        self._check_dispatches(ctx, module, source, group, item.tied)
        return item

    def _check_ptx_version(self) -> None:
        """A DiagnosticError when ``ptx_version`` is older than a target needs (LLVM would end
        the process): :func:`autotune_export.cuda.targets.check_ptx_version`."""
        for _, capability in targets_of(self.target):
            try:
                check_ptx_version(self.ptx_version, capability)
            except TargetError as err:
                raise DiagnosticError.at(None, str(err)) from None

    # ---------------------------------------------------------------------------------------
    def _plan(self, ctx: PassContext, source, op, group: AutotuneGroup, tc) -> _Planned:
        loc = group.location
        # Checked before anything compiles.
        for export_name, export in exports_of(source).items():
            if "ordinal" not in export.attributes:
                raise DiagnosticError.at(
                    location_of(export.location, ctx.source.name),
                    f"export @{export_name} has no ordinal; next to a triton(...) group every export of "
                    f"@{sym_name(source)} needs ordinal(N) (IREE's CUDA HAL takes the ordinals of an external "
                    "executable as given, and the group's variants are numbered after them)",
                    [Diagnostic("note", f"the group @{group.name} is here", loc)],
                )
        path, kernel_name = group.triton
        full = shown = path
        try:
            # Triton's driver answers for the first target while the file is imported; a kernel
            # carried in the module (kernel_source(...)) is imported from a file it is written to.
            ksrc, full, shown = tc.group_kernel_source(group, ctx.source.base_dir, targets_of(self.target)[0][1], self.cache_dir)
            kernel = tc.load_kernel(ksrc)
        except tc.KernelLoadError as err:
            wrong = kernel_name if err.part == "kernel" else os.path.basename(path)
            raise DiagnosticError.at(
                group.at(f"triton.{'kernel' if err.part == 'kernel' else 'path'}", "triton"),
                str(err).replace(full, shown) + did_you_mean(wrong, err.candidates),
            ) from None
        runtime_args = [a for a in kernel.arg_names if a not in kernel.constexpr_names]
        declared = [p.name for p in group.signature]
        if declared != runtime_args:
            raise DiagnosticError.at(
                _signature_mismatch_at(group, declared, runtime_args),
                f"signature does not match kernel '{kernel_name}': the signature declares "
                f"({', '.join(declared)}) but the kernel's non-constexpr parameters are ({', '.join(runtime_args)})"
                + _signature_hint(declared, runtime_args, kernel.constexpr_names),
            )
        _autotuner_outputs(ctx, group, kernel, tc)
        # `none` parameters: the call passes None, which Triton's JIT specializes to a constexpr
        # None (not a kernel parameter): neither a binding nor a constant, not passed by the
        # dispatch. From here on the group's signature is the kernel's parameters without them.
        # @triton.jit(do_not_specialize=[...]): Triton's JIT neither assumes such a parameter
        # divisible by 16 nor makes it a constexpr 1 (do_not_specialize_on_alignment: no 16),
        # so a signature hint on it is dropped, with a remark.
        for i, p in enumerate(group.signature):
            if p.hint and (p.name in kernel.not_specialized or (p.hint == 16 and p.name in kernel.not_aligned)):
                which = "do_not_specialize" if p.name in kernel.not_specialized else "do_not_specialize_on_alignment"
                ctx.emit_remark(
                    Diagnostic(
                        "remark",
                        f"@{group.name}: '{p.name}' is in the {which} of '{kernel_name}': "
                        f"its ':{p.hint}' hint is dropped (Triton's JIT does not specialize it)",
                        loc,
                    )
                )
                group.signature[i] = dataclasses.replace(p, hint=0)
        nones = {p.name: None for p in group.signature if p.is_none}
        group.signature = [p for p in group.signature if not p.is_none]
        try:
            layout = abi.plan(group.signature)
        except abi.AbiError as err:
            raise DiagnosticError.at(loc, str(err)) from None
        if layout.num_bindings > MAX_BINDINGS:
            raise DiagnosticError.at(
                loc,
                f"@{group.name} has {layout.num_bindings} bindings (one per pointer parameter), more than the {MAX_BINDINGS} "
                "that IREE's CUDA HAL allows per export (it would fail when the module loads); pass fewer buffers",
            )
        if layout.num_constants > MAX_CONSTANTS:
            raise DiagnosticError.at(
                loc,
                f"@{group.name} has {layout.num_constants} 32-bit constants ({len(layout.scalars)} scalar parameters; "
                f"i64/u64/fp64 take two), more than the {MAX_CONSTANTS} that IREE's CUDA HAL allows per export "
                "(it would fail when the module loads)",
            )
        if group.configs is None and not kernel.default_configs:
            raise DiagnosticError.at(
                group.at("triton.kernel", "triton"),
                f"@{group.name} gives no configs([...]) and '{kernel_name}' is not a triton.autotune kernel",
            )
        for index, cfg in enumerate(group.configs or ()):
            for key, _ in cfg:
                if key not in OPTION_NAMES and key not in kernel.constexpr_names:
                    raise DiagnosticError.at(
                        _config_location(group, index, key),
                        f"config {index} sets '{key}', which is not a constexpr parameter of '{kernel_name}' "
                        f"(constexprs: {', '.join(kernel.constexpr_names) or 'none'})"
                        + did_you_mean(key, [*kernel.constexpr_names, *OPTION_NAMES]),
                    )
        configs, constexpr_values = self._launch_variants(ctx, source, op, group, kernel, nones, tc)
        self._check_grid_names(group, configs, constexpr_values)
        archs = targets_of(self.target)
        config_specs, constexpr_sets = [], []
        for index, cfg in enumerate(configs):
            values = constexpr_values[index]
            options = {k: v for k, v in cfg if k in OPTION_NAMES}
            # Triton's JIT specialization (tt.divisibility 16): pointers marked ':16' are
            # assumed aligned in every variant (IREE bindings are; jax-triton assumes the same);
            # scalars marked ':16' only in a second, specialized variant that the dispatch
            # takes when the run-time values are multiples of 16.
            # Integers marked ':1' become constexprs equal to 1 in the specialized variant,
            # as Triton's JIT does; they leave its PTX parameter list (see _materialize).
            pointer_hints = tuple(i for i, p in enumerate(group.signature) if p.divisible and p.is_pointer)
            ones = {p.name for p in group.signature if p.hint == 1}
            kept = [p for p in group.signature if p.name not in ones]
            all_hints = tuple(i for i, p in enumerate(kept) if p.divisible)
            variants = [(group.signature, pointer_hints, {})]
            if all_hints != pointer_hints or ones:
                variants.append((kept, all_hints, {n: 1 for n in ones}))
            for signature, hints, fixed in variants:
                consts = {**nones, **values, **fixed}
                try:
                    spec = tc.VariantSpec(
                        kernel=dataclasses.replace(ksrc, import_arch=archs[0][1]),
                        signature=tuple((p.name, p.type) for p in signature),
                        constexprs=tuple((c, consts[c]) for c in kernel.arg_names if c in consts),
                        num_warps=options.get("num_warps", 4),
                        num_stages=options.get("num_stages", 3),
                        num_ctas=options.get("num_ctas", 1),
                        maxnreg=options.get("maxnreg"),
                        arch=archs[0][1],
                        ptx_version=self.ptx_version,
                        divisibility=hints,
                    )
                except ValueError as err:  # e.g. a value the op cannot hold (a tuple)
                    raise DiagnosticError.at(_config_location(group, index), f"config {index}: {err}") from None
                config_specs.append(spec)
            constexpr_sets.append(values)
        # One copy of every spec per target architecture, target-major.
        specs = [dataclasses.replace(sp, arch=arch) for _, arch in archs for sp in config_specs]
        return _Planned(source, op, group, configs, constexpr_sets, specs, 0, archs)

    def _check_grid_names(self, group: AutotuneGroup, configs, constexpr_values) -> None:
        """The grid's names against what each config gives (workload values, constexprs,
        launch options): known only now when the configs are the kernel's triton.autotune's
        (the front end checked those of configs([...])). Before anything compiles; a
        DiagnosticError at the unknown name in grid(...)."""
        kernel_name = group.triton[1]
        for index, values in enumerate(constexpr_values):
            known = {*values, *OPTION_NAMES, *(group.workload or [])}
            for text in group.grid:
                for nm in grid_mod.names(grid_mod.parse(text)):
                    if nm.name not in known:
                        raise DiagnosticError.at(
                            group.at(f"grid.{nm.name}", "grid"),
                            f"grid uses unknown name '{nm.name}'; names in a grid are workload values "
                            f"({', '.join(group.workload or []) or 'none'}), the configs' constexprs "
                            f"({', '.join(k for k in values if k not in OPTION_NAMES) or 'none'}"
                            + (f"; from the triton.autotune of '{kernel_name}'" if group.configs is None else "")
                            + f") and {', '.join(OPTION_NAMES)}"
                            + did_you_mean(nm.name, sorted(known)),
                        )

    # ---------------------------------------------------------------------------------------
    def _launch_variants(
        self, ctx: PassContext, source, op, group: AutotuneGroup, kernel, nones: dict, tc
    ) -> tuple[list[list[tuple[str, Any]]], list[dict[str, Any]]]:
        """``(configs, constexprs)``: the group's configs (entries as the op spells them) and
        per config every constexpr's value, from Triton's launch model
        (:func:`autotune_export.cuda.launch_model.launch_variants`, convention ``TRITON``): the
        op's ``configs([...])``, else the kernel's (outermost) ``triton.autotune`` configs after
        its ``prune_configs_by``; ``triton.heuristics`` in Triton's wrapper order (a value the
        op's config gives is kept); the ``def``'s defaults.

        What the user's functions see, answering for the first ``--target`` (Triton's driver
        and torch, as while the file is imported): per runtime parameter a
        :class:`~autotune_export.cuda.launch_model.TensorArgument` for a pointer (``.dtype``,
        ``.element_size()`` from the signature), None for a ``none`` parameter, and a scalar's
        value where the host determines it, else an
        :class:`~autotune_export.cuda.launch_model.UnknownScalar`. Heuristics see a scalar only
        when every dispatch of the group passes the same value without the tuning workload
        (their values are compiled in). ``prune_configs_by`` runs once per dispatch of the
        group and per ``tune_workload`` (:func:`_dispatch_scalars`), as Triton prunes at each
        launch; the group keeps the configs every one of them keeps (all dispatches share one
        choice, so a config pruned for one is never selected for it), and remarks say what the
        pruning saw. Triton prunes only when there is more than one config (``Autotuner.run``).

        Raises DiagnosticError at the group when a function reads what is not known, raises,
        or keeps no config (for one dispatch, or for all of them together)."""
        from autotune_export.cuda import launch_model as lm

        loc, kernel_name = group.location, group.triton[1]
        model = lm.KernelModel.from_loaded(kernel)
        tuner = model.autotune
        by_name = {p.name: p for p in group.signature}
        sites = _dispatch_scalars(source, op, group)
        scalars = [p.name for p in group.signature if not p.is_pointer]
        # Heuristics: scalars that every dispatch passes, the same without any tuning workload,
        # and the shapes of the tensors every dispatch binds, the same static shape.
        static = {}
        for name in scalars + [p.name for p in group.signature if p.is_pointer]:
            values = [v.get(name, _UNKNOWN) for *_, v, _ in sites]
            if values and all(x is not _UNKNOWN and x == values[0] for x in values) and all(name not in fw for *_, fw in sites):
                static[name] = values[0]

        def named(values: dict) -> dict:
            out: dict[str, Any] = {}
            for name in (a for a in kernel.arg_names if a not in kernel.constexpr_names):
                p = by_name.get(name)
                if name in nones or p is None:
                    out[name] = None
                elif p.is_pointer:
                    shape = values.get(name)
                    out[name] = lm.TensorArgument(name, p.type) if shape is None else lm.TensorArgument.dense(name, p.type, shape)
                else:
                    value = values.get(name, _UNKNOWN)
                    out[name] = lm.UnknownScalar(name) if value is _UNKNOWN else value
            return out

        explicit = group.configs
        override = None
        if explicit is not None:
            override = [
                lm.Config.of(
                    {"kwargs": {k: v for k, v in cfg if k not in OPTION_NAMES}, **{k: v for k, v in cfg if k in OPTION_NAMES}}
                )
                for cfg in explicit
            ]
        prune = tuner is not None and explicit is None and len(tuner.triton_configs) == len(kernel.default_configs)
        try:
            plan = lm.launch_variants(
                model,
                named(static),
                {},
                convention=lm.TRITON,
                configs=override if override is not None else None,
                sites=[named(values) for *_, values, _ in sites] or None,
                capability=targets_of(self.target)[0][1],
                prune=prune,
            )
        except lm.LaunchModelError as err:
            if err.stage == "prune":
                if err.unknown is None:
                    fix = "give the configs to export explicitly with configs([...])"
                elif "." in err.unknown:
                    fix = (
                        "of a tensor .dtype and .element_size() are known from the signature, .shape, .numel() and "
                        ".stride() where every dispatch binds a tensor of static shape (dense, as IREE's buffers are); "
                        "give the configs to export explicitly with configs([...])"
                    )
                else:
                    fix = (
                        "a scalar is known when each dispatch of the group passes a value computed from constants, "
                        "tune_workload(...) or static argument shapes; otherwise give the configs to export "
                        "explicitly with configs([...])"
                    )
                raise DiagnosticError.at(
                    loc, f"@{group.name}: prune_configs_by of the triton.autotune of '{kernel_name}': {err}; {fix}"
                ) from None
            if err.stage and err.stage.startswith("heuristic ") and err.unknown is not None:
                hname = err.stage[len("heuristic ") :]
                known = (
                    (
                        " (a tensor's .shape, .numel() and .stride() are known where every dispatch binds it a tensor "
                        "of the same static shape)"
                    )
                    if "." in err.unknown
                    else ""
                )
                raise DiagnosticError.at(
                    _config_location(group, None),
                    f"triton.heuristics for '{hname}' needs run-time argument '{err.unknown}'{known}; "
                    f"give '{hname}' in every config",
                ) from None
            if err.stage == "constexpr":
                # "config N gives no value for ...": at config N (its "{" in configs([...]), or
                # the kernel's name when the configs are its triton.autotune's).
                m = re.match(r"config (\d+) ", str(err))
                message = str(err).replace(" gives no value for", " does not give")
                if m and explicit is None:
                    message = message.replace(m.group(0), f"{m.group(0)}(a config of the triton.autotune of '{kernel_name}') ", 1)
                raise DiagnosticError.at(_config_location(group, int(m.group(1)) if m else None), message) from None
            raise DiagnosticError.at(loc, f"@{group.name}: {err}") from None

        constexprs = [{c: tc.plain_value(v) for c, v in variant.constexprs} for variant in plan.variants]
        if explicit is not None:
            return [list(cfg) for cfg in explicit], constexprs
        defaults = kernel.default_configs
        configs = [_config_entries(tc.config_dict(v.config)) for v in plan.variants]
        if plan.pruning is None:
            return configs, constexprs
        self._pruning_remarks(ctx, group, tuner, defaults, plan.pruning, sites, tc)
        return configs, constexprs

    def _pruning_remarks(self, ctx: PassContext, group: AutotuneGroup, tuner, defaults, pruning, sites, tc) -> None:
        """One remark per config pruned (per dispatch and workload when there are several),
        one saying what the pruning saw, and one naming the configs the group keeps."""
        from autotune_export.cuda import launch_model as lm

        loc = group.location
        several = len(pruning.outcomes) > 1
        for outcome, (label, _, values, from_workload) in zip(pruning.outcomes, sites or [("", None, {}, set())]):
            where = f" for {label}" if several else ""
            for p in outcome.pruned:
                ctx.emit_remark(
                    Diagnostic(
                        "remark",
                        f"@{group.name}: triton.autotune config {p.index} "
                        f"{_config_text(_config_entries(defaults[p.index]))} pruned{where}: "
                        f"{p.reason} (prune_configs_by)",
                        loc,
                    )
                )
        functions = ", ".join(
            f"{f} '{lm.function_name(fn)}'"
            for f, fn in (("early_config_prune", tuner.early_config_prune), ("perf_model", tuner.perf_model))
            if fn is not None
        )
        if sites:
            seen = "; ".join(
                f"{label}: "
                + (
                    ", ".join(
                        f"{k} = {v!r}" + (" (tune_workload)" if k in fw else "")
                        for k, v in values.items()
                        if v is not _UNKNOWN and not isinstance(v, tuple)
                    )
                    or "no scalar value"
                )
                for label, _, values, fw in sites
            )
            dynamic = sorted({k for *_, fw in sites for k in fw})
            tail = (
                (
                    f"; a run-time value of {', '.join(dynamic)} outside tune_workload is not pruned for (Triton would "
                    "prune at that launch)"
                )
                if dynamic
                else ""
            )
            ctx.emit_remark(Diagnostic("remark", f"@{group.name}: prune_configs_by ({functions}) saw {seen}{tail}", loc))
        kept = [tc.config_dict(c) for c in pruning.kept]
        changed = [i for i, c in zip(pruning.kept_indices, kept) if i is not None and c != defaults[i]]
        if list(pruning.kept_indices) == list(range(len(defaults))) and not changed:
            return
        sources = ", ".join("new" if i is None else str(i) for i in pruning.kept_indices)  # new: made by the pruner
        edited = f"; the pruner changed configs {', '.join(map(str, changed))}" if changed else ""
        every = f" (those kept for every one of {len(pruning.outcomes)} dispatches and workloads)" if several else ""
        ctx.emit_remark(
            Diagnostic(
                "remark",
                f"@{group.name}: prune_configs_by ({functions}) keeps {len(pruning.kept)} of {len(defaults)} triton.autotune "
                f"configs{every}: the group's configs 0..{len(pruning.kept) - 1} are its configs {sources}{edited}",
                loc,
            )
        )

    # ---------------------------------------------------------------------------------------
    def _check_dispatches(self, ctx: PassContext, module, source, group: AutotuneGroup, tied=frozenset()) -> None:
        """Scalar operands of dispatches to ``group`` have the bit widths of its parameters."""

        exe = sym_name(source)
        scalars = [p for p in group.signature if not p.is_pointer]
        pointers = abi.plan(group.signature, tied=tied).binding_params()
        for d in dispatch_sites(module):
            if (exe, group.name) not in entry_point_refs(d):
                continue
            where = location_of(d.location, ctx.source.name)
            note = [Diagnostic("note", f"@{group.name} is defined here", group.location)]
            bindings = _dispatch_bindings(d)
            if len(bindings) == len(pointers):  # else verify-autotuning-groups reports the count
                for p, b in zip(pointers, bindings):
                    allowed = POINTER_ELEMENT_TYPES.get(p.type[1:])
                    elem = str(b.type.element_type) if isinstance(b.type, ir.ShapedType) else str(b.type)
                    if allowed is not None and elem not in allowed:
                        raise DiagnosticError.at(
                            where,
                            f"dispatch to @{exe}::@{group.name} binds {b.what} to pointer '{p.name}' ({p.type}); "
                            f"expected a tensor of {' or '.join(allowed)}",
                            note,
                        )
                    if p.output and not b.is_result:
                        raise DiagnosticError.at(
                            where,
                            f"dispatch to @{exe}::@{group.name} binds {b.what} to {{output}} pointer '{p.name}', but no "
                            "result is tied to it: IREE treats dispatch operands as immutable; tie a result to the operand "
                            "(-> %operand) or make the output a result (bindings are the tensor operands, then the untied "
                            "results, in the order of the signature's input pointers, then its {output} pointers)",
                            note,
                        )
            given = binding.DispatchOperands.of(d).scalars()
            if len(given) != len(scalars):
                continue  # verify-autotuning-groups reports the count
            for p, a in zip(scalars, given):
                if not abi.operand_matches(p, str(a.type)):
                    want = binding.SCALAR_OPERAND_TYPES[p.type]
                    raise DiagnosticError.at(
                        location_of(d.location, ctx.source.name),
                        f"dispatch to @{exe}::@{group.name} passes a {a.type} for parameter '{p.name}' ({p.type}); "
                        f"expected an {want} operand: the kernel would read the {a.type}'s bits as {p.type} "
                        f"(convert it at the call site, e.g. with arith.{_conversion(str(a.type), want)})",
                        note,
                    )

    def _check_written(self, ctx: PassContext, item: _Planned, plan, written: set[int]) -> None:
        """Every pointer the kernel stores or atomically updates through (``written``:
        signature indices, from the variants' TTIR) is bound, at every dispatch to the group,
        to a result: an ``{output}`` pointer, or an input pointer whose operand a result is
        tied to (in place, ``-> %x``). IREE treats the other operands as immutable (their
        bindings are ReadOnly, and IREE may share or reuse their buffers). Raises
        DiagnosticError at the group, with a note at the dispatch."""
        group = item.group
        pointers = plan.binding_params()
        position = {p.name: i for i, p in enumerate(group.signature)}
        for d in item.dispatches:
            bindings = _dispatch_bindings(d)
            if len(bindings) != len(pointers):
                continue
            for p, b in zip(pointers, bindings):
                if position[p.name] in written and not p.output and not b.is_result:
                    raise DiagnosticError.at(
                        group.location,
                        f"kernel '{group.triton[1]}' of @{group.name} writes through '{p.name}' (a store or atomic), which is "
                        f"not {{output}}: IREE treats dispatch operands as immutable; mark it '{p.name}: {p.type} {{output}}' "
                        "and return it as a result, or tie a result to its operand at the dispatch (-> %operand, in place)",
                        [
                            Diagnostic(
                                "note",
                                f"the dispatch binds {b.what} to '{p.name}' here",
                                location_of(d.location, ctx.source.name),
                            )
                        ],
                    )

    def _check_updated(self, ctx: PassContext, item: _Planned, plan, updated: set[int]) -> None:
        """A warning, once per pointer, at the first dispatch that binds a pointer the kernel
        updates atomically (``tl.atomic_add`` and the like, ``updated``: signature indices) to a
        buffer of undefined contents: an untied result, or an operand made by
        ``flow.tensor.empty`` / ``flow.tensor.alloca`` that a result is tied to. What such a
        kernel leaves depends on what the buffer held (a PyTorch caller passes
        ``torch.zeros(...)``), so the result would be garbage.

        Every tensor operand bound to such a pointer (written in place: a lock, a counter, an
        accumulator) is listed in the dispatch's
        :data:`~autotune_export.ir.markers.FAKE_ZEROS_ATTR` (one remark at the group names
        them), so the benchmark and check entries give it zeros instead of seeded fake data: a
        spin lock that holds anything but 0 is never released, and the tuning would never
        return."""
        group = item.group
        pointers = plan.binding_params()
        position = {p.name: i for i, p in enumerate(group.signature)}
        warned: set[str] = set()
        zeroed: list[str] = []
        for d in item.dispatches:
            bindings = _dispatch_bindings(d)
            if len(bindings) != len(pointers):
                continue
            args = list(d.opview.arguments)
            tensors = [i for i, a in enumerate(args) if isinstance(a.type, ir.RankedTensorType)]
            in_place = [
                (n, p)
                for n, p in enumerate(pointers[: len(tensors)])
                if position[p.name] in updated and bindings[n].is_result and not zero_outputs.is_zeroed(args[tensors[n]])
            ]
            mark_fake_zeros(d, [tensors[n] for n, _ in in_place])
            zeroed.extend(p.name for _, p in in_place if p.name not in zeroed)
            for p, b in zip(pointers, bindings):
                if b.undefined and position[p.name] in updated and p.name not in warned:
                    warned.add(p.name)
                    ctx.emit_remark(
                        Diagnostic(
                            "warning",
                            f"kernel '{group.triton[1]}' of @{group.name} updates '{p.name}' atomically (what it leaves depends "
                            f"on what the buffer held), but this dispatch binds it to a new buffer of undefined contents: zero it "
                            f"with reset_to_zero({p.name}), or pass its contents in place (a result tied to the operand holding "
                            "them, -> %x)",
                            location_of(d.location, ctx.source.name),
                        )
                    )
        if zeroed:
            names = ", ".join(f"'{n}'" for n in zeroed)
            ctx.emit_remark(
                Diagnostic(
                    "remark",
                    f"@{group.name}: kernel '{group.triton[1]}' updates {names} atomically (tt.atomic_rmw / tt.atomic_cas in "
                    f"its TTIR): the benchmark and check entries give {'it' if len(zeroed) == 1 else 'them'} zeros, not seeded "
                    "fake data (a lock or counter holding other values may never be released)",
                    group.location,
                )
            )

    def _check_read_first(self, ctx: PassContext, item: _Planned, plan, read_first: set[int]) -> None:
        """A warning, once per pointer, at the first dispatch that binds an ``{output}`` pointer
        the kernel loads from before storing through it (``read_first``: signature indices,
        from the variants' TTIR, :func:`autotune_export.cuda.ttir.read_before_written`) to a
        buffer of undefined contents (an untied result, or an operand made by
        ``flow.tensor.empty`` / ``flow.tensor.alloca``): IREE allocates it per call, so what
        the kernel reads is garbage. (A PyTorch caller passes the tensor whose contents the
        kernel reads, e.g. a gradient it accumulates into.)"""
        group = item.group
        pointers = plan.binding_params()
        position = {p.name: i for i, p in enumerate(group.signature)}
        warned: set[str] = set()
        for d in item.dispatches:
            bindings = _dispatch_bindings(d)
            if len(bindings) != len(pointers):
                continue
            for p, b in zip(pointers, bindings):
                if p.output and b.undefined and position[p.name] in read_first and p.name not in warned:
                    warned.add(p.name)
                    ctx.emit_remark(
                        Diagnostic(
                            "warning",
                            f"kernel '{group.triton[1]}' of @{group.name} loads from {{output}} '{p.name}' before it stores "
                            f"through it, but this dispatch binds {b.what} to it, a new buffer of undefined contents in IREE: "
                            "pass the tensor whose contents the kernel reads in place (as an operand with the result tied to "
                            f"it, -> %x), or zero it with reset_to_zero({p.name}) if it accumulates from zero",
                            location_of(d.location, ctx.source.name),
                        )
                    )

    def _materialize(self, ctx: PassContext, item: _Planned, results, tc) -> None:
        """The link and build stages for one planned group: its compiled variants linked into
        a bundle (:func:`autotune_export.cuda.link.link_group`, whose remarks are reported
        here and whose error is raised), the dispatches checked against what the variants
        write (:meth:`_check_written`, :meth:`_check_updated`, :meth:`_check_read_first`),
        then the bundle written into the IR
        (:func:`autotune_export.passes.build_bundle.write_bundle`). Raises DiagnosticError."""
        group = item.group
        _, full, shown = tc.group_kernel_source(group, ctx.source.base_dir, cache_dir=self.cache_dir)
        existing = exports_of(item.source)
        reset, restore = _result_indices(item)
        request = link.LinkRequest(
            name=group.name,
            kernel=group.triton[1],
            location=group.location,
            grid_location=group.at("grid"),
            signature=tuple(group.signature),
            grid=tuple(group.grid),
            workload=tuple(group.workload or ()),
            configs=tuple(tuple(cfg) for cfg in item.configs),
            constexprs=tuple(item.constexprs),
            tied=tuple(item.tied),
            archs=tuple(item.archs or targets_of(self.target)),
            target=self.target,
            executable=sym_name(item.source),
            existing=frozenset(existing),
            next_ordinal=1 + max((int(op.attributes["ordinal"].value) for op in existing.values()), default=-1),
            kernel_path=full,
            shown_path=shown,
            default=group.default,
            tune_workload=group.tune_workload,
            reset_to_zero=None if reset is None else tuple(reset),
            restore_value=None if restore is None else tuple(restore),
            object_format=self.object_format,
            cache_dir=str(self.cache_dir or tc.default_cache_dir()) if self.use_cache else None,
            jobs=self.jobs,
            max_spills=self.max_spills,
            max_variants=self.max_variants,
        )
        linked = link.link_group(request, results)
        for diagnostic in linked.diagnostics:
            if diagnostic.severity != "error":
                ctx.emit_remark(diagnostic)
        if linked.error is not None:
            raise linked.error
        self._check_written(ctx, item, linked.plan, linked.written)
        self._check_updated(ctx, item, linked.plan, linked.updated)
        self._check_read_first(ctx, item, linked.plan, linked.read_first - linked.updated)
        write_bundle(linked.bundle, source=item.source, group_op=item.op, location=group.location)
