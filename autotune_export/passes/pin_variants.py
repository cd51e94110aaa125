"""pin-variants: freeze tuned choices from a tuning-results file into the IR.

The file is the JSON that :mod:`autotune_export.runtime` writes (format
``autotune-export.tuning-results/1``)::

    {"format": "autotune-export.tuning-results/1",
     "results": [{"executable": "matmul_ex", "group": "matmul", "variant": "matmul_3_...",
                  "device": "...", "workload": "...", "median_ms": {...}}, ...]}

For each group with a result, the chosen variant becomes the group's ``default(@variant)``,
so the choice global starts there and a run needs no tuning. Results that carry the
dispatch's ``workload_values`` (one per tuned workload, as the runtime writes them) become the
group's frozen table ``choices([values] = @variant, ...)``: a dispatch whose workload equals one
of them uses that variant, any other the default. When a file holds several
results for one group (several workloads or devices), the default is the variant most
workloads chose, each workload counted once with its latest result, ties to the lower variant
index (:func:`autotune_export.contract.choose_result`, the rule the runtime's tuning and its
``strategy="fixed"`` follow too); pass a file filtered for the deployment target to pin
exactly. Workload values past 2^63 are an error located in the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from autotune_export.contract import (
    RESULTS_FORMAT,
    choose_result,
    per_workload_choices,
    results_mismatch,
    workload_values_problem,
)
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.walk import executable_sources, groups_of, sym_name
from autotune_export.passes.base import ModulePass, PassContext, register

__all__ = ["PinVariants", "chosen_result", "load_results"]


def load_results(path: str) -> list[dict]:
    """Read a tuning-results file. Raises DiagnosticError (located at the file) when it is
    missing, not JSON, or not of format ``autotune-export.tuning-results/1``."""
    loc = Location(path, 1, 1)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        data = json.loads(text)
    except OSError as err:
        raise DiagnosticError.at(None, f"cannot read tuning results '{path}': {err.strerror}") from None
    except UnicodeDecodeError:
        raise DiagnosticError.at(loc, "tuning results are not UTF-8 JSON text") from None
    except json.JSONDecodeError as err:
        raise DiagnosticError.at(Location(path, err.lineno, err.colno), f"tuning results are not JSON: {err.msg}") from None
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT or not isinstance(data.get("results"), list):
        raise DiagnosticError.at(loc, f'not a tuning-results file (expected "format": "{RESULTS_FORMAT}" and a "results" list)')
    for i, entry in enumerate(data["results"]):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("executable", "group", "variant")):
            raise DiagnosticError.at(loc, f'result {i} needs string fields "executable", "group" and "variant"')
        problem = workload_values_problem(entry)
        if problem is not None:
            raise DiagnosticError.at(_locate(text, entry, path), f"result {i}: {problem}")
    return data["results"]


def chosen_result(results: list[dict], executable: str, group: str, variants: list[str], location=None) -> dict | None:
    """The entry of ``results`` that :func:`autotune_export.contract.choose_result` picks for
    ``@executable::@group`` (whose variants are ``variants``), None when no entry names that
    group. Raises DiagnosticError at ``location`` when entries name the group but none of them
    one of its variants (results of another build: a variant a build with more candidates
    had); the message names the entry's variant and the group's. One check for pin-variants and
    ``autotune-export program --tuning-results``."""
    named = [r for r in results if r.get("executable") == executable and r.get("group") == group]
    if not named:
        return None
    chosen = choose_result(results, executable, group, variants)
    if chosen is None:
        has = ", ".join(f"@{v}" for v in variants) or "none"
        raise DiagnosticError.at(
            location,
            f"tuning results pick @{named[-1].get('variant')} for @{group}, which is not one of its variants "
            f"(it has {has}; were the results made for another build of this module?)",
        )
    return chosen


def _locate(text: str, entry: dict, path: str) -> Location:
    """Where an entry's ``workload_values`` are in the file's text (best effort: the first
    occurrence of the key after the entry's variant), else the file's start."""
    start = text.find(json.dumps(entry.get("variant")))
    at = text.find('"workload_values"', max(start, 0))
    if at < 0:
        at = text.find('"workload_values"')
    if at < 0:
        return Location(path, 1, 1)
    line = text.count("\n", 0, at) + 1
    return Location(path, line, at - (text.rfind("\n", 0, at) + 1) + 1)


@register
@dataclass
class PinVariants(ModulePass):
    """Option: ``tuning_results``, the JSON file to read (nothing happens without one)."""

    name = "pin-variants"
    summary = "make tuned variants (--tuning-results FILE) the groups' defaults"

    tuning_results: str | None = None

    def apply(self, ctx: PassContext, module) -> None:
        if not self.tuning_results:
            return
        results = load_results(self.tuning_results)
        groups = []
        for source in executable_sources(module):
            exe = sym_name(source)
            for op in groups_of(source):
                group = AutotuneGroup.from_op(op, ctx.source.name)
                groups.append((exe, group.name))
                named = [r for r in results if r.get("executable") == exe and r.get("group") == group.name]
                if not named:
                    continue
                # A group still in the triton(...) form has no variant list to check against.
                variants = group.variants if group.variants is not None else [r.get("variant") for r in named]
                chosen = chosen_result(results, exe, group.name, variants, group.location)
                variant = chosen["variant"]
                group.default = variant
                table = per_workload_choices(results, exe, group.name, variants)
                if table and group.variants is not None:
                    group.choices = table
                group.replace(op)
        mismatch = results_mismatch(self.tuning_results, results, groups)
        if mismatch is not None:
            ctx.emit_remark(Diagnostic(mismatch[0], mismatch[1], Location(self.tuning_results, 1, 1)))
