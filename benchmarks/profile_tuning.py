"""Where the time of one tuning goes (GPU): the phase profile of ``AutotunedModule.autotune()``.

    python benchmarks/profile_tuning.py .gpu_bench/mm_8192x8192x8192.vmfb [--search race] [--runs 2]

Loads the module (driver cuda, no tuning cache) and tunes it ``--runs`` times; per run prints
the wall time, the pick and the phase profile (``AutotunedModule(profile=True)``: warm-up,
probe and timed calls, the search's host side, the cross-check's device runs, host copies and
comparison, the tuning cache; dispatches run and the kernel time they account for). With a
runtime that predates the profile option (``TypeError``), ``cProfile``'s 25 most expensive
calls (cumulative) stand in. Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vmfb")
    ap.add_argument("--search", default=None, help="race or exhaustive (default: the runtime's default)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--driver", default="cuda")
    args = ap.parse_args()
    from autotune_export.runtime.tuner import AutotunedModule

    kw = {"search": args.search} if args.search else {}
    t0 = time.perf_counter()
    try:
        mod = AutotunedModule(args.vmfb, driver=args.driver, cache=None, profile=True, **kw)
        built_in = True
    except TypeError:
        mod = AutotunedModule(args.vmfb, driver=args.driver, cache=None, **kw)
        built_in = False
    print(f"load {time.perf_counter() - t0:.3f} s; search {getattr(mod, 'search', '?')}; "
          f"groups {', '.join(f'{g.key} ({len(g.variants)} variants)' for g in mod.groups.values())}", flush=True)
    for run in range(args.runs):
        prof = None if built_in else cProfile.Profile()
        t = time.perf_counter()
        if prof is not None:
            prof.enable()
        mod.autotune()
        if prof is not None:
            prof.disable()
        wall = time.perf_counter() - t
        print(f"run {run}: tuning wall {wall:.3f} s, picks {mod.chosen}", flush=True)
        if prof is not None:
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
            print(out.getvalue(), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as err:  # noqa: BLE001 - a failed run says why and exits 1
        print(f"FAILED: {type(err).__name__}: {err}", file=sys.stderr)
        sys.exit(1)
