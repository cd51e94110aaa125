"""The model of ``autotune-export inspect``'s report (:mod:`autotune_export.tools.inspection`):
what a group holds (:class:`GroupInfo`, :class:`VariantInfo`, :class:`Layout`,
:class:`SpaceInfo`), per executable (:class:`ExecutableInfo`), and the whole report
(:class:`Inspection`) with its two renderings, the table and JSON (format :data:`FORMAT`).
Both readers (:mod:`~autotune_export.tools.inspect_mlir`, :mod:`~autotune_export.tools.inspect_vmfb`)
fill it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from autotune_export.cuda.resources import Resources
from autotune_export.ir import hal_attrs

__all__ = [
    "FORMAT",
    "Layout",
    "VariantInfo",
    "SpaceInfo",
    "GroupInfo",
    "ExecutableInfo",
    "Inspection",
    "parse_layout",
    "prune_kind",
    "strided_of",
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
    #: The dispatch sites that may run fewer variants than the group (the kernel's
    #: ``prune_configs_by`` keeps fewer configs for their arguments): ``(site label, variant
    #: names in Triton's order for its arguments)``; any other choice runs the first there.
    allowed: list[tuple[str, list[str]]] = field(default_factory=list)
    #: The check entry of the group's reference computation (the reflection's ``reference``:
    #: ``autotune-export program``'s groups whose default accumulates in f16/bf16), "" for none.
    reference: str = ""
    #: What the reference is, or why there is none and what variants are compared with
    #: (the reflection's ``reference_note``), "" where the module does not say.
    reference_note: str = ""

    @property
    def key(self) -> str:
        return f"{self.executable}::{self.group}"

    def reference_text(self) -> str | None:
        """The table's ``reference:`` line after its label: the entry and what it computes, or
        the note alone (no reference); None when the module says nothing of one."""
        if self.reference:
            return f"@{self.reference}" + (f": {self.reference_note}" if self.reference_note else "")
        return self.reference_note or None


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
                    "allowed": [{"site": site, "variants": list(names)} for site, names in g.allowed],
                    "reference": g.reference or None,
                    "reference_note": g.reference_note or None,
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
            for site, names in g.allowed:
                out.append(
                    f"  allowed:     {site}: {', '.join('@' + n for n in names)} (its own prune_configs_by keeps "
                    f"fewer; any other choice runs @{names[0]} there)"
                )
            if g.reference_text():
                out.append(f"  reference:   {g.reference_text()}")
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
                        kinds[prune_kind(line)] = kinds.get(prune_kind(line), 0) + 1
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


def parse_layout(text: str) -> Layout | None:
    """A ``#hal.pipeline.layout`` attribute (or its printed form) as a :class:`Layout`
    (read by :func:`autotune_export.ir.hal_attrs.read_layout`); None for anything else."""
    try:
        layout = hal_attrs.read_layout(text)
    except ValueError:
        return None
    return Layout([list(flags) for flags in layout.bindings], layout.constants)


PRUNE_KINDS = (
    ("shared memory", "shared memory"),
    ("registers per block", "registers"),
    ("--max-spills", "spills"),
    ("--max-variants", "--max-variants"),
    ("threads per block", "threads"),
    ("compile error", "compile error"),
)


def prune_kind(line: str) -> str:
    """The kind of reason of one ``pruned`` line, for the space's summary: shared memory,
    registers, spills, --max-variants, threads, compile error, else other."""
    return next((kind for marker, kind in PRUNE_KINDS if marker in line), "other")


def strided_of(reflection: dict, where: str, notes: list[str]) -> list:
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
