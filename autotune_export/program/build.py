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

from dataclasses import dataclass, field
from typing import Callable, Sequence

from autotune_export.contract import AUTOTUNE_FUNCTION, GroupReflection
from autotune_export.cuda.workers import check_jobs
from autotune_export.ir.walk import walk
from autotune_export.passes.pin_variants import chosen_result
from autotune_export.program.candidates import decomposes_to_1d, neighbours
from autotune_export.program.dispatches import (
    SITE_ATTR,
    TunableDispatch,
    Variant,
    dispatch_ops,
    root_op,
    site_of,
    strip_sites,
    tag_sites,
    tunable_cpu,
    tunable_cuda,
)
from autotune_export.program.phases import IreeFailure, compile_bytes, compile_generated, compile_input
from autotune_export.program.regroup import regroup, with_entries
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location, location_of
from iree.compiler import ir
from iree.compiler.dialects import iree_codegen

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
    #: The input's name as remarks locate it (``input_mlir`` keeps the input's positions).
    source_name: str = "-"


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
    try:
        check_jobs(jobs)  # the one rule for a number of compiling processes (cuda/workers.py)
    except ValueError as err:
        raise DiagnosticError.at(None, f"program: {err}") from None
    if backend == "cuda":
        from autotune_export.cuda.targets import TargetError, parse_target

        try:
            parse_target(target)  # one GPU: the program's code and its Triton kernels are built for it
        except TargetError as err:
            raise DiagnosticError.at(None, f"program: --target: {err} (program builds for one target)") from None
    _refuse_data_tiling(iree_args)
    if max_triton is not None and max_triton < 0:
        raise DiagnosticError.at(None, f"program: --max-triton-configs must be at least 0, not {max_triton}")
    triton = triton and max_triton != 0  # at most 0 configs of each Triton kernel: none, as triton=False
    remarks: list[Diagnostic] = []

    def note(message: str, severity: str = "remark", at=None) -> None:
        d = Diagnostic(severity, message, input_location(at, source_name))
        remarks.append(d)
        if remark is not None:
            remark(d)

    if backend == "cuda":
        from autotune_export.program.cuda import cuda_args

        args = [*cuda_args(target), *iree_args]
    else:
        args = [*_CPU_ARGS, *iree_args]
    # Both phases print their locations (the input's positions), so remarks can name the op's line.
    debug = ["--mlir-print-debuginfo"]
    input_text = compile_input(source, args + ["--compile-to=input", *debug], source_name)
    _refuse_an_autotune_build(input_text, source_name)  # before any remark
    input_text = tag_sites(input_text)
    tagged = compile_generated(input_text, args + ["--compile-from=input", "--compile-to=dispatch-creation", *debug])
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        dc_module = ir.Module.parse(tagged)
        sites = {(h, i): site_of(root) for h, i, op in dispatch_ops(dc_module) if (root := root_op(op)) is not None}
        strip_sites(dc_module)
        dc_text = str(dc_module)
        located = dc_module.operation.get_asm(enable_debug_info=True)  # the same ops, with the input's positions
    cfg_text = compile_generated(dc_text, args + ["--compile-from=dispatch-creation", "--compile-to=executable-configurations"])
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        if backend == "cuda":
            limits = (max_candidates, max_candidates if max_triton is None else max_triton)
            dispatches = tunable_cuda(located, cfg_text, note, limits, args, target, triton, jobs, object_format)
        else:
            dispatches = tunable_cpu(ir.Module.parse(located), ir.Module.parse(cfg_text), note)
    for d in dispatches:
        d.site = sites.get((d.host, d.index))
        if backend != "cuda":
            d.candidates = neighbours(
                d.default, d.loops, d.reductions, max_candidates - 1, keep_unit_vector_tiles=decomposes_to_1d(d.translation_info)
            )
            if not d.candidates and max_candidates > 1:
                note(
                    f"@{d.executable} ({d.root}): no candidate: every tile one step from IREE's ({d.default_text}) "
                    f"fails to divide its loop size (loops {'x'.join(map(str, d.loops))}); it keeps IREE's default",
                    at=d.location,
                )
    if tuning_results is not None:
        choices = {**_chosen_in(tuning_results, dispatches), **(choices or {})}
    fixed = _resolve_choices(choices or {}, dispatches)
    while True:
        text, entries, groups = regroup(dc_text, dispatches, args, fixed, note)
        try:
            text = with_entries(text, entries, args)
            vmfb = compile_bytes(text, args + ["--compile-from=global-optimization"])
            return ProgramBuild(vmfb, groups, dispatches, remarks, text, input_text, fixed, source_name)
        except IreeFailure as err:
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


#: iree-compile's flags that turn data tiling on (IREE 3.x: the global one and its two paths).
DATA_TILING_FLAGS = ("--iree-opt-data-tiling", "--iree-global-opt-data-tiling", "--iree-dispatch-creation-data-tiling")


