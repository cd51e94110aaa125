"""``autotune-export inspect FILE``: what a group holds, from an ``.mlir`` or a ``.vmfb``.

For every autotuning group it shows the variants (export name, ordinal, workgroup size, dynamic
shared memory), the group's layout (bindings and constants), the Triton config of each variant
when the input has it, the default variant (and whether ``default(@v)`` froze it), the
specialized variants and the guards that pick them, and per variant the registers and spills
that ptxas gave it:

* **.mlir**: the front end parses the file and ``materialize-triton-variants`` runs (through
  the variant cache, so a file that was compiled before compiles nothing), then the exports
  and the executable's object are read. ``--tuning-results R.json`` also runs ``pin-variants``.
* **.vmfb**: the ``autotune.groups`` reflection metadata of ``@__autotune`` is read with
  ``iree.runtime`` (no device, no driver: a bare ``VmInstance`` loads the module to read it),
  and each CUDA executable (a ``CDA1`` flatbuffer: a member of the .vmfb's zip directory)
  gives its exports' block size, shared memory, constants and binding flags, and its PTX or
  cubin image. The reflection metadata (read as the runtime reads it,
  :func:`autotune_export.runtime.module_reflection`) also carries each variant's Triton config
  when it was built from the Triton form (``configs``, from the configs materialize recorded on
  the exports; none for RFC-form variants). A .vmfb keeps no ``specialized`` clause: specialized variants are
  recognized by materialize's ``<variant>_spec`` naming.

Registers and spills come from the cubin: PTX is assembled with Triton's ptxas
(:func:`autotune_export.cuda.ptx.assemble`, memoized in the cache under the key materialize uses, so
an unchanged module is not assembled again), then ``cuobjdump --dump-resource-usage`` (bundled
with Triton) reads each function's ``REG``, ``LOCAL``, ``STACK`` and static ``SHARED``. Spills are
reported as Triton does (``n_spills`` = local memory bytes per thread / 4; spilled registers
live in the stack frame). No GPU is needed.

The default output is a table; ``--json`` prints the same facts for machines (format
``autotune-export.inspect/2``; a layout's ``bindings`` are access names, ``"ReadOnly"`` or
``"ReadWrite"`` (flags joined by ``+``: ``"ReadOnly+Indirect"``), its ``binding_flags`` the
flag lists; format 1 wrote ``[]`` for a read-write binding). The library entry point is
:func:`inspect_path`.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import re
import struct
import sys
import zipfile
from dataclasses import dataclass, field
from typing import Any, Sequence

from autotune_export.contract import GroupReflection
from autotune_export.cuda import abi
from autotune_export.cuda import ptx as ptx_mod
from autotune_export.cuda.resources import Resources, ResourceError, cubin_resources, parse_resource_usage  # noqa: F401 (re-exported)
from autotune_export.cuda.workers import jobs_argument
from autotune_export.frontend.reader import SourceFile, parse_source
from autotune_export.ir import hal_attrs
from autotune_export.ir.group import OPTION_NAMES, AutotuneGroup, variant_name
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
from autotune_export.passes.pipeline import add_pruning_arguments
from autotune_export.runtime import module_reflection
from autotune_export.support import progress
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError

__all__ = [
    "FORMAT",
    "Layout",
    "Resources",
    "VariantInfo",
    "GroupInfo",
    "SpaceInfo",
    "ExecutableInfo",
    "Inspection",
    "CudaExport",
    "CudaExecutable",
    "inspect_path",
    "inspect_mlir",
    "inspect_vmfb",
    "read_cuda_executable",
    "resource_usage",
    "main",
]

FORMAT = "autotune-export.inspect/2"


# --------------------------------------------------------------------------------------------
# The model


@dataclass
class Layout:
    """A ``#hal.pipeline.layout``: one flag list per binding (``ReadOnly``, ``Indirect``; empty
    for a read-write buffer) and the number of 32-bit constants."""

    bindings: list[list[str]]
    constants: int

    def access(self) -> list[str]:
        """Each binding's access as the table shows it: its flags joined by ``+``
        (``ReadOnly``), ``ReadWrite`` for a binding without flags."""
        return ["+".join(b) if b else "ReadWrite" for b in self.bindings]

    def to_json(self) -> dict:
        return {"bindings": self.access(), "binding_flags": [list(b) for b in self.bindings], "constants": self.constants}

    def summary(self) -> str:
        kinds = ", ".join(self.access())
        plural = "s" if self.constants != 1 else ""
        return (
            f"{len(self.bindings)} binding{'s' if len(self.bindings) != 1 else ''} [{kinds}], {self.constants} constant{plural}"
        )


@dataclass
class VariantInfo:
    """One export of a group. ``specialized_of`` names the variant this one specializes (the
    row is a fast path taken under the group's guards); ``config`` is the Triton config
    (ordered key/value pairs) when the input says it."""

    name: str
    ordinal: int | None = None
    workgroup_size: list[int] | None = None
    shared_bytes: int | None = None
    resources: Resources | None = None
    config: list[tuple[str, Any]] | None = None
    default: bool = False
    specialized_of: str | None = None


@dataclass
class SpaceInfo:
    """A group's generated config space: its spelling (``product(...)``), the constraint's
    canonical text (None without ``where``), how many configs the product ``generated``, how
    many the constraint ``excluded``, and ``configs``, the rest (what was compiled, before the
    build's pruning: :attr:`GroupInfo.pruned` says what it pruned and why)."""

    product: str
    where: str | None
    generated: int
    excluded: int
    configs: int

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class GroupInfo:
    """One autotuning group. ``default`` is the variant in use before tuning; ``frozen`` is
    True when ``default(@v)`` set it (None when the input cannot tell, as a .vmfb).
    ``specialized`` maps a variant to its specialized sibling; ``guards`` holds the constant
    ordinals a specialization assumes (``divisible_by_16``, ``equal_to_1``) and
    ``guard_names`` their parameter names when known. ``pruned`` lists configs dropped when
    materializing (one line each)."""

    executable: str
    group: str
    variants: list[VariantInfo]
    layout: Layout | None = None
    default: str | None = None
    frozen: bool | None = None
    kernel: tuple[str, str] | None = None
    specialized: dict[str, str] = field(default_factory=dict)
    guards: dict[str, list[int]] = field(default_factory=dict)
    guard_names: dict[str, list[str]] = field(default_factory=dict)
    pruned: list[str] = field(default_factory=list)
    #: The generated space of ``configs(product(...) where ...)`` (a .mlir input), else None.
    space: SpaceInfo | None = None
    host: str | None = None
    #: Frozen per-workload choices (``choices(...)``, written by ``--tuning-results``): workload
    #: values -> variant, in order; None when the input cannot tell (a .vmfb).
    choices: list[tuple[tuple[int, ...], str]] | None = None
    #: The host function's tensors that the launch passed as strided views (its
    #: ``iree.reflection`` :data:`~autotune_export.contract.STRIDED_KEY`, written by
    #: ``launch_to_mlir``): what the host passes for each (docs/call-sites.md, "Strided tensors").
    strided: list = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.executable}::{self.group}"


@dataclass
class ExecutableInfo:
    """An executable: its object's format (``ptx``, ``cubin``, or None when it has none) and
    target (``sm_80``...), and its exports in ordinal order."""

    name: str
    object_format: str | None
    target: str | None
    exports: list[str]


@dataclass
class Inspection:
    """Everything ``inspect`` found in one file. ``notes`` are one-line caveats (e.g. resource
    usage unavailable and why)."""

    path: str
    kind: str
    executables: list[ExecutableInfo]
    groups: list[GroupInfo]
    notes: list[str] = field(default_factory=list)

    # ----- JSON ------------------------------------------------------------------------------
    def to_json(self) -> dict:
        """A JSON-ready dict (format :data:`FORMAT`)."""

        def variant(v: VariantInfo) -> dict:
            r = v.resources
            return {
                "name": v.name,
                "ordinal": v.ordinal,
                "workgroup_size": v.workgroup_size,
                "shared_memory_bytes": v.shared_bytes,
                "registers": r.registers if r else None,
                "spills": r.spills if r else None,
                "local_bytes": r.local_bytes if r else None,
                "stack_bytes": r.stack_bytes if r else None,
                "static_shared_bytes": r.static_shared_bytes if r else None,
                "config": dict(v.config) if v.config is not None else None,
                "default": v.default,
                "specialized_of": v.specialized_of,
            }

        return {
            "format": FORMAT,
            "file": self.path,
            "kind": self.kind,
            "executables": [dataclasses.asdict(e) for e in self.executables],
            "groups": [
                {
                    "executable": g.executable,
                    "group": g.group,
                    "kernel": {"path": g.kernel[0], "name": g.kernel[1]} if g.kernel else None,
                    "host": g.host,
                    "layout": g.layout.to_json() if g.layout else None,
                    "default": g.default,
                    "frozen": g.frozen,
                    "specialized": dict(g.specialized) or None,
                    "guards": dict(g.guards) or None,
                    "guard_names": dict(g.guard_names) or None,
                    "variants": [variant(v) for v in g.variants],
                    "choices": (
                        [{"workload": list(values), "variant": v} for values, v in g.choices] if g.choices is not None else None
                    ),
                    "pruned": list(g.pruned),
                    "strided": [dataclasses.asdict(t) for t in g.strided],
                    "space": g.space.to_json() if g.space else None,
                }
                for g in self.groups
            ],
            "notes": list(self.notes),
        }

    # ----- table -----------------------------------------------------------------------------
    def format_table(self) -> str:
        """The readable report: one block per executable and per group."""
        out = [f"{self.path} ({self.kind}): {_count(len(self.groups), 'group')}, {_count(len(self.executables), 'executable')}"]
        for e in self.executables:
            obj = f"{e.object_format} object" if e.object_format else "no object"
            target = f" for {e.target}" if e.target else ""
            out.append(f"executable @{e.name}: {obj}{target}, {_count(len(e.exports), 'export')}")
        for g in self.groups:
            out.append("")
            base = [v for v in g.variants if v.specialized_of is None]
            extra = f" (+{len(g.specialized)} specialized)" if g.specialized else ""
            out.append(f"group @{g.executable}::@{g.group}: {_count(len(base), 'variant')}{extra}")
            if g.kernel:
                out.append(f"  kernel:      {g.kernel[1]} in {g.kernel[0]}")
            if g.host:
                out.append(f"  host:        @{g.host}")
            for t in g.strided:
                out.append(f"  strided:     {t.describe()}")
            if g.layout:
                out.append(f"  layout:      {g.layout.summary()}")
            if g.default:
                how = {True: " (frozen by default(@v))", False: " (not frozen: the first variant until tuned)", None: ""}[
                    g.frozen
                ]
                out.append(f"  default:     @{g.default}{how}")
            if g.choices:
                frozen = ", ".join("[" + ", ".join(map(str, values)) + f"] = @{v}" for values, v in g.choices)
                out.append(f"  choices:     {frozen} (frozen per workload; any other workload: the default)")
            if g.specialized:
                out.append(f"  specialized: {_guard_text(g)}")
            if g.space:
                sp = g.space
                out.append(f"  space:       {sp.product}" + (f" where {sp.where}" if sp.where else ""))
                kept = sum(1 for v in g.variants if v.specialized_of is None)
                out.append(
                    f"               {sp.generated} generated, {sp.excluded} excluded by the constraint, "
                    f"{sp.configs} compiled, {len(g.pruned)} pruned when built, {kept} kept"
                )
                if g.pruned:
                    kinds: dict[str, int] = {}
                    for line in g.pruned:
                        kinds[_prune_kind(line)] = kinds.get(_prune_kind(line), 0) + 1
                    out.append("               pruned for: " + ", ".join(f"{kind} {n}" for kind, n in kinds.items()))
            out.extend("  " + line for line in _variant_table(g))
            for line in g.pruned:
                out.append(f"  pruned:      {line}")
        if self.notes:
            out.append("")
            out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out) + "\n"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _guard_text(g: GroupInfo) -> str:
    parts = []
    for kind, test in (("divisible_by_16", "% 16 == 0"), ("equal_to_1", "== 1")):
        ids = g.guards.get(kind)
        if not ids:
            continue
        names = g.guard_names.get(kind)
        what = ", ".join(f"{n} (constant {i})" for n, i in zip(names, ids)) if names else ", ".join(f"constant {i}" for i in ids)
        parts.append(f"{what} {test}")
    when = " and ".join(parts) if parts else "its guards hold"
    return f"each variant has a fast path, taken when {when}"


