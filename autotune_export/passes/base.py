"""The pass interface: :class:`ModulePass` (a dataclass per pass, options as fields, in the style
of xDSL's ``ModulePass``), :class:`PassContext`, and the registry filled by :func:`register`."""

from __future__ import annotations

import abc
import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Callable, ClassVar

from autotune_export.frontend.reader import SourceFile
from autotune_export.support.diagnostics import Diagnostic

__all__ = ["ModulePass", "Pass", "PassContext", "PASSES", "register", "pass_options"]


@dataclass
class PassContext:
    """What every pass sees: ``source`` (the input: its name for diagnostics, its directory
    for relative kernel paths), ``remark`` (called with remarks such as pruned configs and
    cache figures; default: printed to stderr) and ``stats`` (counters the passes add to, e.g.
    ``compiled`` and ``cached`` variants).

    Nothing here carries state from one pass to a later one: what a later pass reads is in the
    IR (e.g. a variant's config on its export,
    :data:`autotune_export.contract.VARIANT_CONFIG_ATTR`), so a pipeline split into two
    commands (``-p a | -p b``) prints what ``-p a,b`` prints. ``stats`` is output only."""

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


def pass_options(cls: type[ModulePass]) -> list[dataclasses.Field]:
    """The options of a pass: its dataclass fields."""
    return [f for f in dataclasses.fields(cls) if f.init]
