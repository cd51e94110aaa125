"""``autotune-export tune MODULE.vmfb``: tune a module's groups and print the variants' times.

::

    autotune-export tune MODULE.vmfb [--device cuda] [--json] [--report DIR]
                    [--results R.json] [--search race|exhaustive] [--budget MS] [--warmup MS] [--rep MS]
                    [--flush-l2] [--no-cache] [-q | -v]
                    [--isolation auto|process|none] [--variant-timeout S] [--group-timeout S] [--iree-flag F]
                    [--device-allocator SPEC]
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

Every tuning workload of a group (``tune_workload([...], [...])``) has its rows (a ``workload``
column then appears) and its winner. A variant the cross-check dropped (its results on the fake
data differ from the default variant's) is marked ``dropped`` and never counts as the best.
A variant that faulted, hung past ``--variant-timeout`` or that the runtime refused while tuning
in the worker (``--isolation``, docs/runtime.md) is marked ``dropped: kind: reason``, without times.
``--device-allocator SPEC`` (repeatable) makes the device with IREE's allocator specs
(``AutotunedModule(device_allocators=...)``, e.g. ``caching``); ``--iree-flag=--device_allocator=...``
is a usage error pointing to it (iree.runtime accepts the flag, but a device made by
``iree.runtime.Config`` never reads it).
Notes (e.g. a dropped variant, a group without benchmark entries) go to stderr unless ``-q``;
``-v`` also prints each group's tuning and each workload's choice.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import sys
from typing import Sequence

from autotune_export.runtime.device import AllocatorSpecError
from autotune_export.runtime.records import recorded_ms
from autotune_export.runtime.tuner import AutotunedModule, TuningCache, positive_amount
from autotune_export.support import progress
from autotune_export.tools.report import RecordedTiming
from autotune_export.support.arguments import ArgumentParser

__all__ = ["main", "format_table"]


def _driver_hint(path: str, device: str) -> str:
    """Why module ``path`` may not load on IREE driver ``device``, from the executable formats
    the .vmfb holds (its zip members, ``<executable>_<format>.<ext>``): a CUDA module needs
    ``--device cuda``, an llvm-cpu one (``embedded_elf_*``, ``system_*``) ``local-task`` or
    ``local-sync``."""
    from autotune_export.tools.inspect_objects import vmfb_members

    try:
        with open(path, "rb") as f:
            names = [name for name, _ in vmfb_members(f.read())]
    except OSError:
        names = []
    cuda = any("cuda" in n or "nvptx" in n for n in names)
    cpu = [m.group(1) for n in names for m in [re.search(r"((?:embedded_elf|system_elf|system_dll)_\w+?)\.\w+$", n)] if m]
    if cuda and not cpu:
        return "no CUDA device here?" if device.startswith("cuda") else "a module built for CUDA needs --device cuda"
    if cpu and not cuda:
        return (
            f"a module built for llvm-cpu ({cpu[0]}) runs on --device local-task or local-sync"
            if device not in ("local-task", "local-sync")
            else "the host's CPU cannot run it?"
        )
    if device.startswith("cuda"):
        return "no CUDA device here?"
    return "drivers: cuda for a CUDA module, local-task or local-sync for an llvm-cpu one"


def _positive(flag: str, unit: str):
    """An argparse ``type`` for ``flag``: a finite number of ``unit`` > 0
    (:func:`~autotune_export.runtime.tuner.positive_amount`, the API's check)."""

    def parse(text: str) -> float:
        try:
            return positive_amount(flag, float(text), unit)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a finite number of {unit} > 0, got '{text}'") from None

    return parse


def _iree_flag(text: str) -> str:
    """An argparse ``type`` for ``--iree-flag``: the flag as given, except IREE's
    ``--device_allocator``, a usage error pointing to ``--device-allocator``: iree.runtime's flag
    registry accepts it, but the device :func:`~autotune_export.runtime.device.make_config`
    makes (``iree.runtime.Config``) never reads it, so it would be silently ignored."""
    from autotune_export.runtime.device import runtime_flag_problem

    problem = runtime_flag_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="autotune-export tune", description="Tune the groups of an autotune-export module.")
    p.add_argument("module", help="a .vmfb built by autotune-export")
    p.add_argument("--device", default="cuda", help="IREE driver: cuda, local-task, local-sync (default: cuda)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--report", metavar="DIR", default=None, help="also write report.md, report.json and report.png into DIR")
    p.add_argument(
        "--results",
        metavar="FILE",
        default=None,
        help="tuning-results file to read and update (default: the cache's tuning.json)",
    )
    p.add_argument("--no-cache", action="store_true", help="measure every group and store nothing")
    p.add_argument(
        "--search",
        choices=("race", "exhaustive"),
        default="race",
        help="race (the default: successive elimination, docs/runtime.md) or exhaustive (Triton's do_bench budgets)",
    )
    p.add_argument(
        "--budget",
        type=_positive("--budget", "milliseconds"),
        default=None,
        metavar="MS",
        help="time budget of the race per group and workload in ms (default: 20 per variant, raised after round 0 with the kernels' own time; docs/runtime.md)",
    )
    p.add_argument(
        "--warmup",
        type=float,
        default=25.0,
        metavar="MS",
        help="warmup budget per variant in ms, for --search exhaustive (default: 25)",
    )
    p.add_argument(
        "--rep",
        type=float,
        default=100.0,
        metavar="MS",
        help="measurement budget per variant in ms, for --search exhaustive (default: 100)",
    )
    p.add_argument("--flush-l2", action="store_true", help="flush the GPU's L2 cache before each timed run")
    p.add_argument(
        "--isolation",
        choices=("auto", "process", "none"),
        default=None,
        help="run the variants in a worker process, so one that faults or hangs is dropped with a reason "
        "(process), in this process (none), or in a worker unless every variant to run already ran "
        "on this device (auto, the default; $AUTOTUNE_EXPORT_ISOLATION sets another)",
    )
    p.add_argument(
        "--iree-flag",
        action="append",
        default=[],
        type=_iree_flag,
        metavar="FLAG",
        help="an iree.runtime flag for the device, here and in the worker (e.g. "
        "--iree-flag=--task_worker_local_memory=65536); repeatable",
    )
    p.add_argument(
        "--device-allocator",
        action="append",
        default=[],
        metavar="SPEC",
        help="make the device, here and in the worker, with this IREE allocator spec (IREE's --device_allocator, "
        "e.g. caching); repeatable. On CUDA pair it with --iree-flag=--cuda_async_allocations=false, else a "
        "call's allocations go to CUDA's stream-ordered pools (docs/runtime.md, \"Per-call allocations\")",
    )
    p.add_argument(
        "--variant-timeout",
        type=_positive("--variant-timeout", "seconds"),
        default=60.0,
        metavar="S",
        help="seconds a variant's run, measurement or check may take in the worker (default: 60)",
    )
    p.add_argument(
        "--group-timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="seconds a group's tuning may take in the worker (default: 600)",
    )
    progress.add_arguments(p)
    return p