def _config_text(config: list[tuple[str, Any]] | None) -> str:
    if config is None:
        return ""
    return " ".join(f"{k}={v}" for k, v in config)


def _variant_table(g: GroupInfo) -> list[str]:
    header = ["", "variant", "ordinal", "workgroup", "shared B", "regs", "spills", "config"]
    rows = []
    for v in g.variants:
        r = v.resources
        rows.append(
            [
                "*" if v.default else "",
                ("  " + v.name) if v.specialized_of else v.name,
                "-" if v.ordinal is None else str(v.ordinal),
                "x".join(map(str, v.workgroup_size)) if v.workgroup_size else "-",
                "-" if v.shared_bytes is None else str(v.shared_bytes),
                str(r.registers) if r else "-",
                str(r.spills) if r else "-",
                "(specialized)" if v.specialized_of else _config_text(v.config),
            ]
        )
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    right = {2, 4, 5, 6}

    def line(row: list[str]) -> str:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    return [line(header)] + [line(r) for r in rows]


# --------------------------------------------------------------------------------------------
# Reading a layout attribute and objects


def parse_layout(text: str) -> Layout | None:
    """A ``#hal.pipeline.layout`` attribute (or its printed form) as a :class:`Layout`
    (read by :func:`autotune_export.ir.hal_attrs.read_layout`); None for anything else."""
    try:
        layout = hal_attrs.read_layout(text)
    except ValueError:
        return None
    return Layout([list(flags) for flags in layout.bindings], layout.constants)


