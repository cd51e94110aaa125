"""The builder stage: a :class:`~autotune_export.cuda.bundle.Bundle` written into the IR, the
one place that writes a group's objects, exports and group op (materialize-triton-variants for
the Triton form, :func:`autotune_export.interop.jax_triton.convert_stablehlo` for StableHLO
with PTX). Not a pass: the passes and front ends call :func:`write_bundle`.

What it writes, with the bindings (:mod:`autotune_export.ir.builders`,
:mod:`autotune_export.ir.hal_attrs`):

* the objects: one object keyed by the generic CUDA target (any architecture), or with several
  one per architecture keyed by its target (split into ``hal.executable.variant``\\ s by
  split-architectures); labelled ``EXE[.ARCH].ptx`` / ``.cubin``;
* per export ``hal.executable.export`` with the shared pipeline layout, ``workgroup_size =
  [threads, 1, 1]`` (the first object's; with several, each target's block size and shared
  memory in ``autotune.targets``), ``workgroup_local_memory`` (the largest), a count region
  from its grid expressions (:func:`autotune_export.ir.builders.count_builder`) or constant count,
  its config (``autotune.config``) and global scratch (``autotune.global_scratch``);
* the group op in its ``variants([...])`` form (:class:`autotune_export.ir.group.AutotuneGroup`).
"""

from __future__ import annotations

from iree.compiler import ir

from autotune_export.contract import VARIANT_CONFIG_ATTR
from autotune_export.cuda.bundle import Bundle, ExportSpec
from autotune_export.ir import builders, hal_attrs
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.markers import SCRATCH_ATTR, TARGETS_ATTR
from autotune_export.ir.variant_config import config_attr
from autotune_export.ir.walk import sym_name
from autotune_export.support.diagnostics import DiagnosticError, Location

__all__ = ["write_bundle"]


def _objects_attr(bundle: Bundle, label: str) -> ir.Attribute:
    multi = len(bundle.objects) > 1
    entries = []
    for o in bundle.objects:
        suffix = f".{o.arch}" if multi else ""
        # One object: the key that matches every CUDA target. Several: one key per
        # architecture, split into hal.executable.variants by split-architectures.
        target = hal_attrs.cuda_target(o.arch if multi else None)
        entries.append((target, [hal_attrs.executable_object(f"{label}{suffix}.{o.format}", o.data)]))
    return hal_attrs.executable_objects(entries)


def _group(bundle: Bundle) -> AutotuneGroup | None:
    g = bundle.group
    if g is None:
        return None
    out = AutotuneGroup(
        name=g.name,
        variants=list(g.variants),
        tune_workload=None if g.tune_workload is None else [list(w) for w in g.tune_workload],
        specialized=None if g.specialized is None else list(g.specialized),
        divisible=None if g.divisible is None else list(g.divisible),
        equal_one=None if g.equal_one is None else list(g.equal_one),
        reset_to_zero=None if g.reset_to_zero is None else list(g.reset_to_zero),
        restore_value=None if g.restore_value is None else list(g.restore_value),
    )
    if g.default is not None:
        out.default = g.default
    return out


def _export(bundle: Bundle, e: ExportSpec, layout: ir.Attribute, ip: ir.InsertionPoint) -> None:
    attributes: dict[str, ir.Attribute] = {}
    if e.config is not None:
        # The config travels with the export, for the later passes (the IR is the only state
        # between passes) and inspect.
        attributes[VARIANT_CONFIG_ATTR] = config_attr(list(e.config))
    if e.scratch is not None:
        attributes[SCRATCH_ATTR] = ir.ArrayAttr.get([builders.i64_attr(v) for v in e.scratch])
    if len(bundle.objects) > 1:
        attributes[TARGETS_ATTR] = ir.DictAttr.get(
            {
                o.arch: ir.ArrayAttr.get([builders.i64_attr(threads), builders.i64_attr(shared)])
                for o, threads, shared in zip(bundle.objects, e.threads, e.shared)
            }
        )
    if e.count is not None:
        count = builders.constant_count(e.count)
    else:
        count = builders.count_builder([grid_mod.parse(g) for g in e.grid], dict(e.constants), list(bundle.workload))
    # With several targets the export holds the first target's block size and the largest
    # shared memory; split-architectures gives each target's copy its own (autotune.targets).
    builders.export(
        e.name,
        e.ordinal,
        layout,
        list(bundle.workload),
        count,
        workgroup_size=[e.threads[0], 1, 1],
        workgroup_local_memory=max(e.shared) or None,
        attributes=attributes or None,
        ip=ip,
    )


def write_bundle(
    bundle: Bundle, *, source=None, group_op=None, ip: ir.InsertionPoint | None = None, location: Location | None = None
):
    """Write ``bundle`` into the IR, in the current context and location.

    Into an existing ``hal.executable.source`` (``source``, the Triton form): its objects set,
    the exports added right after ``group_op`` and ``group_op`` replaced by the group in its
    ``variants([...])`` form (at ``group_op``'s location). Raises DiagnosticError at
    ``location`` (before changing the IR) when the source already has objects or the group's
    ``default(@...)`` names no variant.

    Else a new ``hal.executable.source @bundle.executable`` at ``ip`` with the objects, the
    group op (when the bundle has a group) and the exports, in that order. Returns the
    source op."""
    if source is not None:
        return _into_source(bundle, source, group_op, location)
    label = bundle.executable
    source = builders.executable_source(bundle.executable, _objects_attr(bundle, label), ip=ip)
    body = builders.source_block(source)
    group = _group(bundle)
    if group is not None:
        group.build(ip=body)
    layout = hal_attrs.pipeline_layout(list(bundle.read_only), bundle.num_constants)
    for e in bundle.exports:
        _export(bundle, e, layout, body)
    return source


def _into_source(bundle: Bundle, source, op, location: Location | None):
    group = _group(bundle)
    if "objects" in source.attributes:
        raise DiagnosticError.at(
            location,
            f"@{sym_name(source)} already has objects; IREE takes one object per external executable, "
            "so a triton(...) group needs a hal.executable.source of its own",
        )
    if group.default is not None and group.default not in group.variants:
        raise DiagnosticError.at(
            location,
            f"default(@{group.default}) names no variant of @{group.name}; the variants are "
            f"{', '.join('@' + n for n in group.variants)}",
        )
    with source.context, op.location:
        source.attributes["objects"] = _objects_attr(bundle, sym_name(source))
        layout = hal_attrs.pipeline_layout(list(bundle.read_only), bundle.num_constants)
        block = source.regions[0].blocks[0]
        block_ops = [o.operation for o in block.operations]
        index = next(i for i, o in enumerate(block_ops) if o == op)
        after = block_ops[index + 1] if index + 1 < len(block_ops) else None
        point = ir.InsertionPoint(after) if after is not None else ir.InsertionPoint(block)
        for e in bundle.exports:
            _export(bundle, e, layout, point)
    group.replace(op)
    return source
