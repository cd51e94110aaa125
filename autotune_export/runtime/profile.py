"""An opt-in profile of tunings: where the wall time of ``tune_group`` goes, phase by phase.

``AutotunedModule(..., profile=True)`` (or the environment variable ``AUTOTUNE_EXPORT_PROFILE=1``)
keeps a :class:`TuningProfile` and prints its report to stderr after each tuned group. Phases
nest; each phase's time is its own (exclusive of the phases inside it), so the rows add up to
the total. Times are host wall-clock seconds (``time.perf_counter``); nothing is timed when no
profile is kept (:func:`phase` is then a no-op context).
"""

from __future__ import annotations

import contextlib
import os
import time

__all__ = ["TuningProfile", "phase", "profile_from_env", "PROFILE_ENV"]

#: The environment variable that turns the profile on (``1``, ``true``, ``yes``).
PROFILE_ENV = "AUTOTUNE_EXPORT_PROFILE"


def profile_from_env() -> bool:
    """Whether :data:`PROFILE_ENV` asks for a profile."""
    return os.environ.get(PROFILE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class TuningProfile:
    """Phase timers and counters of one or more tunings.

    :attr:`seconds` and :attr:`calls`: per phase name, its exclusive wall time (s) and how often
    it was entered. :attr:`dispatches`: group dispatches the benchmark entries ran;
    :attr:`kernel_ms`: their time by the measured per-run medians (ms): the part of the wall that
    is kernels.
    """

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.dispatches = 0
        self.kernel_ms = 0.0
        self._stack: list[list] = []

    @contextlib.contextmanager
    def phase(self, name: str):
        """Time the block as phase ``name`` (exclusive of phases opened inside it)."""
        frame = [name, time.perf_counter(), 0.0]
        self._stack.append(frame)
        try:
            yield
        finally:
            self._stack.pop()
            elapsed = time.perf_counter() - frame[1]
            self.seconds[name] = self.seconds.get(name, 0.0) + elapsed - frame[2]
            self.calls[name] = self.calls.get(name, 0) + 1
            if self._stack:
                self._stack[-1][2] += elapsed

    def count_dispatches(self, n: int) -> None:
        self.dispatches += int(n)

    def report(self, title: str = "tuning profile") -> str:
        """The phases, longest first: seconds, share of the total, times entered; then the
        dispatches run and the kernel time they account for."""
        total = sum(self.seconds.values()) or 1e-12
        lines = [f"{title}: {total:.3f} s"]
        for name, s in sorted(self.seconds.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {name:<34} {s:8.3f} s  {100 * s / total:5.1f}%  x{self.calls[name]}")
        if self.dispatches:
            lines.append(
                f"  {self.dispatches} dispatches in benchmark entries, about {self.kernel_ms / 1e3:.3f} s of "
                f"kernel time by the measured medians ({100 * self.kernel_ms / 1e3 / total:.1f}% of the total)"
            )
        return "\n".join(lines)

    def reset(self) -> None:
        self.__init__()


def phase(profile: TuningProfile | None, name: str):
    """``profile.phase(name)``, or a no-op context without a profile."""
    return profile.phase(name) if profile is not None else contextlib.nullcontext()
