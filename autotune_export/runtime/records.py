"""The tuning-cache keys and records of an :class:`~autotune_export.runtime.tuner.AutotunedModule`:
decisions keyed by device, driver version, module hash, group and workload; per-variant timings
keyed by the variant's fingerprint, workload and ruler (``"bench"``: benchmark entries,
``"live"``: round-robin's live calls) (:class:`CacheRecords`, a mixin of ``AutotunedModule``;
the format is :class:`~autotune_export.runtime.cache.TuningCache`'s)."""

from __future__ import annotations

import time
import warnings
from typing import Sequence

from autotune_export.contract import GroupReflection as GroupInfo
from autotune_export.runtime.checking import CHECK_RULES
from autotune_export.runtime.timing import VariantTiming, pick


def recorded_ms(value) -> float | None:
    """A time (ms) as the tuning cache recorded it (``estimate_ms`` of a timing row or a
    decision: the fastest sample, :func:`autotune_export.runtime.search.estimate`): a float, or
    None when absent (a row of an older release, whose median then stands for it) or not a
    number."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class CacheRecords:
    """Keys into the tuning cache and the records this module stores there."""

    def _key(self, info: GroupInfo, workload: str) -> dict:
        return {
            "device": self.identity["device"],
            "driver_version": self.identity["driver_version"],
            "module_sha256": self.module_sha256,
            "executable": info.executable,
            "group": info.group,
            "workload": workload,
            "checks": CHECK_RULES,
        }

    def _fingerprint(self, info: GroupInfo, k: int) -> str:
        """Variant ``k``'s fingerprint (a module of an earlier release has none: then the
        module's hash and the variant's name stand in)."""
        if k < len(info.fingerprints) and info.fingerprints[k]:
            return info.fingerprints[k]
        return f"{self.module_sha256}:{info.variants[k]}"

    def _timing_key(self, info: GroupInfo, k: int, workload: str, ruler: str) -> dict:
        return {
            "fingerprint": self._fingerprint(info, k),
            "device": self.identity["device"],
            "driver_version": self.identity["driver_version"],
            "workload": workload,
            "ruler": ruler,
        }

    def _cached_timing(self, info: GroupInfo, k: int, workload: str, ruler: str) -> dict | None:
        if self.cache is None:
            return None
        hit = self.cache.timing(**self._timing_key(info, k, workload, ruler))
        ok = (
            hit is not None
            and isinstance(hit.get("median_ms"), (int, float))
            and isinstance(hit.get("spread_ms"), list)
            and len(hit["spread_ms"]) == 2
        )
        return hit if ok else None

    def record(self, group: str, times_ms: dict[int | str, Sequence[float]], *, strategy: str = "external") -> dict:
        """Store in the tuning cache a decision for ``group`` timed outside this runtime (a
        benchmark's own per-call times, say), as tuning stores its own (:meth:`_record`): the
        same entry (device, driver version, module hash, executable, group, the group's tuning
        workload, ``median_ms``/``spread_ms`` per variant, ``strategy``), so that
        ``autotune-export --tuning-results``, ``program --tuning-results`` and
        ``strategy="fixed"`` read it. ``times_ms``: variant (index or name) -> its samples in ms
        (an empty list: not timed); the winner is :func:`pick`'s (ties to the lower index).
        Returns the entry; selects nothing. Raises ValueError without a cache or without
        samples, KeyError/IndexError for an unknown group or variant; a file that cannot be
        written gives the RuntimeWarning tuning gives. No per-variant timing rows are stored:
        they are not the benchmark entries' ruler."""
        info = self.group(group)
        if self.cache is None:
            raise ValueError("record: this module has no tuning cache (cache=PATH)")
        timings = []
        for variant, samples in times_ms.items():
            k = info.variants.index(variant) if isinstance(variant, str) else int(variant)
            if not 0 <= k < len(info.variants):
                raise IndexError(f"group {info.key} has {len(info.variants)} variants, not {k}")
            timings.append(VariantTiming(info.variants[k], [float(t) for t in samples]))
        if not any(t.times_ms for t in timings):
            raise ValueError(f"record: no samples for {info.key}")
        timings.sort(key=lambda t: info.variants.index(t.variant))
        return self._record(info, timings, tuning_workload_key(info), strategy)

    def _record(
        self,
        info: GroupInfo,
        timings: Sequence[VariantTiming],
        workload: str,
        strategy: str,
        values: list[int] | None = None,
        winner: VariantTiming | None = None,
        *,
        measured: Sequence[VariantTiming] = (),
        ruler: str = "bench",
        final: bool = True,
    ) -> dict:
        """Store the decision for ``workload`` (and the per-variant timings ``measured`` now) in
        the cache; returns the decision entry. ``final`` False: only the timings (a tuning the
        group's time limit cut short decides for this process; the next one resumes)."""
        timings = [t for t in timings if t.times_ms]  # a variant that failed has none
        best = winner or pick(timings)
        entry = {
            **self._key(info, workload),
            "driver": self.driver,
            "variant": best.variant,
            "median_ms": {t.variant: t.median_ms for t in timings},
            "spread_ms": {t.variant: list(t.spread_ms) for t in timings},
            "estimate_ms": {t.variant: t.estimate_ms for t in timings},
            "strategy": strategy,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        if values is not None:
            entry["workload_values"] = list(values)
        stamp = entry["time"]
        rows = [
            {
                **self._timing_key(info, info.variants.index(t.variant), workload, ruler),
                "median_ms": t.median_ms,
                "spread_ms": list(t.spread_ms),
                "estimate_ms": t.estimate_ms,
                "samples": len(t.times_ms),
                "time": stamp,
            }
            for t in measured
        ]
        if self.cache is not None:
            try:
                self.cache.store(entry if final else None, rows)
            except OSError as err:  # tuning goes on: the decision holds for this process
                if not self._unwritable_warned:
                    self._unwritable_warned = True
                    warnings.warn(
                        f"autotune-export: cannot write the tuning cache {self.cache.path} "
                        f"({err.strerror or err}); tuning results are kept in this process only",
                        RuntimeWarning,
                        stacklevel=2,
                    )
        return entry


def tuning_workload_key(info: GroupInfo) -> str:
    """The cache key of a group's tuning workload: its fake arguments' types, ``x``-joined."""
    return "x".join(info.tune_args) if info.tune_args else ""
