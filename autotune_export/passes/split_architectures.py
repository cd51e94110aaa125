"""split-architectures: one ``hal.executable.variant`` per CUDA architecture.

An executable whose objects are keyed by several CUDA architectures (``--target
sm_80,sm_90``: materialize-triton-variants links one object per architecture) becomes a
``hal.executable`` with one ``hal.executable.variant`` per architecture, most capable
first, each holding its object, a copy of every export (with that architecture's block size
and shared memory, from ``autotune.targets``) and a ``hal.executable.condition`` on the
device's compute capability (``hal.device.query`` of ``cuda.device ::
compute_capability_major/minor``, answered by IREE's CUDA driver). IREE evaluates the
conditions when the module loads and creates the executable from the first variant whose
condition holds. PTX for ``sm_XY`` runs on compute capability >= X.Y (the driver JIT-compiles
it); arch-specific PTX (``sm_90a``) and any cubin only on their own architecture (a cubin
on X.Y and later minors of X). Dispatches name the export in every variant;
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune_export.ir.markers import TARGETS_ATTR
from autotune_export.ir.walk import executable_sources, exports_of, sym_name
from . import ModulePass, PassContext, register

__all__ = ["SplitArchitectures", "TARGETS_ATTR"]


@register
@dataclass
class SplitArchitectures(ModulePass):
    name = "split-architectures"
    summary = "give each CUDA architecture's object an executable variant chosen when the module loads"

    def apply(self, ctx: PassContext, module) -> None:
        for source in executable_sources(module):
            _split_by_target(module, source)





def _scan_top(text: str, start: int, stop_chars: str) -> int:
    """Index of the first of ``stop_chars`` at bracket depth 0 from ``start`` (strings skipped);
    ``len(text)`` when none."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "<{[(":
            depth += 1
        elif c in ">}])":
            if depth == 0 and c in stop_chars:
                return i
            depth -= 1
        elif depth == 0 and c in stop_chars:
            return i
        i += 1
    return n


def object_entries(objects_text: str) -> list[tuple[str, str]]:
    """``[(target attribute text, object list text)]`` of a printed
    ``#hal.executable.objects<{#target = [#object, ...], ...}>``."""
    head = "#hal.executable.objects<{"
    if not objects_text.startswith(head):
        return []
    body_end = len(objects_text) - len("}>")
    out, i = [], len(head)
    while i < body_end:
        comma = min(_scan_top(objects_text, i, ","), body_end)
        entry = objects_text[i:comma].strip()
        eq = _scan_top(entry, 0, "=")
        if eq < len(entry):
            out.append((entry[:eq].strip(), entry[eq + 1 :].strip()))
        i = comma + 1
    return out


def _cc_range(target: str, objects: str) -> tuple[int, int | None] | None:
    """Compute capabilities (``major * 10 + minor``) an object for ``target`` runs on."""
    import re

    m = re.search(r'target_arch\s*=\s*"sm_(\d+)(a?)"', target)
    if m is None:
        return None
    cc, specific = int(m.group(1)), bool(m.group(2))
    if specific:
        return cc, cc
    if "dense<" in objects:  # a cubin: this architecture and later minors of its major
        return cc, cc // 10 * 10 + 9
    return cc, None  # PTX: JIT-compiled by the driver on any later architecture


def _split_by_target(module, source) -> None:
    """Turn a ``hal.executable.source`` with objects for several architectures into a
    ``hal.executable`` with one conditioned variant per architecture (see the module doc)."""
    import re

    from iree.compiler import ir

    from autotune_export.ir.walk import parse_detached, walk

    if "objects" not in source.attributes:
        return
    entries = object_entries(str(source.attributes["objects"]))
    ranges = [_cc_range(t, o) for t, o in entries]
    if len(entries) < 2 or any(r is None for r in ranges):
        return
    exe = sym_name(source)
    order = sorted(range(len(entries)), key=lambda k: -ranges[k][0])
    variants, names = [], []
    for k in order:
        target, objects = entries[k]
        arch = re.search(r'target_arch\s*=\s*"([^"]+)"', target).group(1)
        names.append(arch)
        lo, hi = ranges[k]
        upper = (
            f"        %hi = arith.constant {hi} : i32\n"
            "        %le = arith.cmpi sle, %cc, %hi : i32\n"
            "        %ok = arith.andi %ge, %le : i1\n"
            "        hal.return %ok : i1\n"
        ) if hi is not None else "        hal.return %ge : i1\n"
        variants.append(
            f"  hal.executable.variant public @{arch} target({target}) objects({objects}) {{\n"
            "    hal.executable.condition(%device: !hal.device) -> i1 {\n"
            '        %ok1, %major = hal.device.query<%device : !hal.device> key("cuda.device" :: "compute_capability_major") : i1, i32 = 0 : i32\n'
            '        %ok2, %minor = hal.device.query<%device : !hal.device> key("cuda.device" :: "compute_capability_minor") : i1, i32 = 0 : i32\n'
            "        %c10 = arith.constant 10 : i32\n"
            "        %tens = arith.muli %major, %c10 : i32\n"
            "        %cc = arith.addi %tens, %minor : i32\n"
            f"        %lo = arith.constant {lo} : i32\n"
            "        %ge = arith.cmpi sge, %cc, %lo : i32\n"
            + upper +
            "    }\n  }"
        )
    text = f"hal.executable private @{exe} {{\n" + "\n".join(variants) + "\n}"
    with source.context, source.location:
        new = parse_detached(text, source.context)[0]
        ir.InsertionPoint(source).insert(new)
        exports = list(exports_of(source).values())
        index = ir.IndexType.get()
        for variant, arch in zip([o.operation for o in new.regions[0].blocks[0].operations], names):
            point = ir.InsertionPoint.at_block_terminator(variant.regions[0].blocks[0])
            for export in exports:
                clone = export.clone(ip=point)
                if TARGETS_ATTR in clone.attributes:
                    per = clone.attributes[TARGETS_ATTR]
                    if arch in per:
                        threads, shared = (int(v.value) for v in per[arch])
                        clone.attributes["workgroup_size"] = ir.ArrayAttr.get(
                            [ir.IntegerAttr.get(index, threads), ir.IntegerAttr.get(index, 1), ir.IntegerAttr.get(index, 1)]
                        )
                        if shared:
                            clone.attributes["workgroup_local_memory"] = ir.IntegerAttr.get(index, shared)
                        elif "workgroup_local_memory" in clone.attributes:
                            del clone.attributes["workgroup_local_memory"]
                    del clone.attributes[TARGETS_ATTR]
        for dispatch in [op for op in walk(module.operation) if op.name == "flow.dispatch"]:
            refs = list(dispatch.attributes["entry_points"])
            new_refs, changed = [], False
            for ref in refs:
                parts = [p.lstrip("@").strip('"') for p in str(ref).split("::")]
                if len(parts) == 2 and parts[0] == exe:
                    new_refs.extend(ir.SymbolRefAttr.get([exe, arch, parts[1]]) for arch in names)
                    changed = True
                else:
                    new_refs.append(ref)
            if changed:
                dispatch.attributes["entry_points"] = ir.ArrayAttr.get(new_refs)
        source.erase()
