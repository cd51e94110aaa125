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
    "choose_result",
]

#: The module's tuning entry point (IREE function name).
AUTOTUNE_FUNCTION = "__autotune"
#: Key of the JSON group list in ``@__autotune``'s ``iree.reflection`` dictionary.
REFLECTION_KEY = "autotune.groups"
#: Fills 256 MiB (more than any GPU's L2), for the runtime's ``flush_l2`` option.
FLUSH_L2_FUNCTION = f"{AUTOTUNE_FUNCTION}.flush_l2"
#: Host-function calls per loop iteration of a benchmark entry ``bench.K(n)``: one call plus
#: ``(n - 1) * BENCH_UNROLL`` calls run per invocation.
BENCH_UNROLL = 8
#: Format tag of tuning-results files (the runtime writes, pin-variants reads).
RESULTS_FORMAT = "autotune-export.tuning-results/1"
#: Fields of one group in the reflection metadata: executable and group symbol, variant export
#: names (in order), ``default`` variant index, the ``choice`` global, the ``select`` entry
#: (``(i32) -> ()``), one ``bench`` entry per variant, the ``host`` function, ``unroll``
#: (:data:`BENCH_UNROLL`), ``tune_args`` (the fake arguments' types, as MLIR text), ``configs``
#: (per variant, the Triton config it was compiled from as ``[[key, value], ...]``, or null
#: when the compiler did not see one: readers treat the field as optional).
GROUP_FIELDS = ("executable", "group", "variants", "default", "choice", "select", "bench", "host", "unroll", "tune_args",
                "configs")


def names_for(executable: str, group: str) -> dict[str, str]:
    """Symbols the compiler creates for group ``@group`` of ``@executable``: ``prefix``
    (``__autotune.E.G``), ``choice`` (the i32 global), ``select``, ``bench`` (entry K is
    ``bench + "." + str(K)``)."""
    prefix = f"{AUTOTUNE_FUNCTION}.{executable}.{group}"
    return {"prefix": prefix, "choice": f"{prefix}.choice", "select": f"{prefix}.select", "bench": f"{prefix}.bench"}


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
