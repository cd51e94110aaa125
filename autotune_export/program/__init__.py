"""Tuning a whole program (issue 25, first slice: llvm-cpu): IREE forms the dispatches, each
tunable dispatch becomes a group of variants the program picks among at run time
(docs/program.md)."""

from autotune_export.program.build import ProgramBuild, build_program

__all__ = ["ProgramBuild", "build_program"]
