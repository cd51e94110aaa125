"""The link stage of a Triton-form group: its compiled variants -> a :class:`~.bundle.Bundle`.

Between the compile stage (:func:`autotune_export.cuda.triton_compile.compile_variants`) and
the builder (:func:`autotune_export.passes.build_bundle.write_bundle`). :func:`link_group`
takes the group as plain data (:class:`LinkRequest`) and the compiled variants, and returns
(:class:`Linked`) the bundle with what the pass checks at the dispatches (the pointers the
variants write, update atomically or read first; the binding plan) and its diagnostics: no
pass context, no IR.

What it does, in order (each config's variants per target, as the specs were laid out):

1. variants IREE cannot launch become pruned ones (:func:`refuse`: :func:`..abi.refusal`,
   more threads per block than CUDA allows, :func:`threads_refusal`, registers and spills,
   :func:`resources_refusal`); a config with a pruned variant on any target is dropped whole
   (every target's object has the same exports), one remark each; none left is an error with
   one note per config; ``max_variants`` caps the survivors (:func:`keep_at_most`);
2. Triton's global scratch per variant (remark), IREE's binding plan (:func:`..abi.plan`);
3. per variant its PTX entry put in binding order (``:1`` parameters put back as unused
   placeholders in the specialized sibling), the written/updated/read-first pointers from the
   TTIR analysis, a refusal of addresses made from data;
4. one object per target (:func:`..bundle.link_object`), one export per variant (grid checked
   per config against :func:`autotune_export.ir.grid.check_grid`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

from autotune_export.cuda import abi
from autotune_export.cuda import ptx as ptx_mod
from autotune_export.cuda.launch_plan import config_text
from autotune_export.cuda.bundle import Bundle, ExportSpec, GroupSpec, link_object
from autotune_export.cuda.targets import MAX_REGISTERS_PER_BLOCK, MAX_THREADS_PER_BLOCK, grid_limit_problem
from autotune_export.cuda.triton_compile import CompiledVariant, PrunedVariant
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.params import Param, variant_name
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location

__all__ = ["LinkRequest", "Linked", "link_group", "refuse", "threads_refusal", "resources_refusal", "keep_at_most"]


def threads_refusal(num_warps: int) -> str | None:
    """Why a config of ``num_warps`` warps cannot launch (more than MAX_THREADS_PER_BLOCK
    threads per block), in one line; None when it can."""
    threads = int(num_warps) * 32
    if threads > MAX_THREADS_PER_BLOCK:
        return f"num_warps = {num_warps} is {threads} threads per block; CUDA allows at most {MAX_THREADS_PER_BLOCK} (num_warps <= 32)"
    return None


def resources_refusal(metadata: dict, max_spills: int | None = None) -> str | None:
    """Why a compiled variant is pruned for what ptxas gave it (``n_regs``, ``n_spills`` of its
    metadata, :mod:`autotune_export.cuda.resources`), in one line; None to keep it: more
    registers per block (``n_regs * num_warps * 32``) than
    :data:`~autotune_export.cuda.targets.MAX_REGISTERS_PER_BLOCK` (the launch would fail, as
    Triton's does with "out of resources"), or, with ``max_spills`` (``--max-spills``), more
    spills than that (Triton's ``n_spills``: local memory bytes per thread / 4). Unknown
    figures (None) prune nothing."""
    regs, spills, warps = metadata.get("n_regs"), metadata.get("n_spills"), metadata.get("num_warps")
    if regs is not None and warps is not None and int(regs) * int(warps) * 32 > MAX_REGISTERS_PER_BLOCK:
        return (
            f"needs {regs} registers per thread x {int(warps) * 32} threads = {int(regs) * int(warps) * 32} registers "
            f"per block; a block gets at most {MAX_REGISTERS_PER_BLOCK}"
        )
    if max_spills is not None and spills is not None and int(spills) > max_spills:
        return f"spills {spills} registers (n_spills: local memory bytes per thread / 4), more than --max-spills {max_spills}"
    return None


def keep_at_most(spills: list[int | None], limit: int) -> list[int]:
    """Which of the surviving variants (their ``n_spills`` in config order; None: unknown,
    counted as 0) a cap of ``limit`` keeps, as indices in config order: the fewest spills
    first; among equals (the level the cap cuts through), spread evenly over the config
    order, so that every part of a generated space (its first, slowest name) stays
    represented. Deterministic: the same inputs keep the same variants."""
    if len(spills) <= limit:
        return list(range(len(spills)))
    levels: dict[int, list[int]] = {}
    for i, s in enumerate(spills):
        levels.setdefault(int(s or 0), []).append(i)
    kept: list[int] = []
    for level in sorted(levels):
        members = levels[level]
        need = limit - len(kept)
        if need <= 0:
            break
        if len(members) <= need:
            kept += members
        else:
            kept += [members[(k * len(members)) // need] for k in range(need)]
    return sorted(kept)


def refuse(
    results: Sequence[CompiledVariant | PrunedVariant], max_spills: int | None = None
) -> list[CompiledVariant | PrunedVariant]:
    """Compiled variants that IREE cannot launch become pruned ones (:func:`..abi.refusal`;
    warp specialization may launch more warps than the config asked for: :func:`threads_refusal`;
    registers and spills: :func:`resources_refusal`)."""
    out = []
    for r in results:
        if isinstance(r, CompiledVariant):
            try:
                params = ptx_mod.parse_entry(r.ptx).params
            except ptx_mod.PtxError:
                params = ()
            reason = abi.refusal(r.metadata, params, r.spec.arch)
            if reason is None and r.metadata.get("num_warps") is not None:
                reason = threads_refusal(int(r.metadata["num_warps"]))
            if reason is None:
                reason = resources_refusal(r.metadata, max_spills)
            if reason is not None:
                r = PrunedVariant(r.spec, reason)
        out.append(r)
    return out


@dataclass(frozen=True)
class LinkRequest:
    """A Triton-form group to link, as plain data.

    ``name``/``kernel``: the group's and the kernel's names; ``location`` (the group's) and
    ``grid_location`` (its ``grid(...)`` clause) where diagnostics go; ``signature`` the
    runtime parameters (``none`` ones removed); ``grid`` expressions and ``workload`` names;
    ``configs`` per config its entries as the op spells them and ``constexprs`` its constexpr
    values; ``tied`` the pointers bound to the tensor operands in operand order
    (:func:`autotune_export.ir.binding.tied_outputs`); ``archs`` ``(name, capability)`` per
    target in ``--target`` order (``target`` the option as given, for messages);
    ``executable`` the executable's symbol, ``existing`` its export names and ``next_ordinal``
    the first free ordinal; ``kernel_path``/``shown_path`` the kernel file as loaded and as the
    user names it (for reasons); ``default``, ``tune_workload``, ``reset_to_zero``,
    ``restore_value`` (result indices) carried to the group; ``object_format``, ``cache_dir``
    (None: no memo) and ``jobs`` for :func:`..bundle.link_object`; ``max_spills`` prunes
    variants that spill more (:func:`resources_refusal`), ``max_variants`` keeps at most that
    many configs (:func:`keep_at_most`); None: no such limit."""

    name: str
    kernel: str
    location: Location | None
    grid_location: Location | None
    signature: tuple[Param, ...]
    grid: tuple[str, ...]
    workload: tuple[str, ...]
    configs: tuple[tuple[tuple[str, Any], ...], ...]
    constexprs: tuple[dict, ...]
    tied: tuple[str, ...]
    archs: tuple[tuple[str, int], ...]
    target: str
    executable: str
    existing: frozenset[str]
    next_ordinal: int
    kernel_path: str = ""
    shown_path: str = ""
    default: str | None = None
    tune_workload: Any = None
    reset_to_zero: tuple[int, ...] | None = None
    restore_value: tuple[int, ...] | None = None
    object_format: str = "ptx"
    cache_dir: str | None = None
    jobs: int | None = None
    max_spills: int | None = None
    max_variants: int | None = None


@dataclass(frozen=True)
class Linked:
    """What :func:`link_group` returns: the ``bundle`` (None after an error), its
    ``diagnostics`` in order (remarks, then the error that stopped it, if any), and for the
    checks at the dispatches: the binding ``plan`` (:class:`..abi.AbiPlan`) and the signature
    indices of the pointers some variant ``written`` / ``updated`` (atomically) /
    ``read_first`` (loaded from before stored through), from the TTIR."""

    bundle: Bundle | None
    diagnostics: tuple[Diagnostic, ...]
    plan: Any = None
    written: frozenset[int] = frozenset()
    updated: frozenset[int] = frozenset()
    read_first: frozenset[int] = frozenset()

    @property
    def error(self) -> DiagnosticError | None:
        """The error among the diagnostics (with its notes), or None."""
        errors = [d for d in self.diagnostics if d.severity == "error"]
        return DiagnosticError(errors) if errors else None


def link_group(request: LinkRequest, results: Sequence[CompiledVariant | PrunedVariant]) -> Linked:
    """Link the compiled variants of ``request`` (``results``: target-major, per target each
    config's variants, two per config when scalars carry ``:16``/``:1`` hints) into a bundle.
    Never raises for the user's input: errors are in :attr:`Linked.diagnostics`."""
    diagnostics: list[Diagnostic] = []
    try:
        return _link(request, results, diagnostics)
    except DiagnosticError as err:
        return Linked(None, tuple(diagnostics + err.diagnostics))


def _link(req: LinkRequest, results, diagnostics: list[Diagnostic]) -> Linked:
    loc, archs = req.location, req.archs
    multi = len(archs) > 1
    per_target = len(results) // len(archs)
    per_config = per_target // len(req.configs)  # 2 with scalar ':16' hints, else 1
    results = refuse(results, req.max_spills)
    by_target = [results[t * per_target : (t + 1) * per_target] for t in range(len(archs))]
    survivors = []
    pruned_notes = []
    pruned_remarks = []  # reported when some config survives; else the error's notes say it, once
    for index, cfg in enumerate(req.configs):
        text = config_text(cfg)
        mine_by_target = [rs[index * per_config : (index + 1) * per_config] for rs in by_target]
        pruned = None
        for (tname, _), mine in zip(archs, mine_by_target):
            pruned = next((r for r in reversed(mine) if isinstance(r, PrunedVariant)), None)
            if pruned is not None:
                break
        if pruned is not None:
            reason = pruned.reason.replace(req.kernel_path, req.shown_path) if req.kernel_path else pruned.reason
            # A config whose specialized (fast-path) variant cannot run is dropped whole, as
            # Triton's autotuner drops a config that fails on aligned inputs; with several
            # targets, a config that cannot run on one of them is dropped for all (every
            # target's object has the same exports).
            which = " (specialized variant)" if per_config == 2 and pruned is mine[1] else ""
            where = f" on {tname}" if multi else ""
            pruned_remarks.append(Diagnostic("remark", f"@{req.name}: config {index} {text} pruned{which}{where}: {reason}", loc))
            pruned_notes.append(Diagnostic("note", f"config {index} {text}{where}: {reason}", loc))
        else:
            survivors.append((index, cfg, req.constexprs[index], mine_by_target))
    if not survivors:
        raise DiagnosticError.at(loc, f"every config of @{req.name} was pruned for {req.target}", pruned_notes)
    if req.max_variants is not None and len(survivors) > req.max_variants:
        spills = [max((int(r.metadata.get("n_spills") or 0) for rs in by for r in rs), default=0) for *_, by in survivors]
        keep = set(keep_at_most(spills, req.max_variants))
        for k, (index, cfg, _, _) in enumerate(survivors):
            if k not in keep:
                text = config_text(cfg)
                reason = (
                    f"over --max-variants {req.max_variants} ({len(survivors)} configs can run; kept: the fewest spills, "
                    f"then spread over the config order; this one spills {spills[k]})"
                )
                pruned_remarks.append(Diagnostic("remark", f"@{req.name}: config {index} {text} pruned: {reason}", loc))
                pruned_notes.append(Diagnostic("note", f"config {index} {text}: {reason}", loc))
        survivors = [sv for k, sv in enumerate(survivors) if k in keep]
    diagnostics.extend(pruned_remarks)
    every = [r for *_, by in survivors for rs in by for r in rs]
    compiled = sum(1 for r in every if not r.cached)
    specialized = f" (+{len(survivors)} specialized)" if per_config == 2 else ""
    diagnostics.append(
        Diagnostic(
            "remark",
            f"@{req.name}: {len(survivors)} variant{'s' if len(survivors) != 1 else ''}{specialized} for {req.target} "
            f"({compiled} compiled, {len(every) - compiled} from cache), {len(pruned_notes)} pruned",
            loc,
        )
    )

    # Triton's global scratch, per target and variant: (bytes per program, alignment).
    scratch: list[dict[str, tuple[int, int]]] = [{} for _ in archs]
    for index, cfg, consts, by in survivors:
        base = variant_name(req.name, index, list(cfg))
        for t, rs in enumerate(by):
            for r, name in zip(rs, (base, base + "_spec")):
                size = int(r.metadata.get("global_scratch_size") or 0)
                if size > 0:
                    scratch[t][name] = (size, max(1, int(r.metadata.get("global_scratch_align") or 1)))
    for t, needs_t in enumerate(scratch):
        if needs_t:
            needs = ", ".join(f"@{n} {sz} B (align {a})" for n, (sz, a) in needs_t.items())
            where = f" on {archs[t][0]}" if multi else ""
            diagnostics.append(
                Diagnostic(
                    "remark",
                    f"@{req.name}: global scratch per program{where}: {needs}; passed as the last binding, allocated at the dispatch",
                    loc,
                )
            )
    signature = list(req.signature)
    try:
        plan = abi.plan(signature, scratch=any(scratch), tied=req.tied)
    except abi.AbiError as err:
        raise DiagnosticError.at(loc, str(err)) from None
    nsig = len(signature)
    position = {p.name: i for i, p in enumerate(signature)}
    written: set[int] = set()  # signature indices of pointers a variant may write through
    updated: set[int] = set()  # ... that a variant may update atomically
    read_first: set[int] = set()  # ... that a variant loads from before storing through them
    names, spec_names = [], []
    units: list[tuple] = []  # (index, cfg, consts, [result per target], name)
    parts: list[list] = [[] for _ in archs]
    for index, cfg, consts, by in survivors:
        base = variant_name(req.name, index, list(cfg))
        for k, name in enumerate((base, base + "_spec")[:per_config]):
            if name in req.existing:
                raise DiagnosticError.at(loc, f"@{req.name}: an export named @{name} already exists in the executable")
            per_target_results = []
            for t, rs in enumerate(by):
                r = rs[k]
                text = r.ptx
                if name.endswith("_spec"):
                    # Parameters specialized to 1 left the entry: put unused placeholders back so
                    # the specialized entry takes the same parameters as its sibling.
                    for i, p in enumerate(signature):
                        if p.hint == 1:
                            text = ptx_mod.insert_param(text, i, abi.SCALARS[p.type].ptx[0])
                r = dataclasses.replace(r, ptx=text)
                entry = ptx_mod.parse_entry(r.ptx)
                if len(entry.params) < nsig:
                    raise DiagnosticError.at(
                        loc, f"config {index}: the PTX entry has {len(entry.params)} parameters, the signature {nsig}"
                    )
                try:
                    plan.check_ptx_types([p.ptx_type for p in entry.params[:nsig]])
                    order, drop, adapt = plan.link_order(len(entry.params))
                except abi.AbiError as err:
                    raise DiagnosticError.at(loc, f"config {index}: {err}") from None
                if name in scratch[t] and scratch[t][name][1] > 1:
                    adapt[nsig] = f"align:{scratch[t][name][1]}"
                # written_params: indices into the variant's own signature (the
                # specialized one lacks the ':1' parameters), mapped here by name.
                written_list = r.metadata.get("written_params")
                if written_list is None:  # not analysed: every pointer may be written
                    written |= {i for i, p in enumerate(signature) if p.is_pointer}
                else:
                    own = [n for n, _ in r.spec.signature]
                    written |= {position[own[i]] for i in written_list if i < len(own)}
                    updated |= {position[own[i]] for i in r.metadata.get("updated_params") or () if i < len(own)}
                    read_first |= {position[own[i]] for i in r.metadata.get("read_first_params") or () if i < len(own)}
                made = r.metadata.get("addresses_from_data") or []
                if made:
                    raise DiagnosticError.at(
                        loc,
                        f"kernel '{req.kernel}' of @{req.name} addresses memory through {' and '.join(made)}: a "
                        "device address the host computed (a tensor of data_ptr() values, as grouped GEMMs pass, or "
                        "one passed as an integer) means nothing inside an IREE program, which gives a kernel its "
                        "buffers only as bindings; pass each buffer as a pointer parameter",
                    )
                parts[t].append(ptx_mod.LinkPart(r.ptx, name, order, tuple(drop), adapt))
                per_target_results.append(r)
            units.append((index, cfg, consts, per_target_results, name))
        names.append(base)
        if per_config == 2:
            spec_names.append(base + "_spec")
    try:
        objects = tuple(
            link_object(parts[t], object_format=req.object_format, cache_dir=req.cache_dir, jobs=req.jobs)
            for t in range(len(archs))
        )
    except ptx_mod.PtxError as err:
        raise DiagnosticError.at(loc, f"@{req.name}: {err}") from None
    exports = []
    for ordinal, (index, cfg, consts, rs, name) in enumerate(units, start=req.next_ordinal):
        result = rs[0]
        env: dict[str, Any] = {k: v for k, v in consts.items() if isinstance(v, int) and not isinstance(v, bool)}
        env.update({"num_warps": result.metadata["num_warps"], "num_stages": dict(cfg).get("num_stages", 3), "num_ctas": 1})
        try:
            exprs = [grid_mod.parse(g) for g in req.grid]
            # Workload values are symbolic (None); the count region binds them.
            values = {**env, **{w: None for w in req.workload}}
            grid_mod.check_grid(exprs, values)
        except grid_mod.GridError as err:
            raise DiagnosticError.at(req.grid_location, f"{err} for config {index} {config_text(cfg)}") from None
        # A dimension constant for this config must be within CUDA's grid limits (the one home:
        # targets.grid_limit_problem); one that depends on the workload is checked by CUDA at launch.
        problem = grid_limit_problem([n if n is not None else 1 for n in (grid_mod.fold(e, values) for e in exprs)])
        if problem:
            raise DiagnosticError.at(
                req.grid_location,
                f"{problem} for config {index} {config_text(cfg)}: the launch cannot run (cuLaunchKernel refuses it)",
            )
        need = [scratch[t][name] for t in range(len(archs)) if name in scratch[t]]
        exports.append(
            ExportSpec(
                name=name,
                ordinal=ordinal,
                grid=req.grid,
                constants=tuple(env.items()),
                threads=[int(r.metadata["num_warps"]) * 32 for r in rs],
                shared=[int(r.metadata.get("shared", 0)) for r in rs],
                scratch=(max(n for n, _ in need), max(a for _, a in need)) if need else None,
                config=tuple(cfg),
            )
        )
    divisible = equal_one = None
    if spec_names:
        scalars = [signature[i] for i in plan.scalars]
        divisible = [k for k, p in enumerate(scalars) if p.hint == 16]
        equal_one = [k for k, p in enumerate(scalars) if p.hint == 1]
    group = GroupSpec(
        name=req.name,
        variants=names,
        specialized=spec_names or None,
        divisible=divisible,
        equal_one=equal_one,
        default=req.default,
        tune_workload=req.tune_workload,
        reset_to_zero=req.reset_to_zero,
        restore_value=req.restore_value,
    )
    bundle = Bundle(req.executable, objects, tuple(exports), plan.read_only(written), plan.num_constants, req.workload, group)
    return Linked(bundle, tuple(diagnostics), plan, frozenset(written), frozenset(updated), frozenset(read_first))
