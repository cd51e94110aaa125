"""Passes over an ``iree.compiler.ir`` module, one per file, in the style of xDSL's
``xdsl/transforms``: a small dataclass with a kebab-case ``name``, its options as its own
fields, and ``apply(ctx, module)``. A pipeline is written as mlir-opt and xdsl-opt write it,
``name{option=value option=value},name`` (``dialects/pipeline.lark``); :func:`run_pipeline`
runs one, as ``autotune-export -p SPEC`` does.

:class:`PassContext` carries what every pass shares and none configures: the input (for
locations and relative kernel paths), where remarks go, and statistics.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Sequence

import lark

from autotune_export.dialects import grammar
from autotune_export.frontend.reader import SourceFile
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError

__all__ = [
    "ModulePass",
    "Pass",
    "PassContext",
    "PassSpec",
    "PASSES",
    "register",
    "parse_pipeline",
    "build_pipeline",
    "run_pipeline",
    "DEFAULT_PIPELINES",
    "pass_options",
]


@dataclass
class PassContext:
    """What every pass sees: ``source`` (the input: its name for diagnostics, its directory
    for relative kernel paths), ``remark`` (called with remarks such as pruned configs and
    cache figures; default: printed to stderr) and ``stats`` (counters the passes add to, e.g.
    ``compiled`` and ``cached`` variants)."""

    source: SourceFile
    remark: Callable[[Diagnostic], None] | None = None
    stats: dict = field(default_factory=dict)

    def emit_remark(self, diag: Diagnostic) -> None:
        if self.remark is not None:
            self.remark(diag)
        else:
            print(diag.format(), file=sys.stderr)


@dataclass
class ModulePass(abc.ABC):
    """Base class: subclasses are dataclasses that set ``name`` (kebab-case) and ``summary``,
    declare their options as fields (with defaults), and implement ``apply``."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    @abc.abstractmethod
    def apply(self, ctx: PassContext, module) -> None:
        """Transform ``module`` in place; raise DiagnosticError for user errors."""

    def spec(self) -> str:
        """This pass as a pipeline element: ``name{option=value ...}`` (options that differ
        from their defaults and can be written as text)."""
        opts = []
        for f in pass_options(type(self)):
            value = getattr(self, f.name)
            if value != f.default and isinstance(value, (str, int, bool)):
                text = str(value).lower() if isinstance(value, bool) else str(value)
                opts.append(f"{f.name.replace('_', '-')}={text}")
        return self.name + ("{" + " ".join(opts) + "}" if opts else "")


#: The name xDSL uses is ModulePass; older code says Pass.
Pass = ModulePass

PASSES: dict[str, type[ModulePass]] = {}


def register(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make the pass available by its ``name``."""
    PASSES[cls.name] = cls
    return cls


def _load_all() -> None:
    from autotune_export.passes import (  # noqa: F401  (registration side effects)
        emit_autotune_initializer,
        lower_autotuning_dispatch,
        materialize_triton_variants,
        pin_variants,
        split_architectures,
        verify_autotuning_groups,
    )


def pass_options(cls: type[ModulePass]) -> list[dataclasses.Field]:
    """The options of a pass: its dataclass fields."""
    return [f for f in dataclasses.fields(cls) if f.init]


#: The passes each ``--emit`` kind runs when ``-p`` is not given.
DEFAULT_PIPELINES = {
    "mlir": ["materialize-triton-variants", "pin-variants", "verify-autotuning-groups", "emit-autotune-initializer"],
    "iree": [
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
    return lark.Lark(grammar("pipeline.lark"), parser="lalr")


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
    _load_all()
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
    from iree.compiler import ir

    passes = build_pipeline(pipeline, **defaults)
    with module.context, ir.Location.unknown():
        for p in passes:
            p.apply(ctx, module)
