"""Fuzz the front end for N cases and count the crashes.

    python benchmarks/fuzz.py N [--jobs 2] [--seed 0] [--json fuzz-results.json]
        [--reproducers DIR] [--fresh-contexts]

Runs the properties of tests/unit/test_fuzz.py (hypothesis strategies that generate valid
extension ops and whole files and mutate them) on N cases split over the eight case kinds
(valid op, valid file, mutated op, mutated file, pass pipeline, tuning-results file,
split input file, kernel file; 1 : 1 : 2 : 2 : 1 : 1 : 1 : 1), in ``--jobs`` worker processes with fixed seeds
(the same N, jobs and seed give the same cases). Per op or file case: ``parse_source`` +
``print_module`` (and the print -> parse -> print fixed point when it parses),
``cli.main([file, '-p', ''])`` and ``cli.main([file, '-p', 'verify-autotuning-groups'])``;
a pipeline case runs ``cli.main([file, '-p', SPEC])``, a results case ``-p pin-variants
--tuning-results R.json`` (and with verify-autotuning-groups), a split case
``--split-input-file`` with both pipelines, a kernel case plans a generated kernel file's
group as materialize-triton-variants does before compiling (``autotune-export check``'s
launches: ``prune_configs_by``, heuristics, ``reset_to_zero``/``restore_value``). Nothing is
compiled by Triton.

A *crash* is any failure of the properties: an exception other than DiagnosticError, exit
status 2 or another status than 0/1, output on stderr that is not diagnostics, status 1 with
no error, a valid generated input rejected, or a broken round trip. Crashing inputs are written
to ``--reproducers`` (one file each). Diagnostics whose message spans several lines are counted
apart (not crashes). Each worker reuses one MLIR context for all its parses (making one costs
~30 ms, most of a case) unless ``--fresh-contexts``.

Prints the figures and writes them as JSON (``--json``); benchmarks/FUZZ.md records a run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import platform
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIND_WEIGHTS = {"op": 1, "file": 1, "mutated-op": 2, "mutated-file": 2, "pipeline": 1, "results": 1, "split": 1, "kernel": 1}


def _load_properties():
    """tests/unit/test_fuzz.py as a module (the strategies and properties live there)."""
    sys.path.insert(0, ROOT)
    path = os.path.join(ROOT, "tests", "unit", "test_fuzz.py")
    spec = importlib.util.spec_from_file_location("autotune_export_fuzz_properties", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _split(n: int, parts: int) -> list[int]:
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def _worker(args) -> dict:
    worker, quotas, seed, repro_dir, fresh = args
    import contextlib

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed

    props = _load_properties()
    workdir = tempfile.mkdtemp(prefix=f"autotune-export-fuzz-{worker}-")
    result = {"cases": {}, "parsed": {}, "crashes": {}, "multiline": {}, "seconds": {}, "examples": []}
    with contextlib.nullcontext() if fresh else props.shared_context():
        for name, strategy, valid, verify_valid in props.CASES:
            quota = quotas.get(name, 0)
            counts = {"cases": 0, "parsed": 0, "crashes": 0, "multiline": 0}
            if quota == 0:  # a kind left out (--kinds) or too few cases for it
                continue

            @hyp_seed(seed * 1000 + worker * 10 + list(KIND_WEIGHTS).index(name))
            @settings(
                max_examples=quota,
                deadline=None,
                database=None,
                phases=(Phase.generate,),
                suppress_health_check=list(HealthCheck),
            )
            @given(strategy)
            def run(text):
                if counts["cases"] >= quota:
                    return
                counts["cases"] += 1
                outcome = props.run_case(text, workdir, valid=valid, verify_valid=verify_valid)
                counts["parsed"] += outcome.parsed
                if outcome.multiline:
                    counts["multiline"] += 1
                    if len(result["examples"]) < 20:
                        result["examples"].append({"kind": name, "multiline": outcome.multiline[0][:300]})
                if outcome.crashes:
                    counts["crashes"] += 1
                    k = sum(result["crashes"].values()) + counts["crashes"]
                    if repro_dir:
                        with open(os.path.join(repro_dir, f"crash-{worker}-{name}-{k}.mlir"), "w", encoding="utf-8") as f:
                            body = text if isinstance(text, str) else repr(text)  # a PipelineCase, ResultsCase, SplitCase
                            f.write("".join(f"// {line}\n" for c in outcome.crashes for line in c.splitlines()) + body)

            t0 = time.perf_counter()
            # Hypothesis stops early when it believes the space is exhausted (never here):
            # keep asking until the quota is met.
            while counts["cases"] < quota:
                before = counts["cases"]
                run()
                if counts["cases"] == before:
                    break
            result["seconds"][name] = time.perf_counter() - t0
            for key in ("cases", "parsed", "crashes", "multiline"):
                result[key][name] = counts[key]
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("n", type=int, help="number of cases (all kinds together)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the case generation (default 0)")
    p.add_argument("--json", default=None, help="write the figures here as JSON")
    p.add_argument("--reproducers", default=None, help="directory for the inputs that crashed")
    p.add_argument("--fresh-contexts", action="store_true", help="a new MLIR context per parse, as the CLI does")
    p.add_argument("--kinds", default=None, help="comma-separated kinds to run (default: all); N is split over them in "
                                                 "their ratio, and each kind's cases are those of a run of all kinds "
                                                 "with the same quota per worker")
    args = p.parse_args(argv)
    weights = KIND_WEIGHTS
    if args.kinds:
        unknown = [k for k in args.kinds.split(",") if k not in KIND_WEIGHTS]
        if unknown:
            p.error(f"unknown kinds {', '.join(unknown)}; the kinds are {', '.join(KIND_WEIGHTS)}")
        weights = {k: w for k, w in KIND_WEIGHTS.items() if k in args.kinds.split(",")}
    if args.reproducers:
        os.makedirs(args.reproducers, exist_ok=True)
    total_w = sum(weights.values())
    per_kind = _split(args.n, total_w)
    kind_totals = {}
    it = iter(per_kind)
    for name, w in weights.items():
        kind_totals[name] = sum(next(it) for _ in range(w))
    jobs = max(1, args.jobs)
    quotas = [{} for _ in range(jobs)]
    for name, total in kind_totals.items():
        for w, q in enumerate(_split(total, jobs)):
            quotas[w][name] = q
    t0 = time.perf_counter()
    work = [(w, quotas[w], args.seed, args.reproducers, args.fresh_contexts) for w in range(jobs)]
    if jobs == 1:
        results = [_worker(work[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            results = pool.map(_worker, work)
    wall = time.perf_counter() - t0
    figures = {
        "cases": args.n,
        "jobs": jobs,
        "seed": args.seed,
        "fresh_contexts": args.fresh_contexts,
        "wall_seconds": round(wall, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "kinds": {},
    }
    for name in weights:
        figures["kinds"][name] = {
            key: sum(r[key].get(name, 0) for r in results) for key in ("cases", "parsed", "crashes", "multiline")
        }
        figures["kinds"][name]["worker_seconds"] = round(sum(r["seconds"].get(name, 0.0) for r in results), 1)
    figures["run_cases"] = sum(k["cases"] for k in figures["kinds"].values())
    figures["crashes"] = sum(k["crashes"] for k in figures["kinds"].values())
    figures["multiline_diagnostics"] = sum(k["multiline"] for k in figures["kinds"].values())
    figures["multiline_examples"] = [e for r in results for e in r["examples"]][:5]
    print(f"{'kind':14} {'cases':>7} {'parsed':>7} {'crashes':>8} {'multiline':>10} {'worker s':>9}")
    for name, k in figures["kinds"].items():
        print(f"{name:14} {k['cases']:>7} {k['parsed']:>7} {k['crashes']:>8} {k['multiline']:>10} {k['worker_seconds']:>9}")
    print(f"total: {figures['run_cases']} cases, {figures['crashes']} crashes, "
          f"{figures['multiline_diagnostics']} with multi-line diagnostics, {wall:.0f} s wall on {jobs} workers")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2)
            f.write("\n")
    return 1 if figures["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