def _recorded(entry: dict | None, variants: list[str]) -> list[RecordedTiming]:
    """The timings a decision entry of the tuning cache stored (in the group's variant order),
    or [] when it has none."""
    if not entry or not isinstance(entry.get("median_ms"), dict):
        return []
    medians, spreads = entry["median_ms"], entry.get("spread_ms") or {}
    estimates = entry.get("estimate_ms") if isinstance(entry.get("estimate_ms"), dict) else {}
    out = []
    for variant in variants:
        if not isinstance(medians.get(variant), (int, float)):
            continue
        spread = spreads.get(variant)
        ok = isinstance(spread, (list, tuple)) and len(spread) == 2 and all(isinstance(x, (int, float)) for x in spread)
        out.append(
            RecordedTiming(
                variant,
                float(medians[variant]),
                tuple(spread) if ok else None,
                recorded_estimate=recorded_ms(estimates.get(variant)),
            )
        )
    return out


def _workloads(module: AutotunedModule, key: str) -> list[dict]:
    """Per tuning workload of group ``key``: ``{"workload", "timings", "winner", "source",
    "values"}``: its cache key (``"tensor<1024xf32>"``), the timings it was decided on
    (measured now, or as the tuning cache stored them: :class:`RecordedTiming`), the variant
    chosen for it, where that came from (``"tuned"``/``"cache"``) and its workload values
    (None without a per-workload table). One item (workload ``""``) for a group without
    benchmark entries."""
    info = module.groups[key]
    decided = {e.get("workload"): e for e in module.decisions.get(key, [])}
    out = []
    for w, work in enumerate(info.tuning_workloads()):
        workload = "x".join(work.tune_args)
        entry = decided.get(workload)
        timings = module.timings.get(key, {}).get(w)
        measured = bool(timings) and any(len(t.times_ms) > 1 or t.recorded is None for t in timings)
        out.append(
            {
                "workload": workload,
                "timings": list(timings) if timings else _recorded(entry, info.variants),
                "winner": entry["variant"] if entry else module.chosen[key],
                "source": "tuned" if measured else "cache" if entry else module.sources[key],
                "values": entry.get("workload_values") if entry else None,
            }
        )
    return out or [{"workload": "", "timings": [], "winner": module.chosen[key], "source": module.sources[key], "values": None}]


