"""The contract between the compiler (passes) and the runtime: names and formats one writes and
the other reads. Spelled here once; imports only the standard library, so a GPU machine with
only iree.runtime loads it.

* :data:`AUTOTUNE_FUNCTION` (``@__autotune``) carries reflection metadata under
  :data:`REFLECTION_KEY`: a JSON list with one object per group, the schema
  :class:`GroupReflection` (fields :data:`GROUP_FIELDS`). emit-autotune-initializer writes it
  with :func:`encode_reflection`; the runtime and ``inspect`` read it with
  :func:`decode_reflection`: one definition for both sides.
* Per group ``@G`` of executable ``@E`` the compiler creates the symbols :func:`names_for`
  gives (the choice global, the select entry, one benchmark entry per variant).
* :data:`VARIANT_CONFIG_ATTR` on an export: the Triton config it was compiled from, for the
  later passes (the IR is the only state between passes).
* :data:`STRIDED_KEY` on a host function's ``iree.reflection``: the tensors of a launch passed
  as strided views (``launch_to_mlir``) and the storage span the host passes for each
  (:class:`StridedTensor`, :func:`encode_strided`/:func:`decode_strided`); ``inspect`` shows it.
* :data:`RESULTS_FORMAT` is the tuning-results file (the runtime's cache and
  ``--tuning-results``): ``{"format": RESULTS_FORMAT, "results": [{"executable", "group",
  "variant", ...}]}``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AUTOTUNE_FUNCTION",
    "REFLECTION_KEY",
    "VARIANT_CONFIG_ATTR",
    "GroupReflection",
    "TuningWorkload",
    "encode_reflection",
    "decode_reflection",
    "config_json",
    "FLUSH_L2_FUNCTION",
    "BENCH_UNROLL",
    "RESULTS_FORMAT",
    "GROUP_FIELDS",
    "names_for",
    "bench_name",
    "slot_names",
    "choose_result",
    "per_workload_choices",
    "results_mismatch",
    "fits_i64",
    "workload_values_problem",
    "STRIDED_KEY",
    "StridedTensor",
    "encode_strided",
    "decode_strided",
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
#: Discardable attribute on a ``hal.executable.export`` that materialize-triton-variants made
#: from a Triton config: the config (after ``prune_configs_by`` and heuristics) in its order,
#: ``[["BLOCK", 256], ["num_warps", 4], ...]`` (an array of ``[key, value]`` arrays; values as
#: :func:`config_json` gives them). Later passes (emit-autotune-initializer's ``configs`` and
#: fingerprints, ``inspect``) read it off the IR, so ``-p a,b`` and ``-p a | -p b`` agree.
#: IREE ignores it (an unregistered namespace).
VARIANT_CONFIG_ATTR = "autotune.config"


def config_json(config) -> list | None:
    """A Triton config (``[(key, value), ...]``) as JSON: ``[[key, value], ...]`` with values
    JSON has no type for (Triton dtypes, objects) as their ``str``. None stays None."""
    if config is None:
        return None
    return [[str(k), v if v is None or isinstance(v, (bool, int, float, str)) else str(v)] for k, v in config]


@dataclass
class TuningWorkload:
    """One tuning workload of a group (reflection field ``workloads``): ``tune_args`` (the fake
    arguments' types as MLIR text, one per host argument), ``bench`` (one benchmark entry
    ``(n: index) -> ...`` per variant, running ``n * unroll`` dispatches; ``""`` for a variant
    the dispatch it runs may not run, :meth:`GroupReflection.tuned_allowed`) and ``workload`` (an
    entry ``() -> (i64, ...)`` returning the dispatch's workload values on these arguments, or
    "")."""

    tune_args: list[str]
    bench: list[str]
    workload: str = ""


@dataclass
class GroupReflection:
    """One group in ``@__autotune``'s reflection metadata (the compiler writes it, the runtime
    and ``inspect`` read it).

    Required: ``executable`` and ``group`` symbol; ``variants`` (export names, in order);
    ``default`` (variant index); ``select`` (entry ``(i32) -> ()`` setting the choice);
    ``bench`` (one benchmark entry per variant on the first tuning workload, ``""`` for a
    variant the dispatch it runs may not run (see ``allowed``), [] when the group cannot be
    tuned on fake data); ``host`` (the function holding its first dispatch).

    Optional (modules of earlier releases lack them; readers get the defaults): ``choice``
    (the i32 global), ``unroll`` (:data:`BENCH_UNROLL`), ``tune_args`` (the first workload's
    fake argument types), ``configs`` (per variant its Triton config as ``[[key, value],
    ...]``, or null: RFC-form variants have none), ``workloads`` (per tuning workload, in
    ``tune_workload`` order, :class:`TuningWorkload`; workload 0 is ``bench``/``tune_args``),
    ``slots`` (setter entries ``(choice: i32, w0: i64, ...) -> ()`` of the run-time table of
    per-workload choices, :func:`slot_names`), ``workload_of`` (an entry with the host's
    signature returning its dispatch's workload values, or ""), ``arity`` (workload values per
    dispatch), ``fingerprints`` (per variant, a hash of what decides its timing: code, layout,
    count region, config; the key of the per-variant tuning cache), ``check`` (per variant, an
    entry ``() -> (results...)`` running it once on fresh fake data, for cross-checking; ""
    where a variant cannot be checked), ``compare`` (an entry ``(reference results...,
    results..., rtol_0: f32, atol_0: f32, ...) -> (i64, ...)`` counting per result, on the
    device, the elements that differ beyond the tolerances; "" when the results are compared on
    the host), ``reference`` (an entry ``() -> (results...)`` like ``check``'s, running a
    computation of the default variant's results in higher precision on the same fake data:
    never a variant; when present the cross-check measures every variant's error against it and
    keeps one no less accurate than the default, :func:`autotune_export.runtime.checking.baseline`;
    "" where variants are compared with the default), ``reference_note`` (one line saying what
    the reference computation is, or why the group has none and what its variants are compared
    with instead: ``autotune-export program``'s groups, :func:`autotune_export.program.reference.reference_note`;
    "" where the module does not say), ``frozen_choices`` (the group's ``choices(...)``, fixed when the module was built
    by ``--tuning-results``: per frozen workload ``{"workload": [i64, ...], "variant": K}``, in
    the clause's order; every dispatch site of the group takes variant K when its workload
    values equal these, unless a filled run-time slot decides first), ``default_frozen``
    (whether ``default(@v)`` fixed ``default`` at build time; null where the module does not
    say, as modules of earlier releases), ``allowed`` (the dispatch sites of the group that may
    run fewer variants than it, because the kernel's ``prune_configs_by`` keeps fewer configs
    for their arguments, as Triton prunes at every launch: per site ``{"site": "dispatch 1 in
    @f (line 12)", "host": "f", "tuned": bool, "variants": [K, ...]}``, the variants in
    Triton's order for its arguments, the first being what the site runs for any other choice;
    ``tuned`` marks the dispatch the benchmark and check entries run, which have no entry
    (``""``) for a variant not listed there; empty when every site may run every variant).
    """

    executable: str
    group: str
    variants: list[str]
    default: int
    select: str
    bench: list[str]
    host: str
    choice: str = ""
    unroll: int = 1
    tune_args: list[str] = field(default_factory=list)
    configs: list = field(default_factory=list)
    workloads: list[TuningWorkload] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)
    workload_of: str = ""
    arity: int = 0
    fingerprints: list[str] = field(default_factory=list)
    check: list[str] = field(default_factory=list)
    compare: str = ""
    reference: str = ""
    reference_note: str = ""
    frozen_choices: list = field(default_factory=list)
    default_frozen: bool | None = None
    allowed: list = field(default_factory=list)

    @property
    def key(self) -> str:
        """``executable::group``, how the runtime names a group."""
        return f"{self.executable}::{self.group}"

    def tuned_allowed(self) -> list[int]:
        """The variants (indices) that the dispatch the benchmark and check entries run may
        run: its ``allowed`` entry marked ``tuned``, in its order (the first is what it runs
        for any other choice); every variant, in order, without one. The only variants tuning
        times and round-robin rotates."""
        for entry in self.allowed:
            if isinstance(entry, dict) and entry.get("tuned") and entry.get("variants"):
                return [int(k) for k in entry["variants"]]
        return list(range(len(self.variants)))

    def tuning_workloads(self) -> list[TuningWorkload]:
        """The tuning workloads (modules of earlier releases, which carry no ``workloads``: the
        one workload of ``bench``/``tune_args``; none when there are no benchmark entries)."""
        if self.workloads:
            return self.workloads
        return [TuningWorkload(self.tune_args, self.bench)] if self.bench else []

    def to_json(self) -> dict:
        """The group as the JSON object of the reflection list."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> "GroupReflection":
        """A group from its JSON object: unknown fields (of later releases) are ignored, missing
        optional ones get their defaults. Raises ValueError when ``data`` is no object or lacks
        a required field."""
        if not isinstance(data, dict):
            raise ValueError(f"a group of the {REFLECTION_KEY} metadata is not an object: {data!r}")
        names = {f.name: f for f in dataclasses.fields(cls)}
        missing = [
            n
            for n, f in names.items()
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING and n not in data
        ]
        if missing:
            raise ValueError(f"a group of the {REFLECTION_KEY} metadata lacks {', '.join(missing)}")
        values = {n: data[n] for n in names if n in data}
        workloads = values.get("workloads") or []
        if not all(isinstance(w, dict) and "tune_args" in w and "bench" in w for w in workloads):
            raise ValueError(
                f"a workload of group {data.get('group')!r} in the {REFLECTION_KEY} metadata lacks tune_args or bench"
            )
        values["workloads"] = [TuningWorkload(w["tune_args"], w["bench"], w.get("workload", "")) for w in workloads]
        return cls(**values)


#: Fields of one group in the reflection metadata (:class:`GroupReflection`'s).
GROUP_FIELDS = tuple(f.name for f in dataclasses.fields(GroupReflection))


def encode_reflection(groups: list[GroupReflection]) -> str:
    """The value of :data:`REFLECTION_KEY`: the groups as a compact JSON list (keys sorted, so
    equal groups give equal bytes)."""
    return json.dumps([g.to_json() for g in groups], separators=(",", ":"), sort_keys=True)


def decode_reflection(text: str | bytes) -> list[GroupReflection]:
    """The groups of a :data:`REFLECTION_KEY` value. Raises ValueError for text that is not
    a JSON list of groups (see :meth:`GroupReflection.from_json`)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"the {REFLECTION_KEY} metadata is not JSON: {err}") from None
    if not isinstance(data, list):
        raise ValueError(f"the {REFLECTION_KEY} metadata is not a list of groups")
    return [GroupReflection.from_json(d) for d in data]


#: Key, in a host function's ``iree.reflection`` dictionary, of the JSON list of its strided
#: tensors (:class:`StridedTensor`), written by ``launch_to_mlir`` (docs/call-sites.md,
#: "Strided tensors").
STRIDED_KEY = "autotune.strided"


@dataclass
class StridedTensor:
    """A tensor of a launch that was a strided view (docs/call-sites.md, "Strided tensors"):
    kernel parameter ``param``; the host function's ``argument`` and/or ``result`` index that
    carries it (None where it is not one); the view as the launch passed it (``view_shape``,
    ``strides`` in elements, ``kind``: permuted, broadcast, gapped or overlapping, as
    :class:`autotune_export.cuda.launch_model.StorageSpan` names it); ``type``: the tensor type
    of its storage span, what the host passes and gets back."""

    param: str
    argument: int | None
    result: int | None
    view_shape: list
    strides: list
    kind: str
    type: str

    def describe(self) -> str:
        """``y_ptr (argument 1, result 0): (77, 300) view, strides (1, 77), permuted: storage span tensor<300x77xf32>``."""
        where = ", ".join(f"{k} {v}" for k, v in (("argument", self.argument), ("result", self.result)) if v is not None)
        return (
            f"{self.param} ({where}): {tuple(self.view_shape)} view, strides {tuple(self.strides)}, {self.kind}: "
            f"storage span {self.type}"
        )


def encode_strided(tensors: list[StridedTensor]) -> str:
    """The value of :data:`STRIDED_KEY`: a compact JSON list (keys sorted)."""
    return json.dumps([dataclasses.asdict(t) for t in tensors], separators=(",", ":"), sort_keys=True)


def decode_strided(text: str | bytes) -> list[StridedTensor]:
    """The tensors of a :data:`STRIDED_KEY` value. Raises ValueError for text that is not a JSON
    list of them."""
    try:
        data = json.loads(text)
        return [StridedTensor(**d) for d in data]
    except (json.JSONDecodeError, TypeError) as err:
        raise ValueError(f"the {STRIDED_KEY} metadata is not a list of strided tensors: {err}") from None


def names_for(executable: str, group: str) -> dict[str, str]:
    """Symbols the compiler creates for group ``@group`` of ``@executable``: ``prefix``
    (``__autotune.E.G``), ``choice`` (the i32 global), ``select``, ``bench`` (entry K is
    ``bench + "." + str(K)``)."""
    prefix = f"{AUTOTUNE_FUNCTION}.{executable}.{group}"
    return {
        "prefix": prefix,
        "choice": f"{prefix}.choice",
        "select": f"{prefix}.select",
        "bench": f"{prefix}.bench",
        "workload": f"{prefix}.workload",
        "workload_of": f"{prefix}.workload_of",
        "slot": f"{prefix}.slot",
        "check": f"{prefix}.check",
        "compare": f"{prefix}.compare",
        "reference": f"{prefix}.reference",
    }


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


def fits_i64(value: int) -> bool:
    """Whether ``value`` fits a signed 64-bit integer: the type of a dispatch's workload values
    (the slot setters take ``i64``, ``choices(...)`` stores ``i64`` attributes) and of the
    integer attributes of the group op."""
    return -(1 << 63) <= value < (1 << 63)


def workload_values_problem(entry: dict) -> str | None:
    """What is wrong with a tuning-results entry's ``workload_values`` (None when it has none
    or they are fine): a list of integers that fit ``i64`` (:func:`fits_i64`)."""
    values = entry.get("workload_values")
    if values is None:
        return None
    if not isinstance(values, list) or not all(type(v) is int for v in values):
        return f'"workload_values" must be a list of integers, not {json_text(values)}'
    big = [v for v in values if not fits_i64(v)]
    if big:
        return f"workload value {big[0]} does not fit in a 64-bit signed integer (the dispatch's workload values are i64)"
    return None


def json_text(value) -> str:
    """``value`` as it reads in JSON, cut to 60 characters."""
    import json

    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _workload_key(entry: dict) -> tuple:
    """What a tuning-results entry decides for: its ``workload_values`` (the dispatch's workload
    values, when it has them), else its ``workload`` (the tuning or live workload's key)."""
    values = entry.get("workload_values")
    if isinstance(values, list) and values and workload_values_problem(entry) is None:
        return ("values", *values)
    return ("workload", str(entry.get("workload")))


def choose_result(entries: list, executable: str, group: str, variants: list[str]) -> dict | None:
    """The group's own choice in a tuning-results file: the variant ``@executable::@group`` uses
    for every workload its per-workload table does not hold. One rule, used by the runtime's
    tuning (every strategy, after each decision), its ``strategy="fixed"`` and
    ``--tuning-results`` (pin-variants' ``default(@v)``), so all of them choose alike:

    1. the entries naming this executable and group whose ``variant`` is one of ``variants``;
    2. per workload (its ``workload_values``, else its ``workload`` key) the last of them (the
       most recent: the runtime's cache replaces an entry of the same key and appends new ones);
    3. the variant that most workloads chose; a tie goes to the lower index in ``variants``
       (as :func:`autotune_export.runtime.pick` breaks timing ties).

    An unknown workload gets the variant that wins most known ones, whatever the order the
    workloads were tuned, called or written in. Returns the last entry (of step 2) choosing that
    variant; None when step 1 finds none.
    """
    latest: dict[tuple, dict] = {}
    for entry in entries:
        if (
            isinstance(entry, dict)
            and entry.get("executable") == executable
            and entry.get("group") == group
            and entry.get("variant") in variants
        ):
            key = _workload_key(entry)
            latest.pop(key, None)
            latest[key] = entry
    if not latest:
        return None
    votes: dict[str, int] = {}
    for entry in latest.values():
        votes[entry["variant"]] = votes.get(entry["variant"], 0) + 1
    most = max(votes.values())
    variant = next(v for v in variants if votes.get(v) == most)
    return [e for e in latest.values() if e["variant"] == variant][-1]


def per_workload_choices(entries: list, executable: str, group: str, variants: list[str]) -> list[tuple[tuple[int, ...], str]]:
    """The per-workload table of ``@executable::@group`` in a tuning-results file: per distinct ``workload_values`` (the dispatch's workload
    values the runtime tuned a workload for) the variant of the last entry with those values
    whose variant the group has, in order of first appearance. Entries without workload values
    (files of earlier releases, strategies that tuned one workload) add nothing."""
    table: dict[tuple[int, ...], str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("executable") != executable or entry.get("group") != group:
            continue
        key = _workload_key(entry)
        if key[0] == "values" and entry.get("variant") in variants:
            table[key[1:]] = entry["variant"]
    return list(table.items())


def results_mismatch(path: str, entries: list, groups: list[tuple[str, str]]) -> tuple[str, str] | None:
    """What a tuning-results file ``path`` (its ``entries``) holds that a module with ``groups``
    (``(executable, group)`` pairs) has no group for, as ``(severity, message)``: ``"warning"``
    when no entry matches a group (a file of another module or build: nothing is pinned, the
    module stays on its defaults), ``"remark"`` when some entries match no group; None when every
    entry matches one. The one wording of ``--tuning-results`` (pin-variants) and of the
    runtime's ``strategy="fixed"``."""
    have = set(groups)
    named = [(e.get("executable"), e.get("group")) for e in entries if isinstance(e, dict)]
    unmatched = sorted({f"@{x}::@{g}" for x, g in named if (x, g) not in have})
    if not unmatched:
        return None

    def listed(names: list[str]) -> str:
        return (", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")) if names else "none"

    if not any(n in have for n in named):
        mine = listed([f"@{x}::@{g}" for x, g in groups])
        return (
            "warning",
            f"tuning results '{path}' match no group of this module, so nothing is pinned: the file holds results for "
            f"{listed(unmatched)}; the module's groups are {mine} (results of another module or build?)",
        )
    return ("remark", f"tuning results '{path}' also hold results for {listed(unmatched)}, which this module has no group for")
