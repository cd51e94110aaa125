"""Run every exported launch of the corpus on the GPU, in every variant, and compare each result
with what the library's own launch produced there (the recording).

    pip install --target /tmp/site .whl/iree_base_runtime-*.whl
    PYTHONPATH=/tmp/site:. python3 benchmarks/corpus/verify.py [.gpu_corpus ...] [--json $OUT/verify.json]

Reads ``.gpu_corpus/manifest.json`` (replay.py) and the recording beside it. Per launch with a
``.vmfb``: ``AutotunedModule(vmfb, driver="cuda", cache=None)``; for every group and every
variant of it (``select(group, k)``) the host function ``main`` is called with the recorded
inputs, and each result is compared with the recorded output of that parameter. Then (unless
``--no-tune``) the module tunes itself on its benchmark entries (``AutotunedModule.autotune``,
budgets ``--warmup-ms``/``--rep-ms`` per variant, no cache) and ``main`` is called once more with
the tuned choice and compared as well: tuning returns, and the tuned module computes what the
library computed. Needs iree.runtime and numpy (no torch, no Triton, no compiler). Prints one
line per launch and variant (and per tuning), then the table: launches, exported as written,
with a workaround, refused, matching in every variant, tuned and matching.

Tolerances (``np.testing.assert_allclose`` style, ``|a - b| <= atol + rtol * |b|``, NaN equal to
NaN): exact for integers and bools; fp16/bf16 ``rtol = atol = 1e-2``; fp32 ``rtol = 1e-4``,
``atol = 1e-5`` (at least ``1e-3`` both for kernels with atomics, whose sums change order; before,
atomics made fp16 results ten times stricter than fp16's own tolerance).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import common  # noqa: E402

TOLERANCES = {"float16": (1e-2, 1e-2), "bfloat16": (1e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}
ATOMIC_TOLERANCE = (1e-3, 1e-3)


def compare(got: np.ndarray, want: np.ndarray, dtype: str, atomics: bool = False) -> str | None:
    """None when ``got`` matches ``want`` (stored as record.py stores ``dtype``), else why not."""
    got = np.asarray(got)
    if tuple(got.shape) != tuple(want.shape):
        return f"shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    if dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        got = got.view(want.dtype) if got.dtype.itemsize == want.dtype.itemsize else got
        g = common.runtime_array(got.view(want.dtype), dtype).astype(np.float32)
        w = common.runtime_array(want, dtype).astype(np.float32)
    else:
        g, w = got.astype(want.dtype, copy=False), want
    if dtype not in TOLERANCES and dtype not in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        bad = g != w
        return None if not bad.any() else f"{int(bad.sum())} of {bad.size} elements differ (exact), first at {[int(x) for x in np.argwhere(bad)[0]]}"
    rtol, atol = TOLERANCES.get(dtype, (1e-2, 1e-2))
    if atomics:  # sums in a run-dependent order: at least ATOMIC_TOLERANCE, never tighter than the dtype's
        rtol, atol = max(rtol, ATOMIC_TOLERANCE[0]), max(atol, ATOMIC_TOLERANCE[1])
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    both_nan = np.isnan(g64) & np.isnan(w64)
    same_inf = np.isinf(w64) & (g64 == w64)
    err = np.abs(g64 - w64)
    bad = ~(both_nan | same_inf | (err <= atol + rtol * np.abs(w64)))
    if not bad.any():
        return None
    i = tuple(int(x) for x in np.argwhere(bad)[0])
    return (f"{int(bad.sum())} of {bad.size} elements off (rtol {rtol}, atol {atol}); max abs err "
            f"{np.nanmax(np.where(bad, err, 0)):.3g}; first at {list(i)}: {float(g64[i])!r} vs {float(w64[i])!r}")


def entry_arrays(rec_dir: pathlib.Path, entry: dict) -> tuple[list, list]:
    """(inputs as iree.runtime takes them, [(param, expected array, dtype)]) of a manifest entry."""
    files: dict = {}

    def array(item: dict) -> np.ndarray:
        # strided views: the storage they span, from the replay's file beside the module
        path = rec_dir.parent / item["file"] if "file" in item else rec_dir / entry["data"]
        if path not in files:
            with np.load(path) as z:
                files[path] = {k: z[k] for k in z.files}
        return files[path][item["array"]]

    inputs = [common.runtime_array(array(i), i["dtype"]) for i in entry["inputs"]]
    expected = [(r["param"], array(r), r["dtype"]) for r in entry["results"]]
    return inputs, expected


def verify_entry(module, rec_dir: pathlib.Path, entry: dict, log) -> tuple[int, int, list[str]]:
    """(variants run, variants matching, failure lines) of one exported launch."""
    inputs, expected = entry_arrays(rec_dir, entry)
    atomics = bool(entry.get("atomics"))
    runs = ok = 0
    failures = []
    for info in module.groups.values():
        for k, variant in enumerate(info.variants):
            module.select(info.key, k)
            runs += 1
            try:
                results = module("main", *inputs)
            except Exception as e:  # noqa: BLE001 - one variant's failure is reported, not fatal
                failures.append(f"{variant}: raised {type(e).__name__}: {str(e)[:300]}")
                log(f"  BAD {entry['case']}#{entry['index']} {variant}: raised {type(e).__name__}: {str(e)[:200]}")
                continue
            if not isinstance(results, (list, tuple)):
                results = [results]
            problems = []
            for (param, want, dtype), got in zip(expected, results):
                why = compare(np.asarray(got), want, dtype, atomics)
                if why:
                    problems.append(f"{param}: {why}")
            if len(results) != len(expected):
                problems.append(f"{len(results)} results, expected {len(expected)}")
            if problems:
                failures.append(f"{variant}: " + "; ".join(problems))
                log(f"  BAD {entry['case']}#{entry['index']} {variant}: " + "; ".join(problems)[:400])
            else:
                ok += 1
                log(f"  OK  {entry['case']}#{entry['index']} {variant}")
    return runs, ok, failures


def tune_entry(module, rec_dir: pathlib.Path, entry: dict, log) -> dict:
    """Tune ``module`` (every group, on its benchmark entries) and call ``main`` once more with
    the recorded inputs: ``{"seconds", "chosen": {group: variant}, "notes", "ok", "problem"}``.
    ``ok``: tuning returned and the tuned module's results match the recording."""
    inputs, expected = entry_arrays(rec_dir, entry)
    t0 = time.perf_counter()
    try:
        module.autotune()
        results = module("main", *inputs)
    except Exception as e:  # noqa: BLE001 - reported per launch
        out = {"seconds": round(time.perf_counter() - t0, 3), "ok": False, "problem": f"raised {type(e).__name__}: {str(e)[:300]}"}
        log(f"  BAD {entry['case']}#{entry['index']} tuning: {out['problem'][:200]}")
        return out
    seconds = round(time.perf_counter() - t0, 3)
    if not isinstance(results, (list, tuple)):
        results = [results]
    problems = [f"{param}: {why}" for (param, want, dtype), got in zip(expected, results)
                if (why := compare(np.asarray(got), want, dtype, bool(entry.get("atomics"))))]
    out = {"seconds": seconds, "chosen": dict(module.chosen), "notes": dict(module.notes), "ok": not problems,
           "problem": "; ".join(problems)[:400] or None}
    log(f"  {'OK ' if not problems else 'BAD'} {entry['case']}#{entry['index']} tuned in {seconds} s -> "
        f"{', '.join(module.chosen.values())}" + (f": {out['problem']}" if problems else ""))
    return out