def _rows(module: AutotunedModule) -> list[dict]:
    """One row per variant, group and tuning workload (times in ms; ``estimate_ms`` what
    tuning ranked by, the fastest sample; ``relative`` its ratio to the best estimate among
    the variants the cross-check kept, so the winner's is 1.000 or within the tie rule;
    ``dropped``: its results differ from the default variant's, so it cannot win), or one row
    per group without timings (its choice)."""
    rows = []
    for key, info in module.groups.items():
        dropped = {info.variants[k] for k in module.dropped.get(key, ())}
        reasons = module.drop_reasons.get(key, {})
        for work in _workloads(module, key):
            ts = work["timings"]
            named = {t.variant for t in ts}
            # A variant dropped before it had a timing (it faulted, hung or was refused; or the
            # tuning cache says so) has a row without times.
            ts = list(ts) + [None for v in info.variants if v in reasons and v not in named]
            missing = [v for v in info.variants if v in reasons and v not in named]
            best = min(
                (
                    t.estimate_ms
                    for t in ts
                    if t is not None and t.variant not in dropped and (isinstance(t, RecordedTiming) or t.times_ms)
                ),
                default=None,
            )
            for t in ts:
                if t is None or (not isinstance(t, RecordedTiming) and not t.times_ms):
                    variant = missing.pop(0) if t is None else t.variant
                    rows.append(
                        {
                            "group": key,
                            "workload": work["workload"],
                            "workload_values": work["values"],
                            "variant": variant,
                            "median_ms": None,
                            "p20_ms": None,
                            "p80_ms": None,
                            "samples": 0,
                            "relative": None,
                            "winner": False,
                            "dropped": True,
                            "dropped_reason": reasons.get(
                                variant,
                                "not measured"
                                if info.variants.index(variant) in info.tuned_allowed()
                                else "not run by the measured dispatch (its prune_configs_by does not keep it)",
                            ),
                            "source": work["source"],
                        }
                    )
                    continue
                lo, hi = t.spread_ms if t.spread_ms is not None else (t.median_ms, t.median_ms)
                rows.append(
                    {
                        "group": key,
                        "workload": work["workload"],
                        "workload_values": work["values"],
                        "variant": t.variant,
                        "estimate_ms": t.estimate_ms,
                        "median_ms": t.median_ms,
                        "p20_ms": lo,
                        "p80_ms": hi,
                        "samples": len(t.times_ms) if not isinstance(t, RecordedTiming) and t.recorded is None else 0,
                        "relative": t.estimate_ms / best if best else None,
                        "winner": t.variant == work["winner"],
                        "dropped": t.variant in dropped,
                        "dropped_reason": reasons.get(t.variant) if t.variant in dropped else None,
                        "source": work["source"],
                    }
                )
            if not ts:
                rows.append(
                    {
                        "group": key,
                        "workload": work["workload"],
                        "workload_values": work["values"],
                        "variant": work["winner"],
                        "median_ms": None,
                        "p20_ms": None,
                        "p80_ms": None,
                        "samples": 0,
                        "relative": None,
                        "winner": True,
                        "dropped": False,
                        "source": work["source"],
                    }
                )
    return rows


def _dropped_mark(reason: str) -> str:
    """The table's short form of a drop reason (the note has it whole): a failed cross-check
    says against what it failed (the group's reference computation or the default variant,
    :meth:`~autotune_export.runtime.checking.Baseline.describe`); any other reason as it is."""
    if reason and not reason.startswith("differs: "):
        return reason
    from autotune_export.runtime.checking import AGAINST_REFERENCE

    if AGAINST_REFERENCE in reason:
        return "less accurate than the default variant against the group's reference"
    return "results differ from the default variant's"


def format_table(rows: list[dict]) -> str:
    """The rows as an aligned text table (times in ms). A ``workload`` column appears when a
    group has more than one tuning workload."""
    several = len({(r["group"], r.get("workload")) for r in rows}) > len({r["group"] for r in rows})
    header = ("group",) + (("workload",) if several else ()) + ("variant", "fastest ms", "median ms", "p20-p80 ms", "x best", "")
    lines = [header]
    for r in rows:
        lead = (r["group"],) + ((r.get("workload") or "-",) if several else ()) + (r["variant"],)
        if r["median_ms"] is None:
            mark = f"dropped: {r.get('dropped_reason')}" if r.get("dropped") else f"<- chosen ({r.get('source', 'cache')})"
            lines.append(lead + ("-", "-", "-", "-", mark))
            continue
        mark = "<- winner" + (" (cache)" if r.get("source") == "cache" else "") if r["winner"] else ""
        if r.get("dropped"):
            reason = r.get("dropped_reason") or ""
            mark = "dropped: " + _dropped_mark(reason)
        lines.append(
            lead
            + (
                f"{r['estimate_ms']:.4f}" if r.get("estimate_ms") is not None else "-",
                f"{r['median_ms']:.4f}",
                f"{r['p20_ms']:.4f}-{r['p80_ms']:.4f}",
                f"{r['relative']:.3f}" if r["relative"] is not None else "-",
                mark,
            )
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines)


