"""Pipelines: the ``--emit`` defaults, specs as mlir-opt and xdsl-opt write them
(``name{option=value option=value},name``, ``dialects/pipeline.lark``), the options given once
for a whole pipeline (the command's flags, :data:`PIPELINE_OPTIONS`: an explicit mapping to
pass options, checked by :func:`check_options`), and running them."""

from __future__ import annotations

import argparse
import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import lark

from autotune_export.dialects import grammar
from autotune_export.passes import (  # noqa: F401  (each module registers its pass)
    emit_autotune_initializer,
    lower_autotuning_dispatch,
    materialize_triton_variants,
    pin_variants,
    split_architectures,
    verify_autotuning_groups,
    zero_outputs,
)
from autotune_export.passes.base import PASSES, ModulePass, PassContext, pass_options
from autotune_export.support.diagnostics import DiagnosticError, did_you_mean, input_named
from iree.compiler import ir

__all__ = [
    "DEFAULT_PIPELINES",
    "PIPELINE_OPTIONS",
    "SPEC_ONLY_OPTIONS",
    "OPTION_CHECKS",
    "PipelineOption",
    "PassSpec",
    "check_options",
    "parse_pipeline",
    "build_pipeline",
    "run_pipeline",
    "add_pruning_arguments",
]


#: The passes each ``--emit`` kind runs when ``-p`` is not given.
DEFAULT_PIPELINES = {
    "mlir": [
        "zero-fill-outputs",
        "materialize-triton-variants",
        "pin-variants",
        "verify-autotuning-groups",
        "emit-autotune-initializer",
    ],
    "iree": [
        "zero-fill-outputs",
        "materialize-triton-variants",
        "pin-variants",
        "verify-autotuning-groups",
        "emit-autotune-initializer",
        "lower-autotuning-dispatch",
        "split-architectures",
    ],
}
DEFAULT_PIPELINES["vmfb"] = DEFAULT_PIPELINES["iree"]


# ----- options given for a whole pipeline ----------------------------------------------------
@dataclass(frozen=True)
class PipelineOption:
    """An option given once for a whole pipeline: ``keyword`` (the keyword of
    :func:`build_pipeline`/:func:`run_pipeline`), ``flag`` (the ``autotune-export`` flag that
    gives it, None for an option only the Python API gives) and ``sets``: the pass options it
    sets, as ``(pass name, option field)``."""

    keyword: str
    flag: str | None
    sets: tuple[tuple[str, str], ...]


_MATERIALIZE = "materialize-triton-variants"
#: The options the command's flags give for a whole pipeline and the pass options each one sets
#: (unless a pipeline spec sets them: ``materialize-triton-variants{target=sm_90}``). A pass
#: option reached by no entry here is listed in :data:`SPEC_ONLY_OPTIONS`; :func:`check_options`
#: holds the two to the passes' fields, so renaming a field fails loudly instead of silently
#: losing its flag.
PIPELINE_OPTIONS: tuple[PipelineOption, ...] = (
    PipelineOption("target", "--target", ((_MATERIALIZE, "target"), ("verify-autotuning-groups", "target"))),
    PipelineOption("jobs", "--jobs", ((_MATERIALIZE, "jobs"),)),
    PipelineOption("executor", None, ((_MATERIALIZE, "executor"),)),
    PipelineOption("object_format", "--object-format", ((_MATERIALIZE, "object_format"),)),
    PipelineOption("ptx_version", "--ptx-version", ((_MATERIALIZE, "ptx_version"),)),
    PipelineOption("cache_dir", "--cache-dir", ((_MATERIALIZE, "cache_dir"),)),
    PipelineOption("use_cache", "--no-cache", ((_MATERIALIZE, "use_cache"),)),  # --no-cache gives False
    PipelineOption("tuning_results", "--tuning-results", (("pin-variants", "tuning_results"),)),
    PipelineOption("max_spills", "--max-spills", ((_MATERIALIZE, "max_spills"),)),
    PipelineOption("max_variants", "--max-variants", ((_MATERIALIZE, "max_variants"),)),
)
#: Pass options no flag gives, set only in a pipeline spec: ``(pass name, option field)``.
SPEC_ONLY_OPTIONS: frozenset[tuple[str, str]] = frozenset({("emit-autotune-initializer", "workload_slots")})