def summary(entries: list[dict]) -> str:
    """The table of the closing note (Markdown): one row per library (the case name's first
    part: ``gemlite``, ``inductor``, ...), then all of them."""
    def row(name: str, group: list[dict]) -> str:
        n = len(group)
        as_written = sum(1 for e in group if e.get("status") == "as written")
        workaround = sum(1 for e in group if e.get("status") == "workaround")
        refused = sum(1 for e in group if e.get("status") in ("refused", "not recorded"))
        verified = [e for e in group if "verify" in e]
        matching = sum(1 for e in verified if e["verify"]["runs"] and e["verify"]["ok"] == e["verify"]["runs"])
        variants = sum(e["verify"]["runs"] for e in verified)
        variants_ok = sum(e["verify"]["ok"] for e in verified)
        tuned = sum(1 for e in verified if (e["verify"].get("tuned") or {}).get("ok"))
        kernels = len({e.get("kernel") for e in group if e.get("kernel")})
        return (f"| {name} | {n} | {kernels} | {as_written} | {workaround} | {refused} | {len(verified)} | {matching} | "
                f"{variants} / {variants_ok} | {tuned} |")

    libraries: dict[str, list[dict]] = {}
    for e in entries:
        libraries.setdefault(e["case"].split(".")[0], []).append(e)
    lines = ["| library | launches | kernels | exported as written | with a workaround | refused | verified on the GPU | "
             "matching in every variant | variants run / matching | tuned and matching |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += [row(name, group) for name, group in libraries.items()]
    if len(libraries) > 1:
        lines.append(row("**all**", entries))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="*", default=[str(common.GPU_CORPUS)],
                    help="folders replay.py wrote (each with its manifest.json); the table counts them all")
    ap.add_argument("--driver", default="cuda")
    ap.add_argument("--json", help="write the manifest with the results here")
    ap.add_argument("--cases", default="")
    ap.add_argument("--no-tune", action="store_true", help="run the variants only, no tuning")
    ap.add_argument("--warmup-ms", type=float, default=5.0, help="tuning's warm-up budget per variant")
    ap.add_argument("--rep-ms", type=float, default=20.0, help="tuning's timed budget per variant")
    a = ap.parse_args(argv)
    from autotune_export.runtime.tuner import AutotunedModule

    wanted = [w for w in a.cases.split(",") if w]
    entries, manifests = [], []
    for folder in a.corpus:
        root = pathlib.Path(folder)
        manifest = json.loads((root / "manifest.json").read_text())
        manifests.append({k: v for k, v in manifest.items() if k != "launches"} | {"folder": folder})
        rec_dir = root / manifest["recording"]
        for e in manifest["launches"]:
            if wanted and not any(w in e["case"] for w in wanted):
                continue
            entries.append(e)
            module = None
            if not e.get("vmfb"):
                print(f"  --  {e['case']}#{e.get('index')} {e.get('status')}: {str(e.get('reason', ''))[:200]}")
                continue
            try:
                module = AutotunedModule(root / e["vmfb"], driver=a.driver, cache=None, warmup_ms=a.warmup_ms,
                                         rep_ms=a.rep_ms)
                runs, ok, failures = verify_entry(module, rec_dir, e, print)
                if not a.no_tune:
                    e["verify_tuned"] = tune_entry(module, rec_dir, e, print)
            except Exception as err:  # noqa: BLE001
                runs, ok, failures = 0, 0, [f"loading or running raised {type(err).__name__}: {str(err)[:300]}"]
                print(f"  BAD {e['case']}#{e['index']}: {failures[0]}")
            e["verify"] = {"runs": runs, "ok": ok, "failures": failures}
            if "verify_tuned" in e:
                e["verify"]["tuned"] = e.pop("verify_tuned")
                if not e["verify"]["tuned"]["ok"]:
                    failures.append(f"tuning: {e['verify']['tuned']['problem']}")
            del module
    table = summary(entries)
    print(table)
    bad = [e for e in entries if "verify" in e and (e["verify"]["ok"] != e["verify"]["runs"] or not e["verify"]["runs"]
                                                     or not e["verify"].get("tuned", {"ok": True})["ok"])]
    for e in bad:
        print(f"NOT MATCHING {e['case']}#{e['index']} {e.get('kernel')}: {e['verify']['failures'][:3]}")
    # checks: every variant run, and every tuning (then a run of the tuned choice)
    checks = sum(e["verify"]["runs"] + ("tuned" in e["verify"]) for e in entries if "verify" in e)
    failed = sum(len(e["verify"]["failures"]) for e in entries if "verify" in e)
    print(f"{checks - failed} passed, {failed} failed")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"manifests": manifests, "launches": entries, "table": table}, indent=1))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
