"""Front end: read ``.mlir`` text holding autotuning extension ops into an MLIR module, and
print modules back with the sugared spelling.

Reading works in three steps, one module each (this one drives them):

1. find every ``hal.executable.autotuning.export`` outside comments and strings, and its
   extent (the ``@symbol`` and the ``clause(...)`` groups that follow): :mod:`.scanning`;
2. parse each occurrence with ``dialects/autotuning.lark`` and check it (clauses, names,
   grid expressions), reporting errors at the exact line and column: :mod:`.clauses`
   (its literals in :mod:`.literals`, the words of its syntax errors in :mod:`.syntax_errors`);
3. replace it by the generic op ``"autotune.export"() {...} : () -> ()`` on the same line
   (padded with the same number of newlines, so every later line is unchanged; a
   :class:`ColumnMap` maps the columns after the op on its last line back) and parse
   the whole text with ``iree.compiler.ir`` (unregistered dialects allowed).

Everything else in the file is ordinary IREE IR, parsed and verified by the installed IREE.
Then every group must sit directly in a ``hal.executable.source`` and have a symbol unique
there (among groups and exports); a ``"autotune.export"`` op written in the generic form by
hand gets the same checks as the sugared op.

Errors follow mlir-opt: ``FILE:LINE:COL: error: expected ',' or ']' in variants(...), found
'@b'`` at the offending token, except that a missing token is reported right after the
previous one when the offending token starts a new line (``Parser::emitWrongTokenError``).
Brackets must nest, so a missing ``)`` stops at the ``}`` of the enclosing region.
"""

from __future__ import annotations

from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location, from_mlir_error
from autotune_export.ir.walk import find_groups
from autotune_export.ir.group import GENERIC_OP_NAME, SUGARED_OP_NAME, AutotuneGroup
from iree.compiler import ir
from iree.compiler.dialects import hal
from autotune_export.frontend import compat
from autotune_export.support.diagnostics import location_of
from autotune_export.ir.group_values import symbol
from autotune_export.frontend.clauses import OpReader
from autotune_export.frontend.scanning import line_col, occurrences, op_extent, skip_trivia
from autotune_export.frontend.source import SourceFile, new_context
from autotune_export.frontend.syntax_errors import describe_token

__all__ = ["parse_source", "print_module", "new_context", "find_groups", "SourceFile"]

#: Attribute of the placeholder op that stands for sugared op N until its attributes are set.
_PENDING = "autotune.pending"

# --------------------------------------------------------------------------------------------
# Whole files
# --------------------------------------------------------------------------------------------


class ColumnMap:
    """Maps columns of the rewritten text (generic ops) back to the input's columns.

    A generic op is longer than the sugared text it replaces, so on the line where an op
    ends, what follows it moves right. Lines never move. ``segments[line]`` lists
    ``(new_col, orig_col, inside_op)`` starts of stretches, in order.
    """

    def __init__(self):
        self.segments: dict[int, list[tuple[int, int, bool]]] = {}

    def add(self, line: int, new_col: int, orig_col: int, inside_op: bool) -> None:
        self.segments.setdefault(line, [(1, 1, False)]).append((new_col, orig_col, inside_op))

    def column(self, line: int, col: int) -> int:
        """The input's column of column ``col`` of ``line`` in the rewritten text."""
        best = (1, 1, False)
        for seg in self.segments.get(line, ()):
            if seg[0] <= col:
                best = seg
        new_col, orig_col, inside = best
        return orig_col if inside else orig_col + (col - new_col)

    def __call__(self, loc: Location) -> Location:
        return Location(loc.file, loc.line, self.column(loc.line, loc.col))


