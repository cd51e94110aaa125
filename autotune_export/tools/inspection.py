"""``autotune-export inspect FILE``: what a group holds, from an ``.mlir`` or a ``.vmfb``.

For every autotuning group it shows the variants (export name, ordinal, workgroup size, dynamic
shared memory), the group's layout (bindings and constants), the Triton config of each variant
when the input has it, the default variant (and whether ``default(@v)`` froze it), the
specialized variants and the guards that pick them, and per variant the registers and spills
that ptxas gave it:

* **.mlir**: the front end parses the file and ``materialize-triton-variants`` runs (through
  the variant cache, so a file that was compiled before compiles nothing), then the exports
  and the executable's object are read. ``--tuning-results R.json`` also runs ``pin-variants``.
* **.vmfb**: the ``autotune.groups`` reflection metadata of ``@__autotune`` is read with
  ``iree.runtime`` (no device, no driver: a bare ``VmInstance`` loads the module to read it),
  and each CUDA executable (a ``CDA1`` flatbuffer: a member of the .vmfb's zip directory)
  gives its exports' block size, shared memory, constants and binding flags, and its PTX or
  cubin image. The reflection metadata (read as the runtime reads it,
  :func:`autotune_export.runtime.module_reflection`) also carries each variant's Triton config
  when it was built from the Triton form (``configs``, from the configs materialize recorded on
  the exports; none for RFC-form variants). A .vmfb keeps no ``specialized`` clause: specialized variants are
  recognized by materialize's ``<variant>_spec`` naming.

Registers and spills come from the cubin: PTX is assembled with Triton's ptxas
(:func:`autotune_export.cuda.ptx.assemble`, memoized in the cache under the key materialize uses, so
an unchanged module is not assembled again), then ``cuobjdump --dump-resource-usage`` (bundled
with Triton) reads each function's ``REG``, ``LOCAL``, ``STACK`` and static ``SHARED``. Spills are
reported as Triton does (``n_spills`` = local memory bytes per thread / 4; spilled registers
live in the stack frame). No GPU is needed.

The default output is a table; ``--json`` prints the same facts for machines (format
``autotune-export.inspect/2``; a layout's ``bindings`` are access names, ``"ReadOnly"`` or
``"ReadWrite"`` (flags joined by ``+``: ``"ReadOnly+Indirect"``), its ``binding_flags`` the
flag lists; format 1 wrote ``[]`` for a read-write binding). The library entry point is
:func:`inspect_path`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from autotune_export.cuda.resources import Resources, ResourceError, parse_resource_usage  # noqa: F401 (re-exported)
from autotune_export.cuda.workers import jobs_argument
from autotune_export.frontend.reader import SourceFile
from autotune_export.passes.pipeline import add_pruning_arguments
from autotune_export.support import progress
from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.tools.inspect_mlir import inspect_mlir
from autotune_export.tools.inspect_model import (  # noqa: F401 (re-exported)
    FORMAT,
    ExecutableInfo,
    GroupInfo,
    Inspection,
    Layout,
    SpaceInfo,
    VariantInfo,
    parse_layout,
)
from autotune_export.tools.inspect_objects import CudaExecutable, CudaExport, read_cuda_executable, resource_usage  # noqa: F401
from autotune_export.tools.inspect_vmfb import inspect_vmfb
from autotune_export.support.arguments import ArgumentParser

__all__ = [
    "FORMAT",
    "Layout",
    "Resources",
    "VariantInfo",
    "GroupInfo",
    "SpaceInfo",
    "ExecutableInfo",
    "Inspection",
    "CudaExport",
    "CudaExecutable",
    "inspect_path",
    "inspect_mlir",
    "inspect_vmfb",
    "is_vmfb",
    "read_cuda_executable",
    "resource_usage",
    "main",
]


def is_vmfb(path: str, head: bytes) -> bool:
    return path.endswith(".vmfb") or head.startswith(b"PK\x03\x04") or head[4:8] == b"IREE"


def inspect_path(path: str, **options) -> Inspection:
    """Inspect a ``.mlir`` or ``.vmfb`` file (``-``: MLIR on stdin); ``options`` are
    :func:`inspect_mlir`'s (a .vmfb takes ``resources`` and ``cache_dir``)."""

    if path == "-":
        return inspect_mlir(SourceFile(sys.stdin.read(), "<stdin>", os.getcwd()), **options)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise DiagnosticError.at(None, f"cannot read '{path}': {err.strerror}") from None
    if path.endswith(".py"):
        raise DiagnosticError.at(
            None,
            f"'{path}' is a Python file; inspect takes a .mlir file with autotuning groups (e.g. "
            f'hal.executable.autotuning.export @g triton("{os.path.basename(path)}", "kernel") ...) or a .vmfb '
            "built by autotune-export",
        )
    if is_vmfb(path, data[:8]):
        memo = None
        if options.get("use_cache", True):
            from autotune_export.cuda import triton_compile as tc

            memo = str(options.get("cache_dir") or tc.default_cache_dir())
        return inspect_vmfb(path, data, resources=options.get("resources", True), cache_dir=memo)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DiagnosticError.at(None, f"'{path}' is neither a .vmfb nor UTF-8 MLIR text") from None
    return inspect_mlir(SourceFile(text, path, os.path.dirname(os.path.abspath(path))), **options)


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="autotune-export inspect",
        description="Show the autotuning groups of a .mlir or .vmfb: variants, layout, workgroup size, shared "
        "memory, registers and spills, default and specialized variants.",
    )
    p.add_argument("input", help="a .mlir file ('-' for stdin) or a .vmfb built by autotune-export")
    p.add_argument("--json", action="store_true", help="print JSON (format autotune-export.inspect/2) instead of a table")
    p.add_argument("-o", "--output", default="-", help="write the report here ('-' for stdout, the default)")
    p.add_argument("--no-resources", action="store_true", help="skip registers/spills (no ptxas, no cuobjdump)")
    p.add_argument("--target", default="sm_80", help=".mlir: CUDA architecture of the variants (default: sm_80)")
    p.add_argument("--object-format", choices=("ptx", "cubin"), default="ptx", help=".mlir: object to build (default: ptx)")
    p.add_argument("--ptx-version", type=int, default=86, help=".mlir: PTX ISA pinned in the variants (default: 86)")
    p.add_argument(
        "-j",
        "--jobs",
        type=jobs_argument,
        default=None,
        help=".mlir: processes compiling variants (at least 1; default: one per core)",
    )
    p.add_argument("--tuning-results", default=None, help=".mlir: freeze these choices first (runs pin-variants)")
    add_pruning_arguments(p)  # .mlir: --max-spills, --max-variants, as the compile command
    p.add_argument(
        "--cache-dir",
        default=None,
        help="variant and cubin cache (default: $AUTOTUNE_EXPORT_CACHE_DIR or ~/.cache/autotune-export)",
    )
    p.add_argument("--no-cache", action="store_true", help="compile and assemble without the cache")
    progress.add_arguments(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``autotune-export inspect ...``; returns the exit status (DiagnosticError propagates
    to the command's handler)."""
    args = _parser().parse_args(argv)
    with progress.verbosity(progress.level_of(args)):
        result = inspect_path(
            args.input,
            target=args.target,
            jobs=args.jobs,
            object_format=args.object_format,
            ptx_version=args.ptx_version,
            cache_dir=args.cache_dir,
            use_cache=not args.no_cache,
            tuning_results=args.tuning_results,
            resources=not args.no_resources,
            max_spills=args.max_spills,
            max_variants=args.max_variants,
        )
        text = json.dumps(result.to_json(), indent=2) + "\n" if args.json else result.format_table()
        if args.output == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
    return 0
