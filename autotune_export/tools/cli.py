"""The ``autotune-export`` command.

::

    autotune-export IN.mlir -o OUT [--emit mlir|iree|vmfb] [-p pass,pass] [--target sm_80]
                    [-j N] [--object-format ptx|cubin] [--tuning-results R.json]
                    [--split-input-file] [--verify-diagnostics] [--no-cache] [--cache-dir DIR]
                    [-q | -v]
    autotune-export inspect FILE.mlir|FILE.vmfb [--json] ...   (see SUBCOMMANDS)

``--emit mlir`` (default) prints the sugared groups for reading and FileCheck; ``iree`` prints
plain input for the installed ``iree-compile``; ``vmfb`` runs ``iree-compile`` for CUDA.
``-`` stands for stdin/stdout. Errors are MLIR-style diagnostics (``FILE:LINE:COL: error:``)
with exit status 1 and no output file; internal errors exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from typing import Sequence

from autotune_export import __version__
from autotune_export.cuda.targets import CudaTarget, TargetError, parse_targets
from autotune_export.support import files, progress
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError
from autotune_export.frontend.reader import SourceFile, parse_source, print_module
from autotune_export.passes import DEFAULT_PIPELINES, PassContext, build_pipeline, run_pipeline
from autotune_export.tools.verify_diagnostics import check_expected, split_input
from iree.compiler.tools import CompilerToolError, compile_str
from autotune_export.passes import PASSES, pass_options

__all__ = ["main", "compile_source", "iree_compile", "read_source", "SUBCOMMANDS"]

# --- subcommands ------------------------------------------------------------------------------
#: ``autotune-export NAME ARGS...`` runs ``MODULE.main(ARGS) -> exit status`` when NAME is a key
#: here (a file of that name is still reachable as ``./NAME``); anything else is the input file
#: of the compile command. Adding a subcommand is one entry (plus its module, whose ``main``
#: parses its own arguments and may raise DiagnosticError; errors are reported as for compile).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "inspect": ("autotune_export.tools.inspection", "show groups, variants, layouts and resource usage of a .mlir or .vmfb"),
    "tune": ("autotune_export.tools.tune", "time every variant of a .vmfb's groups on a device and keep the fastest"),
}
# --- end subcommands --------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="autotune-export",
        description="Compile parameterized Triton kernels into autotuned IREE executables.",
        epilog="subcommands (autotune-export NAME --help for theirs):\n"
        + "\n".join(f"  {name:10} {summary}" for name, (_, summary) in SUBCOMMANDS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", nargs="?", help="input .mlir file ('-' for stdin)")
    p.add_argument("-o", "--output", default="-", help="output file ('-' for stdout, the default)")
    p.add_argument("--emit", choices=("mlir", "iree", "vmfb"), default="mlir", help="what to write (default: mlir)")
    p.add_argument("-p", "--passes", default=None, metavar="PIPELINE",
                   help="passes to run instead of the --emit pipeline: name{option=value ...},name ('' for none)")
    p.add_argument("--target", default="sm_80", help="CUDA architecture of the variants and of iree-compile (default: sm_80)")
    p.add_argument("-j", "--jobs", type=int, default=None, help="processes compiling variants (default: one per core)")
    p.add_argument("--object-format", choices=("ptx", "cubin"), default="ptx", help="object embedded in the executable (default: ptx)")
    p.add_argument("--ptx-version", type=int, default=86, help="PTX ISA version pinned in the variants, e.g. 86 for 8.6 (default: 86)")
    p.add_argument("--tuning-results", default=None, help="freeze the choices of this tuning-results JSON into the IR")
    p.add_argument("--cache-dir", default=None, help="variant cache (default: $AUTOTUNE_EXPORT_CACHE_DIR or ~/.cache/autotune-export)")
    p.add_argument("--no-cache", action="store_true", help="compile every variant, ignoring the cache")
    p.add_argument("--split-input-file", action="store_true", help="process '// -----'-separated chunks independently")
    p.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-* annotations")
    p.add_argument("--backend", choices=("cuda", "llvm-cpu"), default="cuda", help="what --emit vmfb compiles for (default: cuda)")
    p.add_argument("--iree-compile-arg", action="append", default=[], metavar="ARG", help="extra flag for iree-compile (repeatable)")
    p.add_argument("--list-passes", action="store_true", help="list the passes and exit")
    p.add_argument("--version", action="version", version=f"autotune-export {__version__}")
    progress.add_arguments(p)  # -q / -v
    return p


def compile_source(source: SourceFile, passes: str | Sequence, ctx: PassContext, **options) -> str:
    """Parse ``source``, run the pipeline ``passes`` (a spec ``name{opt=val},name`` or a list of
    names, specs and pass instances; ``options`` are pass options by field name, e.g.
    ``target="sm_90"``) and return the printed module (sugared groups).

    Raises DiagnosticError for user errors.
    """
    module = parse_source(source)
    run_pipeline(passes, ctx, module, **options)
    return print_module(module, source.name)


def iree_compile(text: str, target: str, output: str, extra_args: Sequence[str] = (), backend: str = "cuda") -> None:
    """Compile IREE input ``text`` to a .vmfb at ``output``.

    ``backend`` ``cuda``: for the CUDA ``target`` (``sm_90``, or a list ``sm_80,sm_90``: the
    lowest architecture is iree-compile's codegen target); ``llvm-cpu``: for the host CPU
    (groups whose variants IREE compiles itself from an MLIR body; ``target`` is not used).
    Runs the ``iree-compile`` of the installed iree-base-compiler. ``output`` is written
    atomically (:func:`autotune_export.support.files.atomic_write`, default permissions): it is
    left untouched when compiling fails. Raises DiagnosticError with iree-compile's messages when
    it fails, and for an unsupported ``target``.
    """

    if backend == "llvm-cpu":
        args = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                "--iree-llvmcpu-target-cpu=host", *extra_args]
    else:
        # With several architectures (sm_80,sm_90) the module carries one executable variant per
        # architecture; iree-compile's own CUDA codegen target is the lowest of them.
        lowest = min(_targets(target), key=lambda t: t.capability)
        args = ["--iree-hal-target-device=cuda", f"--iree-cuda-target={lowest.name}", *extra_args]
    try:
        vmfb = compile_str(text, extra_args=args)
    except CompilerToolError as err:
        msg = str(err).strip().splitlines()
        detail = next((line for line in msg if "error:" in line), msg[0] if msg else "iree-compile failed")
        raise DiagnosticError.at(None, f"iree-compile failed: {detail.strip()}") from None
    files.atomic_write(output, vmfb)


def _targets(target: str) -> list[CudaTarget]:
    """``--target`` as :class:`~autotune_export.cuda.targets.CudaTarget` objects; a
    DiagnosticError (one line, naming the supported targets) for anything else."""
    try:
        return parse_targets(target)
    except TargetError as err:
        raise DiagnosticError.at(None, str(err)) from None


def read_source(path: str) -> SourceFile:
    """Read an input file (``-``: stdin) as a :class:`~autotune_export.frontend.SourceFile`.

    Relative ``triton("kernel.py", ...)`` paths then resolve against the file's directory (the
    current directory for stdin). Raises DiagnosticError when it cannot be read or is not UTF-8.
    """
    return _read_input(path)


def _read_input(path: str) -> SourceFile:
    if path == "-":
        if sys.stdin is None:
            raise DiagnosticError.at(None, "no standard input to read ('-')")
        return SourceFile(sys.stdin.read(), "<stdin>", os.getcwd())
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as err:
        raise DiagnosticError.at(None, f"cannot read '{path}': {err.strerror}") from None
    except UnicodeDecodeError:
        raise DiagnosticError.at(None, f"'{path}' is not UTF-8 text") from None
    return SourceFile(text, path, os.path.dirname(os.path.abspath(path)))


def _run(args) -> int:
    if args.input is None:
        raise DiagnosticError.at(None, "no input file (give IN.mlir, or '-' for stdin)")
    passes = args.passes if args.passes is not None else DEFAULT_PIPELINES[args.emit]
    # The command's flags are the options of every pass that has them, unless the pipeline
    # spec sets them (materialize-triton-variants{target=sm_90}).
    options = dict(
        target=args.target,
        jobs=args.jobs,
        object_format=args.object_format,
        ptx_version=args.ptx_version,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        tuning_results=args.tuning_results,
    )
    # Unknown passes and options, and an unsupported --target, are reported once, before any
    # input is read.
    build_pipeline(passes, **options)
    _targets(args.target)
    source = _read_input(args.input)
    collected: list[Diagnostic] = []

    def remark(diag: Diagnostic) -> None:
        if args.verify_diagnostics:
            collected.append(diag)
        else:
            progress.echo(diag.format())  # silenced by -q

    chunks = split_input(source) if args.split_input_file else [source]
    outputs: list[str] = []
    failed = False
    start = time.perf_counter()
    stats: dict = {}
    for chunk in chunks:
        ctx = PassContext(source=chunk, remark=remark, stats=stats)
        try:
            outputs.append(compile_source(chunk, passes, ctx, **options))
        except DiagnosticError as err:
            failed = True
            if args.verify_diagnostics:
                collected.extend(err.diagnostics)
            else:
                for d in err.diagnostics:
                    print(d.format(), file=sys.stderr)
    if args.verify_diagnostics:
        problems = check_expected(source, collected)
        for problem in problems:
            print(problem.format(), file=sys.stderr)
        return 1 if problems else 0
    if failed:
        return 1
    text = "\n// -----\n".join(outputs)
    if args.emit == "vmfb":
        if args.output == "-":
            raise DiagnosticError.at(None, "--emit vmfb needs -o FILE.vmfb")
        iree_compile(text, args.target, args.output, args.iree_compile_arg, backend=args.backend)
    elif args.output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        files.atomic_write(args.output, text)  # no partial file; default permissions
    if args.output != "-":
        elapsed = time.perf_counter() - start
        compiled, cached = stats.get("compiled", 0), stats.get("cached", 0)
        note = f" ({compiled} Triton configs compiled, {cached} from cache)" if compiled or cached else ""
        if compiled == 0 and cached:
            note = f" (no Triton config compiled: all {cached} from cache)"
        progress.echo(f"autotune-export: wrote {args.output} in {elapsed:.1f} s{note}")  # silenced by -q
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``autotune-export`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:  # subcommand dispatch (see SUBCOMMANDS)
        module = importlib.import_module(SUBCOMMANDS[argv[0]][0])
        return _guarded(lambda: module.main(argv[1:]))
    args = _parser().parse_args(argv)
    if args.list_passes:

        for name in sorted(PASSES):
            print(f"{name:32} {PASSES[name].summary}")
            opts = [f"{f.name.replace('_', '-')}={f.default}" for f in pass_options(PASSES[name]) if f.name != "executor"]
            if opts:
                print(f"{'':32}   options: {' '.join(opts)}")
        return 0
    with progress.verbosity(progress.level_of(args)):
        return _guarded(lambda: _run(args))


def _guarded(run) -> int:
    """Call ``run()`` and turn errors into an exit status: 1 with diagnostics for user errors,
    130 when interrupted, 2 for internal errors (traceback with AUTOTUNE_EXPORT_TRACEBACK=1)."""
    try:
        return run()
    except DiagnosticError as err:
        for d in err.diagnostics:
            print(d.format(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("autotune-export: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (e.g. `| head`): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as err:  # internal error: say so, no traceback unless asked
        if os.environ.get("AUTOTUNE_EXPORT_TRACEBACK"):
            raise
        print(
            f"autotune-export: internal error: {type(err).__name__}: {err}\n"
            "This is a bug in autotune-export; please file it with the input "
            "(set AUTOTUNE_EXPORT_TRACEBACK=1 for the traceback).",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
