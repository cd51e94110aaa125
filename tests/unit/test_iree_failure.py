"""iree-compile failures reach the user as iree-compile's own words: a crash (no ``error:``
diagnostic, only a stack dump) names the pass it crashed in, not just "Error invoking IREE
compiler tool iree-compile" (issue 21, crashes and lost messages)."""

from __future__ import annotations

from autotune_export.tools.iree_compiler import iree_diagnostics

# What iree.compiler.tools.CompilerToolError printed for the crash of issue 21 (a dispatch of
# constants hoisted by const-eval), trimmed.
CRASH = """Error invoking IREE compiler tool iree-compile
Error code: -11
Diagnostics:
Please report issues to https://github.com/iree-org/iree/issues and include the crash backtrace.
Stack dump:
0.	Program arguments: /venv/iree-compile - --iree-input-type=auto
 #0 0x00007f2a72d5a0ab llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) Signals.cpp:0:0
 #3 0x00007f2a6ce5a050 (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)
 #4 0x00007f2a74f8ebed mlir::iree_compiler::(anonymous namespace)::LLVMCPUAssignImportOrdinalsPass::runOnOperation() LLVMCPUAssignImportOrdinals.cpp:0:0
 #5 0x00007f2a73309731 mlir::detail::OpToOpPassAdaptor::run(mlir::Pass*, mlir::Operation*, mlir::AnalysisManager, bool, unsigned int) Pass.cpp:0:0


Invoked with:
 iree-compile /venv/iree-compile - --iree-input-type=auto

Need more information? Set IREE_SAVE_TEMPS=/some/dir in your environment to save all artifacts and reproducers.
"""

FAILED = """Error invoking IREE compiler tool iree-compile
Error code: 1
Diagnostics:
LLVM ERROR: out of memory
"""


def _message(report: str) -> str:
    (diag,) = iree_diagnostics(report, "", "in.mlir", "sm_80").diagnostics
    assert diag.severity == "error"
    return diag.message


def test_crash_names_signal_and_pass():
    assert _message(CRASH) == "iree-compile failed: it crashed (signal 11), in IREE's LLVMCPUAssignImportOrdinalsPass"


def test_failure_without_diagnostic_keeps_its_first_line():
    assert _message(FAILED) == "iree-compile failed: exit code 1, LLVM ERROR: out of memory"
