"""``autotune-export program IN.mlir --backend llvm-cpu|cuda [--max-candidates N] [--target sm_90] [--no-triton]
[--tuning-results R.json [--write-back OUT.mlir]] -o OUT.vmfb``:
:func:`autotune_export.program.build_program` as a command (docs/program.md). ``IN`` is linalg on
tensors or StableHLO (``jax.export``'s ``mlir_module()``), anything IREE's input phase takes.

``--tuning-results`` freezes the groups it has results for (the runtime's rule picks the
variant); ``--write-back`` also writes IREE's input-phase program with the frozen
IREE-codegen winners as ``compilation_info``, for a plain ``iree-compile``.

Remarks (dispatches that keep IREE's default, candidates IREE rejected) go to stderr; errors
are diagnostics with exit status 1 and no output file. ``-o -`` (and ``--write-back -``) is
standard output, for text only (``--emit mlir``), as in the main command
(:mod:`autotune_export.tools.cli_io`).
"""

from __future__ import annotations

import argparse
from typing import Sequence

from autotune_export.cuda.workers import jobs_argument
from autotune_export.passes.pin_variants import load_results
from autotune_export.program.build import BACKENDS, build_program, write_back
from autotune_export.support import progress
from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.tools.cli_io import check_output, check_stdout, read_source, stdout_for_output, write_output
from autotune_export.support.arguments import ArgumentParser, count_at_least

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="autotune-export program",
        description="build a whole program with each of IREE's tunable dispatches as a run-time variant group",
    )
    p.add_argument("input", help="the program (MLIR: linalg on tensors; - for stdin)")
    p.add_argument(
        "--backend", default="llvm-cpu", help=f"IREE backend of the candidates ({', '.join(BACKENDS)}; default: llvm-cpu)"
    )
    p.add_argument(
        "--target",
        default=None,
        help="cuda: the one GPU the program runs on (default sm_90; IREE's own code is compiled for sm_89, docs/program.md)",
    )
    p.add_argument(
        "--no-triton",
        dest="triton",
        action="store_const",
        const=False,
        default=None,
        help="cuda: IREE's own candidates only, no Triton kernel among the variants",
    )
    p.add_argument(
        "--object-format",
        choices=("ptx", "cubin"),
        default=None,
        help="cuda: Triton objects as PTX (JIT-compiled at load, default) or cubin (for --target only)",
    )
    p.add_argument(
        "--max-triton-configs",
        type=count_at_least(0),
        default=None,
        metavar="N",
        help="cuda: at most N configs of each Triton kernel per dispatch (0: none, as --no-triton; default: --max-candidates)",
    )
    p.add_argument("--jobs", type=jobs_argument, default=4, metavar="N", help="cuda: compile N candidates at a time (default 4)")
    p.add_argument(
        "--max-candidates",
        type=count_at_least(1),
        default=4,
        metavar="N",
        help="at most N variants per dispatch, IREE's default included (default: 4)",
    )
    p.add_argument(
        "--iree-compile-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra flag for every iree-compile phase (repeatable)",
    )
    p.add_argument(
        "--emit",
        choices=("vmfb", "mlir"),
        default="vmfb",
        help="vmfb (default), or mlir: the regrouped program (iree-compile --compile-from=global-optimization takes it)",
    )
    p.add_argument(
        "--tuning-results",
        default=None,
        metavar="R.json",
        help="freeze each group with results in this tuning-results file (the runtime's tuning cache) to its chosen variant",
    )
    p.add_argument(
        "--write-back",
        default=None,
        metavar="OUT.mlir",
        help="with --tuning-results: also write the program (IREE's input phase) with the winners' compilation_info ('-': stdout)",
    )
    p.add_argument("-o", "--output", required=True, help="output file ('-': standard output, for --emit mlir)")
    p.add_argument("-q", "--quiet", action="store_true", help="no remarks")
    return p


def main(argv: Sequence[str]) -> int:
    """Parse ``argv`` (the arguments after ``program``), build, write; the exit status."""
    args = _parser().parse_args(list(argv))
    # -o - is standard output, for text, as in the main command (tools/cli_io.py).
    check_stdout(args.output, args.emit)
    check_output(args.output, args.emit)
    if args.write_back:
        check_output(args.write_back, "mlir", "--write-back")
        if args.write_back == "-" and args.output == "-":
            raise DiagnosticError.at(None, "-o - and --write-back -: standard output takes one of them")
    cuda_only = {
        "--target": args.target,
        "--no-triton": args.triton,
        "--object-format": args.object_format,
        "--max-triton-configs": args.max_triton_configs,
    }
    if args.backend != "cuda" and (given := [flag for flag, value in cuda_only.items() if value is not None]):
        raise DiagnosticError.at(
            None,
            f"program: {', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to --backend cuda, not {args.backend}",
        )
    source = read_source(args.input)
    if args.write_back and not args.tuning_results:
        raise DiagnosticError.at(None, "--write-back needs --tuning-results (the choices to write back)")
    results = load_results(args.tuning_results) if args.tuning_results else None
    remark = None if args.quiet else (lambda d: progress.echo(d.format()))
    with stdout_for_output("-" in (args.output, args.write_back)):
        built = build_program(
            source.text,
            backend=args.backend,
            max_candidates=args.max_candidates,
            source_name=source.name,
            iree_args=args.iree_compile_arg,
            remark=remark,
            target=args.target or "sm_90",
            triton=args.triton is None,
            jobs=args.jobs,
            object_format=args.object_format or "ptx",
            tuning_results=results,
            max_triton=args.max_triton_configs,
        )
        written_back = write_back(built, remark) if args.write_back else None
    write_output(args.output, built.vmfb if args.emit == "vmfb" else built.mlir)
    if written_back is not None:
        write_output(args.write_back, written_back)
    if not args.quiet:
        counts = ", ".join(f"@{g.executable} {len(g.variants)}" for g in built.groups) or "none"
        where = "standard output" if args.output == "-" else args.output
        progress.echo(f"autotune-export: wrote {where}: variants per tunable dispatch: {counts}")
        if built.frozen:
            frozen = ", ".join(f"{key} = {index}" for key, index in sorted(built.frozen.items()))
            progress.echo(f"autotune-export: frozen choices: {frozen}")
    return 0
