"""Passes over an ``iree.compiler.ir`` module, one per file, in the style of xDSL's
``xdsl/transforms``: a small dataclass with a kebab-case ``name``, its options as its own
fields, and ``apply(ctx, module)``. A pipeline is written as mlir-opt and xdsl-opt write it,
``name{option=value option=value},name`` (``dialects/pipeline.lark``); :func:`run_pipeline`
runs one, as ``autotune-export -p SPEC`` does.

:class:`PassContext` carries what every pass shares and none configures: the input (for
locations and relative kernel paths), where remarks go, and statistics.
"""

from autotune_export.passes.base import PASSES, ModulePass, Pass, PassContext, pass_options, register
from autotune_export.passes.pipeline import (
    DEFAULT_PIPELINES,
    PIPELINE_OPTIONS,
    SPEC_ONLY_OPTIONS,
    PassSpec,
    PipelineOption,
    build_pipeline,
    check_options,
    parse_pipeline,
    run_pipeline,
)

__all__ = [
    "ModulePass",
    "Pass",
    "PassContext",
    "PassSpec",
    "PASSES",
    "register",
    "parse_pipeline",
    "build_pipeline",
    "check_options",
    "PIPELINE_OPTIONS",
    "SPEC_ONLY_OPTIONS",
    "PipelineOption",
    "run_pipeline",
    "DEFAULT_PIPELINES",
    "pass_options",
]