def _binding_flags(bits: int) -> list[str]:
    flags = []
    if bits & 1:
        flags.append("ReadOnly")
    if bits & 2:
        flags.append("Indirect")
    if bits & ~3:
        flags.append(f"0x{bits & ~3:x}")
    return flags


def _image_kind(image: bytes) -> str:
    return "cubin" if image.startswith(b"\x7fELF") else "ptx"


def _cubin_target(image: bytes) -> str | None:
    """``sm_NN`` of a CUDA ELF (OS ABI 0x33): the low byte of e_flags; ``a`` when the
    arch-specific bit is set (as ptxas writes sm_90a)."""
    if len(image) < 52 or image[4] != 2 or image[7] != 0x33:
        return None
    flags = struct.unpack_from("<I", image, 48)[0]
    return f"sm_{flags & 0xFF}" + ("a" if (flags >> 8) & 0x8 else "")


def _image_target(image: bytes) -> str | None:
    return _cubin_target(image) if _image_kind(image) == "cubin" else _ptx_target(image)


def _ptx_target(image: bytes) -> str | None:
    m = re.search(rb"^\s*\.target\s+(sm_\w+)", image, re.MULTILINE)
    return m.group(1).decode() if m else None


# --------------------------------------------------------------------------------------------
# Resource usage (registers, spills) from the cubin (autotune_export.cuda.resources)


