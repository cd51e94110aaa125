"""``autotune-export check``: run every variant of every Triton group in Triton's interpreter.

::

    autotune-export check FILE.mlir [--reference MODULE:FUNCTION] [--seed N] [--timeout S]
                          [--target sm_80] [--group NAME] [-q]

No GPU is needed: each variant (config) of each ``triton(...)`` group is launched in Triton's
interpreter (``TRITON_INTERPRET=1``, which runs a kernel program by program on CPU tensors
with numpy; it calls neither ``triton.compile`` nor a driver) with the arguments exactly as
each ``flow.dispatch`` of the group binds them, and every variant's results are compared with
the default variant's (and, with ``--reference``, with a reference function's). A config
that computes something else (a missing mask for one ``BLOCK``, a reduction that drops a
tail) and a binding mistake (a pointer the kernel writes that the dispatch passes as an
immutable operand, an output the kernel reads before writing) are found before GPU time.

What is run, per dispatch of a group and per tuning workload (``tune_workload``; the host's
own static types without one):

* the plan of materialize-triton-variants (:meth:`~autotune_export.passes.materialize_triton_variants.MaterializeTritonVariants.plan_group`:
  the configs after ``prune_configs_by``, each dispatch only those its own pruning keeps,
  its default its first where the group's is not among them; constexprs from heuristics and defaults,
  ``reset_to_zero`` applied to the dispatches, the outputs written in place);
* the kernel's parameters bound as IREE binds the dispatch (:func:`autotune_export.cuda.abi.plan`:
  tensor operands in operand order, then untied results, against the signature's input
  pointers then its ``{output}`` pointers; scalars from the dispatch's scalar operands, as the
  kernel receives them); sizes and scalar values are the host's, evaluated on the workload;
* the grid of each config from the group's ``grid(...)`` (:func:`autotune_export.ir.grid.evaluate`
  with the config's constants and the dispatch's workload values, as the count region computes it);
* data: seeded, position-dependent values per binding (the same for every variant; integers in
  [-8, 8), unsigned in [0, 16), floats in [-1, 1)); zeros for a ``reset_to_zero`` output; a
  buffer of undefined contents (an untied result, ``flow.tensor.empty``) gets different
  values in each run, so a result that depends on them (a kernel reading an output before
  writing it, or leaving elements unwritten) differs between two runs of the default variant.

Checks, each an ``error:`` at the dispatch (exit status 1):

* every variant's results equal the default variant's within the runtime's cross-check
  tolerances (:func:`autotune_export.runtime.tuner.results_agree`);
* the default variant's results do not depend on undefined contents;
* no variant changes a buffer the dispatch passes as an immutable operand (IREE may share it);
* with ``--reference``: the reference's results equal the default variant's.

``--reference MODULE:FUNCTION`` (a ``.py`` path or a dotted module) is called as the Triton
launch is, without grid and constexprs: the kernel's non-constexpr arguments in order (CPU
torch tensors shaped as the dispatch's tensors, with the data the variants get; ``None`` for a
``none`` parameter; scalars as the kernel receives them). It writes the outputs in place, as the
kernel does, or returns the dispatch's results (a tensor or a tuple, in result order).

The interpreter runs in a child process (Triton reads ``TRITON_INTERPRET`` when the kernel file
is imported); each run is limited to ``--timeout`` seconds (a kernel that waits for another
program, a spin lock, cannot finish there: programs run one after another). Specialized
variants (``:16``/``:1`` hints) run the same code as their config's and are not run apart.
Needs ``torch`` (the interpreter's tensors).

The command is split in three steps: :mod:`.check_plan` (planning, this process),
:mod:`.check_run` (the interpreter process) and :mod:`.check_compare` (comparing).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from typing import Sequence

from autotune_export.ir.walk import executable_sources, groups_of
from autotune_export.passes.base import PassContext
from autotune_export.support import progress
from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.tools.check_compare import CheckReport, compare
from autotune_export.tools.check_plan import Buffer, Launch, Variant, launches_of_group
from autotune_export.tools.check_run import INTERPRET_ENV, check_reference, interpret, run_launch, worker
from autotune_export.support.arguments import ArgumentParser

__all__ = [
    "main",
    "check_source",
    "Launch",
    "Buffer",
    "Variant",
    "run_launch",
    "CheckReport",
    "launches_of_group",
    "INTERPRET_ENV",
]


def check_source(source, args) -> CheckReport:
    """Check every ``triton(...)`` group of ``source`` (a
    :class:`~autotune_export.frontend.SourceFile`); ``args`` holds ``target``, ``seed``,
    ``timeout``, ``reference``, ``group`` (a group name, or None for all). Raises
    DiagnosticError for input the build would refuse too."""
    from autotune_export.frontend.reader import parse_source

    module = parse_source(source)
    report = CheckReport()
    ctx = PassContext(
        source=source, remark=lambda d: report.skipped.append(d) if d.severity == "warning" else progress.echo(d.format())
    )
    for src in executable_sources(module):
        for op in groups_of(src):
            name = op.attributes["sym_name"].value if "sym_name" in op.attributes else None
            if args.group is not None and name != args.group:
                continue
            launches, remarks = launches_of_group(ctx, module, src, op, args)
            report.skipped += remarks
            if not launches:
                continue
            per_run = args.timeout * (len(launches[0].variants) + 3) * len(launches)
            outcomes = interpret(launches, per_run + 120)
            for launch, outcome in zip(launches, outcomes):
                report.launches += 1
                compare(launch, outcome, report)
    return report


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="autotune-export check",
        description="Run every variant of every triton(...) group in Triton's interpreter (no GPU) with the arguments "
        "each dispatch binds, and compare them with the default variant (and a reference).",
    )
    p.add_argument("input", help="the .mlir file")
    p.add_argument(
        "--reference",
        default=None,
        metavar="MODULE:FUNCTION",
        help="a function called like the kernel's launch (without grid and constexprs) whose results must match",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the data (default 0)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run in the interpreter (default 600)")
    p.add_argument(
        "--target",
        default="sm_80",
        help="the architecture Triton's driver answers for while the kernel file is "
        "imported and configs are pruned (default sm_80)",
    )
    p.add_argument("--group", default=None, help="check only this group")
    progress.add_arguments(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``autotune-export check ...``: 0 when every variant agrees, 1 on a mismatch or an error
    (diagnostics at the dispatch)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        return worker(argv[1], argv[2], int(argv[3]) if len(argv) > 3 else None)
    args = _parser().parse_args(argv)
    if args.timeout <= 0:
        raise DiagnosticError.at(None, f"--timeout must be positive, got {args.timeout:g}")
    if args.reference is not None:  # before anything runs (it was found after every variant ran)
        try:
            check_reference(args.reference)
        except ValueError as err:
            raise DiagnosticError.at(None, str(err)) from None
    if importlib.util.find_spec("torch") is None:
        raise DiagnosticError.at(None, "autotune-export check runs Triton's interpreter, which needs torch (pip install torch)")
    from autotune_export.tools.cli import read_source

    with progress.verbosity(progress.level_of(args)):
        report = check_source(read_source(args.input), args)
    for d in report.skipped:
        print(d.format(), file=sys.stderr)
    for table in report.tables:
        print(table)
    for d in report.errors:
        print(d.format(), file=sys.stderr)
    if report.launches == 0 and not report.errors:
        raise DiagnosticError.at(None, f"{args.input}: nothing was checked (no dispatch to a triton(...) group could be run)")
    failed = len(report.errors)
    print(
        f"autotune-export check: {report.launches} launch{'es' if report.launches != 1 else ''}, "
        f"{sum(len(t.splitlines()) - 2 for t in report.tables)} runs, "
        + (f"{failed} error{'s' if failed != 1 else ''}" if failed else "every variant agrees")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
