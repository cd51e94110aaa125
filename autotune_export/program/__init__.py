"""Tuning a whole program (issue 25; llvm-cpu candidates): IREE forms the dispatches, each
tunable dispatch becomes a group of variants the program picks among at run time; frozen
builds and write-back of the winners (docs/program.md)."""

from autotune_export.program.build import ProgramBuild, Variant, build_program, write_back

__all__ = ["ProgramBuild", "Variant", "build_program", "write_back"]
