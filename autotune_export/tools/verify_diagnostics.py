"""``--split-input-file`` and ``--verify-diagnostics`` as mlir-opt has them.

Chunks are separated by lines ``// -----``. Each chunk keeps its line numbers from the whole
file (it is padded with empty lines), so diagnostics and annotations need no offsets.

Annotations (MLIR's ``SourceMgrDiagnosticVerifierHandler`` syntax), one per line, the
message running to the last ``}}`` of the line::

    // expected-error {{message substring}}        on the same line
    // expected-error @+1 {{...}}                  N lines below (@-N above)
    // expected-remark@below {{...}}  / @above
    // expected-error @unknown {{...}}             a diagnostic without a location
    // expected-warning, expected-note, expected-remark

Every diagnostic must match an annotation of its severity on its line (substring match), and
every annotation must be matched. Unlike mlir-opt, a note nobody expected is not an error:
its parent diagnostic is checked, and notes (the other variant, every pruned config) are
detail a test may pin or leave out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autotune_export.support.diagnostics import Diagnostic, Location
from autotune_export.frontend.reader import SourceFile

__all__ = ["split_input", "check_expected", "Expectation", "parse_expectations"]

_SPLIT = re.compile(r"^// -----\s*$", re.M)
_EXPECT = re.compile(
    r"expected-(?P<sev>error|warning|remark|note)\s*(?:@(?P<where>[+-]\d+|above|below|unknown))?\s*\{\{(?P<msg>.*)\}\}\s*$"
)


def split_input(source: SourceFile) -> list[SourceFile]:
    """Split at ``// -----`` lines; each chunk padded to keep absolute line numbers."""
    chunks = []
    pos = 0
    line = 0
    for m in list(_SPLIT.finditer(source.text)) + [None]:
        end = m.start() if m else len(source.text)
        text = source.text[pos:end]
        chunks.append(SourceFile("\n" * line + text, source.name, source.base_dir))
        if m:
            line += source.text.count("\n", pos, m.end()) + 1
            pos = m.end() + 1
    return chunks


@dataclass
class Expectation:
    """One annotation: ``line`` is the line it expects a diagnostic on (None: ``@unknown``,
    a diagnostic without a location); ``at`` is where the annotation itself is."""

    severity: str
    line: int | None
    message: str
    at: Location
    matched: bool = False


def parse_expectations(source: SourceFile) -> list[Expectation]:
    """All ``expected-*`` annotations of the file with the line they apply to."""
    out = []
    lines = source.text.split("\n")
    for i, text in enumerate(lines, start=1):
        m = _EXPECT.search(text.rstrip("\r"))
        if m:
            where = m.group("where")
            if where is None:
                target = i
            elif where == "unknown":
                target = None
            elif where == "above":
                target = i - 1
            elif where == "below":
                target = i + 1
            else:
                target = i + int(where)
            out.append(Expectation(m.group("sev"), target, m.group("msg"), Location(source.name, i, m.start() + 1)))
    return out


def check_expected(source: SourceFile, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Compare diagnostics with annotations; return error diagnostics for every mismatch."""
    expectations = parse_expectations(source)
    problems: list[Diagnostic] = []
    flat: list[Diagnostic] = []
    for d in diagnostics:
        flat.append(d)
        flat.extend(d.notes)
    for d in flat:
        if d.location is None:
            line = None
        elif d.location.file == source.name:
            line = d.location.line
        else:
            line = -1  # another file: no annotation of this one applies
        match = next(
            (e for e in expectations if not e.matched and e.severity == d.severity and e.line == line and e.message in d.message),
            None,
        )
        if match is None:
            if d.severity == "note":
                continue  # unexpected notes are tolerated, as their parents are checked
            where = d.location or Location(source.name, 1, 1)
            problems.append(Diagnostic("error", f"unexpected {d.severity}: {d.message}", where))
        else:
            match.matched = True
    for e in expectations:
        if not e.matched:
            problems.append(Diagnostic("error", f'expected {e.severity} "{e.message}" was not produced', e.at))
    return problems
