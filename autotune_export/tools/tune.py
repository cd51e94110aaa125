"""``autotune-export tune MODULE.vmfb``: tune a module's groups and print the variants' times.

::

    autotune-export tune MODULE.vmfb [--device cuda] [--json] [--report DIR]
                    [--results R.json] [--warmup MS] [--rep MS] [--flush-l2] [--no-cache]

Prints, per group, each variant's median time per run and its spread (20th-80th percentile,
as Triton's ``do_bench`` quantiles) in milliseconds, relative to the best, and marks the
winner. ``--json`` prints the same as JSON; ``--report DIR`` also writes report.md,
report.json and report.png. Results are stored in the tuning cache (``--results`` names the
file; default: ``tuning.json`` in the cache folder), which ``autotune-export --tuning-results``
freezes into the IR. ``--no-cache`` always measures and stores nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from autotune_export.runtime.tuner import AutotunedModule, TuningCache, VariantTiming

__all__ = ["main", "format_table"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autotune-export tune", description="Tune the groups of an autotune-export module.")
    p.add_argument("module", help="a .vmfb built by autotune-export")
    p.add_argument("--device", default="cuda", help="IREE driver: cuda, local-task, local-sync (default: cuda)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--report", metavar="DIR", default=None, help="also write report.md, report.json and report.png into DIR")
    p.add_argument("--results", metavar="FILE", default=None, help="tuning-results file to read and update (default: the cache's tuning.json)")
    p.add_argument("--no-cache", action="store_true", help="measure every group and store nothing")
    p.add_argument("--warmup", type=float, default=25.0, metavar="MS", help="warmup budget per variant in ms (default: 25)")
    p.add_argument("--rep", type=float, default=100.0, metavar="MS", help="measurement budget per variant in ms (default: 100)")
    p.add_argument("--flush-l2", action="store_true", help="flush the GPU's L2 cache before each timed run")
    return p


def _rows(module: AutotunedModule, timings: dict[str, list[VariantTiming]]) -> list[dict]:
    rows = []
    for key, info in module.groups.items():
        ts = timings.get(key) or []
        best = min((t.median_ms for t in ts), default=None)
        for t in ts:
            lo, hi = t.spread_ms
            rows.append({
                "group": key,
                "variant": t.variant,
                "median_ms": t.median_ms,
                "p20_ms": lo,
                "p80_ms": hi,
                "samples": len(t.times_ms),
                "relative": t.median_ms / best if best else None,
                "winner": t.variant == module.chosen[key],
            })
        if not ts:
            rows.append({"group": key, "variant": module.chosen[key], "median_ms": None, "p20_ms": None, "p80_ms": None,
                         "samples": 0, "relative": None, "winner": True, "source": module.sources[key]})
    return rows


def format_table(rows: list[dict]) -> str:
    """The rows as an aligned text table (times in ms)."""
    header = ("group", "variant", "median ms", "p20-p80 ms", "x best", "")
    lines = [header]
    for r in rows:
        if r["median_ms"] is None:
            lines.append((r["group"], r["variant"], "-", "-", "-", f"<- chosen ({r.get('source', 'cache')})"))
            continue
        lines.append((
            r["group"],
            r["variant"],
            f"{r['median_ms']:.4f}",
            f"{r['p20_ms']:.4f}-{r['p80_ms']:.4f}",
            f"{r['relative']:.3f}",
            "<- winner" if r["winner"] else "",
        ))
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``autotune-export tune``; returns the exit status (1 on user errors)."""
    args = _parser().parse_args(argv)
    if not os.path.isfile(args.module):
        print(f"{args.module}: error: no such module file", file=sys.stderr)
        return 1
    cache = None if args.no_cache else TuningCache(args.results) if args.results else True
    try:
        module = AutotunedModule(args.module, driver=args.device, cache=cache, warmup_ms=args.warmup,
                                 rep_ms=args.rep, flush_l2=args.flush_l2)
    except ValueError as err:
        print(f"{args.module}: error: {err}", file=sys.stderr)
        return 1
    except RuntimeError as err:
        first = str(err).splitlines()[0].removesuffix(" Exception for last tried follows.")
        hint = ("no CUDA device here?" if args.device.startswith("cuda")
                else "a module built for CUDA needs --device cuda; build with --backend llvm-cpu to run on the CPU")
        print(f"{args.module}: error: cannot load the module on IREE driver '{args.device}' ({hint}): {first}", file=sys.stderr)
        return 1
    timings = module.autotune()
    rows = _rows(module, timings)
    if args.report:
        from autotune_export.tools.report import write_report

        meta = {"module": args.module, "device": module.identity, "module_sha256": module.module_sha256}
        write_report(args.report, {k: v for k, v in timings.items() if v}, meta)
    if args.json:
        print(json.dumps({"module": args.module, "device": module.identity, "module_sha256": module.module_sha256,
                          "variants": rows}, indent=1))
    else:
        print(format_table(rows))
    return 0