def _report_folder_problem(path: str) -> str | None:
    """Why ``--report path`` cannot take the report (checked before tuning, so a bad folder
    costs no tuning run), or None: an existing path must be a folder; a new one is created
    under the nearest existing folder, which must be writable."""
    here = pathlib.Path(path)
    if here.exists():
        if not here.is_dir():
            return "names a file, not a folder for report.md, report.json and report.png"
        return None if os.access(here, os.W_OK) else "is a folder this user cannot write into"
    parent = next((p for p in here.absolute().parents if p.exists()), None)
    if parent is None or not parent.is_dir():
        return f"cannot be created: {parent} is not a folder"
    return None if os.access(parent, os.W_OK | os.X_OK) else f"cannot be created: {parent} is not writable"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``autotune-export tune``; returns the exit status (1 on user errors)."""
    args = _parser().parse_args(argv)
    if not os.path.isfile(args.module):
        print(f"{args.module}: error: no such module file", file=sys.stderr)
        return 1
    with open(args.module, "rb") as f:
        head = f.read(8)
    if not (head.startswith(b"PK\x03\x04") or head[4:8] == b"IREE"):  # a .vmfb: zip, or a bare flatbuffer
        print(
            f"{args.module}: error: not a .vmfb (an IREE module); tune takes what `autotune-export IN.mlir "
            "--emit vmfb -o OUT.vmfb` builds",
            file=sys.stderr,
        )
        return 1
    if args.report and (problem := _report_folder_problem(args.report)):
        print(f"{args.report}: error: --report {problem}", file=sys.stderr)  # before any tuning
        return 1
    cache = None if args.no_cache else TuningCache(args.results) if args.results else True
    try:
        module = AutotunedModule(
            args.module,
            driver=args.device,
            cache=cache,
            warmup_ms=args.warmup,
            rep_ms=args.rep,
            flush_l2=args.flush_l2,
            isolation=args.isolation,
            variant_timeout_s=args.variant_timeout,
            group_timeout_s=args.group_timeout,
            iree_flags=args.iree_flag,
            device_allocators=args.device_allocator,
            search=args.search,
            budget_ms=args.budget,
        )
    except (ValueError, AllocatorSpecError) as err:  # the allocators, not the module or driver
        print(f"{args.module}: error: {err}", file=sys.stderr)
        return 1
    except RuntimeError as err:
        first = str(err).splitlines()[0].removesuffix(" Exception for last tried follows.")
        hint = _driver_hint(args.module, args.device)
        print(f"{args.module}: error: cannot load the module on IREE driver '{args.device}' ({hint}): {first}", file=sys.stderr)
        return 1
    level = progress.level_of(args)
    for key, info in module.groups.items():
        if level >= progress.VERBOSE:
            n = len(info.tuning_workloads())
            print(f"tuning {key}: {len(info.variants)} variants, {n} tuning workload{'' if n == 1 else 's'}", file=sys.stderr)
        module.tune_group(key)
        if level >= progress.VERBOSE:
            for work in _workloads(module, key):
                print(f"  {work['workload'] or '(no tuning workload)'}: @{work['winner']} ({work['source']})", file=sys.stderr)
        if level > progress.QUIET and module.notes.get(key):
            print(f"note: {module.notes[key]}", file=sys.stderr)
    module.close_worker()
    rows = _rows(module)
    if args.report:
        from autotune_export.tools.report import write_report

        meta = {"module": args.module, "device": module.identity, "module_sha256": module.module_sha256}
        timings, dropped, cached = {}, {}, {}
        for key, info in module.groups.items():
            works = _workloads(module, key)
            for work in works:
                name = key if len(works) == 1 else f"{key} [{work['workload']}]"
                if work["timings"]:
                    timings[name] = work["timings"]
                    dropped[name] = {info.variants[k] for k in module.dropped.get(key, ())}
                entry = next((e for e in module.decisions.get(key, []) if e.get("workload") == work["workload"]), None)
                if work["source"] == "cache" and entry:
                    cached[name] = entry
        if cached:
            where = str(module.cache.path) if module.cache is not None else "?"
            meta["from tuning cache"] = {
                name: f"measured {e.get('time', '?')} ({e.get('strategy', '?')}), {where}" for name, e in cached.items()
            }
        write_report(args.report, timings, meta, dropped=dropped)
    if args.json:
        print(
            json.dumps(
                {"module": args.module, "device": module.identity, "module_sha256": module.module_sha256, "variants": rows},
                indent=1,
            )
        )
    else:
        print(format_table(rows))
    return 0


if __name__ == "__main__":  # python -m autotune_export.tools.tune: with iree.runtime alone (no compiler, no Triton)
    sys.exit(main())