def _lower(source: SourceFile) -> tuple[str, list[tuple[AutotuneGroup, dict[str, Location]]], ColumnMap]:
    text = source.text
    out: list[str] = []
    out_len = 0
    last_nl = -1  # offset of the last newline written to ``out``
    groups = []
    colmap = ColumnMap()
    pos = 0

    def emit(piece: str) -> None:
        nonlocal out_len, last_nl
        nl = piece.rfind("\n")
        if nl >= 0:
            last_nl = out_len + nl
        out.append(piece)
        out_len += len(piece)

    for start in occurrences(text):
        if start < pos:
            continue
        end = op_extent(text, start)
        line, col = line_col(text, start)
        after = skip_trivia(text, end)
        following = describe_token(text, after) if after < len(text) else "end of file"
        reader = OpReader(text[start:end], source.name, line, col, following)
        group, locs = reader.parse()
        groups.append((group, locs))
        # A placeholder generic op at the sugared op's position; parse_source sets its
        # attributes from the group with the bindings (the clause table), no op text.
        generic = f'"{GENERIC_OP_NAME}"() {{{_PENDING} = {len(groups) - 1} : i64}} : () -> () loc("-":{line}:{col})'
        emit(text[pos:start])
        new_col = out_len - last_nl
        colmap.add(line, new_col, col, True)
        emit(generic)
        newlines = text.count("\n", start, end)
        emit("\n" * newlines)
        end_line, end_col = line_col(text, end)
        colmap.add(end_line, out_len - last_nl, end_col, False)
        pos = end
    emit(text[pos:])
    return "".join(out), groups, colmap


def lower_extension_syntax(source: SourceFile) -> tuple[str, list[tuple[AutotuneGroup, dict[str, Location]]]]:
    """Replace every sugared op by its generic form, keeping every line where it was.

    Returns the rewritten text and the parsed groups (with clause locations).
    Raises DiagnosticError for malformed ops.
    """
    text, groups, _ = _lower(source)
    return text, groups


def parse_source(source: SourceFile, context=None):
    """Parse ``source`` into an ``iree.compiler.ir.Module``.

    Input written for older IREE releases is first rewritten into the installed IREE's
    syntax by :func:`autotune_export.frontend.compat.normalize` (lines unchanged).
    Also checks that every extension op sits directly inside a ``hal.executable.source`` and
    that symbols of groups are unique there (among groups and exports).
    Raises DiagnosticError (locations name ``source.name``) for any syntax or verifier error.
    """

    # Older IREE spellings -> the installed IREE's, every line kept where it was.
    source = SourceFile(compat.normalize(source.text, source.name), source.name, source.base_dir)
    generic_text, groups, colmap = _lower(source)
    ctx = context or new_context()
    try:
        module = ir.Module.parse(generic_text, ctx)
    except ir.MLIRError as err:
        raise from_mlir_error(err, source.name, remap=colmap) from None
    try:
        module.operation.verify()
    except ir.MLIRError as err:
        raise from_mlir_error(err, source.name, remap=colmap) from None
    for op in find_groups(module):
        if _PENDING in op.attributes:
            group = groups[int(op.attributes[_PENDING].value)][0]
            group.write_into(op)
            with ctx:
                op.location = _with_clauses(op.location, group)
    seen: dict[tuple[int, str], Location | None] = {}
    sugared = {(g.location.line, g.location.col) for g, _ in groups if g.location is not None}
    for op, parent in find_groups(module, with_parent=True):
        grp = _checked_group(op, source.name, colmap, sugared)
        if parent is None or not isinstance(parent.opview, hal.ExecutableSourceOp):
            where = parent.name if parent is not None else "the module"
            raise DiagnosticError.at(
                grp.location, f"{SUGARED_OP_NAME} must be directly inside a hal.executable.source, not {where}"
            )
        key = (id(parent), grp.name)
        if key not in seen:
            exports = _export_locations(parent, source.name, colmap)
            for name, loc in exports.items():
                seen.setdefault((id(parent), name), loc)
        if key in seen:
            first = seen[key]
            notes = [Diagnostic("note", f"@{grp.name} is first defined here", first)] if first else []
            raise DiagnosticError.at(grp.location, f"redefinition of symbol @{grp.name} in {_source_name(parent)}", notes)
        seen[key] = grp.location
    return module


