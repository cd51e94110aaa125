"""Failures and isolation of an :class:`~autotune_export.runtime.tuner.AutotunedModule`'s
tuning: the tuning worker (:mod:`.isolation`) and when variants run in it, and the bookkeeping
of variants dropped because they faulted, hung or were refused (in this object and in the
tuning cache) (:class:`Failures`, a mixin of ``AutotunedModule``; its state is set up in
``AutotunedModule.__init__``)."""

from __future__ import annotations

import time
import warnings
from typing import Sequence

from autotune_export.contract import FLUSH_L2_FUNCTION
from autotune_export.contract import GroupReflection as GroupInfo
from autotune_export.runtime.isolation import Isolation, VariantFailure, WorkerUnavailable


class Failures:
    """The tuning worker of a module and the variants dropped for a fault, a hang or an error:
    noted (:attr:`notes`, :attr:`drop_reasons`), recorded in the tuning cache, read back from
    it."""

    @property
    def worker_starts(self) -> list[float]:
        """Seconds each tuning worker took to start and load the module, one per start (empty:
        none was needed)."""
        iso = self._isolation_box[0]
        return list(self._starts) + (list(iso.starts) if iso is not None else [])

    _starts: list[float] = []

    def close_worker(self) -> None:
        """End the tuning worker, if one runs (it holds a device context and the module; the
        next tuning that needs one starts another)."""
        iso = self._isolation_box[0]
        if iso is not None:
            self._starts = self._starts + iso.starts
            iso.close()
            self._isolation_box[0] = None

    def _worker(self) -> Isolation:
        if self._isolation_box[0] is None:
            self._isolation_box[0] = Isolation(
                self._module_source,
                self.driver,
                self.module_sha256,
                flush=FLUSH_L2_FUNCTION if self.flush_l2 else None,
                variant_timeout_s=self.variant_timeout_s,
                flags=self.iree_flags,
                allocators=self.device_allocators,
            )
        return self._isolation_box[0]

    def _isolated(self, info: GroupInfo, workload: str, ks: Sequence[int]) -> bool:
        """Whether variants ``ks`` run in the tuning worker (``isolation``): always with
        ``"process"``, never with ``"none"``; with ``"auto"`` unless each of them already ran to
        completion on this device and workload (a timing in the tuning cache, or a run in a
        worker of this object)."""
        if self.isolation != "auto":
            return self.isolation == "process"
        return not all(
            (self._fingerprint(info, k), workload) in self._proven or self._cached_timing(info, k, workload, "bench") is not None
            for k in ks
        )

    def _fail(self, info: GroupInfo, k: int, err: VariantFailure, workload: str) -> None:
        """Drop variant ``k``, which failed (``err``) on tuning workload ``workload``: never
        chosen, its reason in :attr:`drop_reasons` and :attr:`notes`, and in the tuning cache, so
        it is not run again; unless the group's time limit cut it short (``err.cut_short``): then
        nothing is stored about it, nor the group's decision."""
        name = info.variants[k]
        self.dropped.setdefault(info.key, set()).add(k)
        self.drop_reasons.setdefault(info.key, {})[name] = f"{err.kind}: {err.reason}"
        self._note(
            info,
            f"variant {name} was dropped ({err.kind}): {err.reason}"
            + (
                " (the default variant: no variant can be checked against it, so the group stays on it)"
                if k == info.default
                else ""
            ),
        )
        if err.cut_short:  # no verdict on the variant: the group ran out of time
            self._cut_short.add(info.key)
            self._note(
                info,
                f"{info.key}: tuning stopped at the group's time limit ({self.group_timeout_s:g} s); "
                "its decision holds for this process only, the next tuning resumes (timings so far are cached)",
            )
            return
        if self.cache is None:
            return
        row = {
            **self._failure_key(info, k, workload),
            "kind": err.kind,
            "reason": err.reason,
            "limit_s": err.limit_s,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        try:
            self.cache.store(None, (), [row])
        except OSError:
            pass  # as for timings: the drop holds for this process

    def _failed(self, info: GroupInfo) -> set[int]:
        """The variants of ``info`` dropped because they faulted, hung or were refused (not
        those whose results differ)."""
        reasons = self.drop_reasons.get(info.key, {})
        return {k for k, v in enumerate(info.variants) if v in reasons and not reasons[v].startswith("differs: ")}

    def _failure_key(self, info: GroupInfo, k: int, workload: str) -> dict:
        return {
            "fingerprint": self._fingerprint(info, k),
            "device": self.identity["device"],
            "driver_version": self.identity["driver_version"],
            "workload": workload,
        }

    def _recorded(self, info: GroupInfo, workload: str) -> dict[int, dict]:
        """The tuning cache's failure entries of ``info``'s variants on ``workload``, by variant
        index (the file read once)."""
        if self.cache is None:
            return {}
        hits = self.cache.failures_of([self._failure_key(info, k, workload) for k in range(len(info.variants))])
        return {k: hit for k, hit in enumerate(hits) if hit is not None}

    def _retried(self, hit: dict) -> bool:
        """Whether a recorded failure gets another chance: a hang under a shorter limit than
        this object's ``variant_timeout_s`` (docs/runtime.md, isolation); a fault or an error
        never does."""
        return (
            hit.get("kind") == "hang" and isinstance(hit.get("limit_s"), (int, float)) and self.variant_timeout_s > hit["limit_s"]
        )

    def _retried_hangs(self, info: GroupInfo, workload: str) -> set[int]:
        """The variants whose recorded hang on ``workload`` gets another chance (:meth:`_retried`):
        a decision stored while they were dropped does not answer."""
        return {k for k, hit in self._recorded(info, workload).items() if self._retried(hit)}

    def _recorded_failures(self, info: GroupInfo, workload: str) -> None:
        """Drop the variants the tuning cache records as failed on ``workload``, unless the
        failure gets another chance (:meth:`_retried`)."""
        for k, hit in self._recorded(info, workload).items():
            name = info.variants[k]
            if name in self.drop_reasons.get(info.key, {}) or self._retried(hit):
                continue
            self.dropped.setdefault(info.key, set()).add(k)
            self.drop_reasons.setdefault(info.key, {})[name] = (
                f"{hit.get('kind')}: {hit.get('reason')} (tuning cache, {hit.get('time', '?')})"
            )

    def _unavailable(self, info: GroupInfo, err: WorkerUnavailable) -> None:
        """No worker: the group is not tuned (it stays on its choice so far) and says why."""
        self._note(
            info,
            f"{info.key} was not tuned: {err.reason} (isolation={self.isolation!r}; "
            "isolation='none' tunes in this process, unprotected)",
        )
        warnings.warn(self.notes[info.key], RuntimeWarning, stacklevel=3)

    def _note(self, info: GroupInfo, text: str) -> None:
        old = self.notes.get(info.key)
        self.notes[info.key] = f"{old}; {text}" if old and text not in old else text


def close_isolation(box: list) -> None:
    """End the tuning worker in ``box`` (the finalizer of an :class:`AutotunedModule`)."""
    if box and box[0] is not None:
        box[0].close()
        box[0] = None
