"""The ``autotune-export`` command.

::

    autotune-export IN.mlir -o OUT [--emit mlir|iree|vmfb] [-p pass,pass] [--target sm_80]
                    [-j N] [--object-format ptx|cubin] [--tuning-results R.json]
                    [--split-input-file] [--verify-diagnostics] [--no-cache] [--cache-dir DIR]
                    [-q | -v]
    autotune-export inspect FILE.mlir|FILE.vmfb [--json] ...   (see SUBCOMMANDS)

``--emit mlir`` (default) prints the sugared groups for reading and FileCheck; ``iree`` prints
plain input for the installed ``iree-compile``; ``vmfb`` runs ``iree-compile`` for CUDA.
``-`` stands for stdin/stdout (with ``-o -`` stdout gets the IR alone: whatever else prints
meanwhile goes to stderr); ``-o /dev/null`` and other devices are written in place. Errors are
MLIR-style diagnostics (``FILE:LINE:COL: error:``, the file as given, ``<stdin>`` for stdin) with
exit status 1 and no output (usage errors too); internal errors exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from typing import Callable, Sequence

from autotune_export import __version__
from autotune_export.cuda.ptx import parse_ptx_version
from autotune_export.cuda.workers import jobs_argument
from autotune_export.support import files, progress
from autotune_export.support.arguments import ArgumentParser
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location, did_you_mean, location_of
from autotune_export.frontend.reader import SourceFile, parse_source, print_module
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.hal_attrs import read_objects, target_backend
from autotune_export.ir.walk import executable_sources, groups_of, module_functions, sym_name
from autotune_export.passes import DEFAULT_PIPELINES, PassContext, build_pipeline, parse_pipeline, run_pipeline
from autotune_export.tools.cli_io import check_output, check_stdout, read_source, stdout_for_output, write_output
from autotune_export.tools.iree_compiler import cuda_targets, iree_compile
from autotune_export.tools.verify_diagnostics import check_expected, split_input
from autotune_export.passes import PASSES, pass_options
from autotune_export.passes import pipeline as pipeline_options

__all__ = ["main", "compile_source", "iree_compile", "read_source", "write_output", "SUBCOMMANDS"]

# --- subcommands ------------------------------------------------------------------------------
#: ``autotune-export NAME ARGS...`` runs ``MODULE.main(ARGS) -> exit status`` when NAME is a key
#: here (a file of that name is still reachable as ``./NAME``); anything else is the input file
#: of the compile command. Adding a subcommand is one entry (plus its module, whose ``main``
#: parses its own arguments and may raise DiagnosticError; errors are reported as for compile).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "inspect": ("autotune_export.tools.inspection", "show groups, variants, layouts and resource usage of a .mlir or .vmfb"),
    "tune": ("autotune_export.tools.tune", "time every variant of a .vmfb's groups on a device and keep the fastest"),
    "check": (
        "autotune_export.tools.check",
        "run every variant of the triton(...) groups in Triton's interpreter (no GPU) and compare",
    ),
    "program": (
        "autotune_export.program.cli",
        "build a whole program with IREE's tunable dispatches as run-time variant groups (llvm-cpu)",
    ),
}
# --- end subcommands --------------------------------------------------------------------------


#: Words taken for subcommands that are options of one: what to run instead.
NOT_SUBCOMMANDS = {
    "report": "a tuning report is written by `autotune-export tune MODULE.vmfb --report DIR` (report.md, report.json, "
    "report.png)",
}


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="autotune-export",
        description="Compile parameterized Triton kernels into autotuned IREE executables.",
        epilog="subcommands (autotune-export NAME --help for theirs):\n"
        + "\n".join(f"  {name:10} {summary}" for name, (_, summary) in SUBCOMMANDS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", nargs="?", help="input .mlir file ('-' for stdin)")
    p.add_argument("-o", "--output", default="-", help="output file ('-' for stdout, the default)")
    p.add_argument("--emit", choices=("mlir", "iree", "vmfb"), default="mlir", help="what to write (default: mlir)")
    p.add_argument(
        "-p",
        "--passes",
        default=None,
        metavar="PIPELINE",
        help="passes to run instead of the --emit pipeline: name{option=value ...},name ('' for none)",
    )
    p.add_argument("--target", default=None, help="CUDA architecture of the variants and of iree-compile (default: sm_80)")
    p.add_argument(
        "-j", "--jobs", type=jobs_argument, default=None, help="processes compiling variants (at least 1; default: one per core)"
    )
    p.add_argument(
        "--object-format", choices=("ptx", "cubin"), default=None, help="object embedded in the executable (default: ptx)"
    )
    p.add_argument(
        "--ptx-version",
        type=parse_ptx_version,
        default=None,
        metavar="VERSION",
        help="PTX ISA version pinned in the variants: 86 or 8.6 (default: 86)",
    )
    p.add_argument("--tuning-results", default=None, help="freeze the choices of this tuning-results JSON into the IR")
    pipeline_options.add_pruning_arguments(p)
    p.add_argument(
        "--cache-dir",
        default=None,
        help="variant cache (default: $AUTOTUNE_EXPORT_CACHE_DIR, else $XDG_CACHE_HOME/autotune-export, "
        "else ~/.cache/autotune-export)",
    )
    p.add_argument("--no-cache", action="store_true", help="compile every variant, ignoring the cache")
    p.add_argument("--split-input-file", action="store_true", help="process '// -----'-separated chunks independently")
    p.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-* annotations")
    p.add_argument(
        "--backend", choices=("cuda", "llvm-cpu"), default="cuda", help="what --emit vmfb compiles for (default: cuda)"
    )
    p.add_argument(
        "--iree-compile-arg", action="append", default=[], metavar="ARG", help="extra flag for iree-compile (repeatable)"
    )
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


def _check_backend(module, source: SourceFile, backend: str) -> None:
    """``--emit vmfb --backend llvm-cpu`` of a module whose groups hold CUDA code (Triton
    groups; executable sources with CUDA objects): refused before iree-compile, which has no
    llvm-cpu code for them (and crashed on them). Raises DiagnosticError at the group or the
    source."""
    if backend != "llvm-cpu":
        return
    for src in executable_sources(module):
        for op in groups_of(src):
            group = AutotuneGroup.from_op(op, source.name)
            if group.is_triton:
                raise DiagnosticError.at(
                    group.location,
                    f"@{group.name} is a triton(...) group: its variants are CUDA code (PTX), which --backend llvm-cpu "
                    "cannot run; build it with --backend cuda",
                )
        if "objects" in src.attributes:
            for entry in read_objects(src.attributes["objects"]):
                try:
                    cuda = entry.target is not None and target_backend(entry.target) == "cuda"
                except (ValueError, IndexError):
                    cuda = False
                if cuda:
                    raise DiagnosticError.at(
                        location_of(src.location, source.name),
                        f"@{sym_name(src)} holds CUDA objects, which --backend llvm-cpu cannot run; build it with "
                        "--backend cuda (or give the variants an MLIR body that IREE compiles for the CPU)",
                    )


def _check_compilable(module, source: SourceFile) -> None:
    """``--emit vmfb`` of a module without a public function: iree-compile makes a .vmfb of
    the public functions and fails on a module with none ("outer module does not contain a
    vm.module op"). Raises DiagnosticError at the start of the input."""
    for op in module_functions(module).values():
        vis = op.attributes["sym_visibility"].value if "sym_visibility" in op.attributes else "public"
        if vis == "public":
            return
    raise DiagnosticError.at(
        Location(source.name, 1, 1),
        "the module has nothing to compile: it defines no public function, and a .vmfb holds the public "
        "functions (add a util.func public @f(...) that dispatches to the groups)",
    )


def _compile_chunk(chunk: SourceFile, passes, ctx: PassContext, args, options: dict):
    """Parse ``chunk``, check what ``--emit vmfb`` needs, run the pipeline; returns the printed
    module and a function printing it with its locations (for ``--emit vmfb``: used only when
    iree-compile fails, to say where). Raises DiagnosticError."""
    module = parse_source(chunk)
    if args.emit == "vmfb":
        _check_backend(module, chunk, args.backend)
    run_pipeline(passes, ctx, module, **options)
    if args.emit == "vmfb":
        _check_compilable(module, chunk)
    return print_module(module, chunk.name), lambda: print_module(module, chunk.name, debug_info=True)


def _build_record(args, passes) -> tuple[bool, str | None]:
    """``(compiles, record)``: whether this run may compile Triton variants (its pipeline
    materializes them and the input file has a ``triton(...)`` group), and where a finished
    build of this input with these options is recorded (an empty file under
    ``<cache>/builds/``, named by a hash of the toolkit's version, the input's bytes and the
    options that change what is compiled; None without a cache or an input file). Only a
    hint: a recorded build is likely to find every variant cached, so that its rerun starts
    no worker ahead (:func:`_start_workers_early`)."""
    import hashlib

    spec = passes if isinstance(passes, str) else " ".join(map(str, passes))
    if args.input in (None, "-") or "materialize-triton-variants" not in spec:
        return False, None
    try:
        with open(args.input, "rb") as f:
            data = f.read()
    except OSError:
        return False, None
    if b"triton(" not in data:
        return False, None
    if args.no_cache:
        return True, None
    key = hashlib.sha256(
        repr(
            [
                __version__,
                hashlib.sha256(data).hexdigest(),
                args.emit,
                args.passes,
                args.target,
                args.object_format,
                args.ptx_version,
                args.split_input_file,
                getattr(args, "max_spills", None),
                getattr(args, "max_variants", None),
            ]
        ).encode()
    ).hexdigest()
    from autotune_export.support.paths import default_cache_dir

    return True, os.path.join(str(args.cache_dir or default_cache_dir()), "builds", key[:2], key)


def _start_workers_early(args, compiles: bool, record: str | None) -> None:
    """Start the variant compiler's worker processes now, and its warm-up in this process
    (:func:`autotune_export.cuda.workers.start`), while the input is parsed, when this build
    is likely to compile: it may (:func:`_build_record`) and is not recorded as finished, or
    the cache is off. ``--verify-diagnostics`` runs (tests of errors) start nothing."""
    from autotune_export.cuda import workers

    if not compiles or args.verify_diagnostics or (record is not None and os.path.exists(record)):
        return
    try:
        workers.start(args.jobs)
    except ValueError:  # a -j the pipeline refuses (jobs=0 in a -p spec): materialize-triton-variants says so
        return


#: The command's flags that are pass options too (``--target`` is ``target=`` of every pass
#: that has it), with their defaults; ``None``: no default beyond the pass's own.
_PASS_OPTION_FLAGS = {
    "target": "sm_80",
    "object_format": "ptx",
    "ptx_version": 86,
    "jobs": None,
    "cache_dir": None,
    "tuning_results": None,
    "max_spills": None,
    "max_variants": None,
}


def _settle_pass_options(args) -> None:
    """Give the command's pass-option flags (:data:`_PASS_OPTION_FLAGS`) their values, in
    place: the flag as given; else the value a ``-p`` spec gives that option (every pass of
    the spec that sets it must give the same value), which so reaches every other pass that
    takes it and iree-compile (``-p 'materialize-triton-variants{target=sm_90},verify-autotuning-groups'``
    verifies for sm_90, as ``--target sm_90`` would); else the default. A flag given on the
    command line is the option of the passes whose spec leaves it out (the spec's value holds
    for its own pass). Raises DiagnosticError for a malformed spec, an unknown pass or option,
    and an option given different values by two passes without the flag."""
    given: dict[str, list[tuple[str, str]]] = {}  # option -> [(pass, value as written)]
    if args.passes:
        for spec in parse_pipeline(args.passes):
            for key, text in spec.options.items():
                name = key.replace("-", "_")
                if name in _PASS_OPTION_FLAGS:
                    given.setdefault(name, []).append((spec.name, text))
    for name, default in _PASS_OPTION_FLAGS.items():
        if getattr(args, name, None) is not None or name not in given:
            if getattr(args, name, None) is None:
                setattr(args, name, default)
            continue
        values = given[name]
        if len({text for _, text in values}) > 1:
            flag = "--" + name.replace("_", "-")
            raise DiagnosticError.at(
                None,
                f"the pipeline gives option '{name.replace('_', '-')}' different values ("
                + ", ".join(f"{text} for {p}" for p, text in values)
                + f"); give {flag} for the passes and tools that do not set it",
            )
        # The value as the pass reads it (its type), from the pass that sets it.
        first = values[0][0]
        built = build_pipeline([spec for spec in parse_pipeline(args.passes) if spec.name == first][:1])
        setattr(args, name, getattr(built[0], name))


def _run(args) -> int:
    """The compile command: :func:`_build`, with the workers started early when it is likely
    to compile, and its completion recorded."""
    _settle_pass_options(args)
    passes = args.passes if args.passes is not None else DEFAULT_PIPELINES[args.emit]
    compiles, record = _build_record(args, passes)
    printed: list[str] = []  # the IR for standard output (-o -), written when the build is done
    with stdout_for_output(args.output == "-" and args.emit != "vmfb"):
        try:
            rc = _build(args, lambda: _start_workers_early(args, compiles, record), printed.append)
        finally:
            from autotune_export.cuda import workers

            workers.stop()
    if rc == 0 and printed:
        sys.stdout.write("".join(printed))
        sys.stdout.flush()
    if rc == 0 and record is not None and not os.path.exists(record):
        try:
            files.atomic_write(record, b"")
        except OSError:
            pass  # a hint only
    return rc


def _build(args, on_input: Callable[[], object] = lambda: None, to_stdout: Callable[[str], object] | None = None) -> int:
    """The compile command's work; the IR for ``-o -`` goes to ``to_stdout`` (default: written
    to ``sys.stdout``). Returns the exit status; raises DiagnosticError."""
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
        max_spills=args.max_spills,
        max_variants=args.max_variants,
    )
    # Unknown passes and options, and an unsupported --target, are reported once, before any
    # input is read.
    build_pipeline(passes, **options)
    cuda_targets(args.target)
    if not args.verify_diagnostics:
        check_stdout(args.output, args.emit)
    if args.emit == "vmfb" and args.split_input_file and not args.verify_diagnostics:
        # Each split is a module of its own; one .vmfb holds one (their symbols would clash).
        raise DiagnosticError.at(
            None,
            "--split-input-file with --emit vmfb: each '// -----' split is a module of its own "
            "and a .vmfb holds one; build one split per file, or emit text (--emit iree) and "
            "give it to iree-compile --split-input-file",
        )
    check_output(args.output, args.emit)
    source = read_source(args.input)
    on_input()  # the input is read: workers may start while it is parsed
    collected: list[Diagnostic] = []

    def remark(diag: Diagnostic) -> None:
        if args.verify_diagnostics:
            collected.append(diag)
        elif diag.severity == "warning":
            print(diag.format(), file=sys.stderr)  # not silenced by -q
        else:
            progress.echo(diag.format())  # silenced by -q

    chunks = split_input(source) if args.split_input_file else [source]
    outputs: list[str] = []
    located: list = []  # per chunk: prints it with its locations
    failed = False
    start = time.perf_counter()
    stats: dict = {}
    for chunk in chunks:
        ctx = PassContext(source=chunk, remark=remark, stats=stats)
        try:
            text, debug = _compile_chunk(chunk, passes, ctx, args, options)
            outputs.append(text)
            located.append(debug)
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
        iree_compile(
            text,
            args.target,
            args.output,
            args.iree_compile_arg,
            backend=args.backend,
            debug_text=lambda: "\n// -----\n".join(f() for f in located),
            source_name=source.name,
            search_dirs=[source.base_dir],
        )
    elif args.output == "-":
        if to_stdout is not None:
            to_stdout(text)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    else:
        write_output(args.output, text)  # no partial file; default permissions
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
    if argv and not argv[0].startswith("-") and not os.path.exists(argv[0]):
        if argv[0] in NOT_SUBCOMMANDS:  # a command users look for that is an option of another
            print(
                f"error: '{argv[0]}' is not a subcommand (subcommands: {', '.join(SUBCOMMANDS)}; anything else is "
                f"the input file): {NOT_SUBCOMMANDS[argv[0]]}",
                file=sys.stderr,
            )
            return 1
        hint = did_you_mean(argv[0], list(SUBCOMMANDS))
        if hint:  # a misspelt subcommand, not a missing input file
            print(
                f"error: unknown subcommand '{argv[0]}'{hint} (subcommands: "
                f"{', '.join(SUBCOMMANDS)}; anything else is the input file)",
                file=sys.stderr,
            )
            return 1
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
