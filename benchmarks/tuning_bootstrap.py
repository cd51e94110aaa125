"""Bootstrap replay of the runtime's default search on the H200's recorded calls (issue 24's
"Done when": a pick within 1% of the ncu-fastest in every run, at most ~0.2x triton.autotune's
tuning wall), on the CPU, no wall clock.

    python benchmarks/tuning_bootstrap.py [--boot 200] [--root CHECKOUT] [--data FILE] [--cases a,b]

The data (tests/unit/data/h200_tuning_calls.json) are runs of ``benchmarks/tuning_vs_triton.py``
on the H200 (sets ``s6``, ``s8``): per case and run, every benchmark-entry call the search made
(variant, iterations, ms; one iteration is 8 back-to-back dispatches in one call), the run's
``autotune()`` wall, ncu's ``gpu__time_duration`` per variant (the ruler) and triton.autotune's
walls.

Each recorded run becomes a model of its own calls (:class:`RecordedRun`): a call of variant
``k`` with as many iterations as its calls after the first (the search's timed calls, sized
from that first, a single probe) takes one of those recorded calls, drawn at random (seeded; the first variant's calls of the warm-up, as many as the
run's warm-up had, from the run's warm-up calls: a device still warming up); for a size the run
never called, ``F + 8 n t``, ``t`` one
of ``k``'s per-dispatch times in that run (from its calls of the largest size: ``(ms - F) /
8n``) and ``F`` the run's per-call cost (the median over its variants of the intercept of their
one-iteration and largest calls). So every draw keeps the run's level, drift and noise, and
what the harness could and could not tell apart in it. The very first call of a replay is the
run's first call (executable load). The search is the runtime's own, unchanged:
``WallClock(clock=...).measure`` on :class:`autotune_export.runtime.timing.SimulatedBench`
entries whose calls advance a simulated clock; the pick is ``timing.pick`` of its samples, as
``tune_group`` picks (the cross-check aside). ``--root``: another checkout's ``autotune_export``
(whose ``WallClock`` may lack ``clock=``: ``time.perf_counter`` is then patched to the simulated
clock), to compare rules on the same draws.

Prints per case: the share of draws whose pick is within 1% of the ncu-fastest (all runs, and
per run), and the simulated tuning cost over triton.autotune's median wall (median and 90th
percentile over draws): the calls' simulated ms plus what the recorded run spent outside its
calls (cross-check, cache, host side). Exits 1 when a case is under 99% within 1% or its median
ratio is over 0.2.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "unit", "data", "h200_tuning_calls.json")
UNROLL = 8


def load(path: str = DATA) -> dict:
    """The recorded runs: ``{"sets": {set: {"cases": {case: {"variants", "ncu_us",
    "triton_wall_s", "runs": [{"pick", "wall_s", "calls": [[k, n, ms], ...]}]}}}}}``."""
    with open(path) as f:
        return json.load(f)


class RecordedRun:
    """The calls of one recorded run, as a model to draw calls from (module docstring).

    ``run``: ``{"calls": [[k, n, ms], ...], "wall_s": s}``. :attr:`fixed_ms` is ``F``,
    :attr:`per_run` the per-dispatch times (ms) per variant, :attr:`outside_ms` what the run
    spent outside its calls (ms)."""

    def __init__(self, run: dict, count: int):
        calls = [(int(k), int(n), float(ms)) for k, n, ms in run["calls"]]
        self.first = calls[0]
        # The warm-up: the first variant's calls of one and two iterations before any other
        # variant's (its first sample may be among them).
        w = 1
        while w < len(calls) and calls[w][0] == 0 and calls[w][1] <= 2:
            w += 1
        self.warm: dict[int, list[float]] = {}
        for _, n, ms in calls[1:w]:
            self.warm.setdefault(n, []).append(ms)
        self.warm_calls = w - 1
        self.by: dict[tuple[int, int], list[float]] = {}
        for k, n, ms in calls[w:]:
            self.by.setdefault((k, n), []).append(ms)
        for n, ms in self.warm.items():  # a first variant sized to one or two iterations
            if (0, n) not in self.by and not any(kk == 0 for kk, _ in self.by):
                self.by[(0, n)] = list(ms)
        intercepts = []
        for k in range(count):
            sizes = sorted(n for kk, n in self.by if kk == k)
            if len(sizes) >= 2 and sizes[0] == 1:
                n = sizes[-1]
                one, big = statistics.median(self.by[(k, 1)]), statistics.median(self.by[(k, n)])
                intercepts.append((n * one - big) / (n - 1))
        ones = [ms for (k, n), v in self.by.items() if n == 1 for ms in v] + self.warm.get(1, [])
        self.fixed_ms = min(max(0.0, statistics.median(intercepts)), min(ones)) if intercepts else 0.0
        self.per_run: dict[int, list[float]] = {}
        #: Per variant, the size of its calls after the first (the largest it made).
        self.sized: dict[int, int] = {}
        for k in range(count):
            sizes = sorted(n for kk, n in self.by if kk == k)
            if sizes:
                n = self.sized[k] = sizes[-1]
                self.per_run[k] = [max(ms - self.fixed_ms, 1e-3) / (UNROLL * n) for ms in self.by[(k, n)]]
        self.outside_ms = float(run["wall_s"]) * 1e3 - sum(ms for _, _, ms in calls)

    def call_model(self, seed: int):
        """A function ``(k, n, i) -> ms`` drawing calls of this run (seeded)."""
        rng = random.Random(seed)
        state = {"calls": 0}

        def call(k: int, n: int, i: int) -> float:
            state["calls"] += 1
            if state["calls"] == 1 and (k, n) == self.first[:2]:
                return self.first[2]
            if k == 0 and state["calls"] <= 1 + self.warm_calls and self.warm.get(n):
                return rng.choice(self.warm[n])
            got = self.by.get((k, n))
            if got and n == self.sized.get(k):
                return rng.choice(got)
            return self.fixed_ms + UNROLL * n * rng.choice(self.per_run[k])

        return call


def replay(timing_module, model, count: int) -> tuple[list[list[float]], float]:
    """The default search of ``timing_module`` (``WallClock().measure``) on entries whose calls
    take ``model(k, n, i)`` ms of a simulated clock; returns (samples per variant, ms spent)."""

    class Info:
        unroll = UNROLL

    if "call_ms" in getattr(timing_module.SimulatedBench.__init__, "__code__").co_varnames:
        bench = timing_module.SimulatedBench(count, None, UNROLL, call_ms=model)
        runs, clock = bench.runs, bench.clock
    else:  # an older checkout: its own entries
        bench = _Entries(count, model)
        runs, clock = bench.runs, bench.clock
    try:
        wall = timing_module.WallClock(clock=clock)
        samples = wall.measure(Info, "w", list(range(count)), runs)
    except TypeError:  # a WallClock without clock=: its search reads time.perf_counter
        real = time.perf_counter
        time.perf_counter = clock
        try:
            samples = timing_module.WallClock().measure(Info, "w", list(range(count)), runs)
        finally:
            time.perf_counter = real
    return samples, clock() * 1e3


class _Entries:
    """Benchmark entries on a simulated clock for checkouts whose SimulatedBench lacks
    ``call_ms``: a call of ``k`` with ``n`` iterations takes ``model(k, n, i)`` ms."""

    def __init__(self, count, model):
        self.now, self.model = 0.0, model
        self.calls = [0] * count
        self.runs = [self._run(k) for k in range(count)]

    def clock(self) -> float:
        return self.now

    def _run(self, k):
        def run(n):
            i = self.calls[k]
            self.calls[k] += 1
            self.now += self.model(k, n, i) / 1e3

        return run


def pick_index(timing_module, samples) -> int:
    """The variant ``timing.pick`` chooses from ``samples`` (variants without samples left out,
    as ``tune_group`` leaves them)."""
    timings = [timing_module.VariantTiming(str(k), s) for k, s in enumerate(samples) if s]
    return int(timing_module.pick(timings).variant)


def evaluate(timing_module, case: dict, boot: int, seed0: int = 0) -> dict:
    """``boot`` draws per recorded run of ``case``: per run the share within 1% of the
    ncu-fastest, and over all draws that share and the cost ratios (sorted)."""
    ncu = case["ncu_us"]
    best = min(ncu)
    triton_ms = statistics.median(case["triton_wall_s"]) * 1e3
    per_run, ratios, good_all, picks = [], [], 0, {}
    for r, run in enumerate(case["runs"]):
        rec = RecordedRun(run, len(ncu))
        good = 0
        for b in range(boot):
            samples, ms = replay(timing_module, rec.call_model(seed0 + 1000 * r + b), len(ncu))
            k = pick_index(timing_module, samples)
            picks[k] = picks.get(k, 0) + 1
            good += ncu[k] <= 1.01 * best
            ratios.append((ms + rec.outside_ms) / triton_ms)
        per_run.append(good / boot)
        good_all += good
    ratios.sort()
    return {
        "within": good_all / (boot * len(case["runs"])),
        "per_run": per_run,
        "ratio_p50": statistics.median(ratios),
        "ratio_p90": ratios[min(len(ratios) - 1, int(0.9 * len(ratios)))],
        "picks": dict(sorted(picks.items())),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boot", type=int, default=200, help="draws per recorded run")
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--cases", default="", help="comma-separated set:case names (default all)")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.root))
    from autotune_export.runtime import timing

    data = load(args.data)
    want = set(filter(None, args.cases.split(",")))
    ok = True
    print(f"{'set':<4} {'case':<20} {'within 1%':>9} {'per run':<18} {'cost/triton p50 p90':>20}  picks")
    for set_name, s in data["sets"].items():
        for name, case in s["cases"].items():
            if want and f"{set_name}:{name}" not in want and name not in want:
                continue
            e = evaluate(timing, case, args.boot)
            ok &= e["within"] >= 0.99 and e["ratio_p50"] <= 0.2
            runs = " ".join(f"{x:.2f}" for x in e["per_run"])
            print(
                f"{set_name:<4} {name:<20} {e['within']:>8.1%} {runs:<18} {e['ratio_p50']:>9.3f} {e['ratio_p90']:>6.3f}"
                f"  {e['picks']}",
                flush=True,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