def _cubin_of(image: bytes, cache_dir: str | None) -> bytes:
    if _image_kind(image) == "cubin":
        return image
    from autotune_export.cuda import triton_compile as tc

    text = image.rstrip(b"\0").decode("utf-8", errors="replace")
    arch = _ptx_target(image)
    if arch is None:
        raise ResourceError("the PTX has no .target line")
    # The key materialize-triton-variants memoizes its cubin under: an unchanged module hits.
    key = "\0".join([arch, ptx_mod.ptxas_path(), text]).encode()
    try:
        return tc.cached_artifact(cache_dir, "cubin", key, lambda: ptx_mod.assemble(text, arch))
    except ptx_mod.PtxError as err:
        raise ResourceError(str(err)) from None


def resource_usage(image: bytes, cache_dir: str | None = None) -> dict[str, Resources]:
    """Registers and spills of every function of a PTX or cubin ``image``, by function name.

    PTX is assembled first (memoized in ``cache_dir``'s ``cubin`` entries when given). Raises
    :class:`ResourceError` when ptxas or cuobjdump is missing or fails."""
    return cubin_resources(_cubin_of(image, cache_dir))


# --------------------------------------------------------------------------------------------
# A minimal FlatBuffers reader (enough for IREE's CUDA executable, CDA1)


