"""The launch model's errors (:mod:`autotune_export.cuda.launch_model`): what cannot be
modelled, and the signal a stand-in raises when a user's function reads what is not known
when exporting.
"""

from __future__ import annotations


class LaunchModelError(Exception):
    """The launch cannot be modelled (one-line message): a user function (heuristic, pruner,
    grid) raised or read what is not known when exporting (``unknown`` is then its name,
    ``"n"`` or ``"x_ptr.shape"``), a keyword argument conflicts with an autotuner's config, a
    constexpr has no value, or ``top_k`` is neither a float <= 1.0 nor an int."""

    def __init__(self, message: str, unknown: str | None = None, stage: str | None = None):
        super().__init__(message)
        self.unknown = unknown
        #: ``"prune"`` when ``prune_configs_by`` failed (else None).
        self.stage = stage


#: The name pruning's errors went by (kept for callers and tests that catch it).
PruneError = LaunchModelError


class UnknownRead(BaseException):
    """Raised by the stand-ins; a BaseException so that ``except Exception`` in a user's
    function does not hide it. Becomes a LaunchModelError where the function is called."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name
