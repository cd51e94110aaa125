"""``autotune-export inspect X.vmfb``: the groups of a compiled module. The ``autotune.groups``
reflection metadata of ``@__autotune`` is read with ``iree.runtime`` as the runtime reads it
(:func:`autotune_export.runtime.module_reflection`; no device, no driver: a bare ``VmInstance``
loads the module), and each CUDA executable (a member of the .vmfb's zip directory) gives its
exports' block size, shared memory, constants, binding flags and image
(:mod:`~autotune_export.tools.inspect_objects`). The metadata also carries each variant's
Triton config, the frozen per-workload ``choices(...)`` and whether ``default(@v)`` froze the
default (modules of earlier releases lack these two: shown as unknown)."""

from __future__ import annotations

import re
from typing import Any

from autotune_export.contract import GroupReflection
from autotune_export.cuda.resources import Resources, ResourceError
from autotune_export.runtime import module_reflection
from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.tools.inspect_model import ExecutableInfo, GroupInfo, Inspection, Layout, VariantInfo, strided_of
from autotune_export.tools.inspect_objects import (
    CudaExport,
    binding_flags,
    image_kind,
    image_target,
    read_cuda_executable,
    resource_usage,
    vmfb_members,
)

__all__ = ["inspect_vmfb"]


def _reflection(data: bytes) -> list[GroupReflection]:
    """The groups of ``@__autotune``'s reflection metadata, read as the runtime reads them
    (:func:`autotune_export.runtime.module_reflection`). Raises RuntimeError/ValueError when
    the bytes are no IREE module, DiagnosticError when the module carries no (readable)
    metadata."""
    import iree.runtime as rt

    module = rt.VmModule.copy_buffer(rt.VmInstance(), data)
    try:
        groups = module_reflection(module)
    except ValueError as err:
        raise DiagnosticError.at(None, str(err)) from None
    return groups, module


def inspect_vmfb(path: str, data: bytes | None = None, *, resources: bool = True, cache_dir: str | None = None) -> Inspection:
    """Inspect a compiled module (see the module docstring). ``cache_dir`` memoizes assembled
    cubins (None: no cache)."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    try:
        groups_meta, vm_module = _reflection(data)
    except (RuntimeError, ValueError) as err:
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DiagnosticError.at(None, f"cannot load '{path}' as an IREE module: {detail}") from None
    notes: list[str] = []
    executables: list[ExecutableInfo] = []
    by_export: dict[str, tuple[str, CudaExport, dict[str, Resources] | None]] = {}
    known = sorted({m.executable for m in groups_meta}, key=len, reverse=True)
    for member, blob in vmfb_members(data):
        # Members are named <executable>_<format>.<ext> (cuda_nvptx_fb.fb, embedded_elf_x86_64.so).
        name = next((k for k in known if k and member.startswith(k + "_")), None)
        if name is None and "_linked_" in member:
            # The dispatches IREE generates itself, linked into one executable named after the
            # module (<module>_linked, <module>_iree_linked): the tuning entries' fake data.
            continue
        if name is None:
            name = re.sub(r"_cuda_nvptx_fb$", "", re.sub(r"\.fb$", "", member))
        try:
            exe = read_cuda_executable(blob)
        except ValueError:
            executables.append(ExecutableInfo(name, None, None, []))
            notes.append(
                f"@{name}: {member[len(name) + 1 :] or member} is not a CUDA executable: "
                "its exports' sizes and resources are not shown"
            )
            continue
        image = exe.images[0] if exe.images else b""
        usage: dict[str, Resources] | None = None
        if resources and image:
            try:
                usage = resource_usage(image, cache_dir)
            except ResourceError as err:
                notes.append(f"@{name}: no resource usage: {err}")
        kind = image_kind(image) if image else None
        executables.append(ExecutableInfo(name, kind, image_target(image) if image else None, [e.name for e in exe.exports]))
        for e in exe.exports:
            by_export[e.name] = (name, e, usage)

    groups = reflected_groups(groups_meta, by_export, executables, notes)
    for meta, info in zip(groups_meta, groups):
        fn = vm_module.lookup_function(meta.host) if meta.host else None
        if fn is not None:
            info.strided = strided_of(dict(fn.reflection), f"@{meta.host}", notes)
    return Inspection(path, "vmfb", executables, groups, notes)


def reflected_groups(
    groups_meta: list[GroupReflection],
    by_export: dict[str, tuple[str, CudaExport, dict[str, Resources] | None]],
    executables: list[ExecutableInfo],
    notes: list[str],
) -> list[GroupInfo]:
    """The report's groups from ``@__autotune``'s reflection metadata (``groups_meta``, decoded
    by :func:`autotune_export.contract.decode_reflection`): variants with their reflected
    configs, the default, frozen choices, allowed sets, the reference computation (its entry
    and note: ``reference``, ``reference_note``); each variant (and its ``_spec``
    export) gets the block size, shared memory and resources of its CUDA export when
    ``by_export`` (export name -> (executable, export, resources)) has it. Strided tensors are
    the caller's (they are on the host functions). Malformed entries become ``notes``. Used for
    a .vmfb and for a program's MLIR (``autotune-export program --emit mlir``: no objects)."""
    groups = []
    for meta in groups_meta:
        variants: list[VariantInfo] = []
        specialized: dict[str, str] = {}
        layout = None
        default_index = meta.default
        names = list(meta.variants)
        configs = meta.configs if isinstance(meta.configs, list) else []
        for k, vname in enumerate(names):
            config = _reflected_config(configs[k] if k < len(configs) else None)
            for name in (vname, vname + "_spec"):
                hit = by_export.get(name)
                if hit is None:
                    if name == vname:
                        variants.append(VariantInfo(vname, default=(k == default_index), config=config))
                    continue
                exe_name, e, usage = hit
                if name != vname:
                    specialized[vname] = name
                if layout is None:
                    layout = Layout([binding_flags(b) for b in e.binding_flags], e.constants)
                variants.append(
                    VariantInfo(
                        name=name,
                        ordinal=_ordinal(executables, exe_name, name),
                        workgroup_size=list(e.block_dims),
                        shared_bytes=e.shared_bytes,
                        resources=(usage or {}).get(name),
                        default=(name == vname and k == default_index),
                        specialized_of=vname if name != vname else None,
                        config=config if name == vname else None,
                    )
                )
        default = names[default_index] if 0 <= default_index < len(names) else None
        groups.append(
            GroupInfo(
                executable=meta.executable,
                group=meta.group,
                variants=variants,
                layout=layout,
                default=default,
                frozen=meta.default_frozen,
                specialized=specialized,
                host=meta.host,
                choices=_frozen_choices(meta, names, f"@{meta.executable}::@{meta.group}", notes),
                allowed=_allowed(meta, names, f"@{meta.executable}::@{meta.group}", notes),
                reference=meta.reference if isinstance(meta.reference, str) else "",
                reference_note=meta.reference_note if isinstance(meta.reference_note, str) else "",
            )
        )
    return groups