def _refuse_data_tiling(iree_args: Sequence[str]) -> None:
    """Raises DiagnosticError when ``iree_args`` turn IREE's data tiling on (one of
    :data:`DATA_TILING_FLAGS`, bare or ``=`` a true value): data tiling sets encodings on the
    contractions' operands in global optimization / dispatch creation and resolves them in later
    phases; the build's phase split (dispatch creation, regroup, ``--compile-from=global-optimization``)
    does not carry them (iree-compile then fails on ``flow.tensor.encode``), and a data-tiled
    dispatch (mmt4d) takes its tiles from the encoding, not from the ``lowering_config`` this build
    varies (docs/program.md, "Not built yet")."""
    for arg in iree_args:
        flag, _, value = arg.partition("=")
        if flag in DATA_TILING_FLAGS and value.lower() not in ("false", "0"):
            raise DiagnosticError.at(
                None,
                f"program: --iree-compile-arg={arg}: data tiling is not supported by the program build (its phase split "
                "does not carry the encodings data tiling sets, and a data-tiled dispatch takes its tiles from them, not from "
                "the configurations tuned here); build without it, or use plain iree-compile for a data-tiled build "
                "(docs/program.md)",
            )


def _refuse_an_autotune_build(input_text: str, source_name: str) -> None:
    """Raises DiagnosticError, at the first top-level symbol ``@__autotune`` or
    ``@__autotune.*`` of ``input_text`` (IREE's input phase of the user's program, printed with
    the input's positions), when the program already is an autotune-export build (what
    ``program --emit mlir`` or the main command writes: its groups' choice globals, entries and
    ``@__autotune``, :data:`autotune_export.contract.AUTOTUNE_FUNCTION`): building it again
    would add those symbols a second time (MLIR's "redefinition of symbol", an internal error
    after a remark per entry dispatch). A program without the name anywhere is not parsed."""
    if AUTOTUNE_FUNCTION not in input_text:
        return
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        for op in ir.Module.parse(input_text).body.operations:
            attrs = op.operation.attributes
            name = ir.StringAttr(attrs["sym_name"]).value if "sym_name" in attrs else None
            if name is not None and (name == AUTOTUNE_FUNCTION or name.startswith(AUTOTUNE_FUNCTION + ".")):
                raise DiagnosticError.at(
                    input_location(op.location, source_name),
                    f"the program is already an autotune-export build (it has @{name}); build from the original program",
                )


def _chosen_in(results: list[dict], dispatches: list[TunableDispatch]) -> dict[str, str]:
    """Per group with entries in ``results``, the variant
    :func:`autotune_export.contract.choose_result` picks. Raises
    DiagnosticError when a group's entries name none of its variants (pin-variants' check,
    :func:`autotune_export.passes.pin_variants.chosen_result`)."""
    out = {}
    for d in dispatches:
        names = [v.name for v in d.variants()]
        entry = chosen_result(results, d.executable, d.export, names)
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
        ops = {site_of(op): op for op in walk(module.operation) if SITE_ATTR in op.attributes}
        carried = _one_winner_per_op(built, by_key, ops, remark)
        for key, k in sorted(built.frozen.items()):
            d = by_key[key]
            variant = d.variants()[k]
            if k == 0 or key not in carried:
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
        strip_sites(module)
        module.operation.verify()
        return str(module)


def _one_winner_per_op(built: ProgramBuild, by_key: dict, ops: dict, remark) -> set[str]:
    """The frozen groups whose winner :func:`write_back` writes: one per input op. One op of the
    input can be the root of several groups (a private function IREE inlines into two callers:
    ``@f1_dispatch_0`` and ``@f2_dispatch_0``); the written-back op carries one configuration,
    that of the first of its groups in key order. Groups of one op frozen to different winners
    (a compilation_info, or IREE's default: none) get a warning at the op naming each group,
    its winner and which one the op carries (docs/program.md, "Frozen builds and write-back")."""
    per_op: dict[int, list[str]] = {}
    for key in sorted(built.frozen):
        site = by_key[key].site
        if site is not None and site in ops:
            per_op.setdefault(site, []).append(key)
    carried = set(built.frozen) - {k for keys in per_op.values() for k in keys[1:]}
    for site, keys in per_op.items():
        winners = [by_key[k].variants()[built.frozen[k]] for k in keys]
        written = [None if built.frozen[k] == 0 else w.compilation_info for k, w in zip(keys, winners)]
        if len(set(written)) < 2 or remark is None:
            continue
        op = ops[site]
        listed = "; ".join(f"@{by_key[k].executable} ({k}) froze {w.name}" for k, w in zip(keys, winners))
        remark(
            Diagnostic(
                "warning",
                f"write-back: this {op.name} is the root of {len(keys)} groups frozen to different winners "
                f"({listed}); the written-back op carries {winners[0].name} of @{by_key[keys[0]].executable}, "
                "so a plain iree-compile of it runs that configuration for all of them",
                input_location(op.location, built.source_name),
            )
        )
    return carried


def input_location(mlir_location, source_name: str):
    """An op's MLIR location (None allowed) as a :class:`Location` in the user's input: iree-compile
    reads the input from stdin (:func:`.phases.compile_input`) and names it ``<stdin>``, which is
    ``source_name`` here. None for an op without a file position."""
    loc = location_of(mlir_location, source_name) if mlir_location is not None else None
    if loc is not None and loc.file == "<stdin>":
        loc = Location(source_name, loc.line, loc.col)
    return loc


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
