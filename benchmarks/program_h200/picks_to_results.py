"""Turn the picks of an earlier run.py report into a tuning-results file for build.py ``--tuning-results``.

    python benchmarks/program_h200/picks_to_results.py REPORT.json R.json [--build tuned]

run.py ``--json`` writes, per build, each group's variants and the index it chose
(``reports[build]["groups"]["<executable>::<group>"]`` with ``variants``, ``chosen`` and
``times_ms``: ms per call of the group's host function). Reports of run.py from before it
wrote the picks itself (``run.py --tuning-results``) have only that; this script writes them
as decisions of the runtime's tuning-results format through the runtime's own writer
(:class:`autotune_export.runtime.TuningCache`, ``store``), one entry per group: ``executable``,
``group``, ``variant`` (the chosen one's name), ``median_ms`` per timed variant and
``strategy`` naming the report. No device, driver or module hash: the report does not have
them, and ``program --tuning-results`` chooses by executable, group and variant names alone
(:func:`autotune_export.contract.choose_result`). R.json is written anew.

The names must be the ones the frozen build generates: build it with the options the report's
tuned build had (build.py's defaults, or the same ``--max-candidates``/``--max-triton-configs``).
Exit 1 (and no file) when the report has no such build or a group without a timed choice.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from autotune_export.runtime import TuningCache  # noqa: E402


def decisions(report: dict, build: str, source: str) -> list[dict]:
    """The tuning-results entries of ``report``'s ``build`` (run.py's JSON, module docstring).
    Raises ValueError when the build or a group's choice is missing."""
    groups = report.get("reports", {}).get(build, {}).get("groups")
    if not groups:
        raise ValueError(f"the report has no groups of build '{build}'")
    out = []
    for key, g in sorted(groups.items()):
        executable, _, group = key.partition("::")
        chosen, variants, times = g.get("chosen"), g.get("variants", []), g.get("times_ms", [])
        if not group or not isinstance(chosen, int) or not 0 <= chosen < len(variants):
            raise ValueError(f"group '{key}' of build '{build}' has no chosen variant")
        out.append(
            {
                "executable": executable,
                "group": group,
                "variant": variants[chosen],
                "median_ms": {v: t for v, t in zip(variants, times) if t is not None},
                "strategy": f"program_h200/run.py report {source} (per call of @{g.get('host')})",
            }
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", help="run.py --json output")
    ap.add_argument("results", help="the tuning-results file to write")
    ap.add_argument("--build", default="tuned", help="which build's picks (default: tuned)")
    args = ap.parse_args(argv)
    try:
        with open(args.report) as fh:
            entries = decisions(json.load(fh), args.build, os.path.basename(args.report))
    except (OSError, ValueError) as err:
        print(f"{args.report}: error: {err}", file=sys.stderr)
        return 1
    if os.path.exists(args.results):
        os.remove(args.results)
    cache = TuningCache(args.results)
    for entry in entries:
        cache.store(entry)
    for entry in entries:
        print(f"{entry['executable']}::{entry['group']} -> {entry['variant']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