def _reflected_config(entry) -> list[tuple[str, Any]] | None:
    """A variant's config from the reflection metadata (``[[key, value], ...]``), or None when
    the module does not carry it (or it is malformed)."""
    if not isinstance(entry, list) or not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in entry):
        return None
    return [(k, v) for k, v in entry]


def _ordinal(executables: list[ExecutableInfo], exe_name: str, export: str) -> int | None:
    for e in executables:
        if e.name == exe_name and export in e.exports:
            return e.exports.index(export)
    return None


def _allowed(meta: GroupReflection, names: list[str], where: str, notes: list[str]) -> list:
    """The group's dispatch sites that may run fewer variants (reflection ``allowed``) as
    :attr:`GroupInfo.allowed`; a malformed entry is a note and left out."""
    out = []
    for entry in meta.allowed or []:
        try:
            out.append((str(entry["site"]), [names[int(k)] for k in entry["variants"]]))
        except (KeyError, TypeError, ValueError, IndexError):
            notes.append(f"{where}: an allowed entry of the reflection metadata is malformed: {entry!r}")
    return out


def _frozen_choices(meta: GroupReflection, names: list[str], where: str, notes: list[str]):
    """The group's frozen ``choices(...)`` from its reflection (``frozen_choices``) as
    :attr:`GroupInfo.choices` (workload values -> variant name, in order); None when the module
    does not say (``default_frozen`` null: a module of an earlier release). A malformed entry
    is a note (``where`` names the group) and is left out."""
    if meta.default_frozen is None and not meta.frozen_choices:
        return None
    out = []
    for entry in meta.frozen_choices:
        values = entry.get("workload") if isinstance(entry, dict) else None
        k = entry.get("variant") if isinstance(entry, dict) else None
        if (
            not isinstance(values, list)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
            or not isinstance(k, int)
            or not 0 <= k < len(names)
        ):
            notes.append(f"{where}: a frozen choice of the reflection metadata is malformed: {entry!r}")
            continue
        out.append((tuple(values), names[k]))
    return out
