"""``build_program(..., backend="cuda")``: IREE's own CUDA code for a contraction dispatch, as
generated candidates (issue 25 item 2; the generator is
:mod:`autotune_export.program.cuda_candidates`, pure logic; this module is its IR side).

**Target.** IREE 3.13 generates no code for sm_90 ("missing GPU target in
#hal.executable.target" for sm_90, sm_90a and sm_100: ``../shared/notes/iree-dispatch-tuning-facts.md``),
so a program built for the H200 (``target="sm_90"``) has IREE's own dispatches compiled for the
most capable architecture IREE supports below it, sm_89
(:func:`autotune_export.cuda.targets.iree_codegen_target`, the one home of that rule): PTX
with ``mma.sync`` that the driver JIT-compiles for the H200. Triton candidates
(:mod:`autotune_export.program.triton_candidates`) keep sm_90.

**Default and candidates.** IREE's configuration of the dispatch (read from
``--compile-to=executable-configurations``) must be the ``TileAndFuse`` pipeline with an
``mma_kind`` (IREE's choice for fp16/bf16 contractions): it becomes a
:class:`~autotune_export.program.cuda_candidates.GpuTiles`, the candidates are generated
around it, and a candidate's ``compilation_info`` is IREE's lowering config with the
candidate's ``workgroup``/``subgroup``/``reduction``/``mma_kind`` (the other entries,
``promote_operands``, ``convert_acc_gemm``, kept) and IREE's translation_info with the
candidate's block size and ``prefetch_num_stages``, all built with the bindings' attribute
constructors (``iree_gpu.LoweringConfigAttr``, ``MMAAttr``, ``PipelineOptionsAttr``,
``iree_codegen.TranslationInfoAttr``).

**Compiled alone first, in parallel, cached.** :func:`check_candidates` compiles each
candidate's executable by itself (the executable-configurations module with only that
executable, its config replaced, ``--compile-from=executable-configurations
--compile-to=executable-targets``); a candidate iree-compile rejects (``op was not bufferized``,
shared memory over the limit) is dropped with a remark quoting IREE's error. The verdicts are
cached under ``<cache dir>/program-cuda/`` keyed by the sha256 of the module text and the
flags (:func:`autotune_export.cuda.variant_cache.cached_artifact`), so a rebuild compiles
nothing again for them.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Sequence

from autotune_export.cuda.targets import iree_codegen_target, parse_target
from autotune_export.cuda.variant_cache import cached_artifact
from autotune_export.ir.walk import isa, walk
from autotune_export.program.cuda_candidates import Contraction, GpuLimits, GpuTiles, Mma, enumerate_candidates
from iree.compiler import ir
from iree.compiler.dialects import func as func_d
from iree.compiler.dialects import hal, iree_codegen, iree_gpu, util

__all__ = [
    "IreeCudaCandidate",
    "cuda_args",
    "contraction_of",
    "default_of",
    "cuda_candidates",
    "check_candidates",
]

_MMA_NAME = re.compile(r"<(\w+)>")


def cuda_args(target: str) -> list[str]:
    """iree-compile flags for a program whose IREE dispatches run on ``target`` (``sm_90``):
    the CUDA device and IREE's code generation target for it (sm_89 for sm_90, see the module
    docstring). Raises TargetError for an unknown target."""
    return ["--iree-hal-target-device=cuda", f"--iree-cuda-target={iree_codegen_target(parse_target(target))}"]


def _dims(amap) -> list[int] | None:
    out = []
    for e in amap.results:
        try:
            out.append(ir.AffineDimExpr(e).position)
        except (ValueError, TypeError):
            return None
    return out


def contraction_of(op) -> Contraction | None:
    """The loop roles of a contraction root op (``linalg.matmul``, ``linalg.batch_matmul``, a
    ``linalg.generic`` with two inputs), from its indexing maps and static operand shapes:
    a loop in LHS, RHS and result is a batch loop, LHS and result M, RHS and result N, LHS and
    RHS K. None unless there is exactly one M, one N and one K loop, every map is a projection
    (bare dims) and the shapes are static."""
    if "indexing_maps" not in op.attributes or len(op.operands) != 3:
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    dims = [_dims(m) for m in maps]
    shapes = [ir.ShapedType(v.type) for v in op.operands]
    if any(d is None for d in dims) or any(not s.has_static_shape for s in shapes):
        return None
    sizes: dict[int, int] = {}
    for ds, s in zip(dims, shapes):
        for d, extent in zip(ds, s.shape):
            sizes[d] = extent
    n = maps[0].n_dims
    if sorted(sizes) != list(range(n)):
        return None
    lhs, rhs, out = (set(d) for d in dims)
    batch = tuple(d for d in range(n) if d in lhs and d in rhs and d in out)
    m = [d for d in range(n) if d in lhs and d in out and d not in rhs]
    nn = [d for d in range(n) if d in rhs and d in out and d not in lhs]
    k = [d for d in range(n) if d in lhs and d in rhs and d not in out]
    if len(m) != 1 or len(nn) != 1 or len(k) != 1 or len(batch) + 3 != n:
        return None
    elem = ir.ShapedType(op.operands[0].type).element_type
    width = getattr(elem, "width", 16)
    return Contraction(tuple(sizes[d] for d in range(n)), batch, m[0], nn[0], k[0], max(width // 8, 1))


def _ints(attr) -> tuple[int, ...]:
    return tuple(ir.IntegerAttr(a).value for a in ir.ArrayAttr(attr))


def _mma(attr) -> Mma:
    mma = iree_gpu.MMAAttr(attr)
    m, n, k = mma.mnk_shape
    return Mma(_MMA_NAME.search(str(attr)).group(1), m, n, k)


def default_of(config, translation) -> GpuTiles | None:
    """IREE's default as :class:`GpuTiles` (``config``: the root op's ``lowering_config``,
    ``translation``: its function's ``translation_info``), or None when it is not a
    ``TileAndFuse`` config with an ``mma_kind`` and workgroup, subgroup and reduction sizes
    (then the dispatch keeps IREE's default alone)."""
    if not iree_gpu.LoweringConfigAttr.isinstance(config):
        return None
    entries = _entries(config)
    if not {"workgroup", "subgroup", "reduction", "mma_kind"} <= set(entries):
        return None
    if not iree_gpu.MMAAttr.isinstance(entries["mma_kind"]):
        return None
    ti = iree_codegen.TranslationInfoAttr(translation)
    if "TileAndFuse" not in str(ti.pass_pipeline):
        return None
    stages = _stages(ti)
    return GpuTiles(
        _ints(entries["workgroup"]),
        _ints(entries["subgroup"]),
        _ints(entries["reduction"]),
        _mma(entries["mma_kind"]),
        int(ti.workgroup_size[0]),
        stages,
    )


def _entries(config) -> dict:
    d = ir.DictAttr(iree_gpu.LoweringConfigAttr(config).attributes)
    return {d[i].name: d[i].attr for i in range(len(d))}


def _stages(ti) -> int:
    conf = ti.configuration
    if conf is None or "gpu_pipeline_options" not in ir.DictAttr(conf):
        return 0
    m = re.search(r"prefetch_num_stages = (\d+)", str(ir.DictAttr(conf)["gpu_pipeline_options"]))
    return int(m.group(1)) if m else 0


@dataclass
class IreeCudaCandidate:
    """A candidate of IREE's own code: the tiles, and IREE's default ``config`` /
    ``translation`` text it varies (whose other entries it keeps)."""

    tiles: GpuTiles
    config: str
    translation: str

    def text(self) -> str:
        return self.tiles.text()

    def reflection(self) -> list[list[str]]:
        """The variant's ``configs`` entry in ``@__autotune``'s reflection."""
        return [["lowering_config", self.tiles.text()]]

    def lowering_config(self):
        """The ``#iree_gpu.lowering_config`` attribute (needs a context with IREE's dialects)."""
        i64 = ir.IntegerType.get_signless(64)

        def arr(xs):
            return ir.ArrayAttr.get([ir.IntegerAttr.get(i64, x) for x in xs])

        entries = _entries(ir.Attribute.parse(self.config))
        entries.update(
            workgroup=arr(self.tiles.workgroup),
            subgroup=arr(self.tiles.subgroup),
            reduction=arr(self.tiles.reduction),
            mma_kind=iree_gpu.MMAAttr.get(getattr(iree_gpu.MMAIntrinsic, self.tiles.mma.name)),
        )
        return iree_gpu.LoweringConfigAttr.get(ir.DictAttr.get(entries))

    def translation_info(self):
        """IREE's translation_info with the candidate's block size and prefetch stages."""
        ti = iree_codegen.TranslationInfoAttr(ir.Attribute.parse(self.translation))
        conf = {}
        if ti.configuration is not None:
            d = ir.DictAttr(ti.configuration)
            conf = {d[i].name: d[i].attr for i in range(len(d))}
        conf["gpu_pipeline_options"] = iree_gpu.PipelineOptionsAttr.get(prefetch_num_stages=self.tiles.stages)
        return iree_codegen.TranslationInfoAttr.get(
            ti.pass_pipeline, ti.codegen_spec, [self.tiles.threads, 1, 1], ti.subgroup_size, ir.DictAttr.get(conf)
        )

    def compilation_info(self):
        """``#iree_codegen.compilation_info`` for the root op of the candidate's dispatch."""
        return iree_codegen.CompilationInfoAttr.get(self.lowering_config(), self.translation_info())

    def emit(self, dispatch, root_op):
        """A clone of ``dispatch`` (at the current insertion point) whose root op carries the
        candidate's ``compilation_info``; returns the clone."""
        clone = dispatch.clone()
        root_op(clone.operation).attributes["compilation_info"] = self.compilation_info()
        return clone


def target_of(cfg_executable) -> tuple[GpuLimits, list[Mma]]:
    """The limits and MMA intrinsics of the executable's CUDA target (IREE's
    ``#iree_gpu.target``, read with ``TargetInfo.get_gpu_target_info``)."""
    for op in walk(cfg_executable):
        if isa(op, hal.ExecutableVariantOp):
            info = iree_gpu.TargetInfo.get_gpu_target_info(op.attributes["target"])
            mmas = []
            for intrinsic in info.mma_intrinsics:
                try:
                    attr = iree_gpu.MMAAttr.get(intrinsic)
                except (TypeError, ValueError):
                    continue
                mmas.append((_mma(attr), tuple(str(t) for t in iree_gpu.MMAAttr(attr).abc_element_types)))
            limits = GpuLimits(info.max_workgroup_memory_bytes, info.max_thread_count_per_workgroup)
            return limits, mmas
    return GpuLimits(), []


def cuda_candidates(cfg_executable, cfg_root, default_config: str, translation: str, limit: int):
    """Candidates (:class:`IreeCudaCandidate`, up to ``limit``) for the dispatch whose
    executable-configurations executable is ``cfg_executable`` and root op ``cfg_root``;
    ``(default tiles, candidates)``, or ``(None, reason)`` when it is not varied."""
    config = ir.Attribute.parse(default_config)
    default = default_of(config, ir.Attribute.parse(translation))
    if default is None:
        return None, "IREE's configuration is not a TileAndFuse MMA config"
    contraction = contraction_of(cfg_root)
    if contraction is None:
        return None, "the root op is not a contraction with one M, N and K loop and static sizes"
    limits, mmas = target_of(cfg_executable)
    abc = tuple(str(t) for t in iree_gpu.MMAAttr(_entries(config)["mma_kind"]).abc_element_types)
    # Same operand and accumulator types as IREE's choice (an fp32-accumulating intrinsic on an
    # fp16-result matmul is refused by IREE 3.13: "vector.transfer_write ... restricted to lane
    # or thread distributed contexts").
    usable = [m for m, types in mmas if types == abc] or [default.mma]
    if default.mma not in usable:
        usable.insert(0, default.mma)
    tiles = enumerate_candidates(default, contraction, usable, limits, limit)
    return default, [IreeCudaCandidate(t, default_config, translation) for t in tiles]


# ----- compiling each candidate alone ---------------------------------------------------------
def _single_executable(cfg_text: str, executable: str, candidate: IreeCudaCandidate) -> str:
    """The executable-configurations module reduced to the device globals and ``@executable``,
    whose root op and function carry the candidate's config."""
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(cfg_text)
        for op in list(module.body.operations):
            if isa(op, hal.ExecutableOp) and ir.StringAttr(op.operation.attributes["sym_name"]).value == executable:
                for inner in walk(op.operation):
                    if isa(inner, func_d.FuncOp) and "translation_info" in inner.attributes:
                        inner.attributes["translation_info"] = candidate.translation_info()
                    elif "lowering_config" in inner.attributes and iree_gpu.LoweringConfigAttr.isinstance(
                        inner.attributes["lowering_config"]
                    ):
                        if "workgroup" in str(inner.attributes["lowering_config"]):
                            inner.attributes["lowering_config"] = candidate.lowering_config()
            elif not isa(op, util.GlobalOp):
                op.operation.erase()
        return str(module)


def check_candidates(
    cfg_text: str,
    executable: str,
    candidates: Sequence[IreeCudaCandidate],
    args: Sequence[str],
    *,
    jobs: int = 4,
    cache_dir: str | None = None,
) -> list[tuple[IreeCudaCandidate, str | None]]:
    """Compile each candidate's executable alone (module docstring), ``jobs`` at a time;
    per candidate, in order, None when iree-compile accepts it, else IREE's first error line.
    ``cache_dir``: where verdicts are kept (None: not kept)."""
    from iree.compiler.tools import CompilerToolError, compile_str

    flags = [*args, "--compile-from=executable-configurations", "--compile-to=executable-targets"]

    def one(text: str) -> str | None:
        def compute() -> bytes:
            try:
                compile_str(text, extra_args=flags)
                return json.dumps({"error": None}).encode()
            except CompilerToolError as err:
                lines = [ln.strip() for ln in str(err).splitlines() if "error:" in ln]
                first = lines[0] if lines else str(err).strip().splitlines()[0]
                return json.dumps({"error": re.sub(r"^\S+:\d+:\d+: error: ", "", first)}).encode()

        key = json.dumps({"text": text, "flags": flags}).encode()
        return json.loads(cached_artifact(cache_dir, "program-cuda", key, compute))["error"]

    # The modules are made here, one context at a time; only iree-compile runs in parallel.
    texts = [_single_executable(cfg_text, executable, c) for c in candidates]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        verdicts = list(pool.map(one, texts))
    return list(zip(candidates, verdicts))
