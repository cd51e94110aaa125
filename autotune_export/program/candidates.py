"""Candidate tile configurations around IREE's own default for one llvm-cpu dispatch.

A :class:`CpuTiles` is the tile sizes of an ``#iree_cpu.lowering_config`` (IREE 3.13 spelling:
``distribution``, ``vector_common_parallel``, ``vector_reduction``, one size per loop of the
root op, 0 = not tiled at that level). :func:`neighbours` derives configs one step away from
IREE's default (one tile size halved or doubled), pruned before anything is compiled.

Convolutions: IREE 3.13 configures a convolution on llvm-cpu with
``ConvTileAndDecomposeExpert``, which tiles it and then rewrites the tiled 2-D convolution as a
1-D one (``DecomposeConvolutionToLowerDimOps``: a window loop and the output loop it slides
along both tiled to 1, ``kh`` and ``oh`` in IREE's defaults); only the 1-D form is vectorized.
A vector tile of 2 on such a loop leaves the 2-D convolution, which is then compiled to scalar
code: measured 0.95 ms against the default's 0.010 ms (~95x) for the 2x16x16x16, 3x3x8 NHWC
convolution of the CI program, and no vector FMA in its code. So for that pipeline the vector
tiles IREE's default has at 1 stay 1 (:func:`decomposes_to_1d`, ``keep_unit_vector_tiles``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LEVELS", "CpuTiles", "decomposes_to_1d", "neighbours"]

#: The tiling levels of IREE 3.13's llvm-cpu DoubleTilingExpert / ConvTileAndDecomposeExpert,
#: in the order ``#iree_cpu.lowering_config`` prints them.
LEVELS = ("distribution", "vector_common_parallel", "vector_reduction")


@dataclass(frozen=True)
class CpuTiles:
    """Per level of :data:`LEVELS` its tile sizes (a tuple with one int per loop, or None where
    the config lacks the level)."""

    distribution: tuple | None
    vector_common_parallel: tuple | None
    vector_reduction: tuple | None

    def level(self, name: str) -> tuple | None:
        return getattr(self, name)

    def replace(self, name: str, sizes: tuple) -> "CpuTiles":
        values = {lv: self.level(lv) for lv in LEVELS}
        values[name] = sizes
        return CpuTiles(**values)

    def text(self) -> str:
        """The ``#iree_cpu.lowering_config<...>`` attribute these tiles spell (IREE's syntax)."""
        parts = [f"{lv} = [{', '.join(str(s) for s in self.level(lv))}]" for lv in LEVELS if self.level(lv) is not None]
        return f"#iree_cpu.lowering_config<{', '.join(parts)}>"


def valid(tiles: CpuTiles, loops: list[int], reductions: set[int]) -> bool:
    """Whether ``tiles`` fit the root op's static loop sizes ``loops`` (``reductions``: the
    indices of its reduction loops): every nonzero tile divides its loop's size; a vector tile
    of a parallel loop divides the distribution tile of that loop (the vector level tiles the
    distributed tile); reduction tiles only in ``vector_reduction``, parallel tiles only in the
    other levels."""
    dist = tiles.distribution
    for name in LEVELS:
        sizes = tiles.level(name)
        if sizes is None:
            continue
        if len(sizes) != len(loops):
            return False
        for d, (t, n) in enumerate(zip(sizes, loops)):
            if t < 0 or (t and n % t):
                return False
            if t and (name == "vector_reduction") != (d in reductions):
                return False
            if t and name == "vector_common_parallel" and dist is not None and dist[d] and dist[d] % t:
                return False
    return True


#: IREE 3.13's llvm-cpu pipeline that decomposes a tiled convolution to a 1-D one (module docstring).
CONV_DECOMPOSE_PIPELINE = "ConvTileAndDecomposeExpert"


def decomposes_to_1d(translation_info: str) -> bool:
    """Whether IREE's ``translation_info`` (its text) names the pipeline that decomposes a
    tiled convolution to a 1-D convolution (:data:`CONV_DECOMPOSE_PIPELINE`)."""
    return f"<{CONV_DECOMPOSE_PIPELINE}>" in translation_info


def neighbours(
    default: CpuTiles, loops: list[int], reductions: set[int], limit: int, *, keep_unit_vector_tiles: bool = False
) -> list[CpuTiles]:
    """Up to ``limit`` configs one step from ``default``: per level (in :data:`LEVELS` order),
    per loop, its tile doubled and then halved (only nonzero tiles; a halved tile stays >= 1),
    those :func:`valid` for ``loops``, without repeats and without ``default`` itself. With
    ``keep_unit_vector_tiles`` (a convolution IREE decomposes to 1-D, :func:`decomposes_to_1d`)
    a vector-level tile that is 1 in ``default`` is not changed. The order is deterministic, so
    a build is reproducible."""
    out: list[CpuTiles] = []
    if limit <= 0:
        return out
    for name in LEVELS:
        sizes = default.level(name)
        if sizes is None:
            continue
        for d, t in enumerate(sizes):
            if not t or (keep_unit_vector_tiles and t == 1 and name != "distribution"):
                continue
            for new in (t * 2, t // 2):
                if new < 1 or new == t:
                    continue
                cand = default.replace(name, sizes[:d] + (new,) + sizes[d + 1 :])
                if cand != default and cand not in out and valid(cand, loops, reductions):
                    out.append(cand)
                if len(out) >= limit:
                    return out
    return out
