"""``autotune-export inspect X.mlir``: the front end parses the file and
``materialize-triton-variants`` runs (through the variant cache, so a file that was compiled
before compiles nothing; ``--tuning-results R.json`` also runs ``pin-variants``), then the
exports, the group ops and the executables' objects are read into the report's model
(:mod:`~autotune_export.tools.inspect_model`)."""

from __future__ import annotations

from typing import Any

from autotune_export.cuda import abi
from autotune_export.cuda.resources import Resources, ResourceError
from autotune_export.frontend.reader import parse_source
from autotune_export.ir import hal_attrs
from autotune_export.ir.allowed import allowed_names
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import OPTION_NAMES, variant_name
from autotune_export.ir.variant_config import export_config
from autotune_export.ir.walk import (
    dispatch_sites,
    enclosing_function,
    entry_point_refs,
    executable_sources,
    exports_of,
    groups_of,
    sym_name,
)
from autotune_export.passes import PassContext, run_pipeline
from autotune_export.passes.dispatch_values import dispatch_label
from autotune_export.support import progress
from autotune_export.support.diagnostics import Diagnostic
from autotune_export.tools.inspect_model import (
    ExecutableInfo,
    GroupInfo,
    Inspection,
    SpaceInfo,
    VariantInfo,
    parse_layout,
    strided_of,
)
from autotune_export.tools.inspect_objects import image_kind, image_target, resource_usage

__all__ = ["inspect_mlir"]


def _triton_groups(module, source_name: str) -> dict[tuple[str, str], Any]:
    """Triton-form groups before materialization, by (executable, group): their configs
    (the kernel's triton.autotune configs when the group gives none) and signature."""

    out = {}
    for src in executable_sources(module):
        for op in groups_of(src):
            g = AutotuneGroup.from_op(op, source_name)
            if g.is_triton:
                out[(sym_name(src), g.name)] = g
    return out


def _default_configs(group, base_dir: str, target: str = "sm_80") -> list[list[tuple[str, Any]]] | None:
    from autotune_export.cuda import triton_compile as tc
    from autotune_export.cuda.targets import TargetError, parse_targets

    try:
        # Imported for the first target, as the build did: the file is not executed again.
        kernel = tc.load_kernel(tc.group_kernel_source(group, base_dir, parse_targets(target)[0].capability)[0])
    except (tc.KernelLoadError, TargetError):
        return None
    if not kernel.default_configs:
        return None
    configs = []
    for cfg in kernel.default_configs:
        entries = list(cfg.get("kwargs", {}).items())
        entries += [(opt, cfg[opt]) for opt in OPTION_NAMES if cfg.get(opt) is not None]
        configs.append(entries)
    return configs


def _space_info(group) -> SpaceInfo | None:
    """The generated space of a Triton-form group as read (before materializing), or None."""
    if group is None or group.space is None:
        return None
    generated = 1
    for _, values, _ in group.space:
        generated *= len(values)
    text = _space_sugar(group)
    return SpaceInfo(text, group.space_where, generated, generated - len(group.configs), len(group.configs))


def _space_sugar(group) -> str:
    """``product(...)`` of the group's space on one line (its sugared clause, unwrapped)."""
    clause = " ".join(
        part.strip()
        for part in AutotuneGroup(name="g", configs=group.configs, space=group.space)
        .to_sugar()
        .split("configs(", 1)[1]
        .splitlines()
    )
    return clause[:-1] if clause.endswith(")") else clause


