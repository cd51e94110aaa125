"""build_program: a whole program (linalg on tensors) to a .vmfb whose tunable dispatches are
groups of variants picked at run time (docs/program.md; issue 25, first slice: llvm-cpu).

IREE stays in charge of the pipeline; this only annotates and regroups between its phases:

1. ``iree-compile --compile-to=dispatch-creation``: IREE forms the dispatches (inline
   ``flow.dispatch.workgroups`` ops in the host functions).
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
4. Per group a select entry ``(i32) -> ()`` and one ``@__autotune`` carrying the reflection
   (:class:`autotune_export.contract.GroupReflection`), then
   ``--compile-from=dispatch-creation`` to the .vmfb. When IREE rejects the result, the groups
   lose their candidates one at a time (first group first, a remark each) until it compiles.

Not built yet: benchmark entries (``bench`` is [], so the runtime cannot tune these groups on
fake data: ``select`` and tuning results work, ``autotune()`` leaves them on IREE's default).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from autotune_export.contract import AUTOTUNE_FUNCTION, REFLECTION_KEY, GroupReflection, encode_reflection, names_for
from autotune_export.ir import functions as fn
from autotune_export.ir.walk import isa, walk
from autotune_export.program.candidates import LEVELS, CpuTiles, neighbours
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError
from iree.compiler import ir
from iree.compiler.dialects import arith, flow, hal, iree_codegen, linalg, scf, util
from iree.compiler.dialects import func as func_d

__all__ = ["ProgramBuild", "TunableDispatch", "build_program", "root_op", "BACKENDS"]

#: Backends build_program generates candidates for (CUDA: not built yet, docs/program.md).
BACKENDS = ("llvm-cpu",)

_CPU_ARGS = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
]


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


@dataclass
class ProgramBuild:
    """What :func:`build_program` made: the module (``vmfb`` bytes), its groups (as
    ``@__autotune``'s reflection has them), the dispatches considered, the remarks
    (diagnostics of severity remark/warning: dispatches not tunable, candidates dropped) and
    ``mlir``: the regrouped dispatch-creation text the .vmfb was compiled from (what
    ``iree-compile --compile-from=dispatch-creation`` reproduces it from)."""

    vmfb: bytes
    groups: list[GroupReflection]
    dispatches: list[TunableDispatch]
    remarks: list[Diagnostic]
    mlir: str = ""


def build_program(
    source: str,
    *,
    backend: str = "llvm-cpu",
    max_candidates: int = 4,
    source_name: str = "-",
    iree_args: Sequence[str] = (),
    remark: Callable[[Diagnostic], None] | None = None,
) -> ProgramBuild:
    """Build ``source`` (MLIR text: linalg on tensors, or what iree-compile accepts as input)
    into a .vmfb whose tunable dispatches are run-time variant groups.

    ``max_candidates``: at most this many variants per dispatch, IREE's default included (>= 1).
    ``iree_args``: extra iree-compile flags, given to every phase. ``remark(diag)`` is called
    for each remark as it is made. Raises DiagnosticError for an unknown backend, a bad
    ``max_candidates``, or when iree-compile rejects the input itself.
    """
    if backend not in BACKENDS:
        raise DiagnosticError.at(
            None,
            f"program: backend '{backend}' has no candidate generator yet (supported: "
            f"{', '.join(BACKENDS)}; CUDA is not built yet, docs/program.md)",
        )
    if max_candidates < 1:
        raise DiagnosticError.at(None, f"program: --max-candidates must be at least 1 (IREE's default), not {max_candidates}")
    remarks: list[Diagnostic] = []

    def note(message: str, severity: str = "remark") -> None:
        d = Diagnostic(severity, message)
        remarks.append(d)
        if remark is not None:
            remark(d)

    args = [*_CPU_ARGS, *iree_args]
    dc_text = _compile(source, args + ["--compile-to=dispatch-creation"], source_name)
    cfg_text = _compile(
        dc_text, args + ["--compile-from=dispatch-creation", "--compile-to=executable-configurations"], source_name
    )
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        dispatches = _tunable(ir.Module.parse(dc_text), ir.Module.parse(cfg_text), note)
    for d in dispatches:
        d.candidates = neighbours(d.default, d.loops, d.reductions, max_candidates - 1)
    while True:
        text, groups = _regroup(dc_text, dispatches)
        try:
            vmfb = _compile_bytes(text, args + ["--compile-from=dispatch-creation"])
            return ProgramBuild(vmfb, groups, dispatches, remarks, text)
        except _IreeFailure as err:
            shrink = next((d for d in dispatches if d.candidates), None)
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
    roots = []
    for op in walk(dispatch):
        if isa(op, *_NAMED_CONTRACTIONS) or op.name.startswith("linalg.conv_2d"):
            roots.append(op)
        elif isa(op, linalg.GenericOp):
            its = _iterators(op) or []
            ins = len(op.operands) - len(op.results)
            if "reduction" in its and ins >= 2:
                roots.append(op)
    return roots[0] if len(roots) == 1 else None


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


def _configurations(cfg_module) -> dict[str, tuple[str, object, str, str]]:
    """Executable name -> (export name, root op, lowering_config text, translation_info text)
    from the executable-configurations output (the op carrying a distribution-level config)."""
    out = {}
    for exe in cfg_module.body.operations:
        if not isa(exe, hal.ExecutableOp):
            continue
        name = ir.StringAttr(exe.operation.attributes["sym_name"]).value
        for op in walk(exe.operation):
            if isa(op, func_d.FuncOp) and "translation_info" in op.attributes:
                roots = [
                    o
                    for o in walk(op)
                    if "lowering_config" in o.attributes and "distribution" in str(o.attributes["lowering_config"])
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
    found = []
    for host, index, op in _dispatch_ops(dc_module):
        exe = f"{host}_dispatch_{index}"
        root = root_op(op)
        if root is None:
            continue
        if exe not in configs:
            note(f"@{exe} ({root.name}): IREE's configuration for it was not found; it keeps IREE's default")
            continue
        export, cfg_root, config, translation = configs[exe]
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


# ----- regrouping -----------------------------------------------------------------------------
def _regroup(dc_text: str, dispatches: list[TunableDispatch]) -> tuple[str, list[GroupReflection]]:
    """The dispatch-creation text with each dispatch of ``dispatches`` replaced by its variants
    (nested scf.if on the group's choice), the select entries and ``@__autotune``; the groups."""
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(dc_text)
        ops = {(h, i): op for h, i, op in _dispatch_ops(module)}
        i32 = ir.IntegerType.get_signless(32)
        groups = []
        end = ir.InsertionPoint(module.body)
        for d in dispatches:
            names = names_for(d.executable, d.export)
            variants = [d.export] + [f"{d.export}.candidate{k}" for k in range(1, len(d.candidates) + 1)]
            configs = [[["lowering_config", d.default_text]]] + [[["lowering_config", c.text()]] for c in d.candidates]
            fn.global_(names["choice"], i32, mutable=True, initial_value=ir.IntegerAttr.get(i32, 0), ip=end)

            def select(args, names=names):
                fn.store_global(args[0], names["choice"])
                return []

            fn.util_func(names["select"], [i32], [], select, ip=end)
            if d.candidates:
                _branch(ops[(d.host, d.index)], d, names["choice"])
            groups.append(
                GroupReflection(
                    executable=d.executable,
                    group=d.export,
                    variants=variants,
                    default=0,
                    select=names["select"],
                    bench=[],
                    host=d.host,
                    choice=names["choice"],
                    configs=configs,
                )
            )
        fn.util_func(
            AUTOTUNE_FUNCTION,
            [],
            [],
            lambda _args: [],
            attributes={"iree.reflection": fn.reflection({REFLECTION_KEY: encode_reflection(groups)})},
            ip=end,
        )
        module.operation.verify()
        return str(module), groups


def _branch(dispatch, d: TunableDispatch, choice: str) -> None:
    """Replace ``dispatch`` by ``if choice == 1 {candidate 1} else if ... else {dispatch}``:
    variant 0 (the last else) is the dispatch unchanged."""
    i32 = ir.IntegerType.get_signless(32)
    translation = ir.Attribute.parse(d.translation_info)
    types = [r.type for r in dispatch.results]
    with ir.InsertionPoint(dispatch):
        chosen = fn.load_global(choice, i32)
    outer_results = None
    point = ir.InsertionPoint(dispatch)
    for k, tiles in enumerate(d.candidates, start=1):
        with point:
            cond = arith.CmpIOp(arith.CmpIPredicate.eq, chosen, fn.constant(ir.IntegerAttr.get(i32, k))).result
            branch = scf.IfOp(cond, types, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            clone = dispatch.clone()
            # IREE 3.13 has no Python constructor for #iree_cpu.lowering_config: the one
            # attribute spelled as text (CpuTiles.text), the rest is built with the bindings.
            config = ir.Attribute.parse(tiles.text())
            root_op(clone.operation).attributes["compilation_info"] = iree_codegen.CompilationInfoAttr.get(config, translation)
            scf.YieldOp(list(clone.results))
        if outer_results is None:
            outer_results = list(branch.results)
        else:
            with point:
                scf.YieldOp(list(branch.results))
        point = ir.InsertionPoint(branch.else_block)
    with point:
        default = dispatch.clone()
        scf.YieldOp(list(default.results))
    for old, new in zip(dispatch.results, outer_results):
        old.replace_all_uses_with(new)
    dispatch.erase()
