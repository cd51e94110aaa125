"""The tuning cache: a tuning-results JSON file (format ``autotune-export.tuning-results/1``,
the file ``autotune-export --tuning-results`` reads) holding decisions keyed by device, driver
version, module hash, group and workload, and per-variant timings keyed by the variant's
fingerprint; written atomically under the file's lock (:mod:`autotune_export.support.files`).
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Sequence

from autotune_export.contract import RESULTS_FORMAT
from autotune_export.support import files
from autotune_export.support.paths import default_cache_dir

__all__ = ["TuningCache", "default_results_path"]


def default_results_path() -> pathlib.Path:
    """``tuning.json`` in the cache folder (:func:`autotune_export.support.paths.default_cache_dir`)."""

    return default_cache_dir() / "tuning.json"


class TuningCache:
    """A tuning-results JSON file used as a cache (format ``autotune-export.tuning-results/1``).

    ``results`` (decisions): ``{"executable", "group", "variant", "device", "driver",
    "driver_version", "module_sha256", "workload", "median_ms": {variant: ms}, "spread_ms":
    {variant: [p20, p80]}, "estimate_ms": {variant: ms} (what tuning ranked by, the fastest
    sample; absent from entries of earlier releases), "strategy", "time"}`` and, when the
    group has a per-workload table,
    ``"workload_values"`` (the dispatch's workload values). ``timings`` (per variant): see
    :meth:`timings`. ``failures`` (per variant that faulted, hung or that the runtime refused
    while tuning, so it is not run again on every load): see :meth:`failures`. Writes are atomic under the file's lock (``<path>.lock``, see
    :mod:`autotune_export.support.files`); an unreadable file is treated as empty (and replaced
    on the next write).
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = pathlib.Path(path) if path is not None else default_results_path()

    def entries(self) -> list[dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
            return []
        return [e for e in data.get("results", []) if isinstance(e, dict)]

    @staticmethod
    def _key(e: dict) -> tuple:
        return (
            e.get("device"),
            e.get("driver_version"),
            e.get("module_sha256"),
            e.get("executable"),
            e.get("group"),
            e.get("workload"),
            e.get("checks"),
        )

    def lookup(self, **key) -> dict | None:
        """The entry matching device, driver_version, module_sha256, executable, group, workload
        and the cross-check's rules (``checks``: :data:`~autotune_export.runtime.checking.CHECK_RULES`;
        a decision recorded under other rules, or by a release without the field, is not reused)."""
        want = self._key(key)
        return next((e for e in self.entries() if self._key(e) == want), None)

    def _data(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("format") == RESULTS_FORMAT else {}

    def timings(self) -> list[dict]:
        """The per-variant timing entries: ``{"fingerprint", "device", "driver_version",
        "workload", "ruler", "median_ms", "spread_ms": [p20, p80], "estimate_ms", "samples",
        "time"}`` (ms; ``estimate_ms``, the fastest sample that tuning ranks by, is absent from
        rows of earlier releases).
        ``ruler`` is ``"bench"`` (a benchmark entry on fake data) or ``"live"`` (live calls,
        round-robin): timings of different rulers are never compared."""
        return [t for t in self._data().get("timings", []) if isinstance(t, dict)]

    @staticmethod
    def _timing_key(t: dict) -> tuple:
        return (t.get("fingerprint"), t.get("device"), t.get("driver_version"), t.get("workload"), t.get("ruler"))

    def timing(self, **key) -> dict | None:
        """The timing entry matching fingerprint, device, driver_version, workload, ruler."""
        want = self._timing_key(key)
        return next((t for t in self.timings() if self._timing_key(t) == want), None)

    def failures(self) -> list[dict]:
        """The variants that failed while tuning (:mod:`autotune_export.runtime.isolation`):
        ``{"fingerprint", "device", "driver_version", "workload", "kind", "reason", "limit_s",
        "time"}``; ``kind`` is ``"fault"``, ``"hang"`` (``limit_s``: the limit it ran past, s)
        or ``"error"``."""
        return [f for f in self._data().get("failures", []) if isinstance(f, dict)]

    @staticmethod
    def _failure_key(f: dict) -> tuple:
        return (f.get("fingerprint"), f.get("device"), f.get("driver_version"), f.get("workload"))

    def failures_of(self, keys: Sequence[dict]) -> list[dict | None]:
        """The failure entry matching each of ``keys`` (fingerprint, device, driver_version,
        workload), or None; the file read once."""
        by_key = {self._failure_key(f): f for f in self.failures()}
        return [by_key.get(self._failure_key(k)) for k in keys]

    def failure(self, **key) -> dict | None:
        """The failure entry matching fingerprint, device, driver_version, workload."""
        want = self._failure_key(key)
        return next((f for f in self.failures() if self._failure_key(f) == want), None)

    def store(self, entry: dict | None, timings: Sequence[dict] = (), failures: Sequence[dict] = ()) -> None:
        """Add or replace the decision ``entry`` (same key), the per-variant ``timings`` (same
        timing key) and ``failures`` (same failure key), in one atomic write. Raises OSError
        when the file cannot be written."""
        with files.locked(self.path):
            data = self._data()
            results = [e for e in data.get("results", []) if isinstance(e, dict)]
            if entry is not None:
                results = [e for e in results if self._key(e) != self._key(entry)] + [entry]
            new = {self._timing_key(t) for t in timings}
            kept = [t for t in data.get("timings", []) if isinstance(t, dict) and self._timing_key(t) not in new]
            out = {"format": RESULTS_FORMAT, "results": results}
            if kept or timings:
                out["timings"] = kept + list(timings)
            gone = {self._failure_key(f) for f in failures}
            held = [f for f in data.get("failures", []) if isinstance(f, dict) and self._failure_key(f) not in gone]
            if held or failures:
                out["failures"] = held + list(failures)
            files.atomic_write(self.path, json.dumps(out, indent=1, sort_keys=True))