def inspect_mlir(
    source,
    *,
    target: str = "sm_80",
    jobs: int | None = None,
    executor=None,
    object_format: str = "ptx",
    ptx_version: int | None = 86,
    cache_dir: str | None = None,
    use_cache: bool = True,
    tuning_results: str | None = None,
    resources: bool = True,
    max_spills: int | None = None,
    max_variants: int | None = None,
) -> Inspection:
    """Inspect an ``.mlir`` source (a :class:`autotune_export.frontend.SourceFile`): parse it,
    run materialize-triton-variants (and pin-variants with ``tuning_results``), read the
    groups. The options are :class:`autotune_export.passes.PassContext`'s. Raises
    DiagnosticError for user errors (as the compile command)."""
    from autotune_export.cuda import triton_compile as tc

    module = parse_source(source)
    triton_groups = _triton_groups(module, source.name)
    remarks: list[Diagnostic] = []

    def remark(diag: Diagnostic) -> None:
        remarks.append(diag)
        progress.note(diag.format())  # -v

    ctx = PassContext(source=source, remark=remark)
    passes = ["materialize-triton-variants"] + (["pin-variants"] if tuning_results else [])
    run_pipeline(
        passes,
        ctx,
        module,
        target=target,
        jobs=jobs,
        executor=executor,
        object_format=object_format,
        ptx_version=ptx_version,
        cache_dir=cache_dir,
        use_cache=use_cache,
        tuning_results=tuning_results,
        max_spills=max_spills,
        max_variants=max_variants,
    )
    memo = (str(cache_dir or tc.default_cache_dir())) if use_cache else None

    notes: list[str] = []
    executables: list[ExecutableInfo] = []
    groups: list[GroupInfo] = []
    for src in executable_sources(module):
        exe = sym_name(src)
        exports = exports_of(src)
        payloads = hal_attrs.object_payloads(src, source.base_dir)
        usage: dict[str, Resources] = {}
        kind = target_arch = None
        for label, image, error in payloads:
            if image is None:
                notes.append(f"@{exe}: {error}")
                continue
            kind = image_kind(image)
            target_arch = image_target(image) or target_arch
            if resources and any(groups_of(src)):
                try:
                    usage.update(resource_usage(image, memo))
                except ResourceError as err:
                    notes.append(f"@{exe}: no resource usage for object '{label}': {err}")
        ordinals = {}
        for name, op in exports.items():
            if "ordinal" in op.attributes:
                ordinals[name] = int(op.attributes["ordinal"].value)
        ordered = sorted(exports, key=lambda n: ordinals.get(n, 1 << 30))
        executables.append(ExecutableInfo(exe, kind, target_arch, ordered))

        for op in groups_of(src):
            g = AutotuneGroup.from_op(op, source.name)
            original = triton_groups.get((exe, g.name))
            # The configs materialize-triton-variants compiled (after prune_configs_by and
            # heuristics), as it recorded them on the exports: what each variant really is.
            configs: dict[str, list[tuple[str, Any]]] = {}
            for v in g.variants or []:
                try:
                    recorded = export_config(exports[v]) if v in exports else None
                except ValueError as err:
                    notes.append(f"@{exe}::@{v}: {err}")
                    recorded = None
                if recorded is not None:
                    configs[v] = [(k, value) for k, value in recorded]
            guard_names: dict[str, list[str]] = {}
            if original is not None:
                if not configs:
                    cfgs = (
                        original.configs if original.configs is not None else _default_configs(original, source.base_dir, target)
                    )
                    for index, cfg in enumerate(cfgs or []):
                        configs[variant_name(g.name, index, cfg)] = cfg
                try:
                    kept = abi.plan(original.signature)  # indices into its signature (no `none` parameters)
                    scalars = [kept.signature[i].name for i in kept.scalars]
                except (abi.AbiError, IndexError, TypeError):
                    scalars = []
            else:
                scalars = []
            names = list(g.variants or [])
            spec_map = dict(zip(names, g.specialized or []))
            guards = {}
            for kind_name, ids in (("divisible_by_16", g.divisible), ("equal_to_1", g.equal_one)):
                if ids:
                    guards[kind_name] = list(ids)
                    if scalars and all(0 <= i < len(scalars) for i in ids):
                        guard_names[kind_name] = [scalars[i] for i in ids]
            default = g.default or (names[0] if names else None)
            variants: list[VariantInfo] = []
            layout = None
            for name in names:
                for member, of in ((name, None), (spec_map.get(name), name)):
                    if member is None:
                        continue
                    op_ = exports.get(member)
                    info = VariantInfo(
                        member,
                        specialized_of=of,
                        default=(of is None and member == default),
                        config=configs.get(member) if of is None else None,
                        resources=usage.get(member),
                    )
                    if op_ is None:
                        notes.append(f"@{exe}::@{g.name}: variant @{member} is not an export of @{exe}")
                    else:
                        a = op_.attributes
                        info.ordinal = ordinals.get(member)
                        if "workgroup_size" in a:
                            info.workgroup_size = [int(x.value) for x in a["workgroup_size"]]
                        info.shared_bytes = int(a["workgroup_local_memory"].value) if "workgroup_local_memory" in a else 0
                        if layout is None and "layout" in a:
                            layout = parse_layout(str(a["layout"]))
                    variants.append(info)
            host, strided = None, []
            members = {g.name, *names, *spec_map.values()}
            for site in dispatch_sites(module):
                if any(e == exe and n in members for e, n in entry_point_refs(site)):
                    fn = enclosing_function(site)
                    host = sym_name(fn) if fn is not None else None
                    if fn is not None and "iree.reflection" in fn.attributes:
                        from iree.compiler import ir

                        from autotune_export.contract import STRIDED_KEY

                        refl = ir.DictAttr(fn.attributes["iree.reflection"])
                        if STRIDED_KEY in refl:
                            strided = strided_of({STRIDED_KEY: ir.StringAttr(refl[STRIDED_KEY]).value}, f"@{host}", notes)
                    break
            allowed = []
            for k, site in enumerate(d for d in dispatch_sites(module) if (exe, g.name) in entry_point_refs(d)):
                try:
                    narrowed = allowed_names(site)
                except ValueError as err:
                    notes.append(f"@{exe}::@{g.name}: {dispatch_label(site, k)}: {err}")
                    continue
                if narrowed is not None:
                    allowed.append((dispatch_label(site, k), narrowed))
            pruned = [
                d.message.split(": ", 1)[1] if ": " in d.message else d.message
                for d in remarks
                if d.message.startswith(f"@{g.name}: config ")
                and " pruned" in d.message
                and (d.location is None or g.location is None or d.location == g.location)
            ]
            groups.append(
                GroupInfo(
                    executable=exe,
                    group=g.name,
                    variants=variants,
                    layout=layout,
                    default=default,
                    frozen=g.default is not None,
                    kernel=(original.triton[0], original.triton[1]) if original is not None else None,
                    specialized={k: v for k, v in spec_map.items()},
                    guards=guards,
                    guard_names=guard_names,
                    pruned=pruned,
                    host=host,
                    choices=list(g.choices or []),
                    strided=strided,
                    space=_space_info(original),
                    allowed=allowed,
                )
            )
    if not groups:
        groups = _program_groups(module, executables, notes)
    return Inspection(source.name, "mlir", executables, groups, notes)


