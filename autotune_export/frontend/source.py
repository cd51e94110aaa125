"""Front end: an input text with the name diagnostics use for it, and the MLIR context the
front end parses into.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir


@dataclass
class SourceFile:
    """An input text and the name diagnostics use for it (``"<stdin>"`` for ``-``).

    ``base_dir`` is where relative ``triton("kernel.py", ...)`` paths resolve: the directory
    of the input file (the current directory for stdin).
    """

    text: str
    name: str
    base_dir: str


def new_context():
    """A fresh ``iree.compiler.ir.Context`` with IREE's dialects and unregistered ops allowed,
    single-threaded: MLIR verifies the functions of a parsed module in parallel, and a
    diagnostic emitted on a worker thread calls our Python handler, which waits for the GIL
    that the parsing thread holds while it waits for the workers (a deadlock the fuzzer hit on
    a mutated module with several invalid functions)."""

    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    ctx.enable_multithreading(False)
    return ctx