def _with_clauses(loc, group: AutotuneGroup):
    """``loc`` (the op's position) fused with one named location per clause and clause item
    (``loc(fused["-":3:3, "triton"("-":4:7), "triton.kernel"("-":4:22), ...])``, positions in
    the parser's buffer ``-`` as the op's own), so that passes reading the op report at the
    clause (:meth:`AutotuneGroup.at`); :func:`location_of` still gives the op's position."""
    parts = [
        ir.Location.name(key, childLoc=ir.Location.file("-", where.line, where.col))
        for key, where in group.clause_locations.items()
    ]
    return ir.Location.fused([loc, *parts]) if parts else loc


def _checked_group(op, filename: str, colmap: ColumnMap, sugared: set[tuple[int, int]]) -> AutotuneGroup:
    """The group of a generic ``autotune.export`` op. One the user wrote in the generic form
    (not made from the sugared op here) gets the sugared op's checks: it is printed sugared
    and read back."""

    loc = location_of(op.location, filename)
    if loc is not None and (loc.line, loc.col) in sugared:
        return AutotuneGroup.from_op(op, filename)  # made here; its loc(...) is the input's
    if loc is not None and loc.file == filename:
        loc = colmap(loc)  # the parser's position in the rewritten text
    what = f'generic "{GENERIC_OP_NAME}" op'
    try:
        group = AutotuneGroup.from_op(op, filename)
        if not isinstance(group.name, str):
            raise TypeError("sym_name must be a string")
        sugar = group.to_sugar()
    except KeyError as err:
        raise DiagnosticError.at(
            loc, f"{what} without the attribute {err}; write the op as {SUGARED_OP_NAME} @name ..."
        ) from None
    except (TypeError, ValueError, IndexError, AttributeError) as err:
        raise DiagnosticError.at(loc, f"malformed {what}: {err}; write the op as {SUGARED_OP_NAME} @name ...") from None
    try:
        OpReader(sugar, filename, 1, 1).parse()
    except DiagnosticError as err:
        first = err.diagnostics[0]
        raise DiagnosticError.at(loc, f"invalid {what}: {first.message}") from None
    group.location = loc
    return group


def _source_name(source) -> str:
    if "sym_name" in source.attributes:
        return symbol(source.attributes["sym_name"].value)
    return "the executable"


def _export_locations(source, filename: str, colmap: ColumnMap) -> dict[str, Location | None]:
    """Symbol -> location of the ``hal.executable.export`` ops of a source."""

    out = {}
    for block in source.regions[0].blocks:
        for child in block.operations:
            child = child.operation
            if isinstance(child.opview, hal.ExecutableExportOp) and "sym_name" in child.attributes:
                loc = location_of(child.location, filename)
                out[child.attributes["sym_name"].value] = colmap(loc) if loc and loc.file == filename else loc
    return out


def print_module(module, filename: str | None = None, debug_info: bool = False) -> str:
    """Print ``module`` with the installed IREE's syntax and the sugared extension ops."""
    groups = [AutotuneGroup.from_op(op, filename) for op in find_groups(module)]
    text = module.operation.get_asm(enable_debug_info=debug_info, assume_verified=True)
    # IREE 3.13 prints a data-only #hal.executable.object<{data = ...}> as '<{, data = ...}>',
    # which it cannot parse back; drop the stray comma.
    text = text.replace("#hal.executable.object<{, ", "#hal.executable.object<{")
    # MLIR prints each generic op on one line of its own, in the order find_groups walks.
    it = iter(groups)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        body = line.lstrip(" \t")
        if body.startswith(f'"{GENERIC_OP_NAME}"()'):
            lines[i] = next(it).to_sugar(line[: len(line) - len(body)])
    return "\n".join(lines)