def _in_range(least: int, most: int | None, why: str = "") -> Callable[[int], int]:
    """A check of an integer option: ``least <= value <= most`` (``most`` None: no bound)."""

    def check(value: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < least or (most is not None and value > most):
            allowed = f"in [{least}, {most}]" if most is not None else f">= {least}"
            raise ValueError(f"takes an integer {allowed}{why}, got {value!r}")
        return value

    return check


def _jobs(value: int) -> int:
    """``jobs``: :func:`autotune_export.cuda.workers.check_jobs`, the one rule for it."""
    from autotune_export.cuda import workers

    workers.check_jobs(value)
    return value


def _ptx_version(value: str | int) -> int:
    """``ptx_version``: 86 or 8.6, as ``--ptx-version`` takes it (:func:`parse_ptx_version`)."""
    from autotune_export.cuda.ptx.version import parse_ptx_version

    return parse_ptx_version(value)


#: The values a pass's integer option takes, ``(pass name, option field) -> check`` (the value
#: as the field holds it, or ValueError with the allowed range), applied where options are
#: taken (:func:`build_pipeline`: a spec's text and a pipeline option's keyword alike), so a bad
#: value is a diagnostic before any pass runs. ``workload_slots``: every slot is globals and a
#: compare at every dispatch site of the group, so it is bounded (a value of 10^11 ran
#: unbounded); 0 emits no run-time table.
OPTION_CHECKS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("emit-autotune-initializer", "workload_slots"): _in_range(
        0, 256, " (slots of a group's run-time table of per-workload choices; 0: none)"
    ),
    (_MATERIALIZE, "jobs"): _jobs,
    (_MATERIALIZE, "ptx_version"): _ptx_version,
    (_MATERIALIZE, "max_spills"): _in_range(0, None),
    (_MATERIALIZE, "max_variants"): _in_range(1, None),
}


def check_options(
    passes: dict[str, type[ModulePass]] | None = None,
    options: Sequence[PipelineOption] = PIPELINE_OPTIONS,
    spec_only: frozenset[tuple[str, str]] = SPEC_ONLY_OPTIONS,
) -> list[str]:
    """What is wrong with the mapping of pipeline options to pass options (``passes``: the
    registry, default :data:`~autotune_export.passes.base.PASSES`): an entry naming no
    registered pass or no option of its pass, a keyword given twice, a pass option that no
    entry sets and :data:`SPEC_ONLY_OPTIONS` does not list, an :data:`OPTION_CHECKS` entry naming
    no option. Empty when it holds."""
    passes = PASSES if passes is None else passes
    problems = []
    keywords = [o.keyword for o in options]
    problems += [f"pipeline option '{k}' is defined twice" for k in sorted({k for k in keywords if keywords.count(k) > 1})]
    reached = set(spec_only)
    named = [(f"pipeline option '{o.keyword}'", target) for o in options for target in o.sets]
    named += [("SPEC_ONLY_OPTIONS", target) for target in sorted(spec_only)]
    named += [("OPTION_CHECKS", target) for target in sorted(OPTION_CHECKS)]
    for who, (name, fname) in named:
        cls = passes.get(name)
        if cls is None:
            problems.append(f"{who} names pass '{name}', which is not registered")
        elif fname not in {f.name for f in pass_options(cls)}:
            problems.append(f"{who} names option '{fname}' of pass '{name}', which has no such option")
    reached |= {target for o in options for target in o.sets}
    for name, cls in sorted(passes.items()):
        for f in pass_options(cls):
            if (name, f.name) not in reached:
                problems.append(
                    f"option '{f.name}' of pass '{name}' is set by no pipeline option and not listed in SPEC_ONLY_OPTIONS"
                )
    return problems


@functools.lru_cache(maxsize=1)
def _checked_options() -> dict[str, PipelineOption]:
    """:data:`PIPELINE_OPTIONS` by keyword, after :func:`check_options` (raises RuntimeError,
    naming every problem, when the mapping does not match the passes)."""
    problems = check_options()
    if problems:
        raise RuntimeError("pipeline options do not match the passes' options:\n  " + "\n  ".join(problems))
    return {o.keyword: o for o in PIPELINE_OPTIONS}


# ----- pipeline specs ------------------------------------------------------------------------
@dataclass
class PassSpec:
    """One element of a pipeline spec: a pass name and its options as written (text)."""

    name: str
    options: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=1)
def _pipeline_parser() -> lark.Lark:
    return lark.Lark(grammar("pipeline.lark"), parser="lalr", cache=True)


def parse_pipeline(text: str) -> list[PassSpec]:
    """``"a{x=1 y=two},b"`` -> ``[PassSpec("a", {"x": "1", "y": "two"}), PassSpec("b")]``.
    Raises DiagnosticError for a malformed spec (with the column) or an option given twice."""
    try:
        tree = _pipeline_parser().parse(text)
    except lark.UnexpectedInput as err:
        col = getattr(err, "column", None)
        where = f" at column {col}" if isinstance(col, int) and col > 0 else ""
        # Shown escaped (a newline as backslash-n): a diagnostic is one line (docs/troubleshooting.md).
        shown = text.encode("unicode_escape").decode("ascii")
        raise DiagnosticError.at(
            None, f"malformed pass pipeline '{shown}'{where}: expected name{{option=value ...}},name..."
        ) from None
    specs = []
    for node in tree.children:
        if node is None:
            continue
        spec = PassSpec(str(node.children[0]))
        for opts in node.children[1:]:
            for opt in opts.children:
                if opt is None:
                    continue
                key, value = str(opt.children[0]), opt.children[1]
                text_value = str(value.children[0])
                if value.data == "quoted_value":
                    text_value = text_value[1:-1].encode("utf-8").decode("unicode_escape")
                if key in spec.options:
                    raise DiagnosticError.at(None, f"option '{key}' is given twice for pass '{spec.name}'")
                spec.options[key] = text_value
        specs.append(spec)
    return specs


