"""What a Triton PTX module says about its kernel: the entry and its parameters, the target
architecture (of PTX or of an assembled cubin), which parameters the code reads, and an
entry's code with its name left out (what two equal variants share)."""

from __future__ import annotations

import re

from autotune_export.cuda.targets import CudaTarget, TargetError, parse_target
from autotune_export.cuda.ptx.syntax import (
    _TARGET_RE,
    PtxEntry,
    PtxError,
    _parse_module,
    _single_entry,
    _strip_comments,
    _token_spans,
)


# --------------------------------------------------------------------------------------------
# Entry inspection


def parse_entry(ptx: str) -> PtxEntry:
    """Parse the one kernel entry of a Triton PTX module.

    Returns the entry's name, its parameters in declaration order (Triton: the non-constexpr
    arguments, then the hidden ``global_scratch`` and ``profile_scratch`` pointers), ``.reqntid``
    (threads per block), and the module's ``.version`` and ``.target`` architecture.

    Raises :class:`PtxError` if the module does not have exactly one ``.entry`` or lacks
    ``.version`` / ``.target``.
    """
    mod, e = _single_entry(ptx)
    if mod.version is None:
        raise PtxError(f"PTX module of {e.name} has no .version")
    if mod.target is None:
        raise PtxError(f"PTX module of {e.name} has no .target")
    reqntid = None
    m = re.search(r"\.reqntid\s+(\d+(?:\s*,\s*\d+)*)", e.directives)
    if m:
        reqntid = tuple(int(x) for x in m.group(1).split(","))
    return PtxEntry(e.name, e.params, reqntid, mod.version, mod.target[0])


def module_target(ptx: str) -> str | None:
    """The architecture of a PTX module's ``.target`` directive (``"sm_80"``, ``"sm_90a"``;
    options such as ``debug`` or ``texmode_independent`` left out), or None when it has none.
    Unlike :func:`parse_entry`, any number of entries is fine (a linked module, a user's
    object). Raises :class:`PtxError` when the module has several ``.target`` directives."""
    found = _TARGET_RE.findall(_strip_comments(ptx))
    if len(found) > 1:
        raise PtxError(f"PTX module has {len(found)} .target directives")
    items = [t.strip() for t in found[0].split(",") if t.strip()] if found else []
    return items[0] if items else None


#: ELF OS ABI of CUDA cubins: 0x33 for the ABI up to CUDA 12 (architecture in e_flags bits
#: 0-7, arch-specific "a" variants flagged by 0x800), 0x41 for the newer one (CUDA 12.8+ for
#: sm_100 and later: architecture in bits 8-15, "a" flagged by 0x8). Checked against the
#: cubins of Triton's bundled ptxas (sm_90a: 0x5a0d5a, sm_100a: 0x600640a).
_ELFOSABI_CUDA_V1, _ELFOSABI_CUDA_V2 = 0x33, 0x41


def object_architecture(data: bytes | str) -> CudaTarget | None:
    """The CUDA architecture an executable object is for: a cubin's (ELF e_flags), or a PTX
    module's ``.target``. None for anything else (not PTX or a CUDA ELF, or no ``.target``)
    and for spellings that are not ``sm_XY``/``sm_XYa``."""
    if isinstance(data, (bytes, bytearray)):
        raw = bytes(data)
        if raw.startswith(b"\x7fELF"):
            if len(raw) < 52 or raw[4] != 2:  # ELFCLASS64 is all ptxas writes
                return None
            flags = int.from_bytes(raw[48:52], "little")
            if raw[7] == _ELFOSABI_CUDA_V2:
                return CudaTarget((flags >> 8) & 0xFF, "a" if flags & 0x8 else "")
            if raw[7] == _ELFOSABI_CUDA_V1:
                return CudaTarget(flags & 0xFF, "a" if flags & 0x800 else "")
            return None
        try:
            data = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        arch = module_target(data)
        return parse_target(arch, supported_only=False) if arch else None
    except (PtxError, TargetError):
        return None


def _uses_token(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a whole token outside string literals."""
    return name in text and bool(_token_spans(text, (name,)))


def param_is_used(ptx: str, index: int) -> bool:
    """Whether the entry's body refers to parameter ``index`` (0-based, declaration order).

    A parameter is used when its name appears as a whole identifier in the body, e.g. in
    ``ld.param.b64 %rd1, [k_param_3]`` or ``mov.b64 %rd2, k_param_3``. Triton's hidden
    ``global_scratch`` / ``profile_scratch`` pointers are unused unless the kernel needs scratch
    memory, which an IREE dispatch cannot provide.

    Raises :class:`PtxError` if the module does not have exactly one entry or ``index`` is out of
    range.
    """
    _, e = _single_entry(ptx)
    if not 0 <= index < len(e.params):
        raise PtxError(f"entry {e.name} has {len(e.params)} parameters; index {index} is out of range")
    name = e.params[index].name
    return _uses_token(e.body, name) or _uses_token(e.directives, name)


def entry_text(ptx: str, name: str) -> str | None:
    """The code of entry ``name`` of a PTX module with the entry's own name replaced by
    ``@ENTRY`` (PTX names parameters after their entry: ``NAME_param_0``): the module's
    ``.version``/``.target``, the parameter declarations, the directives (``.reqntid`` ...) and
    the body. None when the module has no such entry or is not PTX. Two variants whose texts
    are equal run the same code, whatever they are called; the tuning cache keys timings on it."""
    try:
        mod = _parse_module(ptx)
    except (PtxError, TypeError):
        return None
    entry = next((e for e in mod.entries if e.name == name), None)
    if entry is None:
        return None
    text = "\n".join([str(mod.version), " ".join(mod.target or ()), *entry.param_decls, entry.directives, entry.body])
    return re.sub(rf"(?<![\w$]){re.escape(name)}(?![\w$])", "@ENTRY", text)
