"""The contract between the compiler (passes) and the runtime: names and formats one writes and
the other reads. Spelled here once; imports nothing, so a GPU machine with only iree.runtime
loads it.

* :data:`AUTOTUNE_FUNCTION` (``@__autotune``) carries reflection metadata under
  :data:`REFLECTION_KEY`: a JSON list with one object per group, fields :data:`GROUP_FIELDS`.
* Per group ``@G`` of executable ``@E`` the compiler creates the symbols :func:`names_for`
  gives (the choice global, the select entry, one benchmark entry per variant).
* :data:`RESULTS_FORMAT` is the tuning-results file (the runtime's cache and
  ``--tuning-results``): ``{"format": RESULTS_FORMAT, "results": [{"executable", "group",
  "variant", ...}]}``.
"""

from __future__ import annotations

__all__ = [
    "AUTOTUNE_FUNCTION",
    "REFLECTION_KEY",
    "FLUSH_L2_FUNCTION",
    "BENCH_UNROLL",
    "RESULTS_FORMAT",
    "GROUP_FIELDS",
    "names_for",
    "bench_name",
    "slot_names",
    "choose_result",
    "per_workload_choices",
]

#: The module's tuning entry point (IREE function name).
AUTOTUNE_FUNCTION = "__autotune"
#: Key of the JSON group list in ``@__autotune``'s ``iree.reflection`` dictionary.
REFLECTION_KEY = "autotune.groups"
#: Fills 256 MiB (more than any GPU's L2), for the runtime's ``flush_l2`` option.
FLUSH_L2_FUNCTION = f"{AUTOTUNE_FUNCTION}.flush_l2"
#: Dispatches per loop iteration of a benchmark entry ``bench.K(n)``: ``n * BENCH_UNROLL``
#: dispatches run per invocation.
BENCH_UNROLL = 8
#: Format tag of tuning-results files (the runtime writes, pin-variants reads).
RESULTS_FORMAT = "autotune-export.tuning-results/1"
#: Fields of one group in the reflection metadata: executable and group symbol, variant export
#: names (in order), ``default`` variant index, the ``choice`` global, the ``select`` entry
#: (``(i32) -> ()``), one ``bench`` entry per variant, the ``host`` function, ``unroll``
#: (:data:`BENCH_UNROLL`), ``tune_args`` (the fake arguments' types, as MLIR text), ``configs``
#: (per variant, the Triton config it was compiled from as ``[[key, value], ...]``, or null
#: when the compiler did not see one: readers treat the field as optional).
#:
#: Per-workload tuning and checking (optional for readers: modules of earlier releases lack them):
#: ``workloads`` (per tuning workload, in ``tune_workload`` order: ``{"tune_args", "bench",
#: "workload"}``, ``workload`` naming an entry ``() -> (i64, ...)`` that returns the dispatch's
#: workload values on that workload's fake arguments; workload 0 is ``bench``/``tune_args``),
#: ``slots`` (setter entries ``(choice: i32, w0: i64, ...) -> ()`` of the run-time table of
#: per-workload choices, see :func:`slot_names`), ``workload_of`` (an entry with the host's
#: signature returning its dispatch's workload values, or ""), ``arity`` (workload values per
#: dispatch), ``fingerprints`` (per variant, a hash of what decides its timing: its code, layout,
#: count region and config; the key of the per-variant tuning cache), ``check`` (per variant, an
#: entry ``() -> (results...)`` running it once on fresh fake data and returning whole results,
#: for cross-checking variants; "" where a variant cannot be checked).
GROUP_FIELDS = ("executable", "group", "variants", "default", "choice", "select", "bench", "host", "unroll", "tune_args",
                "configs", "workloads", "slots", "workload_of", "arity", "fingerprints", "check")


def names_for(executable: str, group: str) -> dict[str, str]:
    """Symbols the compiler creates for group ``@group`` of ``@executable``: ``prefix``
    (``__autotune.E.G``), ``choice`` (the i32 global), ``select``, ``bench`` (entry K is
    ``bench + "." + str(K)``)."""
    prefix = f"{AUTOTUNE_FUNCTION}.{executable}.{group}"
    return {"prefix": prefix, "choice": f"{prefix}.choice", "select": f"{prefix}.select", "bench": f"{prefix}.bench",
            "workload": f"{prefix}.workload", "workload_of": f"{prefix}.workload_of", "slot": f"{prefix}.slot",
            "check": f"{prefix}.check"}


def bench_name(executable: str, group: str, workload: int, variant: int) -> str:
    """The benchmark entry of ``variant`` on tuning workload ``workload``: ``P.bench.K`` for
    workload 0 (the name of every earlier release), ``P.bench.wT.K`` for the others."""
    bench = names_for(executable, group)["bench"]
    return f"{bench}.{variant}" if workload == 0 else f"{bench}.w{workload}.{variant}"


def slot_names(executable: str, group: str, slot: int, arity: int) -> dict:
    """Symbols of slot ``slot`` of a group's run-time table of per-workload choices: ``choice``
    (i32 global, -1 while the slot is empty), ``keys`` (one i64 global per workload value),
    ``set`` (the entry that fills the slot)."""
    base = f"{names_for(executable, group)['slot']}.{slot}"
    return {"choice": f"{base}.choice", "keys": [f"{base}.w{j}" for j in range(arity)], "set": f"{base}.set"}


def choose_result(entries: list, executable: str, group: str, variants: list[str]) -> dict | None:
    """The entry of a tuning-results file that decides ``@executable::@group``: among entries
    naming this executable and group whose ``variant`` is one of ``variants``, the last one in
    the file (the most recent: the runtime's cache replaces an entry with the same key and
    appends new ones). None when there is none. Both ``--tuning-results`` (pin-variants) and
    the runtime's ``strategy="fixed"`` choose with this rule, so a file means the same to both.
    """
    chosen = None
    for entry in entries:
        if (isinstance(entry, dict) and entry.get("executable") == executable and entry.get("group") == group
                and entry.get("variant") in variants):
            chosen = entry
    return chosen


def per_workload_choices(entries: list, executable: str, group: str, variants: list[str]) -> list[tuple[tuple[int, ...], str]]:
    """The per-workload table of ``@executable::@group`` in a tuning-results file: per distinct ``workload_values`` (the dispatch's workload
    values the runtime tuned a workload for) the variant of the last entry with those values
    whose variant the group has, in order of first appearance. Entries without workload values
    (files of earlier releases, strategies that tuned one workload) add nothing."""
    table: dict[tuple[int, ...], str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("executable") != executable or entry.get("group") != group:
            continue
        values = entry.get("workload_values")
        if isinstance(values, list) and all(isinstance(v, int) for v in values) and entry.get("variant") in variants:
            table[tuple(values)] = entry["variant"]
    return list(table.items())
