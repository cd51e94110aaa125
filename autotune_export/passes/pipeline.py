"""Pipelines: the ``--emit`` defaults, specs as mlir-opt and xdsl-opt write them
(``name{option=value option=value},name``, ``dialects/pipeline.lark``), and running them."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Sequence

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
from autotune_export.support.diagnostics import DiagnosticError
from iree.compiler import ir

__all__ = ["DEFAULT_PIPELINES", "PassSpec", "parse_pipeline", "build_pipeline", "run_pipeline"]


#: The passes each ``--emit`` kind runs when ``-p`` is not given.
DEFAULT_PIPELINES = {
    "mlir": ["zero-fill-outputs", "materialize-triton-variants", "pin-variants", "verify-autotuning-groups",
             "emit-autotune-initializer"],
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
        raise DiagnosticError.at(None, f"malformed pass pipeline '{text}'{where}: expected name{{option=value ...}},name...") from None
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
        if kind.startswith("int"):
            return int(text)
        if kind.startswith("str"):
            return text
    except ValueError:
        pass
    else:
        raise DiagnosticError.at(None, f"option '{f.name.replace('_', '-')}' of pass '{cls.name}' cannot be set from text")
    raise DiagnosticError.at(None, f"option '{f.name.replace('_', '-')}' of pass '{cls.name}' takes {kind.split(' |')[0]}, got '{text}'")


def build_pipeline(pipeline: str | Sequence[str | PassSpec | ModulePass], **defaults: Any) -> list[ModulePass]:
    """Pass instances for ``pipeline``: a spec string, or a list of names, specs and passes.

    ``defaults`` give options by field name (``target="sm_90"``, ``jobs=2``) to every pass that
    has such an option, unless the spec sets it. Raises DiagnosticError naming an unknown pass
    or option (with the known ones)."""
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
            raise DiagnosticError.at(None, f"unknown pass '{item.name}'; known passes: {', '.join(sorted(PASSES))}")
        fields = {f.name: f for f in pass_options(cls)}
        values = {k: v for k, v in defaults.items() if k in fields}
        for key, text in item.options.items():
            fname = key.replace("-", "_")
            if fname not in fields:
                known = ", ".join(n.replace("_", "-") for n in fields) or "none"
                raise DiagnosticError.at(None, f"pass '{cls.name}' has no option '{key}' (its options: {known})")
            values[fname] = _convert(cls, fields[fname], text)
        out.append(cls(**values))
    return out


def run_pipeline(pipeline: str | Sequence[str | PassSpec | ModulePass], ctx: PassContext, module, **defaults: Any) -> None:
    """Build ``pipeline`` (see :func:`build_pipeline`; ``defaults`` are options by field name)
    and run its passes in order on ``module``. Raises DiagnosticError."""

    passes = build_pipeline(pipeline, **defaults)
    with module.context, ir.Location.unknown():
        for p in passes:
            p.apply(ctx, module)
