"""Replay the runtime's default search (``WallClock``'s race) offline, on a simulated clock, against
the H200's recorded timings (no GPU, no wall clock: the decisions are the runtime's own code's).

    python benchmarks/tuning_replay.py [--seeds 300] [--root CHECKOUT] [--data tests/unit/data/h200_tuning_mm9.json]

``--root``: the checkout whose ``autotune_export`` is replayed (default: this one), so the rule of
another commit can be compared on the same draws. The data (tests/unit/data/h200_tuning_mm9.json)
are the H200 runs of ``benchmarks/tuning_vs_triton.py`` (issue 24): per case and run, each
variant's median ms per dispatch and sample count, triton.autotune's walls, ncu's times.

Two replays per case:

* ``recorded``: each variant's calls take, in turn, the per-dispatch times recorded in the three
  runs (the run named first, then the others, cycled): the H200's own values, late calls
  included (8192^3 run 2: variant 2 at 1.912 ms, 1.2x its other runs).
* ``model``: ``--seeds`` draws of a noise model fitted to those runs (:func:`model_bench`): a
  call lasts ``0.05 ms + n * 8 * t_k * (1 + N(0, 1.5%))``, plus, with probability 5%, a delay
  of U(0.2, 3.5) ms (the late calls seen: 2.5 ms at 8192^3, 3.4 ms at 4096^3), ``t_k`` the
  variant's median over the runs.

Prints per case the share of picks within 1% of the fastest (by ``t_k``), the simulated tuning
wall (median, 90th percentile, max; race only: our cross-check and cache add ~10 ms on the
H200) and triton.autotune's recorded median wall; exits 1 when a pick of the model replays is
not within 1% in at least 99% of draws.
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
DATA = os.path.join(ROOT, "tests", "unit", "data", "h200_tuning_mm9.json")
UNROLL = 8
OVERHEAD_MS = 0.05


def load(path: str = DATA) -> dict:
    """The recorded H200 runs: ``{"cases": {case: {"variants", "runs": [{"median_ms",
    "samples", "pick", "wall_s"}], "triton_wall_s", "ncu_us"}}}``."""
    with open(path) as f:
        return json.load(f)


def truth(case: dict) -> list[float]:
    """Per variant, its median ms per dispatch over the recorded runs."""
    n = len(case["variants"])
    return [statistics.median(r["median_ms"][k] for r in case["runs"]) for k in range(n)]


class _Entries:
    """Benchmark entries on a simulated clock: run ``k`` with ``n`` iterations lasts
    ``OVERHEAD_MS + n * UNROLL * per_run(k, i) + late(k, i)`` ms (``i``: the call's index among
    ``k``'s calls)."""

    def __init__(self, count, per_run, late=None):
        self.now, self.per_run, self.late = 0.0, per_run, late
        self.calls = [0] * count
        self.runs = [self._run(k) for k in range(count)]

    def _run(self, k):
        def run(n):
            i = self.calls[k]
            self.calls[k] += 1
            self.now += (OVERHEAD_MS + n * UNROLL * self.per_run(k, i) + (self.late(k, i) if self.late else 0.0)) / 1e3

        return run


def replay(timing_module, entries: _Entries) -> tuple[list[list[float]], float]:
    """Run the default search (``WallClock().measure``) of ``timing_module`` on ``entries``
    with ``time.perf_counter`` reading the simulated clock; returns (samples, wall ms)."""

    class Info:
        unroll = UNROLL

    real = time.perf_counter
    time.perf_counter = lambda: entries.now
    try:
        samples = timing_module.WallClock().measure(Info, "w", list(range(len(entries.runs))), entries.runs)
    finally:
        time.perf_counter = real
    return samples, entries.now * 1e3


def recorded_entries(case: dict, first_run: int) -> _Entries:
    """Entries whose calls take the recorded per-dispatch times: run ``first_run``'s first,
    then the other runs', cycled."""
    order = [first_run] + [r for r in range(len(case["runs"])) if r != first_run]
    seqs = [[case["runs"][r]["median_ms"][k] for r in order] for k in range(len(case["variants"]))]
    return _Entries(len(seqs), lambda k, i: seqs[k][i % len(seqs[k])])


def model_entries(case: dict, seed: int, sigma: float = 0.015, late_p: float = 0.05, late_ms=(0.2, 3.5)) -> _Entries:
    """Entries of the noise model (module docstring), seeded."""
    t = truth(case)
    rng = random.Random(seed)
    return _Entries(
        len(t),
        lambda k, i: t[k] * (1 + rng.gauss(0.0, sigma)),
        lambda k, i: rng.uniform(*late_ms) if rng.random() < late_p else 0.0,
    )


def pick_index(timing_module, samples) -> int:
    timings = [timing_module.VariantTiming(str(k), s) for k, s in enumerate(samples)]
    return int(timing_module.pick(timings).variant)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--data", default=DATA)
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.root))
    from autotune_export.runtime import timing

    data = load(args.data)
    ok = True
    print(f"{'case':<20} {'replay':<9} {'within 1%':>10} {'wall ms p50/p90/max':>22} {'triton ms':>9}")
    for name, case in data["cases"].items():
        t = truth(case)
        best = min(t)
        tri = statistics.median(case["triton_wall_s"]) * 1e3
        for kind, makes in (
            ("recorded", [lambda r=r: recorded_entries(case, r) for r in range(len(case["runs"]))]),
            ("model", [lambda s=s: model_entries(case, s) for s in range(args.seeds)]),
        ):
            good, walls = 0, []
            for make in makes:
                samples, wall = replay(timing, make())
                good += t[pick_index(timing, samples)] <= 1.01 * best
                walls.append(wall)
            walls.sort()
            share = good / len(makes)
            if kind == "model" and share < 0.99:
                ok = False
            p90 = walls[min(len(walls) - 1, int(0.9 * len(walls)))]
            print(
                f"{name:<20} {kind:<9} {good:>4}/{len(makes):<5} "
                f"{statistics.median(walls):>8.0f}/{p90:.0f}/{walls[-1]:.0f} {tri:>9.0f}"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
