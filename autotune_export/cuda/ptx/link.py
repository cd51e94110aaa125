"""Link Triton PTX modules into one, in IREE's calling convention (see the package docstring:
:mod:`autotune_export.cuda.ptx`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from autotune_export.cuda.ptx.entries import param_is_used
from autotune_export.cuda.ptx.syntax import _IDENT_RE, PtxError, _EntryInfo, _rename, _single_entry, _Stmt, _words
from autotune_export.cuda.ptx.version import _VERSION_FMT, PtxVersionError, ptx_version_text


@dataclass(frozen=True)
class LinkPart:
    """One Triton PTX module to link, and how its entry appears in the linked module.

    ``entry``: the new entry name, unique in the linked module (it becomes the export symbol).
    ``param_order``: original parameter indices in their new order (IREE order: binding pointers
    first, then 32-bit constants). ``drop``: original indices to remove (Triton's hidden trailing
    ``global_scratch`` / ``profile_scratch`` pointers). Every original index must appear exactly
    once in ``param_order`` or ``drop``.

    ``adapt`` maps original indices (of ``param_order``) to a rewrite of that parameter:

    * ``"widen"``: a scalar of at most 4 bytes (``.u8``, ``.u16``, ``.b8[2]``...) is declared
      ``.param .u32``; the kernel's ``ld.param.b8``/``.b16`` then reads the low bytes of the
      32-bit value IREE passes (PTX parameters are little-endian);
    * ``"split"``: a 64-bit scalar (``.u64``, ``.s64``, ``.b64``, ``.f64``) becomes two ``.u32``
      parameters, low half first, occupying two consecutive positions; every
      ``ld.param.<64-bit> %d, [p]`` of it becomes ``ld.param.b32`` of both halves and
      ``mov.b64 %d, {lo, hi}`` (in a scoped block declaring the two registers);
    * ``"align:N"``: a 64-bit pointer whose every ``ld.param`` is followed by rounding the loaded
      address up to a multiple of ``N`` (a power of two), for scratch buffers whose binding
      offset IREE aligns less than the kernel needs.
    """

    ptx: str
    entry: str
    param_order: Sequence[int]
    drop: Sequence[int] = ()
    adapt: Mapping[int, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Linking


def _version_key(v: str) -> tuple[int, int]:
    a, b = v.split(".")
    return int(a), int(b)


def _tidy(text: str) -> str:
    """Strip trailing blanks and collapse runs of empty lines (deterministic layout)."""
    lines = [ln.rstrip() for ln in text.strip("\n").split("\n")]
    out: list[str] = []
    for ln in lines:
        if not ln and out and not out[-1]:
            continue
        out.append(ln)
    return "\n".join(out)


def _normalize(text: str) -> str:
    return " ".join(text.split())


def link(parts: Sequence[LinkPart], *, ptx_version: str | int | None = None) -> str:
    """Link Triton PTX modules (one ``.entry`` each) into one PTX module with one entry per part.

    The result is what IREE's CUDA HAL loads as the single object of a ``hal.executable.source``
    (export symbol = entry name). For each part:

    * the entry is renamed to ``part.entry`` and its parameters are reordered per
      ``part.param_order`` (IREE: one pointer per binding, then one 32-bit value per constant)
      and renamed ``<entry>_param_<new position>``, references in the body included;
    * parameters in ``part.drop`` (Triton's hidden ``global_scratch`` / ``profile_scratch``)
      are removed; a dropped parameter that the body uses is an error;
    * every other module-scope symbol (``.global`` / ``.const`` / ``.shared`` variables,
      ``.extern .shared global_smem[]``, ``.func`` definitions and prototypes) gets the prefix
      ``<entry>__`` so that parts never collide; ``.extern .func`` declarations (``vprintf``,
      ``__assertfail``) keep their names and are emitted once;
    * debug information is dropped (``.loc``, ``.file``, ``@@DWARF``, ``.section .debug_*``,
      and ``, debug`` in ``.target``); function-local labels are kept.

    All parts must have the same ``.target`` and ``.address_size``. The header's ``.version`` is
    ``ptx_version`` (``"8.6"``, ``"86"`` or ``86``: :func:`parse_ptx_version`) if given, else the
    highest version among the parts. The output
    is deterministic: the same parts give byte-identical text.

    Raises :class:`PtxError` on: no parts, a part without exactly one entry, mismatched targets or
    address sizes, invalid or duplicate entry names, a ``param_order``/``drop`` that is not a
    partition of the parameter indices, a dropped parameter used by the kernel, or symbol
    collisions.
    """
    if not parts:
        raise PtxError("link() needs at least one part")
    if ptx_version is not None:
        try:
            ptx_version = ptx_version_text(ptx_version)
        except PtxVersionError as err:
            raise PtxError(f"ptx_version: {err}") from None

    parsed = []
    for k, part in enumerate(parts):
        mod, e = _single_entry(part.ptx)
        if mod.version is None or not _VERSION_FMT.match(mod.version):
            raise PtxError(f"part {k} ({e.name}): missing or malformed .version")
        if mod.target is None:
            raise PtxError(f"part {k} ({e.name}): missing .target")
        parsed.append((mod, e))

    target = parsed[0][0].target
    address_size = parsed[0][0].address_size
    for k, (mod, e) in enumerate(parsed):
        if mod.target != target:
            raise PtxError(
                f"cannot link PTX for different targets: part 0 is {', '.join(target)}, "
                f"part {k} ({e.name}) is {', '.join(mod.target)}"
            )
        if mod.address_size != address_size:
            raise PtxError(
                f"cannot link PTX with different .address_size: part 0 has {address_size}, "
                f"part {k} ({e.name}) has {mod.address_size}"
            )
    version = ptx_version or max((m.version for m, _ in parsed), key=_version_key)

    # Entry names.
    seen_entries: dict[str, int] = {}
    for k, part in enumerate(parts):
        if not isinstance(part.entry, str) or not _IDENT_RE.match(part.entry) or part.entry.startswith("%"):
            raise PtxError(f"part {k}: {part.entry!r} is not a valid PTX entry name")
        if part.entry in seen_entries:
            raise PtxError(f"entry name {part.entry!r} is used by parts {seen_entries[part.entry]} and {k}")
        seen_entries[part.entry] = k

    externs: dict[str, str] = {}  # name -> normalized declaration
    extern_texts: list[str] = []
    owners: dict[str, str] = {}  # every module-scope name in the output -> who defines it
    for name in seen_entries:
        owners[name] = f"entry {name}"
    bodies: list[str] = []

    for k, (part, (mod, e)) in enumerate(zip(parts, parsed)):
        n = len(e.params)
        order = [int(i) for i in part.param_order]
        drop = [int(i) for i in part.drop]
        every = order + drop
        bad = [i for i in every if not 0 <= i < n]
        if bad:
            raise PtxError(f"part {part.entry}: parameter index {bad[0]} out of range (entry {e.name} has {n} parameters)")
        if len(set(every)) != len(every):
            dup = next(i for i in every if every.count(i) > 1)
            raise PtxError(f"part {part.entry}: parameter {dup} appears more than once in param_order/drop")
        if len(every) != n:
            missing = sorted(set(range(n)) - set(every))
            raise PtxError(f"part {part.entry}: parameters {missing} of {e.name} are neither in param_order nor in drop")
        for i in drop:
            if param_is_used(part.ptx, i):
                raise PtxError(
                    f"kernel {e.name} (entry {part.entry}) uses hidden parameter {e.params[i].name} "
                    f"(global scratch); not supported"
                )
        adapt = _check_adapt(part, e, order)

        mapping: dict[str, str] = {e.name: part.entry}
        new_names: dict[int, list[str]] = {}
        new_pos = 0
        for old in order:
            width = 2 if adapt.get(old) == "split" else 1
            new_names[old] = [f"{part.entry}_param_{new_pos + j}" for j in range(width)]
            new_pos += width
            # Split and aligned parameters are renamed to a placeholder first; their loads are
            # rewritten after renaming (the new names may equal other old names).
            mapping[e.params[old].name] = _placeholder(old) if adapt.get(old, "widen") != "widen" else new_names[old][0]
        prefix = f"{part.entry}__"
        local_stmts: list[tuple[_Stmt, bool]] = []  # (stmt, hoisted extern)
        for s in mod.stmts:
            keep_name = _keeps_name(s)
            if s.kind in ("func", "var"):
                for nm in s.names:
                    if keep_name:
                        continue
                    mapping.setdefault(nm, prefix + nm)
            local_stmts.append((s, keep_name))

        # Register names and detect collisions.
        part_defined: set[str] = set()
        for s, keep in local_stmts:
            if s.kind not in ("func", "var"):
                continue
            for nm in s.names:
                out = nm if keep else mapping[nm]
                if keep:
                    norm = _normalize(s.text)
                    if nm in externs:
                        if externs[nm] != norm:
                            raise PtxError(f"parts declare external symbol {nm} differently")
                        continue
                    if nm in owners:
                        raise PtxError(f"external symbol {nm} collides with {owners[nm]}")
                    externs[nm] = norm
                    owners[nm] = f"extern {nm}"
                    extern_texts.append(_tidy(s.text))
                    continue
                if out in part_defined:
                    continue  # prototype then definition of one .func
                if out in owners:
                    raise PtxError(f"symbol {out} of part {part.entry} collides with {owners[out]}")
                owners[out] = f"symbol {out} of part {part.entry}"
                part_defined.add(out)

        chunk = [f"// {part.entry}: entry {e.name} of Triton PTX part {k}"]
        for s, keep in local_stmts:
            if keep:
                continue
            if s.kind == "entry":
                chunk.append(_relink_entry(e, order, mapping, adapt, new_names))
            else:
                chunk.append(_tidy(_rename(s.text, mapping)))
        bodies.append("\n\n".join(chunk))

    header = [
        "//",
        f"// Linked by autotune_export.cuda.ptx: {len(parts)} Triton kernel(s), one .entry each",
        "//",
        "",
        f".version {version}",
        f".target {', '.join(target)}",
    ]
    if address_size is not None:
        header.append(f".address_size {address_size}")
    out = "\n".join(header) + "\n\n"
    if extern_texts:
        out += "\n\n".join(extern_texts) + "\n\n"
    out += "\n\n".join(bodies) + "\n"
    return out


def _keeps_name(s: _Stmt) -> bool:
    """External functions and variables (vprintf, __assertfail) are resolved by name: keep it.

    ``.extern .shared`` arrays (Triton's dynamic ``global_smem[]``) are not external symbols but
    views of the launch's dynamic shared memory; they are renamed per part like any variable.
    """
    if not s.extern or s.kind not in ("func", "var"):
        return False
    return s.kind == "func" or ".shared" not in s.text.split()[:4]


_ADAPT_WIDEN_TYPES = {
    ".u8",
    ".s8",
    ".b8",
    ".u16",
    ".s16",
    ".b16",
    ".f16",
    ".bf16",
    ".u32",
    ".s32",
    ".b32",
    ".f32",
    ".b8[1]",
    ".b8[2]",
    ".b8[4]",
    ".pred",
}
_ADAPT_SPLIT_TYPES = {".u64", ".s64", ".b64", ".f64"}


def _placeholder(index: int) -> str:
    return f"__autotune_abi_param_{index}"


def _check_adapt(part: LinkPart, e: _EntryInfo, order: list[int]) -> dict[int, str]:
    adapt: dict[int, str] = {}
    for key, kind in dict(part.adapt or {}).items():
        i = int(key)
        if i not in order:
            raise PtxError(f"part {part.entry}: adapted parameter {i} is not in param_order")
        p = e.params[i]
        if kind == "widen":
            if p.is_pointer or p.ptx_type not in _ADAPT_WIDEN_TYPES:
                raise PtxError(f"part {part.entry}: cannot widen parameter {p.name} ({p.ptx_type}) to .u32")
        elif kind == "split":
            if p.is_pointer or p.ptx_type not in _ADAPT_SPLIT_TYPES:
                raise PtxError(f"part {part.entry}: cannot split parameter {p.name} ({p.ptx_type}) into two .u32")
        elif kind.startswith("align:"):
            try:
                n = int(kind.split(":", 1)[1])
            except ValueError:
                n = 0
            if n < 1 or n & (n - 1):
                raise PtxError(f"part {part.entry}: alignment in {kind!r} must be a power of two")
            if p.ptx_type not in (".u64", ".b64", ".s64"):
                raise PtxError(f"part {part.entry}: cannot align parameter {p.name} ({p.ptx_type}): not a 64-bit pointer")
        else:
            raise PtxError(f"part {part.entry}: unknown parameter adaptation {kind!r} (expected widen, split or align:N)")
        adapt[i] = kind
    return adapt


_LD_PARAM_64 = r"ld\.param(?:\.[A-Za-z0-9_]+)*?\.(?:b64|u64|s64|f64)\s+(%[A-Za-z0-9_$]+)\s*,\s*\[\s*{name}\s*(?:\+\s*0\s*)?\]\s*;"


def _rewrite_loads(body: str, index: int, kind: str, names: list[str], e: _EntryInfo, entry: str) -> str:
    """Rewrite the 64-bit ``ld.param`` loads of a split or aligned parameter (named by its
    placeholder in ``body``)."""
    token = _placeholder(index)
    pattern = re.compile(_LD_PARAM_64.format(name=re.escape(token)))
    if kind == "split":
        lo, hi = names

        def repl(m: re.Match) -> str:
            d = m.group(1)
            return (
                f"{{ .reg .b32 %abi_lo, %abi_hi; ld.param.b32 %abi_lo, [{lo}]; ld.param.b32 %abi_hi, [{hi}]; "
                f"mov.b64 {d}, {{%abi_lo, %abi_hi}}; }}"
            )
    else:
        n = int(kind.split(":", 1)[1])

        def repl(m: re.Match) -> str:
            d = m.group(1)
            return f"ld.param.b64 {d}, [{names[0]}]; add.s64 {d}, {d}, {n - 1}; and.b64 {d}, {d}, {-n};"

    out = pattern.sub(repl, body)
    if token in _words(out):
        what = "split it into two 32-bit halves" if kind == "split" else "align it"
        raise PtxError(f"entry {entry}: parameter {e.params[index].name} is used other than by a 64-bit ld.param; cannot {what}")
    return out


def _relink_entry(
    e: _EntryInfo,
    order: list[int],
    mapping: dict[str, str],
    adapt: dict[int, str] | None = None,
    new_names: dict[int, list[str]] | None = None,
) -> str:
    adapt = adapt or {}
    decls = []
    for old in order:
        decl = e.param_decls[old]
        kind = adapt.get(old)
        if kind == "widen":
            decls.append(f"\t.param .u32 {new_names[old][0]}")
        elif kind == "split":
            decls.extend(f"\t.param .u32 {n}" for n in new_names[old])
        else:
            target = new_names[old][0] if new_names else mapping[e.params[old].name]
            decls.append("\t" + _rename(decl, {e.params[old].name: target}))
    head = f"{e.prefix.strip()} .entry {mapping[e.name]}(" if e.prefix.strip() else f".entry {mapping[e.name]}("
    text = head + ("\n" + ",\n".join(decls) + "\n)" if decls else ")")
    if e.directives:
        text += "\n" + _tidy(e.directives)
    body = _rename(e.body, mapping)
    for old, kind in adapt.items():
        if kind != "widen":
            body = _rewrite_loads(body, old, kind, new_names[old], e, mapping[e.name])
    text += "\n" + _tidy(body)
    return text
