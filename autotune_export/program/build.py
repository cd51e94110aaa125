"""build_program: a whole program (linalg on tensors, or StableHLO as jax.export writes it) to a
.vmfb whose tunable dispatches are groups of variants picked at run time; frozen builds and
write-back of the winners (docs/program.md; issue 25, llvm-cpu candidates).

IREE stays in charge of the pipeline; this only annotates and regroups between its phases:

1. ``iree-compile --compile-to=input`` (IREE's input conversion), each possible root op
   numbered (:data:`SITE_ATTR`, for write-back), then ``--compile-from=input
   --compile-to=dispatch-creation``: IREE forms the dispatches (inline
   ``flow.dispatch.workgroups`` ops in the host functions); the numbers are read off the
   dispatches' root ops and removed.
2. The same text ``--compile-from=dispatch-creation --compile-to=executable-configurations``:
   IREE's own ``lowering_config`` and ``translation_info`` for every dispatch (executable
   ``@<host>_dispatch_<i>`` is the i-th dispatch of ``@<host>``, IREE's naming).
3. Per tunable dispatch (:func:`root_op`), candidates: variant 0 is the dispatch unchanged
   (IREE's default, whatever IREE decides), variants 1.. are clones whose root op carries
   ``compilation_info`` = a neighbour of IREE's config (:func:`candidates.neighbours`) with
   IREE's translation_info. The dispatch is replaced by nested ``scf.if`` on the group's
   ``util.global private mutable`` i32 choice, one dispatch per branch: IREE outlines each
   into an executable of its own (way C of notes/iree-dispatch-tuning-facts.md: no summed
   resources, one memoized command buffer per branch).
4. Per group a select entry ``(i32) -> ()``, and per variant a benchmark entry
   ``P.bench.K(n)`` and a check entry ``P.check.K()`` plus one ``P.compare`` (the Triton
   groups' entries, built by :func:`autotune_export.passes.bench_entries.bench_entry` on the
   variant's own dispatch: seeded fake data the module makes, never the user's), in a module
   of their own that IREE takes through its input and ABI phases; then one ``@__autotune``
   carrying the reflection (:class:`autotune_export.contract.GroupReflection`), and
   ``--compile-from=global-optimization`` to the .vmfb (IREE's dispatch creation runs again:
   it makes dispatches of the entries' fills and comparisons and leaves the program's, already
   formed, alone). When IREE rejects the result, the groups lose their candidates one at a
   time (first group first, a warning each) until it compiles.

``choices`` / ``tuning_results`` freeze groups: such a dispatch is the chosen variant's
dispatch alone. :func:`write_back` puts the frozen IREE-codegen winners on the input-phase
program as ``compilation_info``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from autotune_export.contract import (
    AUTOTUNE_FUNCTION,
    BENCH_UNROLL,
    REFLECTION_KEY,
    GroupReflection,
    TuningWorkload,
    bench_name,
    choose_result,
    encode_reflection,
    names_for,
)
from autotune_export.ir import functions as fn
from autotune_export.ir.walk import isa, walk
from autotune_export.passes.bench_entries import DispatchOperands, SliceError, bench_entry, compare_entry
from autotune_export.program.candidates import LEVELS, CpuTiles, decomposes_to_1d, neighbours
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError
from iree.compiler import ir
from iree.compiler.dialects import arith, flow, hal, iree_codegen, linalg, scf, stream, util
from iree.compiler.dialects import func as func_d

__all__ = ["ProgramBuild", "TunableDispatch", "Variant", "build_program", "write_back", "root_op", "BACKENDS", "SITE_ATTR"]

#: Backends build_program generates candidates for (docs/program.md): llvm-cpu, and cuda
#: (IREE's own code for sm_89, Triton kernels for the target: :mod:`.cuda`, :mod:`.triton_candidates`).
BACKENDS = ("llvm-cpu", "cuda")

_CPU_ARGS = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
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
            out.append(
                Variant(f"{self.export}.candidate{k}", [["lowering_config", pair[0]]], _with_compilation_info(*pair), pair)
            )
        return out + list(self.extra)


@dataclass
class ProgramBuild:
    """What :func:`build_program` made: the module (``vmfb`` bytes), its groups (as
    ``@__autotune``'s reflection has them), the dispatches considered, the remarks
    (diagnostics of severity remark/warning: dispatches not tunable, candidates dropped) and
    ``mlir``: the regrouped program with its entries, the text the .vmfb was compiled from
    (what ``iree-compile --compile-from=global-optimization`` reproduces it from)."""

    vmfb: bytes
    groups: list[GroupReflection]
    dispatches: list[TunableDispatch]
    remarks: list[Diagnostic]
    mlir: str = ""
    #: IREE's input-phase program, root ops numbered (:data:`SITE_ATTR`), for :func:`write_back`.
    input_mlir: str = ""
    #: The frozen choices (group key -> variant index) this module was built with.
    frozen: dict = field(default_factory=dict)


def build_program(
    source: str,
    *,
    backend: str = "llvm-cpu",
    max_candidates: int = 4,
    source_name: str = "-",
    iree_args: Sequence[str] = (),
    remark: Callable[[Diagnostic], None] | None = None,
    choices: dict[str, int | str] | None = None,
    target: str = "sm_90",
    triton: bool = True,
    jobs: int = 4,
    object_format: str = "ptx",
    tuning_results: list[dict] | None = None,
    max_triton: int | None = None,
) -> ProgramBuild:
    """Build ``source`` (MLIR text: linalg on tensors, or what iree-compile accepts as input)
    into a .vmfb whose tunable dispatches are run-time variant groups.

    ``max_candidates``: at most this many variants per dispatch, IREE's default included (>= 1).
    ``iree_args``: extra iree-compile flags, given to every phase. ``remark(diag)`` is called
    for each remark as it is made. ``choices``: frozen choices, group key
    (``executable::group``) -> variant (index or name, as ``@__autotune`` lists them; what
    the runtime writes in its tuning-results file): such a dispatch becomes that variant's
    dispatch alone, with no choice global, no entries and no group. ``tuning_results``: the
    entries of a tuning-results file (:func:`autotune_export.passes.pin_variants.load_results`);
    each group with results is frozen to the variant
    :func:`autotune_export.contract.choose_result` picks (the runtime's own rule); ``choices``
    overrides them. Raises
    DiagnosticError for an unknown backend, a bad ``max_candidates``, a choice naming no
    group or variant, or when iree-compile rejects the input itself.

    CUDA only (docs/program.md, "CUDA and Triton candidates"): ``target`` is the GPU the program
    runs on (``sm_90``; IREE's own code is compiled for :func:`.cuda.cuda_args`' architecture),
    ``triton`` adds the registered Triton kernels' configs to the groups of the dispatches they
    match (:mod:`.triton_candidates`), ``jobs`` compiles that many candidates at a time,
    ``object_format`` (``ptx`` or ``cubin``) is the Triton objects' format. ``max_candidates``
    caps IREE's variants and ``max_triton`` (default: ``max_candidates``) each Triton kernel's
    configs.
    """
    if backend not in BACKENDS:
        raise DiagnosticError.at(
            None,
            f"program: backend '{backend}' has no candidate generator yet (supported: {', '.join(BACKENDS)}; docs/program.md)",
        )
    if max_candidates < 1:
        raise DiagnosticError.at(None, f"program: --max-candidates must be at least 1 (IREE's default), not {max_candidates}")
    remarks: list[Diagnostic] = []

    def note(message: str, severity: str = "remark") -> None:
        d = Diagnostic(severity, message)
        remarks.append(d)
        if remark is not None:
            remark(d)

    if backend == "cuda":
        from autotune_export.program.cuda import cuda_args

        args = [*cuda_args(target), *iree_args]
    else:
        args = [*_CPU_ARGS, *iree_args]
    input_text = _tag_sites(_compile(source, args + ["--compile-to=input"], source_name))
    tagged = _compile_generated(input_text, args + ["--compile-from=input", "--compile-to=dispatch-creation"])
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        dc_module = ir.Module.parse(tagged)
        sites = {(h, i): _site(root) for h, i, op in _dispatch_ops(dc_module) if (root := root_op(op)) is not None}
        _strip_sites(dc_module)
        dc_text = str(dc_module)
    cfg_text = _compile_generated(dc_text, args + ["--compile-from=dispatch-creation", "--compile-to=executable-configurations"])
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        if backend == "cuda":
            limits = (max_candidates, max_triton or max_candidates)
            dispatches = _tunable_cuda(dc_text, cfg_text, note, limits, args, target, triton, jobs, object_format)
        else:
            dispatches = _tunable(ir.Module.parse(dc_text), ir.Module.parse(cfg_text), note)
    for d in dispatches:
        d.site = sites.get((d.host, d.index))
        if backend != "cuda":
            d.candidates = neighbours(
                d.default, d.loops, d.reductions, max_candidates - 1, keep_unit_vector_tiles=decomposes_to_1d(d.translation_info)
            )
    if tuning_results is not None:
        choices = {**_chosen_in(tuning_results, dispatches), **(choices or {})}
    fixed = _resolve_choices(choices or {}, dispatches)
    while True:
        text, entries, groups = _regroup(dc_text, dispatches, args, fixed, note)
        try:
            text = _with_entries(text, entries, args)
            vmfb = _compile_bytes(text, args + ["--compile-from=global-optimization"])
            return ProgramBuild(vmfb, groups, dispatches, remarks, text, input_text, fixed)
        except _IreeFailure as err:
            shrink = next((d for d in dispatches if (d.candidates or d.extra) and d.key not in fixed), None)
            if shrink is None:
                raise DiagnosticError.at(
                    None, f"iree-compile failed on the program with IREE's default configurations: {err}"
                ) from None
            note(
                f"IREE rejected the program with the candidates of @{shrink.executable} ({err}); that dispatch keeps "
                "IREE's default configuration only",
                "warning",
            )
            shrink.candidates = []
            shrink.extra = []


def _chosen_in(results: list[dict], dispatches: list[TunableDispatch]) -> dict[str, str]:
    """Per group with entries in ``results``, the variant :func:`choose_result` picks."""
    out = {}
    for d in dispatches:
        names = [v.name for v in d.variants()]
        entry = choose_result(results, d.executable, d.export, names)
        if entry is not None:
            out[d.key] = entry["variant"]
    return out


def write_back(built: ProgramBuild, remark: Callable[[Diagnostic], None] | None = None) -> str:
    """IREE's input-phase program (linalg on tensors; for StableHLO input, IREE's own conversion
    of it: the StableHLO ops would not pass an attribute on) with each frozen IREE-codegen
    winner's ``compilation_info`` on its root op, so a plain ``iree-compile`` of the text
    builds those configurations (IREE honours ``compilation_info`` on root ops of its input).
    A frozen choice of IREE's default writes nothing (IREE decides it again); one of another
    generator (no ``compilation_info``) or whose root op is not found is skipped with a
    remark. Raises DiagnosticError when ``built`` has no frozen choices."""
    if not built.frozen:
        raise DiagnosticError.at(None, "program: write-back needs frozen choices (--tuning-results or choices)")
    by_key = {d.key: d for d in built.dispatches}
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(built.input_mlir)
        ops = {_site(op): op for op in walk(module.operation) if SITE_ATTR in op.attributes}
        for key, k in sorted(built.frozen.items()):
            d = by_key[key]
            variant = d.variants()[k]
            if k == 0:
                continue
            if variant.compilation_info is None or d.site not in ops:
                if remark is not None:
                    why = (
                        "is not IREE's code generation"
                        if variant.compilation_info is None
                        else "has no root op found in the input"
                    )
                    remark(Diagnostic("remark", f"@{d.executable}: the frozen variant {variant.name} {why}; not written back"))
                continue
            lowering, translation = variant.compilation_info
            ops[d.site].attributes["compilation_info"] = iree_codegen.CompilationInfoAttr.get(
                ir.Attribute.parse(lowering), ir.Attribute.parse(translation)
            )
        _strip_sites(module)
        module.operation.verify()
        return str(module)


def _resolve_choices(choices: dict, dispatches: list[TunableDispatch]) -> dict[str, int]:
    """``choices`` (group key -> variant index or name) as indices. Raises DiagnosticError for
    a key that names no tunable dispatch or a variant the group does not have."""
    by_key = {d.key: d for d in dispatches}
    out = {}
    for key, choice in choices.items():
        if key not in by_key:
            raise DiagnosticError.at(
                None,
                f"program: a frozen choice names group '{key}', which this program does not have (groups: "
                f"{', '.join(sorted(by_key)) or 'none'})",
            )
        names = [v.name for v in by_key[key].variants()]
        index = names.index(choice) if isinstance(choice, str) and choice in names else choice
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(names):
            raise DiagnosticError.at(None, f"program: group '{key}' has no variant {choice!r} (it has {', '.join(names)})")
        out[key] = index
    return out


def _with_entries(program: str, entries: str, args: Sequence[str]) -> str:
    """The program with the entries module's functions added, after IREE's input and ABI
    phases made their public signatures (``!hal.buffer_view`` in and out, the reflection the
    runtime reads), as the entries of Triton groups get them. The result is compiled
    ``--compile-from=global-optimization``: IREE's dispatch creation runs once more, making
    dispatches of the entries' fake fills and comparisons, and leaves the program's dispatches
    (already formed) as they are."""
    abi = _compile_bytes(entries, [*args, "--compile-to=abi"]).decode()
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(program)
        added = ir.Module.parse(abi)  # kept alive while its ops move
        for op in list(added.body.operations):
            module.body.append(op.detach_from_parent())
        module.operation.verify()
        return str(module)


# ----- IREE's phases --------------------------------------------------------------------------
class _IreeFailure(Exception):
    pass


def _compile_bytes(text: str, args: list[str]) -> bytes:
    from iree.compiler.tools import CompilerToolError, compile_str

    try:
        return compile_str(text, extra_args=args)
    except CompilerToolError as err:
        lines = [ln.strip() for ln in str(err).splitlines() if "error:" in ln]
        raise _IreeFailure(lines[0] if lines else str(err).strip().splitlines()[0]) from None


def _compile_generated(text: str, args: list[str]) -> str:
    """One iree-compile phase on text this module generated, its output as text. Raises
    DiagnosticError (no location: the lines are not the user's)."""
    try:
        return _compile_bytes(text, args).decode()
    except _IreeFailure as err:
        raise DiagnosticError.at(None, f"iree-compile failed on the program between phases: {err}") from None


def _compile(text: str, args: list[str], source_name: str) -> str:
    """One iree-compile phase, its output as text. Raises DiagnosticError naming the input."""
    try:
        return _compile_bytes(text, args).decode()
    except _IreeFailure as err:
        message = str(err)
        m = re.match(r"(?:-|<stdin>):(\d+):(\d+): error: (.*)", message)
        if m:
            from autotune_export.support.diagnostics import Location

            raise DiagnosticError.at(
                Location(source_name, int(m.group(1)), int(m.group(2))), f"iree-compile failed: {m.group(3)}"
            ) from None
        raise DiagnosticError.at(None, f"iree-compile failed: {message}") from None


# ----- finding the tunable dispatches ----------------------------------------------------------
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


def _tag_sites(input_text: str) -> str:
    """IREE's input-phase program with :data:`SITE_ATTR` = 0, 1, ... on each op
    :func:`_is_root` accepts, in walk order."""
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(input_text)
        i64 = ir.IntegerType.get_signless(64)
        for n, op in enumerate(o for o in walk(module.operation) if _is_root(o)):
            op.attributes[SITE_ATTR] = ir.IntegerAttr.get(i64, n)
        return str(module)


def _strip_sites(module) -> None:
    """Remove :data:`SITE_ATTR` from every op of ``module``."""
    for op in walk(module.operation):
        if SITE_ATTR in op.attributes:
            del op.attributes[SITE_ATTR]


def _site(op) -> int | None:
    return int(ir.IntegerAttr(op.attributes[SITE_ATTR]).value) if SITE_ATTR in op.attributes else None


def _loops(op) -> tuple[list[int], set[int]] | None:
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


def _tiles(config: str) -> CpuTiles | None:
    """IREE's printed ``#iree_cpu.lowering_config<...>`` as :class:`CpuTiles` (None for another
    kind of config or a level this slice does not know, which it then leaves alone)."""
    if not config.startswith("#iree_cpu.lowering_config<"):
        return None
    levels = {name: tuple(int(x) for x in sizes.split(",") if x.strip()) for name, sizes in _LEVEL_RE.findall(config)}
    if not levels or set(levels) - set(LEVELS) or "distribution" not in levels:
        return None
    return CpuTiles(**{lv: levels.get(lv) for lv in LEVELS})


def _dispatch_ops(module) -> list[tuple[str, int, object]]:
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


def _tunable(dc_module, cfg_module, note) -> list[TunableDispatch]:
    configs = _configurations(cfg_module)
    used = _used_executables(cfg_module)
    found = []
    for host, index, op in _dispatch_ops(dc_module):
        exe = f"{host}_dispatch_{index}"
        root = root_op(op)
        if root is None:
            continue
        cfg_exe = _configuring_executable(exe, host, index, configs, used)
        if cfg_exe is None:
            note(f"@{exe} ({root.name}): IREE's configuration for it was not found; it keeps IREE's default")
            continue
        export, cfg_root, config, translation = configs[cfg_exe]
        export = _own_export(exe, cfg_exe, export)
        loops = _loops(root)
        tiles = _tiles(config)
        if loops is None or tiles is None:
            note(
                f"@{exe} ({root.name}): dynamic loop sizes or a configuration this slice does not vary ({config}); it keeps IREE's default"
            )
            continue
        if any(tiles.level(lv) is not None and len(tiles.level(lv)) != len(loops[0]) for lv in LEVELS):
            note(
                f"@{exe} ({root.name}): IREE configures {len(tiles.distribution)} loops where the dispatch has "
                f"{len(loops[0])} (the op is reshaped after dispatch creation); it keeps IREE's default"
            )
            continue
        found.append(TunableDispatch(host, index, exe, export, root.name, loops[0], loops[1], tiles, config, translation))
    return found


def _tunable_cuda(dc_text, cfg_text, note, limits, args, target, triton, jobs, object_format) -> list[TunableDispatch]:
    """The CUDA dispatches with candidates, as :attr:`TunableDispatch.extra` variants: IREE's own
    (:func:`.cuda.cuda_candidates`, each compiled alone first: one iree-compile rejects is
    dropped with a remark) and, with ``triton``, the configs of registered Triton kernels that
    match the dispatch (:func:`.triton_candidates.triton_candidates`; a dispatch none matches
    says why). ``limits``: (variants of IREE's code, configs per Triton kernel)."""
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
    for host, index, op in _dispatch_ops(dc_module):
        exe = f"{host}_dispatch_{index}"
        root = root_op(op)
        cfg_exe = _configuring_executable(exe, host, index, configs, used)
        if root is None or cfg_exe is None:
            continue
        export, cfg_root, config, translation = configs[cfg_exe]
        export = _own_export(exe, cfg_exe, export)
        default, candidates = cuda_candidates(executables[cfg_exe], cfg_root, config, translation, limits[0] - 1)
        if default is None:
            note(f"@{exe} ({root.name}): {candidates}; IREE's own code keeps its default")
            candidates = []
        extra = []
        checked = check_candidates(cfg_text, cfg_exe, candidates, args, jobs=jobs, cache_dir=str(default_cache_dir()))
        for cand, error in checked:
            if error is None:
                info = (str(cand.lowering_config()), str(cand.translation_info()))
                make = lambda dispatch, cand=cand: cand.emit(dispatch, root_op)  # noqa: E731
                extra.append(Variant(f"{export}.candidate{len(extra) + 1}", cand.reflection(), make, info))
            else:
                note(f"@{exe}: iree-compile rejected candidate {cand.text()} ({error}); dropped")
        if triton:
            more, reason = triton_candidates(
                op,
                root,
                target=target,
                limit=limits[1],
                jobs=jobs,
                object_format=object_format,
                remark=lambda text, exe=exe: note(f"@{exe}: {text}"),
            )
            if reason:
                note(f"@{exe} ({root.name}): no Triton candidates: {reason}")
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


# ----- regrouping -----------------------------------------------------------------------------
def _with_compilation_info(lowering_config: str, translation_info: str):
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


def _fingerprint(args: Sequence[str], dispatch) -> str:
    """What decides a variant's timing, hashed (the tuning cache's per-variant key): the IREE
    compiler's version, the target flags and the variant's dispatch as printed (its body, the
    root op's compilation_info, its operand and result types). First 32 hex digits of SHA-256."""
    from importlib.metadata import version

    text = dispatch.get_asm(use_local_scope=True)
    data = "\n".join([version("iree-base-compiler"), *args, text])
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def _regroup(
    dc_text: str, dispatches: list[TunableDispatch], args: Sequence[str], choices: dict[str, int], note
) -> tuple[str, str, list[GroupReflection]]:
    """Regroup the dispatch-creation text ``dc_text``: each dispatch of ``dispatches`` is
    replaced by its variants (nested scf.if on the group's choice), or, when ``choices`` fixes
    its group (key ``executable::group`` -> variant index), by that variant's dispatch alone
    (no group). Returns ``(program, entries, groups)``: the program with the choice globals,
    select entries and ``@__autotune``; the benchmark/check/compare entries as a module of
    their own (IREE's input level: fake fills are linalg ops, for IREE to make dispatches of);
    the groups' reflection."""
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(dc_text)
        entries = ir.Module.create()
        ops = {(h, i): op for h, i, op in _dispatch_ops(module)}
        hosts = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in module.body.operations if "sym_name" in f.attributes}
        i32 = ir.IntegerType.get_signless(32)
        groups = []
        end = ir.InsertionPoint(module.body)
        at_entries = ir.InsertionPoint(entries.body)
        for d in dispatches:
            dispatch = ops[(d.host, d.index)]
            variants = d.variants()
            key = f"{d.executable}::{d.export}"
            if key in choices:
                _replace(dispatch, variants[choices[key]].make)
                continue
            names = names_for(d.executable, d.export)
            fn.global_(names["choice"], i32, mutable=True, initial_value=ir.IntegerAttr.get(i32, 0), ip=end)

            def select(a, names=names):
                fn.store_global(a[0], names["choice"])
                return []

            fn.util_func(names["select"], [i32], [], select, ip=end)
            branches = _branch(dispatch, variants, names["choice"]) if len(variants) > 1 else [dispatch]
            bench, check, compare = _entries(d, branches, hosts[d.host], at_entries, note)
            tune_args = [str(a.type) for a in DispatchOperands.of(dispatch).arguments]
            groups.append(
                GroupReflection(
                    executable=d.executable,
                    group=d.export,
                    variants=[v.name for v in variants],
                    default=0,
                    select=names["select"],
                    bench=bench,
                    host=d.host,
                    choice=names["choice"],
                    unroll=BENCH_UNROLL,
                    tune_args=tune_args if bench else [],
                    configs=[v.config for v in variants],
                    workloads=[TuningWorkload(tune_args, bench)] if bench else [],
                    fingerprints=[_fingerprint(args, b) for b in branches],
                    check=check,
                    compare=compare,
                )
            )
            if len(variants) > 1:
                dispatch.erase()
        # Always, an empty list too (every choice frozen): the runtime and inspect load the module.
        fn.util_func(
            AUTOTUNE_FUNCTION,
            [],
            [],
            lambda _args: [],
            attributes={"iree.reflection": fn.reflection({REFLECTION_KEY: encode_reflection(groups)})},
            ip=end,
        )
        module.operation.verify()
        entries.operation.verify()
        return str(module), str(entries), groups


def _entries(d: TunableDispatch, branches: list, host, point, note) -> tuple[list[str], list[str], str]:
    """The benchmark, check and compare entries of one group (built at ``point``, by
    :func:`autotune_export.passes.bench_entries.bench_entry`, the one home of the fake data:
    seeded position-dependent fills per argument, fresh buffers for operands written in place,
    a loop of BENCH_UNROLL runs per iteration): per variant ``k`` (its dispatch
    ``branches[k]``) ``P.bench.K(n)`` and ``P.check.K()``, and ``P.compare`` counting on the
    device the elements that differ from variant 0's. The host's arguments are
    ``!hal.buffer_view``s at this phase, so nothing of them is mapped: a dispatch whose sizes
    depend on them (dynamic shapes, never tunable here) raises SliceError, caught: the group
    then has no entries (a remark) and stays on IREE's default under ``autotune()``."""
    names = names_for(d.executable, d.export)
    bench = [bench_name(d.executable, d.export, 0, k) for k in range(len(branches))]
    check = [f"{names['check']}.{k}" for k in range(len(branches))]
    before = len(list(point.block.operations))
    try:
        for k, op in enumerate(branches):
            bench_entry(bench[k], op, host, [], k, point, mark_choice=False)
            bench_entry(check[k], op, host, [], k, point, check=True, mark_choice=False)
    except SliceError as err:
        note(f"@{d.executable}: no benchmark entries ({err}); autotune() leaves it on IREE's default")
        for op in list(point.block.operations)[before:]:
            op.erase()  # this group's entries made so far
        return [], [], ""
    compare = names["compare"] if compare_entry(names["compare"], branches[0], point) else ""
    return bench, check, compare


def _replace(dispatch, make) -> None:
    """Replace ``dispatch`` by ``make(dispatch)`` (built just before it): a frozen choice."""
    with ir.InsertionPoint(dispatch):
        new = make(dispatch)
    for old, value in zip(dispatch.results, new.results):
        old.replace_all_uses_with(value)
    dispatch.erase()


def _branch(dispatch, variants: list[Variant], choice: str) -> list:
    """Build ``if choice == 1 {variant 1} else if ... else {variant 0}`` before ``dispatch`` and
    route its uses to the chain's results; returns each variant's dispatch op, in variant order
    (the caller erases ``dispatch`` once the entries are built from them)."""
    i32 = ir.IntegerType.get_signless(32)
    types = [r.type for r in dispatch.results]
    with ir.InsertionPoint(dispatch):
        chosen = fn.load_global(choice, i32)
    made = []
    outer_results = None
    point = ir.InsertionPoint(dispatch)
    for k, variant in enumerate(variants[1:], start=1):
        with point:
            cond = arith.CmpIOp(arith.CmpIPredicate.eq, chosen, fn.constant(ir.IntegerAttr.get(i32, k))).result
            branch = scf.IfOp(cond, types, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            op = variant.make(dispatch)
            scf.YieldOp(list(op.results))
        made.append(op)
        if outer_results is None:
            outer_results = list(branch.results)
        else:
            with point:
                scf.YieldOp(list(branch.results))
        point = ir.InsertionPoint(branch.else_block)
    with point:
        default = variants[0].make(dispatch)
        scf.YieldOp(list(default.results))
    for old, new in zip(dispatch.results, outer_results):
        old.replace_all_uses_with(new)
    return [default, *made]
