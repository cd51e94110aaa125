"""What ``autotune-export inspect`` reads from compiled objects, without a GPU: the members of a
.vmfb's zip directory (:func:`vmfb_members`), IREE's CUDA executable flatbuffer (``CDA1``,
:func:`read_cuda_executable`: a minimal FlatBuffers reader), a PTX or cubin image's kind and
target, and registers and spills (:func:`resource_usage`: PTX assembled with Triton's ptxas,
memoized under the key materialize-triton-variants uses, then
:mod:`autotune_export.cuda.resources`)."""

from __future__ import annotations

import io
import re
import struct
import zipfile
from dataclasses import dataclass

from autotune_export.cuda import ptx as ptx_mod
from autotune_export.cuda.resources import Resources, ResourceError, cubin_resources

__all__ = [
    "CDA1",
    "CudaExport",
    "CudaExecutable",
    "binding_flags",
    "image_kind",
    "image_target",
    "cubin_target",
    "ptx_target",
    "resource_usage",
    "read_cuda_executable",
    "vmfb_members",
]


def binding_flags(bits: int) -> list[str]:
    flags = []
    if bits & 1:
        flags.append("ReadOnly")
    if bits & 2:
        flags.append("Indirect")
    if bits & ~3:
        flags.append(f"0x{bits & ~3:x}")
    return flags


def image_kind(image: bytes) -> str:
    return "cubin" if image.startswith(b"\x7fELF") else "ptx"


def cubin_target(image: bytes) -> str | None:
    """``sm_NN`` of a CUDA ELF (OS ABI 0x33): the low byte of e_flags; ``a`` when the
    arch-specific bit is set (as ptxas writes sm_90a)."""
    if len(image) < 52 or image[4] != 2 or image[7] != 0x33:
        return None
    flags = struct.unpack_from("<I", image, 48)[0]
    return f"sm_{flags & 0xFF}" + ("a" if (flags >> 8) & 0x8 else "")


def image_target(image: bytes) -> str | None:
    return cubin_target(image) if image_kind(image) == "cubin" else ptx_target(image)


def ptx_target(image: bytes) -> str | None:
    m = re.search(rb"^\s*\.target\s+(sm_\w+)", image, re.MULTILINE)
    return m.group(1).decode() if m else None


# --------------------------------------------------------------------------------------------
# Resource usage (registers, spills) from the cubin (autotune_export.cuda.resources)


def _cubin_of(image: bytes, cache_dir: str | None) -> bytes:
    if image_kind(image) == "cubin":
        return image
    from autotune_export.cuda import triton_compile as tc

    text = image.rstrip(b"\0").decode("utf-8", errors="replace")
    arch = ptx_target(image)
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


CDA1 = b"CDA1"


def read_cuda_executable(data: bytes) -> CudaExecutable:
    """Decode an IREE CUDA executable (``iree.hal.cuda.ExecutableDef``, identifier ``CDA1``),
    with or without the executable header IREE puts before it (magic, version, size).

    Fields read (IREE's cuda_executable_def.fbs): ExecutableDef{exports, modules},
    ExportDef{module_ordinal, kernel_name, block_dims, block_shared_memory_size,
    constant_count, binding_flags}, ModuleDef{ptx_image}. Raises ValueError otherwise."""
    start = None
    for header in (0, 16, 32, 64):
        if len(data) >= header + 8 and data[header + 4 : header + 8] == CDA1:
            start = header
            break
    if start is None and data[:4] == CDA1 and len(data) >= 16:
        size = struct.unpack_from("<Q", data, 8)[0]
        if 0 < size <= len(data) and data[len(data) - size + 4 : len(data) - size + 8] == CDA1:
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


def vmfb_members(data: bytes) -> list[tuple[str, bytes]]:
    """(name, bytes) of each embedded executable: the members of the .vmfb's zip directory
    (``<executable>_<format>.fb``), else every CDA1 blob found in the file."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return [(info.filename, z.read(info)) for info in z.infolist() if info.filename != "module.fb"]
    except zipfile.BadZipFile:
        pass
    found, i = [], data.find(CDA1)
    while i >= 0:
        if data[i + 4 : i + 8] == b"\0\0\0\0" and len(data) >= i + 16:
            size = struct.unpack_from("<Q", data, i + 8)[0]
            for header in (16, 32, 64):
                if data[i + header + 4 : i + header + 8] == CDA1 and i + header + size <= len(data):
                    found.append((f"executable_{len(found)}", data[i : i + header + size]))
                    break
        i = data.find(CDA1, i + 1)
    return found