def _program_groups(module, executables: list[ExecutableInfo], notes: list[str]) -> list[GroupInfo]:
    """The groups of a module that carries them only in ``@__autotune``'s reflection metadata
    (``autotune-export program --emit mlir``: IREE's dispatches regrouped, no group ops), read
    as the .vmfb's are (:func:`autotune_export.tools.inspect_vmfb.reflected_groups`); [] when
    the module has no such function. Malformed metadata is a note."""
    from iree.compiler import ir

    from autotune_export.contract import AUTOTUNE_FUNCTION, REFLECTION_KEY, STRIDED_KEY, decode_reflection
    from autotune_export.tools.inspect_vmfb import reflected_groups

    functions = {sym_name(op): op for op in module.body.operations if "iree.reflection" in op.operation.attributes}
    fn = functions.get(AUTOTUNE_FUNCTION)
    if fn is None:
        return []
    refl = ir.DictAttr(fn.operation.attributes["iree.reflection"])
    if REFLECTION_KEY not in refl:
        return []
    try:
        meta = decode_reflection(ir.StringAttr(refl[REFLECTION_KEY]).value)
    except ValueError as err:
        notes.append(f"@{AUTOTUNE_FUNCTION}: {err}")
        return []
    groups = reflected_groups(meta, {}, executables, notes)
    for m, info in zip(meta, groups):
        host = functions.get(m.host) if m.host else None
        if host is not None:
            host_refl = ir.DictAttr(host.operation.attributes["iree.reflection"])
            if STRIDED_KEY in host_refl:
                info.strided = strided_of({STRIDED_KEY: ir.StringAttr(host_refl[STRIDED_KEY]).value}, f"@{m.host}", notes)
    return groups