class _Table:
    def __init__(self, buf: bytes, pos: int):
        self.buf, self.pos = buf, pos
        vtable = pos - struct.unpack_from("<i", buf, pos)[0]
        size = struct.unpack_from("<H", buf, vtable)[0]
        self.slots = [struct.unpack_from("<H", buf, vtable + 4 + 2 * i)[0] for i in range((size - 4) // 2)]

    def _at(self, index: int) -> int | None:
        off = self.slots[index] if index < len(self.slots) else 0
        return self.pos + off if off else None

    def u32(self, index: int, default: int = 0) -> int:
        at = self._at(index)
        return default if at is None else struct.unpack_from("<I", self.buf, at)[0]

    def _ref(self, index: int) -> int | None:
        at = self._at(index)
        return None if at is None else at + struct.unpack_from("<I", self.buf, at)[0]

    def bytes_(self, index: int) -> bytes | None:
        at = self._ref(index)
        if at is None:
            return None
        n = struct.unpack_from("<I", self.buf, at)[0]
        return self.buf[at + 4 : at + 4 + n]

    def string(self, index: int) -> str | None:
        data = self.bytes_(index)
        return None if data is None else data.decode("utf-8", errors="replace")

    def struct_u32(self, index: int, count: int) -> list[int] | None:
        at = self._at(index)
        return None if at is None else list(struct.unpack_from(f"<{count}I", self.buf, at))

    def _vector(self, index: int) -> tuple[int, int]:
        at = self._ref(index)
        if at is None:
            return 0, 0
        return at + 4, struct.unpack_from("<I", self.buf, at)[0]

    def tables(self, index: int) -> list["_Table"]:
        start, n = self._vector(index)
        return [_Table(self.buf, start + 4 * i + struct.unpack_from("<I", self.buf, start + 4 * i)[0]) for i in range(n)]

    def u64s(self, index: int) -> list[int]:
        start, n = self._vector(index)
        return list(struct.unpack_from(f"<{n}Q", self.buf, start)) if n else []


@dataclass
class CudaExport:
    """One export of an IREE CUDA executable."""

    name: str
    module: int
    block_dims: list[int]
    shared_bytes: int
    constants: int
    binding_flags: list[int]


@dataclass
class CudaExecutable:
    """An IREE CUDA executable (``CDA1``): its exports and its modules' PTX or cubin images."""

    exports: list[CudaExport]
    images: list[bytes]


_CDA1 = b"CDA1"


def read_cuda_executable(data: bytes) -> CudaExecutable:
    """Decode an IREE CUDA executable (``iree.hal.cuda.ExecutableDef``, identifier ``CDA1``),
    with or without the executable header IREE puts before it (magic, version, size).

    Fields read (IREE's cuda_executable_def.fbs): ExecutableDef{exports, modules},
    ExportDef{module_ordinal, kernel_name, block_dims, block_shared_memory_size,
    constant_count, binding_flags}, ModuleDef{ptx_image}. Raises ValueError otherwise."""
    start = None
    for header in (0, 16, 32, 64):
        if len(data) >= header + 8 and data[header + 4 : header + 8] == _CDA1:
            start = header
            break
    if start is None and data[:4] == _CDA1 and len(data) >= 16:
        size = struct.unpack_from("<Q", data, 8)[0]
        if 0 < size <= len(data) and data[len(data) - size + 4 : len(data) - size + 8] == _CDA1:
            start = len(data) - size
    if start is None:
        raise ValueError("not an IREE CUDA executable (no CDA1 flatbuffer)")
    buf = data[start:]
    try:
        root = _Table(buf, struct.unpack_from("<I", buf, 0)[0])
        exports = []
        for t in root.tables(0):
            exports.append(
                CudaExport(
                    name=t.string(1) or "",
                    module=t.u32(0),
                    block_dims=t.struct_u32(2, 3) or [0, 0, 0],
                    shared_bytes=t.u32(3),
                    constants=t.u32(4),
                    binding_flags=t.u64s(5),
                )
            )
        images = [m.bytes_(0) or b"" for m in root.tables(1)]
    except (struct.error, IndexError) as err:
        raise ValueError(f"malformed CUDA executable flatbuffer: {err}") from None
    return CudaExecutable(exports, images)


# --------------------------------------------------------------------------------------------
# .vmfb


def _vmfb_members(data: bytes) -> list[tuple[str, bytes]]:
    """(name, bytes) of each embedded executable: the members of the .vmfb's zip directory
    (``<executable>_<format>.fb``), else every CDA1 blob found in the file."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return [(info.filename, z.read(info)) for info in z.infolist() if info.filename != "module.fb"]
    except zipfile.BadZipFile:
        pass
    found, i = [], data.find(_CDA1)
    while i >= 0:
        if data[i + 4 : i + 8] == b"\0\0\0\0" and len(data) >= i + 16:
            size = struct.unpack_from("<Q", data, i + 8)[0]
            for header in (16, 32, 64):
                if data[i + header + 4 : i + header + 8] == _CDA1 and i + header + size <= len(data):
                    found.append((f"executable_{len(found)}", data[i : i + header + size]))
                    break
        i = data.find(_CDA1, i + 1)
    return found


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


def _strided_of(reflection: dict, where: str, notes: list[str]) -> list:
    """The :class:`~autotune_export.contract.StridedTensor` list of a host function's
    ``iree.reflection`` (``reflection``: its dictionary), [] without one; a malformed value is a
    note (``where`` names the function)."""
    from autotune_export import contract

    text = reflection.get(contract.STRIDED_KEY)
    if text is None:
        return []
    try:
        return contract.decode_strided(text)
    except ValueError as err:
        notes.append(f"{where}: {err}")
        return []


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
    for member, blob in _vmfb_members(data):
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
        kind = _image_kind(image) if image else None
        executables.append(ExecutableInfo(name, kind, _image_target(image) if image else None, [e.name for e in exe.exports]))
        for e in exe.exports:
            by_export[e.name] = (name, e, usage)

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
                    layout = Layout([_binding_flags(b) for b in e.binding_flags], e.constants)
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
                frozen=None,
                specialized=specialized,
                host=meta.host,
            )
        )
        fn = vm_module.lookup_function(meta.host) if meta.host else None
        if fn is not None:
            groups[-1].strided = _strided_of(dict(fn.reflection), f"@{meta.host}", notes)
    return Inspection(path, "vmfb", executables, groups, notes)


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


# --------------------------------------------------------------------------------------------
# .mlir


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


_PRUNE_KINDS = (
    ("shared memory", "shared memory"),
    ("registers per block", "registers"),
    ("--max-spills", "spills"),
    ("--max-variants", "--max-variants"),
    ("threads per block", "threads"),
    ("compile error", "compile error"),
)


def _prune_kind(line: str) -> str:
    """The kind of reason of one ``pruned`` line, for the space's summary: shared memory,
    registers, spills, --max-variants, threads, compile error, else other."""
    return next((kind for marker, kind in _PRUNE_KINDS if marker in line), "other")


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
            kind = _image_kind(image)
            target_arch = _image_target(image) or target_arch
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
                            strided = _strided_of({STRIDED_KEY: ir.StringAttr(refl[STRIDED_KEY]).value}, f"@{host}", notes)
                    break
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
                )
            )
    return Inspection(source.name, "mlir", executables, groups, notes)


# --------------------------------------------------------------------------------------------
# Entry points


def _is_vmfb(path: str, head: bytes) -> bool:
    return path.endswith(".vmfb") or head.startswith(b"PK\x03\x04") or head[4:8] == b"IREE"


def inspect_path(path: str, **options) -> Inspection:
    """Inspect a ``.mlir`` or ``.vmfb`` file (``-``: MLIR on stdin); ``options`` are
    :func:`inspect_mlir`'s (a .vmfb takes ``resources`` and ``cache_dir``)."""

    if path == "-":
        return inspect_mlir(SourceFile(sys.stdin.read(), "<stdin>", os.getcwd()), **options)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise DiagnosticError.at(None, f"cannot read '{path}': {err.strerror}") from None
    if path.endswith(".py"):
        raise DiagnosticError.at(
            None,
            f"'{path}' is a Python file; inspect takes a .mlir file with autotuning groups (e.g. "
            f'hal.executable.autotuning.export @g triton("{os.path.basename(path)}", "kernel") ...) or a .vmfb '
            "built by autotune-export",
        )
    if _is_vmfb(path, data[:8]):
        memo = None
        if options.get("use_cache", True):
            from autotune_export.cuda import triton_compile as tc

            memo = str(options.get("cache_dir") or tc.default_cache_dir())
        return inspect_vmfb(path, data, resources=options.get("resources", True), cache_dir=memo)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DiagnosticError.at(None, f"'{path}' is neither a .vmfb nor UTF-8 MLIR text") from None
    return inspect_mlir(SourceFile(text, path, os.path.dirname(os.path.abspath(path))), **options)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="autotune-export inspect",
        description="Show the autotuning groups of a .mlir or .vmfb: variants, layout, workgroup size, shared "
        "memory, registers and spills, default and specialized variants.",
    )
    p.add_argument("input", help="a .mlir file ('-' for stdin) or a .vmfb built by autotune-export")
    p.add_argument("--json", action="store_true", help="print JSON (format autotune-export.inspect/2) instead of a table")
    p.add_argument("-o", "--output", default="-", help="write the report here ('-' for stdout, the default)")
    p.add_argument("--no-resources", action="store_true", help="skip registers/spills (no ptxas, no cuobjdump)")
    p.add_argument("--target", default="sm_80", help=".mlir: CUDA architecture of the variants (default: sm_80)")
    p.add_argument("--object-format", choices=("ptx", "cubin"), default="ptx", help=".mlir: object to build (default: ptx)")
    p.add_argument("--ptx-version", type=int, default=86, help=".mlir: PTX ISA pinned in the variants (default: 86)")
    p.add_argument(
        "-j",
        "--jobs",
        type=jobs_argument,
        default=None,
        help=".mlir: processes compiling variants (at least 1; default: one per core)",
    )
    p.add_argument("--tuning-results", default=None, help=".mlir: freeze these choices first (runs pin-variants)")
    add_pruning_arguments(p)  # .mlir: --max-spills, --max-variants, as the compile command
    p.add_argument(
        "--cache-dir",
        default=None,
        help="variant and cubin cache (default: $AUTOTUNE_EXPORT_CACHE_DIR or ~/.cache/autotune-export)",
    )
    p.add_argument("--no-cache", action="store_true", help="compile and assemble without the cache")
    progress.add_arguments(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``autotune-export inspect ...``; returns the exit status (DiagnosticError propagates
    to the command's handler)."""
    args = _parser().parse_args(argv)
    with progress.verbosity(progress.level_of(args)):
        result = inspect_path(
            args.input,
            target=args.target,
            jobs=args.jobs,
            object_format=args.object_format,
            ptx_version=args.ptx_version,
            cache_dir=args.cache_dir,
            use_cache=not args.no_cache,
            tuning_results=args.tuning_results,
            resources=not args.no_resources,
            max_spills=args.max_spills,
            max_variants=args.max_variants,
        )
        text = json.dumps(result.to_json(), indent=2) + "\n" if args.json else result.format_table()
        if args.output == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
    return 0
