"""``autotune-export tune MODULE.vmfb``: tune a module's groups and print the variants' times.

::

    autotune-export tune MODULE.vmfb [--device cuda] [--json] [--report DIR]
                    [--results R.json] [--warmup MS] [--rep MS] [--flush-l2] [--no-cache]
    python -m autotune_export.tools.tune MODULE.vmfb ...     (the same, on a machine that has
                                                              iree-base-runtime and numpy only)

Prints, per group, each variant's median time per run and its spread (20th-80th percentile,
as Triton's ``do_bench`` quantiles) in milliseconds, relative to the best, and marks the
winner. ``--json`` prints the same as JSON; ``--report DIR`` also writes report.md,
report.json and report.png. Results are stored in the tuning cache (``--results`` names the
file; default: ``tuning.json`` in the cache folder), which ``autotune-export --tuning-results``
freezes into the IR. A group the cache answers is not measured again: the table, the JSON and
the report show the medians and spreads the cache stored when it was measured (marked
``cache``; no samples). ``--no-cache`` always measures and stores nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from autotune_export.runtime.tuner import AutotunedModule, TuningCache, VariantTiming
from autotune_export.tools.report import RecordedTiming

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


def _recorded(module: AutotunedModule, key: str) -> list[RecordedTiming]:
    """The timings the tuning cache stored for group ``key`` (in the group's variant order), or
    [] when the cache has none for it."""
    entry = module.cache_entry(key) if module.sources.get(key) == "cache" else None
    if not entry or not isinstance(entry.get("median_ms"), dict):
        return []
    medians, spreads = entry["median_ms"], entry.get("spread_ms") or {}
    out = []
    for variant in module.groups[key].variants:
        if not isinstance(medians.get(variant), (int, float)):
            continue
        spread = spreads.get(variant)
        ok = isinstance(spread, (list, tuple)) and len(spread) == 2 and all(isinstance(x, (int, float)) for x in spread)
        out.append(RecordedTiming(variant, float(medians[variant]), tuple(spread) if ok else None))
    return out


def _timings(module: AutotunedModule, measured: dict[str, list[VariantTiming]]) -> dict[str, list]:
    """Per group: what was measured now, else what the tuning cache recorded (may be [])."""
    return {key: measured.get(key) or _recorded(module, key) for key in module.groups}


def _rows(module: AutotunedModule, timings: dict[str, list]) -> list[dict]:
    rows = []
    for key, info in module.groups.items():
        ts = timings.get(key) or []
        best = min((t.median_ms for t in ts), default=None)
        for t in ts:
            lo, hi = t.spread_ms if t.spread_ms is not None else (t.median_ms, t.median_ms)
            rows.append({
                "group": key,
                "variant": t.variant,
                "median_ms": t.median_ms,
                "p20_ms": lo,
                "p80_ms": hi,
                "samples": len(t.times_ms),
                "relative": t.median_ms / best if best else None,
                "winner": t.variant == module.chosen[key],
                "source": module.sources[key],
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
            ("<- winner" if r["winner"] else "") + (" (cache)" if r["winner"] and r.get("source") == "cache" else ""),
        ))
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``autotune-export tune``; returns the exit status (1 on user errors)."""
    args = _parser().parse_args(argv)
    if not os.path.isfile(args.module):
        print(f"{args.module}: error: no such module file", file=sys.stderr)
        return 1
    with open(args.module, "rb") as f:
        head = f.read(8)
    if not (head.startswith(b"PK\x03\x04") or head[4:8] == b"IREE"):  # a .vmfb: zip, or a bare flatbuffer
        print(f"{args.module}: error: not a .vmfb (an IREE module); tune takes what `autotune-export IN.mlir "
              "--emit vmfb -o OUT.vmfb` builds", file=sys.stderr)
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
    timings = _timings(module, module.autotune())
    rows = _rows(module, timings)
    if args.report:
        from autotune_export.tools.report import write_report

        meta = {"module": args.module, "device": module.identity, "module_sha256": module.module_sha256}
        cached = {key: module.cache_entry(key) for key in module.groups if module.sources[key] == "cache"}
        if cached:
            where = str(module.cache.path) if module.cache is not None else "?"
            meta["from tuning cache"] = {key: f"measured {e.get('time', '?')} ({e.get('strategy', '?')}), {where}"
                                         for key, e in cached.items() if e}
        write_report(args.report, {k: v for k, v in timings.items() if v}, meta)
    if args.json:
        print(json.dumps({"module": args.module, "device": module.identity, "module_sha256": module.module_sha256,
                          "variants": rows}, indent=1))
    else:
        print(format_table(rows))
    return 0


if __name__ == "__main__":  # python -m autotune_export.tools.tune: with iree.runtime alone (no compiler, no Triton)
    sys.exit(main())
