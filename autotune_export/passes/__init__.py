"""Passes over an ``iree.compiler.ir`` module, one per file, in the style of xDSL's
``xdsl/transforms``: a small class with a kebab-case ``name`` and ``apply(ctx, module)``;
options live on :class:`PassContext`. :func:`run_pipeline` runs them by name, as
``autotune-export -p a,b,c`` does.
"""

from __future__ import annotations

import abc
import sys
from dataclasses import dataclass, field
from typing import Callable, ClassVar

from autotune_export.support.diagnostics import Diagnostic
from autotune_export.frontend.reader import SourceFile

__all__ = ["Pass", "PassContext", "PASSES", "register", "run_pipeline", "DEFAULT_PIPELINES"]


@dataclass
class PassContext:
    """Options shared by the passes.

    target: CUDA architecture of the Triton variants (``sm_80``, ``sm_90``...).
    jobs: worker processes for variant compilation (None: one per core).
    executor: a ``concurrent.futures.Executor`` to compile variants in (overrides ``jobs``).
    object_format: ``ptx`` (driver JIT at load) or ``cubin`` (assembled by Triton's ptxas).
    ptx_version: PTX ISA pinned in every variant (86 = 8.6, loadable by the CUDA 13.0 driver).
    cache_dir / use_cache: the content-addressed variant cache (see triton_compile).
    tuning_results: JSON file read by pin-variants.
    remark: called with remarks (pruned configs, cache figures); default prints to stderr.
    """

    source: SourceFile
    target: str = "sm_80"
    jobs: int | None = None
    executor: object | None = None
    object_format: str = "ptx"
    ptx_version: int | None = 86
    cache_dir: str | None = None
    use_cache: bool = True
    tuning_results: str | None = None
    remark: Callable[[Diagnostic], None] | None = None
    stats: dict = field(default_factory=dict)

    def emit_remark(self, diag: Diagnostic) -> None:
        if self.remark is not None:
            self.remark(diag)
        else:
            print(diag.format(), file=sys.stderr)

    @property
    def arch(self) -> int:
        """Compute capability as an int: ``sm_90a`` -> 90."""
        digits = "".join(ch for ch in self.target.removeprefix("sm_") if ch.isdigit())
        return int(digits)


class Pass(abc.ABC):
    """Base class: subclasses set ``name`` and implement ``apply``."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    @abc.abstractmethod
    def apply(self, ctx: PassContext, module) -> None:
        """Transform ``module`` in place; raise DiagnosticError for user errors."""


PASSES: dict[str, type[Pass]] = {}


def register(cls: type[Pass]) -> type[Pass]:
    """Class decorator: make the pass available by its ``name``."""
    PASSES[cls.name] = cls
    return cls


def _load_all() -> None:
    from . import (  # noqa: F401  (registration side effects)
        emit_autotune_initializer,
        lower_autotuning_dispatch,
        materialize_triton_variants,
        pin_variants,
        verify_autotuning_groups,
    )


#: The passes each ``--emit`` kind runs when ``-p`` is not given.
DEFAULT_PIPELINES = {
    "mlir": ["materialize-triton-variants", "pin-variants", "verify-autotuning-groups", "emit-autotune-initializer"],
    "iree": [
        "materialize-triton-variants",
        "pin-variants",
        "verify-autotuning-groups",
        "emit-autotune-initializer",
        "lower-autotuning-dispatch",
    ],
}
DEFAULT_PIPELINES["vmfb"] = DEFAULT_PIPELINES["iree"]


def run_pipeline(names: list[str], ctx: PassContext, module) -> None:
    """Run the named passes in order. Raises KeyError naming an unknown pass."""
    _load_all()
    for name in names:
        if name not in PASSES:
            raise KeyError(name)
    from iree.compiler import ir

    with module.context, ir.Location.unknown():
        for name in names:
            PASSES[name]().apply(ctx, module)
