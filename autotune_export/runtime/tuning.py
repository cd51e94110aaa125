"""Tuning of an :class:`~autotune_export.runtime.tuner.AutotunedModule`'s groups on their tuning
workloads (``"load"``/``"request"``): cache first, then the search (:mod:`.timing`), then the
cross-check of a winner against the default variant on the fake data (:class:`Tuning`, a mixin
of ``AutotunedModule``; its state is set up in ``AutotunedModule.__init__``)."""

from __future__ import annotations

import sys
import time

from autotune_export.contract import GroupReflection as GroupInfo
from autotune_export.contract import TuningWorkload
from autotune_export.runtime.calls import as_list
from autotune_export.runtime.checking import Baseline, baseline, disagreement
from autotune_export.runtime.isolation import VariantFailure, WorkerUnavailable, measure_variants
from autotune_export.runtime.profile import phase
from autotune_export.runtime.records import recorded_ms, tuning_workload_key
from autotune_export.runtime.timing import VariantTiming, pick


class Tuning:
    """Tuning a group (:meth:`tune_group`, :meth:`autotune`), timing one variant (:meth:`bench`)
    and the cross-check that keeps a variant whose results differ from the default's from
    winning or from running on live data."""

    def cache_entry(self, group: str) -> dict | None:
        """The tuning-cache entry that answers ``group`` (``executable::group`` or its bare
        name) on this device, module and first tuning workload: a dict with ``variant``,
        ``median_ms`` and ``spread_ms`` per variant (ms), ``strategy``, ``time`` (see
        :class:`TuningCache`). None without a cache, without an entry, or when the entry's
        variant is not one of the group's."""
        info = self.group(group)
        if self.cache is None:
            return None
        hit = self.cache.lookup(**self._key(info, tuning_workload_key(info)))
        return hit if hit is not None and hit.get("variant") in info.variants else None

    def tune_group(self, group: str) -> list[VariantTiming]:
        """Tune one group on each of its tuning workloads (``tune_workload``) and select the
        winners: each workload's fills a slot of the per-workload table, and the group's choice
        (used for every workload the table does not hold) is the variant most workloads chose,
        ties to the lower variant index (:func:`autotune_export.contract.choose_result`, the
        rule of ``strategy="fixed"`` and of the frozen module too). The timings each workload
        was decided on are in :attr:`timings`.

        Per variant and workload the tuning cache is asked first (timings are keyed by the
        variant's fingerprint, so adding a config times only the new variant); the others are
        timed (``search``). Before a variant wins it is cross-checked: its results on the fake
        data must equal the default variant's (tolerances by dtype, :func:`results_agree`);
        a variant that disagrees is dropped with a note (:attr:`notes`). Returns the timings
        measured now on the first workload (empty when the cache answered).
        """
        info = self.group(group)
        works = info.tuning_workloads()
        if not works:
            # Built without benchmark entries (its host takes dynamic shapes and no
            # tune_workload says which to measure): only live calls can tune it.
            self.notes[info.key] = (
                f"{info.key} has no benchmark entries (no tune_workload for its host's dynamic "
                "arguments): left at its default; strategy='round-robin' tunes it on live calls "
                "only with allow_unchecked=True (its variants cannot be checked)"
            )
            return []
        self._deadline = time.monotonic() + self.group_timeout_s
        self._cut_short.discard(info.key)
        try:
            with phase(self.profile, "tune_group (the rest)"):
                measured = [self._tune_workload(info, w, work) for w, work in enumerate(works)]
        finally:
            self._deadline = None
        self._references.pop(info.key, None)  # the default's check results: device memory, made again when needed
        self.sources[info.key] = "tuned" if any(measured) else "cache"
        if self.profile is not None and any(measured):
            print(
                self.profile.report(
                    f"autotune-export profile of {info.key} ({len(info.variants)} variants, search {self.search})"
                ),
                file=sys.stderr,
                flush=True,
            )
            self.profile.reset()
        return measured[0]

    def _tune_workload(self, info: GroupInfo, w: int, work: TuningWorkload) -> list[VariantTiming]:
        key = "x".join(work.tune_args)
        values = None
        if work.workload and info.slots:
            with phase(self.profile, "workload entry"):
                out = self._invoker(work.workload)()
                values = [int(v) for v in (out if isinstance(out, (list, tuple)) else [out])]
        self._recorded_failures(info, key)
        # Only the variants the measured dispatch may run (its own prune_configs_by keeps them:
        # contract.GroupReflection.tuned_allowed) are timed, so only they can win.
        allowed = set(info.tuned_allowed())
        with phase(self.profile, "tuning cache (read)"):
            hit = self.cache.lookup(**self._key(info, key)) if self.cache is not None else None
            if hit is not None and (
                hit.get("variant") not in info.variants
                or info.variants.index(hit["variant"]) not in allowed
                or self._retried_hangs(info, key) & allowed  # decided while they were dropped
            ):
                hit = None
            if hit is None:
                cached = {
                    k: self._cached_timing(info, k, key, "bench") if k in allowed else None for k in range(len(info.variants))
                }
        if hit is not None:
            self._decide(info, values, info.variants.index(hit["variant"]), hit, None)
            return []
        failed = self._failed(info)  # never run again (a variant dropped by the cross-check is still timed)
        missing = [k for k, t in cached.items() if t is None and k not in failed and k in allowed]
        try:
            with phase(self.profile, "search (host side)"):
                timed = self._measure(info, key, work.bench, missing)
        except WorkerUnavailable as err:
            self._unavailable(info, err)
            return []
        timings = [
            timed[k]
            if k in timed
            else VariantTiming(info.variants[k], [])
            if cached[k] is None
            else VariantTiming(
                info.variants[k],
                [float(cached[k]["median_ms"])],
                recorded=tuple(map(float, cached[k]["spread_ms"])),
                recorded_estimate=recorded_ms(cached[k].get("estimate_ms")),
            )
            for k in range(len(info.variants))
        ]
        self.timings.setdefault(info.key, {})[w] = timings
        try:
            winner = self._checked_pick(info, timings)
        except WorkerUnavailable as err:
            self._unavailable(info, err)
            return []
        index = info.variants.index(winner.variant)
        with phase(self.profile, "tuning cache (write)"):
            entry = self._record(
                info,
                timings,
                key,
                self.strategy,
                values,
                winner,
                measured=[timed[k] for k in sorted(timed)],
                ruler="bench",
                final=info.key not in self._cut_short,
            )
        with phase(self.profile, "select"):
            self._decide(info, values, index, entry, None)
        return [timed[k] for k in sorted(timed)]

    def _measure(self, info: GroupInfo, workload: str, benches: list[str], ks: list[int]) -> dict[int, VariantTiming]:
        """Time variants ``ks`` with their benchmark entries ``benches`` on tuning workload
        ``workload`` (its cache key), by :attr:`benchmarker`; in the tuning worker where
        ``isolation`` asks for it, where a variant that fails is dropped (:meth:`_fail`) and
        left out of the result. Raises WorkerUnavailable."""
        if not ks:
            return {}
        if self._isolated(info, workload, ks):
            samples, failed = measure_variants(
                self._worker(), self.benchmarker, info, workload, ks, benches, deadline=self._deadline
            )
            for k, err in failed.items():
                self._fail(info, k, err, workload)
            self._proven.update((self._fingerprint(info, k), workload) for k in samples)
            return {k: VariantTiming(info.variants[k], list(samples[k])) for k in ks if k in samples}
        fns = [self.functions[benches[k]] for k in ks]
        samples = self.benchmarker.measure(info, workload, ks, [lambda n, f=f: f(n) for f in fns])
        return {k: VariantTiming(info.variants[k], list(ts)) for k, ts in zip(ks, samples)}

    def _checked_pick(self, info: GroupInfo, timings: list[VariantTiming]) -> VariantTiming:
        """:func:`pick` among the variants that agree with the default variant on the fake data
        (checked lazily: only a variant about to win is run). Disagreeing variants are dropped
        for this module (:attr:`dropped`) with a note."""
        dropped = self.dropped.setdefault(info.key, set())
        while True:
            if info.default in self._failed(info):
                return timings[info.default]  # it failed: nothing can be checked against it (a note says so)
            candidates = [t for k, t in enumerate(timings) if k not in dropped and t.times_ms] or [timings[info.default]]
            best = pick(candidates)
            k = info.variants.index(best.variant)
            if not info.check or k == info.default or not info.check[k] or k in self._agreeing.setdefault(info.key, set()):
                return best
            if self._checks_out(info, k):
                return best

    def _check_all(self, info: GroupInfo) -> None:
        """Cross-check every variant against the default one (once per group), dropping those
        that disagree (round-robin runs variants on live calls, whose results are returned)."""
        done = self._agreeing.setdefault(info.key, set())
        dropped = self.dropped.setdefault(info.key, set())
        self._recorded_failures(info, tuning_workload_key(info))
        own = self._deadline is None
        if own:
            self._deadline = time.monotonic() + self.group_timeout_s
        try:
            for k in range(len(info.variants)):
                if info.default in self._failed(info):  # no variant can be checked against it
                    dropped.update(range(len(info.variants)))
                    break
                if k == info.default or k in done or k in dropped or k >= len(info.check) or not info.check[k]:
                    continue
                self._checks_out(info, k)
        except WorkerUnavailable as err:  # nothing can be checked: nothing but the default runs live
            self._unavailable(info, err)
            dropped.update(k for k in range(len(info.variants)) if k != info.default)
        finally:
            if own:
                self._deadline = None

    def _checks_out(self, info: GroupInfo, k: int) -> bool:
        """Cross-check variant ``k`` against the default: remember an agreeing one, drop (with a
        note) one that differs. Returns whether it agrees."""
        try:
            problem = self._disagreement(info, k)
        except VariantFailure as err:
            self._fail(info, info.default if getattr(err, "reference", False) else k, err, tuning_workload_key(info))
            return False
        if problem is None:
            self._agreeing.setdefault(info.key, set()).add(k)
            return True
        self.dropped.setdefault(info.key, set()).add(k)
        against, why = self._against.get(info.key, ("reference" if info.reference else "default", ""))
        how = Baseline([], against=against, why=why).describe(info.variants[info.default])
        self.drop_reasons.setdefault(info.key, {})[info.variants[k]] = f"differs: on the fake data {how} ({problem})"
        self.notes[info.key] = f"{info.key}: variant {info.variants[k]} was dropped: on the fake data {how} ({problem})"
        return False

    def _disagreement(self, info: GroupInfo, k: int) -> str | None:
        """Why variant ``k``'s check results differ from the default variant's, or None; in the
        tuning worker where ``isolation`` asks for it (raises VariantFailure, with
        ``.reference`` True when the default variant's run failed, or WorkerUnavailable).

        With the group's ``compare`` entry (modules of this release), the results stay on the
        device: the entry counts, per result, the elements that differ beyond
        :data:`CHECK_TOLERANCES` (:func:`results_agree`'s rule), and only those counts come to
        the host; the full results are copied and compared on the host only to describe a
        difference that was found. Without it (fp8 results, modules of earlier releases) both
        results are copied and compared on the host."""
        workload = tuning_workload_key(info)
        if self._isolated(info, workload, [info.default, k]):
            with phase(self.profile, "cross-check (worker)"):
                worker = self._worker()
                problem = worker.check(
                    info.check[info.default],
                    info.check[k],
                    self._deadline,
                    what="its check run",
                    reference_what="the default variant's check run",
                    compare=info.compare,
                    accurate=info.reference,
                )
                self._against[info.key] = worker.last_against
                return problem
        ref = self._references.get(info.key)
        if ref is None:
            with phase(self.profile, "cross-check: device runs"):
                default = as_list(self._invoker(info.check[info.default])())
                accurate = as_list(self._invoker(info.reference)()) if info.reference else None
            ref = self._references[info.key] = baseline(default, accurate, self.profile)
        with phase(self.profile, "cross-check: device runs"):
            out = as_list(self._invoker(info.check[k])())
        compare = self._invoker(info.compare) if info.compare else None
        self._against[info.key] = (ref.against, ref.why)
        return disagreement(ref.expected, out, compare, self.profile, ref.tolerances)

    def autotune(self) -> dict[str, list[VariantTiming]]:
        """Tune every group (``@__autotune``'s job; the cache answers when it can). A tuning
        worker started meanwhile is ended when all are tuned."""
        try:
            return {key: self.tune_group(key) for key in self.groups}
        finally:
            self.close_worker()

    def bench(
        self, group: str, variant: int, warmup_ms: float | None = None, rep_ms: float | None = None, workload: int = 0
    ) -> VariantTiming:
        """Time variant ``variant`` of ``group`` on its tuning workload ``workload`` (ms per run)."""
        info = self.group(group)
        works = info.tuning_workloads()
        if not works:
            raise ValueError(
                f"{info.key} has no benchmark entries (built without tune_workload for its host's dynamic "
                "arguments); give it tune_workload(...), or time it on live calls (strategy='round-robin' "
                "with allow_unchecked=True: its variants cannot be checked)"
            )
        if not works[workload].bench[variant]:
            raise ValueError(
                f"{info.key} has no benchmark entry for {info.variants[variant]}: the dispatch tuning measures may not run "
                "it (the kernel's prune_configs_by does not keep it for that dispatch's arguments)"
            )
        fn = self.functions[works[workload].bench[variant]]
        (samples,) = self.benchmarker.measure(
            info, "x".join(works[workload].tune_args), [variant], [lambda n: fn(n)], warmup_ms=warmup_ms, rep_ms=rep_ms
        )
        return VariantTiming(info.variants[variant], list(samples))
