"""Run and tune a compiled module with ``iree.runtime`` (no Triton and no compiler needed):
:class:`AutotunedModule`, its strategies, the racing search, and the tuning cache."""

from autotune_export.runtime import tuner
from autotune_export.runtime.tuner import *  # noqa: F401,F403  (the names of tuner.__all__)

__all__ = tuner.__all__