def _convert(cls: type[ModulePass], f: dataclasses.Field, text: str) -> Any:
    """An option's text as the field's type (``str``, ``int``, ``bool``, optional ones)."""
    kind = str(f.type)
    optional = "None" in kind
    if optional and text.lower() in ("none", ""):
        return None
    try:
        if kind.startswith("bool"):
            if text.lower() in ("true", "1", "yes", "on"):
                return True
            if text.lower() in ("false", "0", "no", "off"):
                return False
            raise ValueError
        if (cls.name, f.name) == (_MATERIALIZE, "ptx_version"):
            return text  # 86 or 8.6: OPTION_CHECKS parses it
        if kind.startswith("int"):
            return int(text)
        if kind.startswith("str"):
            return text
    except ValueError:
        pass
    else:
        raise DiagnosticError.at(None, f"option '{f.name.replace('_', '-')}' of pass '{cls.name}' cannot be set from text")
    raise DiagnosticError.at(
        None, f"option '{f.name.replace('_', '-')}' of pass '{cls.name}' takes {kind.split(' |')[0]}, got '{text}'"
    )


def build_pipeline(pipeline: str | Sequence[str | PassSpec | ModulePass], **defaults: Any) -> list[ModulePass]:
    """Pass instances for ``pipeline``: a spec string, or a list of names, specs and passes.

    ``defaults`` are pipeline options by keyword (:data:`PIPELINE_OPTIONS`: ``target="sm_90"``,
    ``jobs=2``); each sets the pass options its entry names, unless the spec sets them. Raises
    DiagnosticError naming an unknown pass or option of a spec (with the known ones),
    TypeError for an unknown keyword, RuntimeError when the mapping does not match the passes
    (:func:`check_options`)."""
    mapping = _checked_options()
    unknown = sorted(set(defaults) - set(mapping))
    if unknown:
        raise TypeError(f"unknown pipeline option(s) {', '.join(unknown)}; known: {', '.join(mapping)}")
    if isinstance(pipeline, str):
        items: list = parse_pipeline(pipeline)
    else:
        items = [parse_pipeline(p)[0] if isinstance(p, str) else p for p in pipeline]
    out: list[ModulePass] = []
    for item in items:
        if isinstance(item, ModulePass):
            out.append(item)
            continue
        cls = PASSES.get(item.name)
        if cls is None:
            raise DiagnosticError.at(
                None,
                f"unknown pass '{item.name}'; known passes: {', '.join(sorted(PASSES))}"
                + did_you_mean(item.name, sorted(PASSES)),
            )
        fields = {f.name: f for f in pass_options(cls)}
        values = {fname: value for key, value in defaults.items() for name, fname in mapping[key].sets if name == cls.name}
        for key, text in item.options.items():
            fname = key.replace("-", "_")
            if fname not in fields:
                known = ", ".join(n.replace("_", "-") for n in fields) or "none"
                raise DiagnosticError.at(
                    None,
                    f"pass '{cls.name}' has no option '{key}' (its options: {known})"
                    + did_you_mean(key, [n.replace("_", "-") for n in fields]),
                )
            values[fname] = _convert(cls, fields[fname], text)
        for fname, value in values.items():
            check = OPTION_CHECKS.get((cls.name, fname))
            if check is None or value is None:
                continue
            try:
                values[fname] = check(value)
            except ValueError as err:
                raise DiagnosticError.at(None, f"option '{fname.replace('_', '-')}' of pass '{cls.name}': {err}") from None
        out.append(cls(**values))
    return out


def run_pipeline(pipeline: str | Sequence[str | PassSpec | ModulePass], ctx: PassContext, module, **defaults: Any) -> None:
    """Build ``pipeline`` (see :func:`build_pipeline`; ``defaults`` are pipeline options by keyword)
    and run its passes in order on ``module``. Raises DiagnosticError."""

    passes = build_pipeline(pipeline, **defaults)
    with module.context, ir.Location.unknown(), input_named(ctx.source.name):  # "-" is this input
        for p in passes:
            p.apply(ctx, module)


# The command's flags of materialize-triton-variants' pruning (the compile command and inspect).
def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def add_pruning_arguments(p: argparse.ArgumentParser) -> None:
    """``--max-spills N`` and ``--max-variants N``: materialize-triton-variants' pruning of
    compiled variants (docs/limits.md, generated spaces)."""
    p.add_argument(
        "--max-spills",
        type=_count,
        default=None,
        metavar="N",
        help="prune variants that spill more than N registers (Triton's n_spills; default: keep them)",
    )
    p.add_argument(
        "--max-variants",
        type=_positive,
        default=None,
        metavar="N",
        help="keep at most N variants per group: the fewest spills, spread over the config order (default: all)",
    )
