"""MLIR-style diagnostics: ``FILE:LINE:COL: error: MESSAGE``.

Every user error in autotune-export is raised as a :class:`DiagnosticError` carrying one or
more :class:`Diagnostic` records. The CLI prints them the way ``mlir-opt`` does and exits with
status 1; ``--verify-diagnostics`` compares them against ``expected-error`` annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

__all__ = [
    "Location",
    "Diagnostic",
    "DiagnosticError",
    "location_of",
    "from_mlir_error",
]


@dataclass(frozen=True)
class Location:
    """A source position: 1-based ``line`` and ``col`` in ``file`` (MLIR's FileLineColLoc)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass
class Diagnostic:
    """One diagnostic: ``severity`` is ``"error"``, ``"warning"``, ``"remark"`` or ``"note"``.

    ``notes`` are attached diagnostics (MLIR's ``attachNote``), printed after the main one,
    e.g. the location of the other variant whose layout differs.
    """

    severity: str
    message: str
    location: Location | None = None
    notes: list["Diagnostic"] = field(default_factory=list)

    def format(self) -> str:
        """Render as ``FILE:LINE:COL: SEVERITY: MESSAGE`` lines (notes indented below)."""
        head = f"{self.location}: " if self.location else ""
        lines = [f"{head}{self.severity}: {self.message}"]
        for note in self.notes:
            lines.append(note.format())
        return "\n".join(lines)


class DiagnosticError(Exception):
    """A user error: one or more diagnostics (at least one of severity ``error``)."""

    def __init__(self, diagnostics: Diagnostic | Sequence[Diagnostic]):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(d.format() for d in self.diagnostics))

    @classmethod
    def at(cls, location: Location | None, message: str, notes: Iterable[Diagnostic] = ()) -> "DiagnosticError":
        """Build an error with one diagnostic at ``location`` (which may be None)."""
        return cls(Diagnostic("error", message, location, list(notes)))


def _specific(loc):
    """``loc`` as the bindings' most specific location class (FileLineColLoc, NameLoc,
    CallSiteLoc, FusedLoc, UnknownLoc). Locations of ops already are; those of diagnostics come
    as the base ``Location``, which ``Location.from_attr`` turns into the specific one."""
    try:
        return type(loc).from_attr(loc.attr, loc.context)
    except (AttributeError, TypeError, ValueError):
        return loc


def location_of(mlir_location, filename: str | None = None) -> Location | None:
    """Convert an MLIR ``Location`` (from ``iree.compiler.ir``) to a :class:`Location`.

    A file location (``loc("f.mlir":3:7)``) gives its file, line and column; name, call-site and
    fused locations resolve to the first file location inside them, in printed order (a name's
    child; a call site's callee, then its caller; a fused location's parts in order). MLIR's
    Python ``Module.parse`` names its buffer ``"-"``; ``filename`` replaces that name. Returns
    None for unknown locations, for None, and for locations holding no file position.
    """
    pending = [mlir_location] if mlir_location is not None else []
    while pending:
        loc = _specific(pending.pop())
        if hasattr(loc, "filename") and hasattr(loc, "start_line"):
            file = loc.filename
            if file == "-" and filename is not None:
                file = filename
            return Location(file, loc.start_line, loc.start_col)
        if hasattr(loc, "child_loc"):  # NameLoc
            pending.append(loc.child_loc)
        elif hasattr(loc, "callee"):  # CallSiteLoc
            pending += [loc.caller, loc.callee]
        elif hasattr(loc, "locations"):  # FusedLoc
            pending += reversed(list(loc.locations))
    return None


def from_mlir_error(err, filename: str | None = None, line_offset: int = 0, remap: Callable[[Location], Location] | None = None) -> DiagnosticError:
    """Convert ``iree.compiler.ir.MLIRError`` (parse or verify failure) into a DiagnosticError.

    ``line_offset`` is added to every line (used with ``--split-input-file`` chunks).
    ``remap`` converts positions in ``filename`` (e.g. the front end's column map, as the
    generic ops it parses are longer than the sugared text they replace).
    """

    def convert(diag, severity=None) -> Diagnostic:
        loc = location_of(diag.location, filename)
        if loc is not None and loc.file == filename:
            if remap is not None:
                loc = remap(loc)
            if line_offset:
                loc = Location(loc.file, loc.line + line_offset, loc.col)
        sev = severity or str(diag.severity).rsplit(".", 1)[-1].lower()
        return Diagnostic(sev, diag.message, loc, [convert(n, "note") for n in diag.notes])

    diags = [convert(d) for d in getattr(err, "error_diagnostics", [])]
    if not diags:
        diags = [Diagnostic("error", str(err).splitlines()[0] if str(err) else "invalid IR")]
    for d in diags:
        if d.severity not in ("error", "warning", "remark", "note"):
            d.severity = "error"
    return DiagnosticError(diags)
