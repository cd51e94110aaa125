"""Who measures: the :class:`Benchmarker` interface the tuner asks, :class:`WallClock` (the
default: the host's clock, :mod:`.sampling`), :class:`GivenTimings` (decisions on given timings:
tests, replays) and :class:`SimulatedBench` (benchmark entries on a simulated clock, for
replays of the wall-clock search). Times are in milliseconds.
"""

from __future__ import annotations

import time
from typing import Callable, Mapping, Protocol, Sequence

from autotune_export.runtime.profile import phase as _phase
from autotune_export.runtime.sampling import CALL_MS, _timed, _wait, loop_bench, race_calls
from autotune_export.runtime.search import race


class Benchmarker(Protocol):
    """What the tuner asks of a benchmarker (times in ms).

    ``measure(info, workload, variants, runs, warmup_ms=None, rep_ms=None)``: per-run samples
    for each variant index in ``variants``, in order; ``runs[i](n)`` is variant
    ``variants[i]``'s benchmark entry (one synchronous call running the group's dispatch ``n *
    info.unroll`` times on the fake data of tuning workload ``workload``, the key the tuning
    cache uses, e.g. ``"tensor<1024xf32>"``); ``warmup_ms``/``rep_ms`` override the budgets
    (None: the benchmarker's own). ``info`` is the group's
    :class:`autotune_export.runtime.tuner.GroupInfo`.

    ``time_call(info, workload, variant, call)``: run ``call()`` (a live call of the group's
    host function with variant index ``variant`` selected for live workload ``workload``) and
    return ``(its result, the time it took in ms)``. The result must be ``call()``'s own: it is
    what the program receives.
    """

    def measure(
        self,
        info,
        workload: str,
        variants: Sequence[int],
        runs: Sequence[Callable[[int], object]],
        *,
        warmup_ms: float | None = None,
        rep_ms: float | None = None,
    ) -> list[list[float]]: ...

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]: ...


def races(search: str, n_variants: int, warmup_ms: float | None, rep_ms: float | None) -> bool:
    """Whether a measurement of ``n_variants`` runs the race (the one rule of every
    benchmarker): the race search, more than one variant, and no per-call ``warmup_ms`` /
    ``rep_ms`` (given ones ask for fixed-budget sampling, as ``bench()`` does)."""
    return search == "race" and n_variants > 1 and warmup_ms is None and rep_ms is None


