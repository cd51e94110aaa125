"""materialize-triton-variants: turn each ``triton(...)`` group into real exports.

The Triton form enters the stages (``docs/architecture.md``) at the start; this pass reads the
group and its dispatches off the IR, runs the stages and reports their diagnostics:

1. plan: load the kernel file and check the signature against the kernel's parameters (here);
   read what each dispatch passes off the IR (:func:`autotune_export.passes.dispatch_values.dispatch_scalars`);
   then the plan stage (:func:`autotune_export.cuda.launch_plan.plan_launch`, returning its
   diagnostics): the launch model (:func:`autotune_export.cuda.launch_model.launch_variants`)
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
4. check the dispatches against what the variants write (from their TTIR:
   :mod:`autotune_export.passes.triton_dispatch_checks`), then build
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
from dataclasses import dataclass
from typing import Any

from autotune_export.cuda import abi, launch_plan, link
from autotune_export.cuda.link import keep_at_most, resources_refusal, threads_refusal  # noqa: F401  (re-exported)
from autotune_export.cuda.targets import MAX_BINDINGS, MAX_CONSTANTS, TargetError, check_ptx_version, parse_targets
from autotune_export.ir import binding
from autotune_export.ir.markers import ALLOWED_ATTR
from autotune_export.ir.params import variant_name
from iree.compiler import ir
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import OPTION_NAMES
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
from autotune_export.passes.build_bundle import write_bundle
from autotune_export.passes.dispatch_values import dispatch_scalars
from autotune_export.passes.triton_dispatch_checks import (
    POINTER_ELEMENT_TYPES,  # noqa: F401  (re-exported)
    check_dispatches,
    check_read_first,
    check_updated,
    check_written,
    tied_outputs,
)

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


def _report(ctx: PassContext, diagnostics) -> None:
    """A stage's diagnostics reported: the remarks and warnings to ``ctx``, in order, then the
    error among them (with its notes) raised as DiagnosticError."""
    for diagnostic in diagnostics:
        if diagnostic.severity != "error":
            ctx.emit_remark(diagnostic)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise DiagnosticError(errors)


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
    allowed: tuple = ()  # (dispatch index, config positions) for dispatches that may run fewer configs (Planned.allowed)


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
        item.tied = tied_outputs(ctx, group, item.dispatches)
        # reset_to_zero / restore_value (zero-fill-outputs' rewrite, for the Triton form):
        # afterwards every output of a zero-filled group is written in place.
        if zero_outputs.zero_fill_triton(ctx, module, sym_name(source), group, item.tied):
            item.dispatches = [d for d in dispatch_sites(module) if (sym_name(source), group.name) in entry_point_refs(d)]
            item.tied = tied_outputs(ctx, group, item.dispatches)
        check_dispatches(ctx, module, source, group, item.tied)
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
        # reset_to_zero / restore_value the op omits, from the kernel's triton.autotune.
        chosen, diagnostics = launch_plan.autotuner_outputs(
            group.name, kernel_name, loc, tuple(group.signature), group.reset_to_zero, group.restore_value, kernel
        )
        _report(ctx, diagnostics)
        for clause, names in chosen.items():
            setattr(group, clause, names)
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
        request = launch_plan.PlanRequest(
            name=group.name,
            kernel=kernel_name,
            location=loc,
            clause_locations=dict(group.clause_locations),
            signature=tuple(group.signature),
            nones=tuple(nones),
            configs=None if group.configs is None else tuple(tuple(cfg) for cfg in group.configs),
            grid=tuple(group.grid),
            workload=tuple(group.workload or ()),
            archs=tuple(targets_of(self.target)),
            ptx_version=self.ptx_version,
        )
        for index, cfg in enumerate(group.configs or ()):
            for key, _ in cfg:
                if key not in OPTION_NAMES and key not in kernel.constexpr_names:
                    raise DiagnosticError.at(
                        request.config_location(index, key),
                        f"config {index} sets '{key}', which is not a constexpr parameter of '{kernel_name}' "
                        f"(constexprs: {', '.join(kernel.constexpr_names) or 'none'})"
                        + did_you_mean(key, [*kernel.constexpr_names, *OPTION_NAMES]),
                    )
        # The plan stage: the launch model on what the dispatches pass, read off the IR here.
        request = dataclasses.replace(request, sites=tuple(dispatch_scalars(source, op, group)))
        planned = launch_plan.plan_launch(request, kernel, ksrc)
        _report(ctx, planned.diagnostics)
        configs = [list(cfg) for cfg in planned.configs]
        return _Planned(
            source,
            op,
            group,
            configs,
            list(planned.constexprs),
            list(planned.specs),
            0,
            list(request.archs),
            allowed=planned.allowed,
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
        _report(ctx, linked.diagnostics)
        check_written(ctx, item, linked.plan, linked.written)
        check_updated(ctx, item, linked.plan, linked.updated)
        check_read_first(ctx, item, linked.plan, linked.read_first - linked.updated)
        allowed = _allowed_variants(ctx, item, linked.bundle.group.variants)
        write_bundle(linked.bundle, source=item.source, group_op=item.op, location=group.location)
        for dispatch, names in allowed:
            with dispatch.context:
                dispatch.attributes[ALLOWED_ATTR] = ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(n) for n in names])


def _allowed_variants(ctx: PassContext, item: _Planned, variants) -> list:
    """``[(flow.dispatch op, [variant names])]``: for each dispatch of ``item`` whose own
    ``prune_configs_by`` keeps fewer configs than the group (:attr:`_Planned.allowed`), the
    variants it may run among ``variants`` (the group's, after linking), in Triton's order for
    its arguments; dispatches that may run every variant are left out. Raises DiagnosticError
    at a dispatch whose every kept config was pruned when linking (Triton would have no config
    to run there)."""
    out = []
    group = item.group
    for d, positions in item.allowed:
        if d >= len(item.dispatches):
            continue
        dispatch = item.dispatches[d]
        names = [variant_name(group.name, pos, item.configs[pos]) for pos in positions]
        names = [n for n in names if n in variants]
        if not names:
            raise DiagnosticError.at(
                location_of(dispatch.location, ctx.source.name),
                f"every config that prune_configs_by keeps for this dispatch of @{group.name} (the group's configs "
                f"{', '.join(map(str, positions))}) was pruned when linking (the remarks say why): it has no variant to run",
                [Diagnostic("note", f"the group @{group.name} is here", group.location)],
            )
        if len(names) < len(variants):
            out.append((dispatch, names))
    return out
