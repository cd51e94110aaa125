"""Live calls of an :class:`~autotune_export.runtime.tuner.AutotunedModule`: the call path,
round-robin's rotation through a group's variants on live workloads (timed, locked on the
fastest), and the per-workload table's slots that tuning, round-robin and tuning-results files
fill (:class:`LiveCalls`, a mixin of ``AutotunedModule``; its state is set up in
``AutotunedModule.__init__``)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from autotune_export.contract import AUTOTUNE_FUNCTION, choose_result
from autotune_export.contract import GroupReflection as GroupInfo
from autotune_export.runtime.calls import argument_bucket, device_arguments, to_host, values_key, workload_key
from autotune_export.runtime.records import recorded_ms
from autotune_export.runtime.timing import VariantTiming, pick


class LiveCalls:
    """Calling a module's functions, round-robin tuning on live calls, and the per-workload
    table (slots) of a group: the part of :class:`~autotune_export.runtime.tuner.AutotunedModule`
    that runs on every call."""

    def __call__(self, function: str, *args, device: bool | None = None):
        """Call exported ``function``; returns its results.

        Arguments: numpy arrays and scalars, or ``iree.runtime.DeviceArray`` values already on
        the module's device (no copy: :meth:`device_array` makes one). Results are numpy arrays,
        or DeviceArrays with ``device=True`` (default: the module's ``device_results``). DLPack
        arrays (torch, jax, cupy) are not taken as they are: iree.runtime 3.13 has no DLPack
        import; pass ``numpy`` views of host memory or DeviceArrays.

        With the ``"round-robin"`` strategy, a call of a group's host function with a workload
        not seen before runs on the next variant in rotation and is timed, until that workload
        locks on its fastest variant (variants whose live timing the tuning cache holds for this
        workload are not run again; a workload the table already decides, by tuning or
        :meth:`apply_results`, is not timed at all). A workload is what the module can tell apart: for a group
        with a per-workload table, the dispatch's workload values (two argument shapes with equal
        values share one workload, its timings and its choice); otherwise the shapes, dtypes and
        scalar values of the arguments (as Triton's ``key``). While a workload rotates, its
        variant is set through a slot of the table, which the dispatch reads before anything
        else, so each timing belongs to the variant that ran. Each locked workload fills a slot.

        A group whose table holds more workloads than the module has slots (tuned, locked or
        from ``results=``) keeps them all: a call whose workload lost its slot gets it back
        before it runs (slots are reused in turn, oldest first), so every strategy chooses for
        every workload what the frozen module (``--tuning-results``) does.
        """
        args = device_arguments(self._rt, self.config.device, args)  # bf16/fp8 numpy arrays (ml_dtypes)
        if not self._rotating_hosts and not self._spilled:  # the common path: no tuning on live calls
            fn = self._invokers.get(function)
            if fn is not None:
                result = fn(*args)
                return result if (self.device_results if device is None else device) else to_host(result)
        device = self.device_results if device is None else device
        for spilled in self._spilled.get(function, ()):
            self._refill_slot(spilled, args)
        info = self._rotating_hosts.get(function)
        if info is not None and not self._per_workload(info) and info.key in self._locked():
            del self._rotating_hosts[function]  # tuned, cached or pinned meanwhile: nothing to rotate
            info = None
        if info is None:
            if function == AUTOTUNE_FUNCTION:
                # The module's own @__autotune runs each variant once (no clock in the VM);
                # through this runtime the same entry point tunes for real.
                self.autotune()
                return None
            result = self._invoker(function)(*args)
            return result if device else to_host(result)
        bucket = argument_bucket(args)
        values = None
        if self._per_workload(info):  # the module tells workloads apart by their workload values only
            known = self._bucket_values.setdefault(info.key, {})
            values = known.get(bucket)
            if values is None:
                values = known[bucket] = tuple(self._live_workload_values(info, args))
            bucket = values
        buckets = self._rounds.setdefault(info.key, {})
        rounds = buckets.get(bucket)
        if rounds is None and values is not None and values in self.per_workload.get(info.key, {}):
            rounds = buckets[bucket] = _LOCKED  # decided already (tuned, from the cache or results): not timed again
        if rounds is None:  # a workload not seen before
            key = values_key(values) if values is not None else workload_key(args)
            self._live_keys.setdefault(info.key, {})[bucket] = key
            rounds = buckets[bucket] = self._cached_rounds(info, key)
            if self._maybe_lock(info, rounds, key, values):
                rounds = buckets[bucket] = _LOCKED
        if rounds is _LOCKED:
            result = self._invoker(function)(*args)
            return result if device else to_host(result)
        key = self._live_keys[info.key][bucket]
        variant = min((v for v, r in rounds.items() if not r.cached), key=lambda v: len(rounds[v].times))
        index = info.variants.index(variant)
        if values is not None:
            self._set_slot(info, list(values), index, decided=False)
        else:
            self.select(info.key, index)
        result, ms = self.benchmarker.time_call(info, key, index, lambda: self._invoker(function)(*args))
        rounds[variant].times.append(ms)
        if self._maybe_lock(info, rounds, key, values):
            buckets[bucket] = _LOCKED
        return result if device else to_host(result)

    def _locked(self) -> set[str]:
        return {k for k, s in self.sources.items() if s in ("round-robin", "tuned", "cache", "results")}

    def _per_workload(self, info: GroupInfo) -> bool:
        """Whether ``info`` has a run-time table of per-workload choices that live calls can fill."""
        return bool(info.slots and info.workload_of and info.arity)

    def _unchecked(self, info: GroupInfo) -> set[int]:
        """The variants of ``info`` that no check entry can compare with the default (none
        with ``allow_unchecked``): round-robin never runs them on live data."""
        if self.allow_unchecked:
            return set()
        allowed = set(info.tuned_allowed())  # the others never run at the host's dispatch: nothing to check
        return {
            k
            for k in range(len(info.variants))
            if k != info.default and k in allowed and not (k < len(info.check) and info.check[k])
        }

    def _may_rotate(self, info: GroupInfo) -> bool:
        """Whether round-robin may rotate ``info``'s live calls: False (with a note and a
        RuntimeWarning) when a variant other than the default cannot be checked."""
        unchecked = self._unchecked(info)
        if not unchecked:
            return True
        self.notes[info.key] = (
            f"{info.key} is not tuned on live calls: variant{'s' if len(unchecked) > 1 else ''} "
            f"{', '.join(info.variants[k] for k in sorted(unchecked))} cannot be checked against the default variant "
            f"{info.variants[info.default]} (the module has no check entries for the group: it was built without "
            "tune_workload for its host's dynamic arguments), so round-robin leaves it on the default; give the group "
            "tune_workload(...), or pass allow_unchecked=True to run unchecked variants on live data"
        )
        warnings.warn(self.notes[info.key], RuntimeWarning, stacklevel=3)
        return False

    def _cached_rounds(self, info: GroupInfo, key: str) -> dict:
        """The round-robin state of a new live workload ``key``: per variant its timings, taken
        from the tuning cache (ruler ``"live"``) where the cache has them. Variants that the
        cross-check dropped or cannot check (:meth:`_unchecked`) are left out."""
        self._check_all(info)  # live calls return their results: a wrong variant must never run on them
        self._references.pop(info.key, None)
        # The variants the host's dispatch may not run (its own prune_configs_by rejects them:
        # contract.GroupReflection.tuned_allowed) are never rotated there either.
        allowed = info.tuned_allowed()
        dropped = self.dropped.get(info.key, set()) | self._unchecked(info) | (set(range(len(info.variants))) - set(allowed))
        if len(dropped) == len(info.variants):  # even the default failed on the fake data: the program's own choice runs
            dropped = dropped - {info.default if info.default in allowed else allowed[0]}
        rounds = {v: _Rounds([]) for k, v in enumerate(info.variants) if k not in dropped}
        for k, v in enumerate(info.variants):
            if k in dropped:
                continue
            hit = self._cached_timing(info, k, key, "live")
            if hit is not None:
                rounds[v] = _Rounds(
                    [float(hit["median_ms"])] * 3,
                    cached=(float(hit["median_ms"]), *map(float, hit["spread_ms"])),
                    estimate=recorded_ms(hit.get("estimate_ms")),
                )
        return rounds

    def _maybe_lock(self, info: GroupInfo, rounds: dict, key: str, values: tuple | None) -> bool:
        """Lock live workload ``key`` (workload ``values`` for a group with a table, else None)
        on its fastest variant when every variant has ``min_rounds`` timings (or a cached one)
        and the winner's lead is stable (or after ``max_rounds``). Returns whether it locked."""
        fresh = [len(r.times) for r in rounds.values() if not r.cached]
        if fresh and min(fresh) < self.min_rounds:
            return False
        # The first timed call of a variant may include its load: drop it when we can.
        timings = [r.timing(v) for v, r in rounds.items()]
        ranked = sorted(timings, key=lambda t: t.median_ms)
        best, second = ranked[0], ranked[1] if len(ranked) > 1 else None
        stable = second is None or best.quantile(0.8) < second.quantile(0.2)
        if not (stable or not fresh or min(fresh) >= self.max_rounds):
            return False
        winner = pick(timings)
        index = info.variants.index(winner.variant)
        measured = [t for t, r in zip(timings, rounds.values()) if not r.cached]
        values = list(values) if values is not None else None
        entry = self._record(info, timings, key, "round-robin", values, winner, measured=measured, ruler="live")
        self._decide(info, values, index, entry, "round-robin")
        if values is None:  # no per-workload table: the group's one choice is made
            self._rotating_hosts.pop(info.host, None)
        return True

    def _decide(self, info: GroupInfo, values: list[int] | None, index: int, entry: dict, source: str | None) -> None:
        """Make variant ``index`` the choice of workload ``values`` (a slot of the table; None:
        a group without one) and re-choose the group's own choice, used for every workload the
        table does not hold, from all decisions so far (``entry`` the new one) by the rule the
        frozen module follows too (:func:`autotune_export.contract.choose_result`)."""
        if values is not None:
            self._set_slot(info, values, index)
        made = self.decisions.setdefault(info.key, [])
        made.append({**entry, "variant": info.variants[index]})
        chosen = choose_result(made, info.executable, info.group, info.variants)
        self.select(info.key, chosen["variant"])
        if source is not None:
            self.sources[info.key] = source

    def _live_workload_values(self, info: GroupInfo, args) -> list[int] | None:
        """The dispatch's workload values for a live call (the module's ``workload_of`` entry),
        or None when the group has no per-workload table."""
        if not self._per_workload(info):
            return None
        out = self._invoker(info.workload_of)(*args)
        return [int(v) for v in (out if isinstance(out, (list, tuple)) else [out])]

    def _set_slot(self, info: GroupInfo, values: list[int], index: int, *, decided: bool = True) -> bool:
        """Make ``index`` the choice of the dispatches whose workload values are ``values``: the
        slot already holding ``values``, else the first free slot, else the slots are reused in
        turn (the one filled longest ago first). ``decided``: ``index`` is the workload's
        decision, kept in :attr:`per_workload` (False: a round-robin trial). A group whose
        decisions outnumber its slots is refilled on demand (:meth:`__call__`). False when the
        group has no table (or another arity)."""
        if not info.slots or len(values) != info.arity:
            return False
        table = self._slot_of.setdefault(info.key, {})
        slot = table.get(tuple(values))
        if slot is None:
            taken = set(table.values())
            free = [s for s in range(len(info.slots)) if s not in taken]
            if free:
                slot = free[0]
            else:
                slot = self._next_slot.get(info.key, 0)
                self._next_slot[info.key] = (slot + 1) % len(info.slots)
                for other, s in list(table.items()):
                    if s == slot:
                        del table[other]
                        if other in self.per_workload.get(info.key, {}) and info.workload_of:
                            hosts = self._spilled.setdefault(info.host, [])  # a decision lost its slot: refill on demand
                            if info not in hosts:
                                hosts.append(info)
            table[tuple(values)] = slot
        self._invoker(info.slots[slot])(index, *values)
        if decided:
            self.per_workload.setdefault(info.key, {})[tuple(values)] = info.variants[index]
        return True

    def _refill_slot(self, info: GroupInfo, args) -> None:
        """Before a call of ``info``'s host with ``args``: give its workload back the slot it
        lost (a table with more decisions than slots)."""
        values = tuple(self._live_workload_values(info, args) or ())
        if values in self._slot_of.get(info.key, {}):
            return
        variant = self.per_workload.get(info.key, {}).get(values)
        if variant is not None:
            self._set_slot(info, list(values), info.variants.index(variant))


#: Round-robin state of a live workload that has locked on its variant.
_LOCKED = object()


@dataclass
class _Rounds:
    """Round-robin timings of one variant on one live workload (ms per call); ``cached``:
    (median, p20, p80) from the tuning cache instead, ``estimate`` its recorded estimate."""

    times: list[float]
    cached: tuple | None = None
    #: The estimate the tuning cache recorded (None: none, or not cached).
    estimate: float | None = None

    def timing(self, variant: str) -> VariantTiming:
        if self.cached is not None:
            return VariantTiming(variant, [self.cached[0]], recorded=self.cached[1:], recorded_estimate=self.estimate)
        ts = self.times
        return VariantTiming(variant, ts[1:] if len(ts) > 2 else ts)
