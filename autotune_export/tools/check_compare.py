"""``autotune-export check``, comparing (this process): every run of a launch against the
default variant's by the runtime's cross-check tolerances, undefined contents, writes through
immutable operands; the table and the errors of a launch (:class:`CheckReport`). See
:mod:`autotune_export.tools.check`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from autotune_export.support.diagnostics import Diagnostic
from autotune_export.tools.check_plan import Launch


@dataclass
class CheckReport:
    """What :func:`~autotune_export.tools.check.check_source` found: ``tables`` (printed per launch), ``errors``
    (diagnostics at the dispatches), ``launches`` run, ``skipped`` remarks."""

    tables: list[str] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    launches: int = 0
    skipped: list[Diagnostic] = field(default_factory=list)


def _numpy(t):
    """A torch tensor as a numpy array of the same dtype (bfloat16 and fp8 through ml_dtypes
    when installed, else float32), so that the runtime's tolerances by dtype apply."""
    import torch

    t = t.detach().cpu()
    if t.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        try:
            import ml_dtypes

            kind = {
                torch.bfloat16: (torch.int16, ml_dtypes.bfloat16),
                torch.float8_e4m3fn: (torch.int8, ml_dtypes.float8_e4m3fn),
                torch.float8_e5m2: (torch.int8, ml_dtypes.float8_e5m2),
            }[t.dtype]
            return t.contiguous().view(kind[0]).numpy().view(kind[1])
        except ImportError:
            return t.float().numpy()
    if not hasattr(t, "numpy") or t.dtype.is_complex:
        return t.float().numpy()
    try:
        return t.numpy()
    except TypeError:
        return t.float().numpy()


def _diff(a, b) -> tuple[float, float]:
    """``(max abs, max rel)`` difference of two arrays (NaN equal to NaN; NaN against a number
    is infinite)."""
    import numpy as np

    fa, fb = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
    if fa.shape != fb.shape:
        return math.inf, math.inf
    if fa.size == 0:
        return 0.0, 0.0
    both = np.isnan(fa) & np.isnan(fb)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.where(both, 0.0, np.abs(fa - fb))
        d = np.where(np.isnan(d), np.inf, d)
        rel = d / np.maximum(np.abs(fa), np.finfo(np.float64).tiny)
    return float(d.max()), float(np.where(d == 0, 0.0, rel).max())


def _first_difference(reference: list, results: list) -> str:
    """Where ``results`` first differ from ``reference`` (arrays in result order), as
    ``result J at index (i, j): value vs reference value``; "" when they are equal."""
    import numpy as np

    for j, (a, b) in enumerate(zip(reference, results)):
        fa, fb = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
        if fa.shape != fb.shape:
            return f"result {j} has shape {fb.shape}, not {fa.shape}"
        same = (fa == fb) | (np.isnan(fa) & np.isnan(fb))
        bad = np.argwhere(~same)
        if len(bad):
            at = tuple(int(i) for i in bad[0])
            return f"first different element: result {j} at index {at}: {float(fb[at])!r} vs {float(fa[at])!r}"
    return ""


def compare(launch: Launch, outcome: dict, report: CheckReport) -> None:
    """Compare the runs of one launch, add its table and its errors to ``report``."""
    from autotune_export.runtime.tuner import results_agree

    where = launch.where
    if "error" in outcome:
        report.errors.append(Diagnostic("error", f"{launch.title}: {outcome['error']}", where))
        return
    initial = [_numpy(t) for t in outcome["initial"]]
    runs = outcome["runs"]
    base = runs[launch.default]
    rows = []
    default_name = launch.variants[launch.default].name

    def results(run) -> list:
        return [_numpy(run["buffers"][j]) for j in launch.results]

    def immutable_writes(run) -> list[str]:
        out = []
        for i, b in enumerate(launch.buffers):
            if b.role == "input":
                after = _numpy(run["buffers"][i])
                if after.tobytes() != initial[i].tobytes():
                    out.append(b.param)
        return out

    base_results = results(base) if base["error"] is None else None
    writers: dict[str, list[str]] = {}  # immutable operand -> the variants writing it
    for n, run in enumerate(runs):
        is_again = n == len(launch.variants)  # the default variant's second run
        label = (
            run["label"] + (" (default)" if n == launch.default else "") + (" (again, other undefined data)" if is_again else "")
        )
        grid = launch.variants[launch.default if is_again else n].grid if run["label"] != "reference" else None
        grid_text = "x".join(str(g) for g in grid) if grid else "-"
        if run["error"] is not None:
            rows.append((label, grid_text, "-", "-", "ERROR"))
            # "V did not finish within S s in the interpreter" (docs/check.md), else "V failed: ...".
            how = " " if run["error"].startswith("did not finish") else " failed: "
            report.errors.append(Diagnostic("error", f"{launch.title}: {run['label']}{how}{run['error']}", where))
            continue
        written = immutable_writes(run) if run["label"] != "reference" else []
        for name in written:
            if run["label"] not in writers.setdefault(name, []):
                writers[name].append(run["label"])
        if base_results is None:
            rows.append((label, grid_text, "-", "-", "-"))
            continue
        mine = results(run)
        if n == launch.default:
            rows.append((label, grid_text, "-", "-", "FAIL" if written else "default"))
            continue
        problem = results_agree(base_results, mine)
        abs_d = max((_diff(a, b)[0] for a, b in zip(base_results, mine)), default=0.0)
        rel_d = max((_diff(a, b)[1] for a, b in zip(base_results, mine)), default=0.0)
        verdict = "FAIL" if problem or written else "PASS"
        rows.append((label, grid_text, f"{abs_d:.3g}", f"{rel_d:.3g}", verdict))
        if problem is None:
            continue
        # results_agree names the first index for floats, not for integers.
        detail = problem if "first at" in problem else f"{problem}; {_first_difference(base_results, mine)}"
        if is_again:
            outs = ", ".join(f"'{b.param}'" for b in launch.buffers if b.fill == "undefined") or "none"
            report.errors.append(
                Diagnostic(
                    "error",
                    f"{launch.title}: the results of {default_name} depend on the contents of buffers of undefined contents "
                    f"({outs}): the kernel reads an output before writing it, or leaves elements of it unwritten: "
                    f"{detail}",
                    where,
                )
            )
        elif run["label"] == "reference":
            report.errors.append(
                Diagnostic(
                    "error", f"{launch.title}: the reference differs from the default variant {default_name}: {detail}", where
                )
            )
        else:
            v = launch.variants[n]
            report.errors.append(
                Diagnostic(
                    "error",
                    f"{launch.title}: variant {v.name} (config {n} {v.config}) differs from the default variant "
                    f"{default_name}: {detail}",
                    where,
                )
            )
    for name, labels in writers.items():
        report.errors.append(
            Diagnostic(
                "error",
                f"{launch.title}: {', '.join(labels)} write{'s' if len(labels) == 1 else ''} through '{name}', which the "
                "dispatch passes as an operand no result is tied to: IREE treats dispatch operands as immutable (and may "
                f"share their buffers); mark '{name}' {{output}} and return it, or tie a result to its operand "
                "(-> %operand, in place)",
                where,
            )
        )
    width = max(len(r[0]) for r in rows) if rows else 10
    lines = [f"{launch.where}: {launch.title}", f"  {'variant':{width}}  {'grid':>14}  {'max abs':>9}  {'max rel':>9}  result"]
    lines += [f"  {r[0]:{width}}  {r[1]:>14}  {r[2]:>9}  {r[3]:>9}  {r[4]}" for r in rows]
    report.tables.append("\n".join(lines))
