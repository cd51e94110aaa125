"""MLIR-style diagnostics: ``FILE:LINE:COL: error: MESSAGE``.

Every user error in autotune-export is raised as a :class:`DiagnosticError` carrying one or
more :class:`Diagnostic` records. The CLI prints them the way ``mlir-opt`` does and exits with
status 1; ``--verify-diagnostics`` compares them against ``expected-error`` annotations.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

__all__ = [
    "Location",
    "Diagnostic",
    "DiagnosticError",
    "location_of",
    "input_named",
    "named_locations",
    "from_mlir_error",
    "did_you_mean",
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


#: The name of the input whose IR is being transformed (see :func:`input_named`).
_INPUT_NAME: contextvars.ContextVar[str | None] = contextvars.ContextVar("autotune_export_input_name", default=None)


@contextlib.contextmanager
def input_named(name: str | None):
    """While in here, positions in MLIR's parser buffer ``"-"`` are reported as ``name`` (the
    input file as the user gave it, ``<stdin>`` for standard input, as MLIR tools name it) by
    :func:`location_of` calls that give no ``filename`` (a position that a pass writes into a
    message, say). :func:`autotune_export.passes.run_pipeline` holds it for its input."""
    token = _INPUT_NAME.set(name)
    try:
        yield
    finally:
        _INPUT_NAME.reset(token)


def location_of(mlir_location, filename: str | None = None) -> Location | None:
    """Convert an MLIR ``Location`` (from ``iree.compiler.ir``) to a :class:`Location`.

    A file location (``loc("f.mlir":3:7)``) gives its file, line and column; name, call-site and
    fused locations resolve to the first file location inside them, in printed order (a name's
    child; a call site's callee, then its caller; a fused location's parts in order). MLIR's
    Python ``Module.parse`` names its buffer ``"-"``; ``filename`` replaces that name (without
    it, the name :func:`input_named` holds, if any). Returns None for unknown locations, for
    None, and for locations holding no file position.
    """
    pending = [mlir_location] if mlir_location is not None else []
    while pending:
        loc = _specific(pending.pop())
        if hasattr(loc, "filename") and hasattr(loc, "start_line"):
            file = loc.filename
            if file == "-":
                file = filename or _INPUT_NAME.get() or file
            return Location(file, loc.start_line, loc.start_col)
        if hasattr(loc, "child_loc"):  # NameLoc
            pending.append(loc.child_loc)
        elif hasattr(loc, "callee"):  # CallSiteLoc
            pending += [loc.caller, loc.callee]
        elif hasattr(loc, "locations"):  # FusedLoc
            pending += reversed(list(loc.locations))
    return None


def named_locations(mlir_location, filename: str | None = None) -> dict[str, Location]:
    """The named parts of an op's location: ``{name: Location}`` for every ``NameLoc`` directly
    in the fused location ``mlir_location`` (``loc(fused["-":3:3, "triton.kernel"("-":4:22)])``),
    each resolved as :func:`location_of` does (``filename`` replaces ``"-"``). The front end
    gives an extension op such a location, one name per clause and clause item (see
    :attr:`autotune_export.ir.group.AutotuneGroup.clause_locations`), so that later passes
    report at the clause; an op with a plain location has none (``{}``)."""
    loc = _specific(mlir_location) if mlir_location is not None else None
    out: dict[str, Location] = {}
    for part in getattr(loc, "locations", None) or ():
        part = _specific(part)
        if hasattr(part, "name_str") and hasattr(part, "child_loc"):
            where = location_of(part.child_loc, filename)
            if where is not None:
                out.setdefault(part.name_str, where)
    return out


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the candidate closest to ``word``, else ``""``: the same
    name in another case, else the closest by ``difflib``'s ratio when it is at least 0.75 (a
    typo or two: ``BLOKC``/``BLOCK`` 0.8, ``kernelz.py``/``kernels.py`` 0.9, but not
    ``sub_kernel``/``scale_kernel`` 0.73), else a candidate that ``word`` starts with or that
    starts with ``word`` (three characters at least: ``BLOCK_SIZE``/``BLOCK``). Appended to
    messages about an unknown name: a kernel, a kernel file, a parameter, a config key, a
    pass, an option."""
    pool = [c for c in dict.fromkeys(candidates) if c != word]
    if not pool:
        return ""
    close = [c for c in pool if c.lower() == word.lower()]
    close = close or difflib.get_close_matches(word, pool, n=1, cutoff=0.75)
    close = close or [c for c in pool if min(len(c), len(word)) >= 3 and (c.startswith(word) or word.startswith(c))]
    return f"; did you mean '{close[0]}'?" if close else ""


def from_mlir_error(
    err, filename: str | None = None, line_offset: int = 0, remap: Callable[[Location], Location] | None = None
) -> DiagnosticError:
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
