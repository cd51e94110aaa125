"""Candidate configurations of IREE's own CUDA code for one contraction dispatch (issue 25 item 2).

IREE 3.13 configures a matmul-like dispatch for CUDA with its ``TileAndFuse`` pipeline and an
``#iree_gpu.lowering_config<{workgroup = [...], subgroup = [...], reduction = [...], mma_kind =
#iree_gpu.mma_layout<NV_...>, promote_operands = [0, 1], ...}>`` on the root op, with the block
size (``workgroup_size``) and ``prefetch_num_stages`` in the function's ``translation_info``
(``../shared/notes/iree-dispatch-tuning-facts.md``: the fp16 4096^3 default is workgroup
``[128, 64, 0]``, subgroup ``[4, 4, 0]``, reduction ``[0, 0, 2]``, 128 threads). What the sizes
mean, read off IREE's defaults and checked by compiling (IREE 3.13):

* ``workgroup[d]``: the tile of parallel loop ``d`` one workgroup computes (batch loops: 1);
* ``subgroup[d]``: how many MMA tiles of loop ``d`` one subgroup (a warp of 32 threads)
  computes, so the workgroup has ``prod(workgroup[d] / (subgroup[d] * mma[d]))`` warps over the
  M and N loops (``mma`` = the intrinsic's M and N: 16 and 8 for ``NV_MMA_SYNC_*_16x8x16``), and
  the block size must be exactly that many warps times 32 (IREE rejects another);
* ``reduction[k]``: MMA K-tiles per step of the reduction loop (``reduction * mma K`` elements).

:func:`enumerate_candidates` is this module's generator: every combination of workgroup tiles
(powers of two 16..256), subgroup tiles (1..8 MMA tiles), reduction steps (1..8) and the
target's MMA intrinsics that fit the op, pruned **before anything compiles** by
:func:`problem` (divisibility, the block size, accumulator registers, the target's shared
memory and thread limits), then ordered by :func:`_rank` and capped. A candidate that passes
these checks can still be one IREE refuses (``op was not bufferized`` seen for some subgroup
layouts): the build compiles each one alone first and drops it with a remark
(:mod:`autotune_export.program.cuda`).

Pure logic (no IR): the IR side (reading IREE's default, building the attributes) is in
:mod:`autotune_export.program.cuda`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

__all__ = [
    "Contraction",
    "GpuTiles",
    "Mma",
    "GpuLimits",
    "problem",
    "enumerate_candidates",
    "ACCUMULATOR_REGISTERS",
]

#: At most this many accumulator values per thread (``workgroup M * N / threads``): 128 fp32
#: registers of 255, what IREE's own defaults stay under (the fp16 4096^3 default has 64).
ACCUMULATOR_REGISTERS = 128
_TILES = (16, 32, 64, 128, 256)
_SUBGROUP = (1, 2, 4, 8)
_REDUCTION = (1, 2, 4, 8)


@dataclass(frozen=True)
class Contraction:
    """The loops of a contraction root op: ``sizes`` (static, per loop), the loop indices of
    its ``batch`` loops (in all three operands), ``m`` (LHS and result), ``n`` (RHS and
    result) and ``k`` (LHS and RHS, a reduction). ``elem_bytes``: bytes of an LHS/RHS element
    (2 for fp16/bf16)."""

    sizes: tuple[int, ...]
    batch: tuple[int, ...]
    m: int
    n: int
    k: int
    elem_bytes: int = 2


@dataclass(frozen=True)
class Mma:
    """An MMA intrinsic of the target: IREE's name (``NV_MMA_SYNC_F16_16x8x16_F16``) and its
    M, N, K shape."""

    name: str
    m: int
    n: int
    k: int


@dataclass(frozen=True)
class GpuLimits:
    """What the target allows one workgroup (IREE's ``#iree_gpu.target``:
    ``max_workgroup_memory_bytes``, ``max_thread_count_per_workgroup``; sm_89: 101376 and 1024)
    and ``sm_count``, the deployment GPU's number of SMs (H200: 132), used to order candidates
    (fewer workgroups than SMs leave SMs idle), never to prune."""

    shared_memory: int = 101376
    threads: int = 1024
    sm_count: int = 132


@dataclass(frozen=True)
class GpuTiles:
    """One configuration: per loop of the root op its ``workgroup``, ``subgroup`` and
    ``reduction`` sizes (IREE's units, module docstring), the MMA intrinsic, the block size
    ``threads`` and ``stages`` (``prefetch_num_stages``)."""

    workgroup: tuple[int, ...]
    subgroup: tuple[int, ...]
    reduction: tuple[int, ...]
    mma: Mma
    threads: int
    stages: int
    extra: tuple = field(default=(), compare=False)

    def text(self) -> str:
        """How the reflection and remarks name it: the lowering config's sizes and intrinsic,
        the block size and prefetch stages (IREE's own field names)."""

        def arr(xs):
            return "[" + ", ".join(str(x) for x in xs) + "]"

        return (
            f"#iree_gpu.lowering_config<{{mma_kind = #iree_gpu.mma_layout<{self.mma.name}>, reduction = "
            f"{arr(self.reduction)}, subgroup = {arr(self.subgroup)}, workgroup = {arr(self.workgroup)}}}> "
            f"workgroup_size = [{self.threads}, 1, 1] prefetch_num_stages = {self.stages}"
        )


def warps(t: GpuTiles, c: Contraction) -> float:
    """Warps per workgroup the tiles imply: M and N workgroup tiles over subgroup tiles."""
    wm, wn = t.workgroup[c.m], t.workgroup[c.n]
    sm, sn = t.subgroup[c.m], t.subgroup[c.n]
    if not sm or not sn:
        return 0.0
    return (wm / (sm * t.mma.m)) * (wn / (sn * t.mma.n))


def shared_bytes(t: GpuTiles, c: Contraction) -> int:
    """Estimated shared memory of a workgroup, in bytes: the promoted LHS and RHS tiles of one
    reduction step, ``(WM + WN) * (K step + 8) * elem_bytes`` (the 8 elements cover IREE's
    padding against bank conflicts: 13568 bytes measured for the 128x64x32 default, 15360
    estimated). Prefetch stages did not change it (IREE 3.13, stages 0 to 3 measured alike)."""
    kstep = t.reduction[c.k] * t.mma.k
    return (t.workgroup[c.m] + t.workgroup[c.n]) * (kstep + 8) * c.elem_bytes


def problem(t: GpuTiles, c: Contraction, limits: GpuLimits) -> str | None:
    """Why ``t`` cannot be a candidate for ``c`` on a target with ``limits``, or None when it
    fits: every tile divides its loop's size; batch loops tiled by 1, the reduction loop only in
    ``reduction``; subgroup tiles divide workgroup tiles; the block is exactly the implied warps
    (at least one) and within the target's threads; at most :data:`ACCUMULATOR_REGISTERS`
    accumulator values per thread; :func:`shared_bytes` within the target's shared memory."""
    n = len(c.sizes)
    if not (len(t.workgroup) == len(t.subgroup) == len(t.reduction) == n):
        return f"tiles for {len(t.workgroup)} loops, the op has {n}"
    for d in c.batch:
        if t.workgroup[d] != 1 or t.subgroup[d] or t.reduction[d]:
            return f"batch loop {d} must be tiled by 1"
    if t.workgroup[c.k] or t.subgroup[c.k]:
        return "the reduction loop is tiled only in `reduction`"
    if t.reduction[c.m] or t.reduction[c.n]:
        return "parallel loops have no reduction tile"
    for d, mma in ((c.m, t.mma.m), (c.n, t.mma.n)):
        wg, sg = t.workgroup[d], t.subgroup[d]
        if wg <= 0 or c.sizes[d] % wg:
            return f"workgroup tile {wg} does not divide loop {d} ({c.sizes[d]})"
        if sg <= 0 or wg % (sg * mma):
            return f"subgroup tile {sg} x {mma} does not divide workgroup tile {wg} of loop {d}"
    kstep = t.reduction[c.k] * t.mma.k
    if kstep <= 0 or c.sizes[c.k] % kstep:
        return f"reduction step {kstep} does not divide loop {c.k} ({c.sizes[c.k]})"
    w = warps(t, c)
    if w < 1 or w != int(w) or t.threads != int(w) * 32:
        return f"{t.threads} threads, the tiles imply {w:g} warps"
    if t.threads > limits.threads:
        return f"{t.threads} threads, the target allows {limits.threads}"
    if t.workgroup[c.m] * t.workgroup[c.n] > ACCUMULATOR_REGISTERS * t.threads:
        return f"{t.workgroup[c.m] * t.workgroup[c.n] // t.threads} accumulators per thread (at most {ACCUMULATOR_REGISTERS})"
    smem = shared_bytes(t, c)
    if smem > limits.shared_memory:
        return f"about {smem} bytes of shared memory, the target allows {limits.shared_memory}"
    return None


def _workgroups(t: GpuTiles, c: Contraction) -> int:
    count = 1
    for d in (*c.batch, c.m, c.n):
        count *= c.sizes[d] // max(t.workgroup[d], 1)
    return count


def _rank(t: GpuTiles, c: Contraction, default: GpuTiles, limits: GpuLimits) -> tuple:
    """Order of candidates (smaller first), deterministic: configs that give every SM a
    workgroup first; then more reuse per loaded byte (``WM * WN / (WM + WN)``, capped at
    256x128's: larger tiles only cost occupancy); then reduction steps of 32 or 64 elements
    (the classic mma.sync kernels' K tiles); then block sizes near 128-256 threads; then fewer
    changes from IREE's default; then the text."""
    underfill = _workgroups(t, c) < limits.sm_count
    wm, wn = t.workgroup[c.m], t.workgroup[c.n]
    reuse = min(round(wm * wn / (wm + wn)), 85)
    kstep = t.reduction[c.k] * t.mma.k
    kpen = 0 if kstep in (32, 64) or t.reduction == default.reduction else round(abs(math.log2(kstep / 45)))
    block = abs(math.log2(t.threads / 128)) if t.threads <= 128 else max(0.0, math.log2(t.threads / 256))
    changes = sum(
        (
            t.workgroup != default.workgroup,
            t.subgroup != default.subgroup,
            t.reduction != default.reduction,
            t.mma != default.mma,
            t.stages != default.stages,
        )
    )
    return (underfill, -reuse, kpen, block, changes, t.text())


def enumerate_candidates(
    default: GpuTiles,
    c: Contraction,
    mmas: list[Mma],
    limits: GpuLimits,
    limit: int,
    stages: tuple[int, ...] | None = None,
) -> list[GpuTiles]:
    """Up to ``limit`` candidate configs for ``c`` other than IREE's ``default``, generated:
    workgroup tiles of M and N in 16..256 (powers of two), subgroup tiles of 1..8 MMA tiles,
    reduction steps of 1..8 MMA K-tiles, every intrinsic of ``mmas`` (the target's, filtered by
    the caller to those whose operand and accumulator types are the default's), prefetch stages
    ``stages`` (default: the default's), the block size implied by the tiles; those
    :func:`problem` accepts, ordered by :func:`_rank`, with distinct workgroup tiles taken first
    (one config per M x N tile, then the rest in rank order) so a small cap still spans tile
    shapes. Deterministic."""
    if limit <= 0:
        return []
    stages = stages or (default.stages,)
    n = len(c.sizes)
    pool: list[GpuTiles] = []
    for mma, wm, wn, sm, sn, r, st in itertools.product(mmas, _TILES, _TILES, _SUBGROUP, _SUBGROUP, _REDUCTION, stages):
        wg = [0] * n
        sg = [0] * n
        red = [0] * n
        for d in c.batch:
            wg[d] = 1
        wg[c.m], wg[c.n], sg[c.m], sg[c.n], red[c.k] = wm, wn, sm, sn, r
        if wm % (sm * mma.m) or wn % (sn * mma.n):
            continue
        threads = (wm // (sm * mma.m)) * (wn // (sn * mma.n)) * 32
        t = GpuTiles(tuple(wg), tuple(sg), tuple(red), mma, threads, st)
        if t == default or problem(t, c, limits) is not None:
            continue
        pool.append(t)
    pool.sort(key=lambda t: _rank(t, c, default, limits))
    out: list[GpuTiles] = []
    seen: set = {(default.workgroup[c.m], default.workgroup[c.n])}
    for t in pool:
        key = (t.workgroup[c.m], t.workgroup[c.n])
        if key not in seen:
            seen.add(key)
            out.append(t)
        if len(out) >= limit:
            return out
    for t in pool:
        if t not in out:
            out.append(t)
        if len(out) >= limit:
            break
    return out
