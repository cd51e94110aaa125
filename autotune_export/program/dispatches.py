"""Finding the tunable dispatches of a program and their variants (docs/program.md, "What is
tunable"): the root op of a dispatch region (:func:`root_op`), the numbering of root ops for
write-back (:data:`SITE_ATTR`), loop sizes, IREE's configurations read off the
executable-configurations output, and the :class:`TunableDispatch` / :class:`Variant` records
the regrouping (:mod:`.regroup`) works on; llvm-cpu (:func:`tunable_cpu`) and CUDA
(:func:`tunable_cuda`: IREE's own candidates, each compiled alone, and Triton's)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from autotune_export.ir.walk import isa, walk
from autotune_export.program.candidates import LEVELS, CpuTiles
from autotune_export.support.diagnostics import location_of
from iree.compiler import ir
from iree.compiler.passmanager import PassManager
from iree.compiler.dialects import flow, hal, iree_codegen, linalg, stream, util
from iree.compiler.dialects import func as func_d

__all__ = [
    "SITE_ATTR",
    "TunableDispatch",
    "Variant",
    "dispatch_ops",
    "root_op",
    "site_of",
    "strip_sites",
    "tag_sites",
    "loops_of",
    "tiles_of",
    "tunable_cpu",
    "tunable_cuda",
    "with_compilation_info",
]


@dataclass
class Variant:
    """One variant of a group, the seam every candidate generator plugs into: ``name`` (its
    export name in the reflection), ``config`` (its reflection config, ``[[key, value], ...]``)
    and ``make(dispatch)``, which builds the variant's dispatch at the current insertion point
    from the group's original ``flow.dispatch.workgroups`` (same operands, same result types)
    and returns the new op. ``compilation_info``: ``(lowering_config, translation_info)`` text
    of an IREE-codegen variant (what write-back puts on the input's root op); None for
    IREE's default and for candidates that are not IREE's code generation."""

    name: str
    config: list
    make: Callable
    compilation_info: tuple[str, str] | None = None


@dataclass
class TunableDispatch:
    """One tunable dispatch: its host function, its index among the host's dispatches, IREE's
    executable and export names for it, the root op's name, static loop sizes and reduction
    loops, IREE's default tiles and translation_info, and the candidate tiles (variant k+1 is
    ``candidates[k]``)."""

    host: str
    index: int
    executable: str
    export: str
    root: str
    loops: list[int]
    reductions: set[int]
    default: CpuTiles
    default_text: str
    translation_info: str
    candidates: list[CpuTiles] = field(default_factory=list)
    #: Further variants from other generators (appended after IREE's candidates, in order).
    extra: list[Variant] = field(default_factory=list)
    #: The root op's number in IREE's input-phase program (:data:`SITE_ATTR`), None if unknown.
    site: int | None = None
    #: The root op's MLIR location (the input's position where the phases kept it), for remarks.
    location: object = None

    @property
    def key(self) -> str:
        """``executable::group``, how the runtime names the group."""
        return f"{self.executable}::{self.export}"

    def variants(self) -> list[Variant]:
        """Variant 0: the dispatch unchanged (IREE's default, whatever IREE decides); then one
        per candidate tile config (IREE's translation_info kept); then :attr:`extra`."""
        out = [Variant(self.export, [["lowering_config", self.default_text]], lambda dispatch: dispatch.clone())]
        for k, tiles in enumerate(self.candidates, start=1):
            pair = (tiles.text(), self.translation_info)
            out.append(Variant(f"{self.export}.candidate{k}", [["lowering_config", pair[0]]], with_compilation_info(*pair), pair))
        return out + list(self.extra)


def with_compilation_info(lowering_config: str, translation_info: str):
    """A :attr:`Variant.make` for an IREE-codegen variant: a clone of the dispatch whose root op
    carries ``compilation_info = <lowering_config, translation_info>``."""

    def make(dispatch):
        clone = dispatch.clone()
        # IREE 3.13 has no Python constructor for #iree_cpu.lowering_config: the one attribute
        # spelled as text (CpuTiles.text), the rest is built with the bindings.
        config = ir.Attribute.parse(lowering_config)
        info = iree_codegen.CompilationInfoAttr.get(config, ir.Attribute.parse(translation_info))
        root_op(clone.operation).attributes["compilation_info"] = info
        return clone

    return make


_NAMED_CONTRACTIONS = (linalg.MatmulOp, linalg.BatchMatmulOp)


def _iterators(op) -> list[str] | None:
    """A linalg.generic's iterator types (``parallel``/``reduction``), else None."""
    if "iterator_types" not in op.attributes:
        return None
    return [re.sub(r".*<(\w+)>.*", r"\1", str(a)) for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def root_op(dispatch):
    """The op of a dispatch region that decides its code: a ``linalg.matmul``,
    ``linalg.batch_matmul``, ``linalg.conv_2d_*`` or a ``linalg.generic`` with two inputs and a
    reduction loop (a contraction or a convolution IREE rewrote into one), when there is
    exactly one; else None (elementwise dispatches, reductions of one input, several roots:
    not tunable in this slice, docs/program.md)."""
    roots = [op for op in walk(dispatch) if _is_root(op)]
    return roots[0] if len(roots) == 1 else None


def why_no_root(dispatch) -> str:
    """Why :func:`root_op` finds no root in ``dispatch`` (a remark's reason): several
    contractions/convolutions, or none (elementwise ops, reductions of one input)."""
    roots = [op.name for op in walk(dispatch) if _is_root(op)]
    if roots:
        return f"{len(roots)} contractions/convolutions in one dispatch ({', '.join(roots)}); not tunable in this slice"
    linalg_ops = sorted({op.name for op in walk(dispatch) if op.name.startswith("linalg.") and not isa(op, linalg.YieldOp)})
    body = f" (it has {', '.join(linalg_ops)})" if linalg_ops else ""
    return f"no contraction or convolution{body}: only matmuls, batch matmuls and convolutions are tuned"


def _first_located(dispatch):
    """The location of the first op in ``dispatch`` that has a file position (the dispatch
    op's own is often IREE's fused one), or the dispatch's."""
    for op in walk(dispatch):
        if op.name.startswith("linalg.") and location_of(op.location) is not None:
            return op.location
    return dispatch.location


def _is_root(op) -> bool:
    """Whether ``op`` is one of the ops :func:`root_op` looks for."""
    if isa(op, *_NAMED_CONTRACTIONS) or op.name.startswith("linalg.conv_2d"):
        return True
    if isa(op, linalg.GenericOp):
        ins = len(op.operands) - len(op.results)
        return "reduction" in (_iterators(op) or []) and ins >= 2
    return False


#: Discardable attribute numbering the possible root ops of IREE's input-phase program, so a
#: dispatch's root op names the op of the input it came from (IREE keeps discardable
#: attributes through global optimization, a convolution's generalization included): the
#: key of write-back. Removed again before anything is compiled further.
SITE_ATTR = "autotune.site"


def tag_sites(input_text: str) -> str:
    """IREE's input-phase program with :data:`SITE_ATTR` = 0, 1, ... on each op
    :func:`_is_root` accepts, in walk order, after MLIR's ``cse`` (identical ops, which IREE
    would merge, are one op with one number, not two ops the numbers keep apart); printed with
    its locations (those of the user's input when ``input_text`` has them: iree-compile's
    ``--mlir-print-debuginfo``)."""
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(input_text)
        # IREE's own CSE merges identical ops later (one dispatch for two equal matmuls); the markers
        # would make them differ, so identical ops are merged first, by MLIR's CSE pass itself.
        PassManager.parse("builtin.module(cse)").run(module.operation)
        i64 = ir.IntegerType.get_signless(64)
        for n, op in enumerate(o for o in walk(module.operation) if _is_root(o)):
            op.attributes[SITE_ATTR] = ir.IntegerAttr.get(i64, n)
        return module.operation.get_asm(enable_debug_info=True)  # the input's positions, for remarks


def strip_sites(module) -> None:
    """Remove :data:`SITE_ATTR` from every op of ``module``."""
    for op in walk(module.operation):
        if SITE_ATTR in op.attributes:
            del op.attributes[SITE_ATTR]


def site_of(op) -> int | None:
    return int(ir.IntegerAttr(op.attributes[SITE_ATTR]).value) if SITE_ATTR in op.attributes else None


def loops_of(op) -> tuple[list[int], set[int]] | None:
    """The static loop sizes and reduction loop indices of a root op, from its indexing maps
    and operand shapes (None when a size is dynamic or cannot be read): a loop is a reduction
    when the result's map does not use it (MLIR's linalg definition)."""
    shapes = [ir.ShapedType(v.type) for v in op.operands]
    if any(not s.has_static_shape for s in shapes) or "indexing_maps" not in op.attributes:
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if len(maps) != len(shapes):
        return None
    sizes: list[int | None] = [None] * maps[0].n_dims
    for amap, shape in zip(maps, shapes):
        for expr, extent in zip(amap.results, shape.shape):
            dim = _dim(expr)
            if dim is not None:
                sizes[dim] = extent
    if any(s is None for s in sizes):
        return None
    used = {_dim(e) for e in maps[-1].results}
    return sizes, {d for d in range(len(sizes)) if d not in used}


def _dim(expr) -> int | None:
    """The position of a bare ``dN`` affine expression, else None."""
    try:
        return ir.AffineDimExpr(expr).position
    except (ValueError, TypeError):
        return None


_LEVEL_RE = re.compile(r"(\w+) = \[([\d, ]*)\]")


def tiles_of(config: str) -> CpuTiles | None:
    """IREE's printed ``#iree_cpu.lowering_config<...>`` as :class:`CpuTiles` (None for another
    kind of config or a level this slice does not know, which it then leaves alone)."""
    if not config.startswith("#iree_cpu.lowering_config<"):
        return None
    levels = {name: tuple(int(x) for x in sizes.split(",") if x.strip()) for name, sizes in _LEVEL_RE.findall(config)}
    if not levels or set(levels) - set(LEVELS) or "distribution" not in levels:
        return None
    return CpuTiles(**{lv: levels.get(lv) for lv in LEVELS})


def dispatch_ops(module) -> list[tuple[str, int, object]]:
    """``(host, index, op)`` of every ``flow.dispatch.workgroups``, per host function in order."""
    out = []
    for func in module.body.operations:
        if not isa(func, util.FuncOp, func_d.FuncOp):
            continue
        host = ir.StringAttr(func.operation.attributes["sym_name"]).value
        index = 0
        for op in walk(func.operation):
            if isa(op, flow.DispatchWorkgroupsOp):
                out.append((host, index, op))
                index += 1
    return out


def _configurations(cfg_module, level: str = "distribution") -> dict[str, tuple[str, object, str, str]]:
    """Executable name -> (export name, root op, lowering_config text, translation_info text)
    from the executable-configurations output (the op carrying a config with a ``level`` tile
    level: ``distribution`` on llvm-cpu, ``workgroup`` on CUDA)."""
    out = {}
    for exe in cfg_module.body.operations:
        if not isa(exe, hal.ExecutableOp):
            continue
        name = ir.StringAttr(exe.operation.attributes["sym_name"]).value
        for op in walk(exe.operation):
            if isa(op, func_d.FuncOp) and "translation_info" in op.attributes:
                roots = [
                    o for o in walk(op) if "lowering_config" in o.attributes and level in str(o.attributes["lowering_config"])
                ]
                if len(roots) == 1:
                    export = ir.StringAttr(op.attributes["sym_name"]).value
                    out[name] = (
                        export,
                        roots[0],
                        str(roots[0].attributes["lowering_config"]),
                        str(op.attributes["translation_info"]),
                    )
    return out


def tunable_cpu(dc_module, cfg_module, note) -> list[TunableDispatch]:
    configs = _configurations(cfg_module)
    used = _used_executables(cfg_module)
    found = []
    for host, index, op in dispatch_ops(dc_module):
        exe = f"{host}_dispatch_{index}"
        root = root_op(op)
        if root is None:
            note(f"@{exe}: {why_no_root(op)}; it keeps IREE's default", at=_first_located(op))
            continue
        cfg_exe = _configuring_executable(exe, host, index, configs, used)
        if cfg_exe is None:
            note(f"@{exe} ({root.name}): IREE's configuration for it was not found; it keeps IREE's default", at=root.location)
            continue
        export, cfg_root, config, translation = configs[cfg_exe]
        export = _own_export(exe, cfg_exe, export)
        loops = loops_of(root)
        tiles = tiles_of(config)
        if loops is None or tiles is None:
            note(
                f"@{exe} ({root.name}): dynamic loop sizes or a configuration this slice does not vary ({config}); it keeps IREE's default",
                at=root.location,
            )
            continue
        if any(tiles.level(lv) is not None and len(tiles.level(lv)) != len(loops[0]) for lv in LEVELS):
            note(
                f"@{exe} ({root.name}): IREE configures {len(tiles.distribution)} loops where the dispatch has "
                f"{len(loops[0])} (the op is reshaped after dispatch creation); it keeps IREE's default",
                at=root.location,
            )
            continue
        found.append(TunableDispatch(host, index, exe, export, root.name, loops[0], loops[1], tiles, config, translation))
        found[-1].location = root.location
    return found


def tunable_cuda(dc_text, cfg_text, note, limits, args, target, triton, jobs, object_format) -> list[TunableDispatch]:
    """The CUDA dispatches with candidates, as :attr:`TunableDispatch.extra` variants: IREE's own
    (:func:`.cuda.cuda_candidates`, each compiled alone first: one iree-compile rejects is
    dropped with a remark) and, with ``triton``, the configs of registered Triton kernels that
    match the dispatch (:func:`.triton_candidates.triton_candidates`; a dispatch none matches
    says why). ``limits``: (variants of IREE's code, configs per Triton kernel). ``dc_text``:
    the dispatch-creation phase with its debug info (the input's positions), so every remark
    names the op's line."""
    from autotune_export.program.cuda import check_candidates, contraction_of, cuda_candidates
    from autotune_export.program.triton_candidates import triton_candidates
    from autotune_export.support.paths import default_cache_dir

    dc_module, cfg_module = ir.Module.parse(dc_text), ir.Module.parse(cfg_text)
    configs = _configurations(cfg_module, "workgroup")
    executables = {
        ir.StringAttr(e.operation.attributes["sym_name"]).value: e.operation
        for e in cfg_module.body.operations
        if isa(e, hal.ExecutableOp)
    }
    found = []
    used = _used_executables(cfg_module)
    for host, index, op in dispatch_ops(dc_module):
        exe = f"{host}_dispatch_{index}"
        root = root_op(op)
        cfg_exe = _configuring_executable(exe, host, index, configs, used)
        if root is None:
            note(f"@{exe}: {why_no_root(op)}; it keeps IREE's default", at=_first_located(op))
        if root is None or cfg_exe is None:
            continue
        export, cfg_root, config, translation = configs[cfg_exe]
        export = _own_export(exe, cfg_exe, export)
        default, candidates = cuda_candidates(executables[cfg_exe], cfg_root, config, translation, limits[0] - 1)
        if default is None:
            note(f"@{exe} ({root.name}): {candidates}; IREE's own code keeps its default", at=root.location)
            candidates = []
        extra = []
        checked = check_candidates(cfg_text, cfg_exe, candidates, args, jobs=jobs, cache_dir=str(default_cache_dir()))
        for cand, error in checked:
            if error is None:
                info = (str(cand.lowering_config()), str(cand.translation_info()))
                make = lambda dispatch, cand=cand: cand.emit(dispatch, root_op)  # noqa: E731
                extra.append(Variant(f"{export}.candidate{len(extra) + 1}", cand.reflection(), make, info))
            else:
                note(f"@{exe}: iree-compile rejected candidate {cand.text()} ({error}); dropped", at=root.location)
        if triton:
            more, reason = triton_candidates(
                op,
                root,
                target=target,
                limit=limits[1],
                jobs=jobs,
                object_format=object_format,
                remark=lambda text, exe=exe, at=root.location: note(f"@{exe}: {text}", at=at),
            )
            if reason:
                note(f"@{exe} ({root.name}): no Triton candidates: {reason}", at=root.location)
            extra += [Variant(f"{export}.{c.suffix}", c.reflection(), c.emit) for c in more]
        c = contraction_of(root)
        loops = list(c.sizes) if c else []
        d = TunableDispatch(host, index, exe, export, root.name, loops, {c.k} if c else set(), default, config, translation)
        d.extra = extra
        found.append(d)
    return found


def _configuring_executable(exe: str, host: str, index: int, configs: dict, used: dict[str, list[str]]) -> str | None:
    """The executable whose configuration (in ``configs``) is that of dispatch ``index`` of
    ``host`` (IREE's name ``exe``), or None. IREE deduplicates identical dispatches (the same
    matmul in two functions): the executable then is another host's, named by the host's
    dispatch ops (``used``, :func:`_used_executables`)."""
    if exe in configs:
        return exe
    refs = used.get(host, [])
    ref = refs[index] if index < len(refs) else None
    return ref if ref in configs else None


def _own_export(exe: str, cfg_exe: str, export: str) -> str:
    """The export name of the configuring executable ``cfg_exe`` (``<cfg_exe>_<op>``) as this
    dispatch's own (``<exe>_<op>``): a group is named after its own dispatch."""
    return exe + export[len(cfg_exe) :] if export.startswith(cfg_exe) else export


def _used_executables(cfg_module) -> dict[str, list[str]]:
    """Host function -> the executables its dispatches use, in order, from the
    executable-configurations output (``stream.cmd.dispatch @exe::@variant::@export``): after
    IREE's deduplication of identical dispatches, the i-th dispatch of a host may run another
    host's executable."""
    out: dict[str, list[str]] = {}
    for func in cfg_module.body.operations:
        if not isa(func, util.FuncOp):
            continue
        host = ir.StringAttr(func.operation.attributes["sym_name"]).value
        refs = []
        for op in walk(func.operation):
            if isa(op, stream.CmdDispatchOp) and "entry_points" in op.attributes:
                first = ir.ArrayAttr(op.attributes["entry_points"])[0]
                refs.append(str(first).split("::")[0].lstrip("@"))
        out[host] = refs
    return out