class WallClock:
    """The default benchmarker: the host's ``time.perf_counter``.

    ``search``: ``"race"`` (the default: :func:`race` over :class:`CallSampler`, calls sized
    from each kernel's own time, ``warmup_ms`` of device warm-up once per group, calls of about
    ``call_ms``, ``race_budget_ms`` for the whole group, warm-up included: None for
    :data:`AUTO_BUDGET_MS_PER_VARIANT` per variant, ``math.inf`` for none) or ``"exhaustive"`` (every variant
    with the full ``warmup_ms``/``rep_ms`` budgets of ``do_bench``, Triton's autotuner's way).
    ``do_bench``: ``f(run, *, unroll, warmup_ms, rep_ms) -> samples`` (default
    :func:`loop_bench`; a custom one, like ``flush``, makes the search exhaustive);
    ``warmup_ms``/``rep_ms``: its budgets per variant (Triton's ``do_bench`` defaults, 25 and
    100 ms); ``flush``: a function run before each timed run (the module's L2 flush entry), then
    one run per sample. A live call is timed from its start until its last result is ready
    (:func:`_wait`). ``profile``: a :class:`autotune_export.runtime.profile.TuningProfile`.
    ``clock``: the race's clock in seconds (None: ``time.perf_counter``; a replay passes
    :class:`SimulatedBench`'s, benchmarks/tuning_replay.py).
    """

    def __init__(
        self,
        *,
        do_bench: Callable | None = None,
        warmup_ms: float = 25.0,
        rep_ms: float = 100.0,
        search: str = "race",
        race_budget_ms: float | None = None,
        flush: Callable[[], object] | None = None,
        race_warmup_ms: float = 25.0,
        call_ms: float = CALL_MS,
        profile=None,
        clock: Callable[[], float] | None = None,
    ):
        self.do_bench = do_bench or loop_bench
        self.clock = clock
        self.warmup_ms, self.rep_ms = warmup_ms, rep_ms
        self.search, self.race_budget_ms = search, race_budget_ms
        self.race_warmup_ms, self.call_ms = race_warmup_ms, call_ms
        self.flush = flush
        self.profile = profile
        #: The calls of the last race (variant index within the measured ones, iterations,
        #: ms), warm-up and probes included: :attr:`CallSampler.log`.
        self.calls: list[tuple[int, int, float]] = []

    def measure(
        self,
        info,
        workload: str,
        variants: Sequence[int],
        runs: Sequence[Callable[[int], object]],
        *,
        warmup_ms: float | None = None,
        rep_ms: float | None = None,
    ) -> list[list[float]]:
        warmup = self.warmup_ms if warmup_ms is None else warmup_ms
        rep = self.rep_ms if rep_ms is None else rep_ms
        if races(self.search, len(runs), warmup_ms, rep_ms) and self.do_bench is loop_bench and self.flush is None:
            return race_calls(
                runs,
                info.unroll,
                budget_ms=self.race_budget_ms,
                warmup_ms=self.race_warmup_ms,
                call_ms=self.call_ms,
                profile=self.profile,
                clock=self.clock,
                log=self.calls,
            )
        if self.flush is not None:
            return [self._flushed_samples(run, warmup, rep) for run in runs]
        with _phase(self.profile, "exhaustive do_bench"):
            return [list(self.do_bench(run, unroll=info.unroll, warmup_ms=warmup, rep_ms=rep)) for run in runs]

    def _flushed_samples(self, run: Callable[[int], object], warmup_ms: float, rep_ms: float) -> list[float]:
        run(1)
        start = time.perf_counter()
        while (time.perf_counter() - start) * 1e3 < warmup_ms:
            run(1)
        times = []
        start = time.perf_counter()
        while len(times) < 5 or (time.perf_counter() - start) * 1e3 < rep_ms:
            _wait(self.flush())
            times.append(_timed(run, 1))
        return times

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]:
        t0 = time.perf_counter()
        result = call()
        _wait(result)
        return result, (time.perf_counter() - t0) * 1e3


class SimulatedBench:
    """Benchmark entries on a simulated clock, for replays of the wall-clock search
    (:func:`race_calls` with ``clock=bench.clock`` and ``runs=bench.runs``): a call of variant
    ``k`` with ``n`` iterations lasts ``overhead_ms + n * unroll * per_run(k, i) + late_ms(k,
    i)`` ms, ``i`` being the index of that call among ``k``'s calls (warm-up and probes
    included), and advances the clock by as much. ``per_run``: ms per dispatch; ``late_ms``: a
    delay of that call beyond its dispatches (None: none); ``call_ms``: instead, a function
    ``(k, n, i) -> ms`` of the whole call (a replay of recorded calls draws them so,
    benchmarks/tuning_replay.py). :attr:`calls` lists, per variant, the ``n`` of each call.
    Nothing here reads a real clock."""

    def __init__(
        self,
        count: int,
        per_run: Callable[[int, int], float] | None,
        unroll: int,
        *,
        overhead_ms: float = 0.0,
        late_ms: Callable[[int, int], float] | None = None,
        call_ms: Callable[[int, int, int], float] | None = None,
    ):
        self.per_run, self.unroll, self.overhead_ms, self.late_ms = per_run, max(1, int(unroll)), overhead_ms, late_ms
        self.call_ms = call_ms
        self.now = 0.0
        self.calls: list[list[int]] = [[] for _ in range(count)]
        self.runs = [self._run(k) for k in range(count)]

    def clock(self) -> float:
        """The simulated time in seconds (as ``time.perf_counter``)."""
        return self.now

    def _run(self, k: int) -> Callable[[int], None]:
        def run(n: int) -> None:
            i = len(self.calls[k])
            self.calls[k].append(n)
            if self.call_ms is not None:
                ms = self.call_ms(k, n, i)
            else:
                ms = self.overhead_ms + n * self.unroll * self.per_run(k, i) + (self.late_ms(k, i) if self.late_ms else 0.0)
            self.now += ms / 1e3

        return run


