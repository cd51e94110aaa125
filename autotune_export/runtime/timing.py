"""How the runtime measures variants: wall-clock benchmarking (:func:`loop_bench`,
:func:`race`, :class:`WallClock`) and given timings (:class:`GivenTimings`), behind one
interface, :class:`Benchmarker`, that :class:`autotune_export.runtime.AutotunedModule` takes as
``benchmarker=``.

Every tuning decision of the runtime (``tune_group``, strategy ``"load"``, round-robin on live
calls) is made on what a benchmarker returns, so a test or a replay can decide on given timings
(:class:`GivenTimings`) while the module still runs for real; the wall clock is read only by
:class:`WallClock` (the default) and the functions it uses. Times are in milliseconds.

The code lives in three modules by concern, gathered here: :mod:`.search` (the search and its
estimators: :func:`race`, :func:`contenders`, :func:`pick`, :class:`VariantTiming`),
:mod:`.sampling` (samples on a clock: :func:`loop_bench`, :class:`LoopTimer`,
:class:`CallSampler`, :func:`race_calls`) and :mod:`.benchmarkers` (:class:`Benchmarker`,
:class:`WallClock`, :class:`GivenTimings`, :class:`SimulatedBench`).
"""

from __future__ import annotations

from autotune_export.runtime.benchmarkers import Benchmarker, GivenTimings, SimulatedBench, WallClock
from autotune_export.runtime.sampling import (
    AUTO_BUDGET_MS_PER_VARIANT,
    CALL_MS,
    MIN_KERNEL_SHARE,
    ROUND0_BUDGET_FACTOR,
    CallSampler,
    LoopTimer,
    _timed as _timed,
    _wait as _wait,
    loop_bench,
    race_calls,
)
from autotune_export.runtime.search import (
    CONFIDENCE,
    FIRST_ROUND_NOISE,
    MIN_SAMPLES_TO_DROP,
    NOISE_QUANTILE,
    TIE_TOLERANCE,
    VariantTiming,
    contenders,
    estimate,
    lower_bounds,
    pick,
    race,
    relative_spread,
)

__all__ = [
    "VariantTiming",
    "loop_bench",
    "LoopTimer",
    "race",
    "contenders",
    "relative_spread",
    "FIRST_ROUND_NOISE",
    "CALL_MS",
    "MIN_SAMPLES_TO_DROP",
    "CONFIDENCE",
    "lower_bounds",
    "NOISE_QUANTILE",
    "estimate",
    "AUTO_BUDGET_MS_PER_VARIANT",
    "ROUND0_BUDGET_FACTOR",
    "MIN_KERNEL_SHARE",
    "CallSampler",
    "race_calls",
    "pick",
    "TIE_TOLERANCE",
    "Benchmarker",
    "WallClock",
    "SimulatedBench",
    "GivenTimings",
]
