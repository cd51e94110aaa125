"""The bundle: what one executable of autotuned variants is, per CUDA architecture, as frozen
plain data between the kernel stages and the IR.

The stages, as Triton's compiler has them (``docs/architecture.md``)::

    launch model   (cuda/launch_model: configs, heuristics, pruning, defaults; the calling
         |          convention a parameter)
    compile        (cuda/triton_compile: VariantSpec -> CompiledVariant | PrunedVariant,
         |          parallel, cached)
    link           (cuda/link: the variants of a group -> a Bundle; here: link_object)
         |
    build          (passes/build_bundle.write_bundle: the Bundle's objects, exports and group
                    op written into the IR)

:class:`Bundle` holds the linked objects (:class:`ObjectSpec`: one per architecture, PTX text or
a cubin), the exports (:class:`ExportSpec`: name, ordinal, block size and dynamic shared memory
per object, the grid, the config it was compiled from), the pipeline layout they share and the
group over them (:class:`GroupSpec`). It is serializable (:meth:`Bundle.to_json` /
:meth:`Bundle.from_json`, a round trip that gives an equal bundle) and imports nothing of IREE
(pyproject's import-linter contract ``kernel-stages-without-iree``).

Front ends enter where their input is: the CLI's Triton form at the launch model
(materialize-triton-variants), jax.export StableHLO, which carries each config's PTX, at
:func:`link_object` and the bundle (:func:`autotune_export.interop.jax_triton.convert_stablehlo`);
the RFC form already holds what the builder writes (exports, objects and the group op).
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from typing import Any, Sequence

from autotune_export.cuda import ptx as ptx_mod
from autotune_export.cuda import variant_cache
from autotune_export.ir.params import TritonDtype

__all__ = ["ObjectSpec", "ExportSpec", "GroupSpec", "Bundle", "link_object"]

#: Bump when the JSON layout of a bundle changes.
BUNDLE_FORMAT = 1


def _value_json(value: Any) -> Any:
    """A config value as JSON: a Triton dtype as ``{"tl": name}``; the rest (int, float, bool,
    str, None) as is."""
    return {"tl": value.name} if isinstance(value, TritonDtype) else value


def _value_from_json(value: Any) -> Any:
    return TritonDtype(value["tl"]) if isinstance(value, dict) else value


def _pairs(items) -> tuple[tuple[str, Any], ...]:
    return tuple((str(k), v) for k, v in items)


@dataclass(frozen=True)
class ObjectSpec:
    """One linked object: ``arch`` the PTX target of its code (``sm_90a``), ``data`` the linked
    PTX text or its cubin (bytes)."""

    arch: str
    data: str | bytes

    @property
    def format(self) -> str:
        """``"cubin"`` for bytes, else ``"ptx"`` (the object's file extension)."""
        return "cubin" if isinstance(self.data, bytes) else "ptx"


@dataclass(frozen=True)
class ExportSpec:
    """One export of the executable: its symbol ``name`` (the PTX entry) and ``ordinal``;
    per object, in :attr:`Bundle.objects` order, the block size ``threads`` (x; y = z = 1) and
    the dynamic shared memory ``shared`` in bytes (0: none); the grid, either ``grid``
    expressions (text, :mod:`autotune_export.ir.grid`) over the bundle's workload and the
    config's integer ``constants``, or a constant ``count`` (x, y, z programs); ``scratch``
    Triton's global scratch ``(bytes per program, alignment)`` or None; ``config`` the Triton
    config it was compiled from (``((key, value), ...)``, recorded on the export) or None."""

    name: str
    ordinal: int
    threads: tuple[int, ...]
    shared: tuple[int, ...]
    grid: tuple[str, ...] = ()
    constants: tuple[tuple[str, int], ...] = ()
    count: tuple[int, int, int] | None = None
    scratch: tuple[int, int] | None = None
    config: tuple[tuple[str, Any], ...] | None = None

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("threads", tuple(int(t) for t in self.threads))
        set_("shared", tuple(int(s) for s in self.shared))
        set_("grid", tuple(self.grid))
        set_("constants", _pairs(self.constants))
        if self.count is not None:
            set_("count", tuple(int(c) for c in self.count))
        if self.scratch is not None:
            set_("scratch", tuple(int(s) for s in self.scratch))
        if self.config is not None:
            set_("config", _pairs(self.config))
        if (self.count is None) == (not self.grid):
            raise ValueError(f"export @{self.name}: give either grid expressions or a constant count")


@dataclass(frozen=True)
class GroupSpec:
    """The group op over the variants (its ``variants([...])`` form, :mod:`autotune_export.ir.group`):
    ``name``, the ``variants`` (export names), and the clauses that carry over: the
    ``specialized`` siblings and the scalars they assume ``divisible`` by 16 / ``equal_one``,
    ``default``, ``tune_workload`` (MLIR text per workload), ``reset_to_zero`` /
    ``restore_value`` (result indices)."""

    name: str
    variants: tuple[str, ...]
    specialized: tuple[str, ...] | None = None
    divisible: tuple[int, ...] | None = None
    equal_one: tuple[int, ...] | None = None
    default: str | None = None
    tune_workload: tuple[tuple[str, ...], ...] | None = None
    reset_to_zero: tuple[int, ...] | None = None
    restore_value: tuple[int, ...] | None = None

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("variants", tuple(self.variants))
        for name in ("specialized", "divisible", "equal_one", "reset_to_zero", "restore_value"):
            if getattr(self, name) is not None:
                set_(name, tuple(getattr(self, name)))
        if self.tune_workload is not None:
            set_("tune_workload", tuple(tuple(w) for w in self.tune_workload))


@dataclass(frozen=True)
class Bundle:
    """One executable's linked variants for every architecture: ``executable`` its symbol,
    ``objects`` one per architecture (several: split-architectures makes one executable
    variant each), ``exports`` in ordinal order, the pipeline layout they share
    (``read_only`` per binding, ``num_constants`` 32-bit push constants), the ``workload``
    names of the count regions, and the ``group`` over the exports (None: a plain export, no
    group op)."""

    executable: str
    objects: tuple[ObjectSpec, ...]
    exports: tuple[ExportSpec, ...]
    read_only: tuple[bool, ...]
    num_constants: int
    workload: tuple[str, ...] = ()
    group: GroupSpec | None = None

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("objects", tuple(self.objects))
        set_("exports", tuple(self.exports))
        set_("read_only", tuple(bool(r) for r in self.read_only))
        set_("workload", tuple(self.workload))

    def to_json(self) -> str:
        """The bundle as JSON text (cubins base64-encoded, Triton dtypes as ``{"tl": name}``)."""

        def obj(o: ObjectSpec) -> dict:
            if isinstance(o.data, bytes):
                return {"arch": o.arch, "cubin": base64.b64encode(o.data).decode()}
            return {"arch": o.arch, "ptx": o.data}

        def export(e: ExportSpec) -> dict:
            return {
                "name": e.name,
                "ordinal": e.ordinal,
                "threads": list(e.threads),
                "shared": list(e.shared),
                "grid": list(e.grid),
                "constants": [[k, v] for k, v in e.constants],
                "count": None if e.count is None else list(e.count),
                "scratch": None if e.scratch is None else list(e.scratch),
                "config": None if e.config is None else [[k, _value_json(v)] for k, v in e.config],
            }

        group = None
        if self.group is not None:
            g = self.group
            group = {
                k: (
                    None
                    if v is None
                    else [list(x) for x in v]
                    if k == "tune_workload"
                    else list(v)
                    if isinstance(v, tuple)
                    else v
                )
                for k, v in ((f, getattr(g, f)) for f in GroupSpec.__dataclass_fields__)
            }
        return json.dumps(
            {
                "format": BUNDLE_FORMAT,
                "executable": self.executable,
                "objects": [obj(o) for o in self.objects],
                "exports": [export(e) for e in self.exports],
                "read_only": list(self.read_only),
                "num_constants": self.num_constants,
                "workload": list(self.workload),
                "group": group,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> "Bundle":
        """The bundle :meth:`to_json` wrote. Raises ValueError for other text or another
        :data:`BUNDLE_FORMAT`."""
        try:
            doc = json.loads(text)
            if doc.get("format") != BUNDLE_FORMAT:
                raise ValueError(f"bundle format {doc.get('format')!r}, expected {BUNDLE_FORMAT}")
            objects = tuple(
                ObjectSpec(o["arch"], base64.b64decode(o["cubin"]) if "cubin" in o else o["ptx"]) for o in doc["objects"]
            )
            exports = tuple(
                ExportSpec(
                    name=e["name"],
                    ordinal=e["ordinal"],
                    threads=e["threads"],
                    shared=e["shared"],
                    grid=e["grid"],
                    constants=e["constants"],
                    count=e["count"],
                    scratch=e["scratch"],
                    config=None if e["config"] is None else [(k, _value_from_json(v)) for k, v in e["config"]],
                )
                for e in doc["exports"]
            )
            group = None if doc["group"] is None else GroupSpec(**doc["group"])
            return cls(doc["executable"], objects, exports, doc["read_only"], doc["num_constants"], doc["workload"], group)
        except (KeyError, TypeError, AttributeError) as err:
            raise ValueError(f"not a bundle: {type(err).__name__}: {err}") from None


def link_object(
    parts: Sequence[ptx_mod.LinkPart],
    *,
    object_format: str = "ptx",
    ptx_version: str | int | None = None,
    check: bool = True,
    cache_dir: str | os.PathLike | None = None,
    jobs: int | None = None,
) -> ObjectSpec:
    """The one object of ``parts`` (one :class:`~autotune_export.cuda.ptx.LinkPart` per
    variant, all for one architecture): linked into one PTX module
    (:func:`autotune_export.cuda.ptx.link`, ``.version`` set to ``ptx_version`` when given),
    kept as text (``object_format="ptx"``) or assembled by Triton's ptxas (``"cubin"``, one
    ptxas thread per job, ``jobs`` None: one per core).

    ``check``: for PTX, ptxas checks what the linker changed (:func:`..ptx.check_edits`, in
    milliseconds: each part was assembled when it was compiled). Both ptxas results are
    memoized by content under ``<cache_dir>/cubin/`` (:func:`..variant_cache.cached_artifact`;
    ``cache_dir`` None: not memoized). The architecture is the last part's PTX ``.target``.
    Raises :class:`~autotune_export.cuda.ptx.PtxError` when linking or ptxas fails."""
    linked = ptx_mod.link(parts, ptx_version=ptx_version) if ptx_version is not None else ptx_mod.link(parts)
    arch = ptx_mod.parse_entry(parts[-1].ptx).target
    if object_format == "cubin":
        threads = jobs or os.cpu_count() or 1
        key = "\0".join([arch, ptx_mod.ptxas_path(), linked]).encode()
        return ObjectSpec(
            arch, variant_cache.cached_artifact(cache_dir, "cubin", key, lambda: ptx_mod.assemble(linked, arch, threads=threads))
        )
    if check:
        key = "\0".join(["check_edits 1", arch, ptx_mod.ptxas_path(), linked]).encode()
        variant_cache.cached_artifact(cache_dir, "cubin", key, lambda: ptx_mod.check_edits(linked, arch))
    return ObjectSpec(arch, linked)
