"""Run and tune a compiled module with ``iree.runtime`` (no Triton and no compiler needed):
:class:`AutotunedModule`, its strategies, and the tuning cache."""

from autotune_export.runtime import tuner
from autotune_export.runtime.tuner import (
    RESULTS_FORMAT,
    STRATEGIES,
    AutotunedModule,
    GroupInfo,
    TuningCache,
    VariantTiming,
    device_identity,
    loop_bench,
)

__all__ = tuner.__all__