class GivenTimings:
    """A benchmarker that decides on given timings instead of a clock (tests, replays of
    recorded timings): deterministic, whatever the machine's load.

    ``ms``: the time of a variant in ms, either a mapping from variant name to ms or a function
    ``(group key, variant name, workload) -> ms``, where ``workload`` is the tuning workload's
    key (``"tensor<1024xf32>"``) for benchmarks and the live workload's key for live calls
    (see :meth:`autotune_export.runtime.AutotunedModule.__call__`). A value may also be a
    sequence: the variant's successive samples, in turn (noise, for the search's tests).
    ``search``: ``"race"`` (the default, as :class:`WallClock`'s: :func:`race` on the given
    samples; ``budget_ms`` is then a whole-group budget on a simulated clock that advances by
    each sample's ms times ``info.unroll``, one call of one iteration) or ``"exhaustive"``
    (``samples`` samples of every variant). ``call_overhead_ms`` (race only): replay
    :class:`WallClock`'s search itself instead, :func:`race_calls` (warm-up, calls sized from
    each kernel's time, the default budget when ``budget_ms`` is None) on
    :class:`SimulatedBench` calls: a call of ``n`` iterations of a variant lasts
    ``call_overhead_ms + n * info.unroll * v``, ``v`` the variant's next given value (so a
    sequence is per call, warm-up and probes included; :attr:`sampled` then counts calls). ``execute``: still run each benchmark entry once
    (``run(1)``), so the module's benchmark code is exercised; live calls always run (their
    results are the program's). :attr:`log` records ``(kind, group key, variant name,
    workload)`` per variant measured and per live call, ``kind`` being ``"bench"`` or
    ``"live"``: what the tuner believed it timed; :attr:`sampled` counts the samples per
    ``(group key, variant name)``. Raises KeyError for a variant the mapping does not name.
    """

    def __init__(
        self,
        ms: Mapping[str, float] | Callable[[str, str, str], float],
        *,
        samples: int = 3,
        execute: bool = True,
        search: str = "race",
        budget_ms: float | None = None,
        call_overhead_ms: float | None = None,
    ):
        self.ms = ms
        self.samples = samples
        self.call_overhead_ms = call_overhead_ms
        self.execute = execute
        self.search, self.budget_ms = search, budget_ms
        self.log: list[tuple[str, str, str, str]] = []
        self.sampled: dict[tuple[str, str], int] = {}

    def _ms(self, info, variant: int, workload: str) -> float:
        return self._sample(info, variant, workload, 0)

    def _sample(self, info, variant: int, workload: str, i: int) -> float:
        name = info.variants[variant]
        value = self.ms(info.key, name, workload) if callable(self.ms) else self.ms[name]
        if isinstance(value, (list, tuple)):
            value = value[i % len(value)]
        return float(value)

    def measure(
        self,
        info,
        workload: str,
        variants: Sequence[int],
        runs: Sequence[Callable[[int], object]],
        *,
        warmup_ms: float | None = None,
        rep_ms: float | None = None,
    ) -> list[list[float]]:
        for k, run in zip(variants, runs):
            if self.execute:
                _wait(run(1))
            self.log.append(("bench", info.key, info.variants[k], workload))
        clock = [0.0]

        def sample(i: int) -> float:
            k = variants[i]
            key = (info.key, info.variants[k])
            n = self.sampled.get(key, 0)
            self.sampled[key] = n + 1
            ms = self._sample(info, k, workload, n)
            clock[0] += ms * max(1, info.unroll)
            return ms

        race_search = races(self.search, len(variants), warmup_ms, rep_ms)
        if race_search and self.call_overhead_ms is not None:

            def per_run(i: int, call: int) -> float:
                key = (info.key, info.variants[variants[i]])
                self.sampled[key] = self.sampled.get(key, 0) + 1
                return self._sample(info, variants[i], workload, call)

            bench = SimulatedBench(len(variants), per_run, info.unroll, overhead_ms=self.call_overhead_ms)
            return race_calls(bench.runs, info.unroll, budget_ms=self.budget_ms, clock=bench.clock)
        if race_search:
            return race(sample, len(variants), budget_ms=self.budget_ms, spent_ms=lambda: clock[0])
        return [[sample(i) for _ in range(self.samples)] for i in range(len(variants))]

    def time_call(self, info, workload: str, variant: int, call: Callable[[], object]) -> tuple[object, float]:
        result = call()
        self.log.append(("live", info.key, info.variants[variant], workload))
        return result, self._ms(info, variant, workload)
