"""Front end: read ``.mlir`` text holding autotuning extension ops into an MLIR module, and
print modules back with the sugared spelling.

Reading works in three steps:

1. find every ``hal.executable.autotuning.export`` outside comments and strings, and its
   extent (the ``@symbol`` and the ``clause(...)`` groups that follow);
2. parse each occurrence with ``dialects/autotuning.lark`` and check it (clauses, names,
   grid expressions), reporting errors at the exact line and column;
3. replace it by the generic op ``"autotune.export"() {...} : () -> ()`` on the same line
   (padded with the same number of newlines, so every later location is unchanged) and parse
   the whole text with ``iree.compiler.ir`` (unregistered dialects allowed).

Everything else in the file is ordinary IREE IR, parsed and verified by the installed IREE.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import lark

from . import grid as grid_mod
from .dialects import grammar
from .diagnostics import Diagnostic, DiagnosticError, Location, from_mlir_error
from .group import GENERIC_OP_NAME, OPTION_NAMES, SUGARED_OP_NAME, AutotuneGroup, Param

__all__ = ["parse_source", "print_module", "new_context", "find_groups", "SourceFile"]

_CLAUSES = ("variants", "triton", "signature", "configs", "workload", "grid", "tune_workload", "default")
_POINTER_TYPES = ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp8e4nv", "fp8e5", "fp16", "bf16", "fp32", "fp64")
_SCALAR_TYPES = ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64")


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
    """A fresh ``iree.compiler.ir.Context`` with IREE's dialects and unregistered ops allowed."""
    from iree.compiler import ir

    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    return ctx


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return lark.Lark(grammar("autotuning.lark"), parser="lalr", propagate_positions=True, maybe_placeholders=False)


# --------------------------------------------------------------------------------------------
# Scanning
# --------------------------------------------------------------------------------------------


def _skip_trivia(text: str, i: int) -> int:
    """Skip whitespace and ``//`` comments."""
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        else:
            break
    return i


def _skip_string(text: str, i: int) -> int:
    """``text[i]`` is a double quote: return the index after the closing quote."""
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        elif text[i] == "\n":
            return i  # unterminated: let the parser report it
        else:
            i += 1
    return i


def _skip_balanced(text: str, i: int, floor_division: bool = False) -> int:
    """``text[i]`` is ``(``: return the index after its matching ``)`` (or end of text).

    ``//`` starts a comment, except with ``floor_division`` (inside ``grid(...)``, where it is
    Python's floor division, as in Triton grid lambdas).
    """
    depth = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        if not floor_division and text.startswith("//", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


_IDENT = re.compile(r"[a-z_][a-z0-9_]*")
_SYMBOL = re.compile(r'@(?:[A-Za-z_][A-Za-z0-9_$.]*|"(?:[^"\\\n]|\\.)*")')


def _op_extent(text: str, start: int) -> int:
    """End index of the extension op starting at ``start``."""
    i = start + len(SUGARED_OP_NAME)
    j = _skip_trivia(text, i)
    m = _SYMBOL.match(text, j)
    if not m:
        return i
    end = m.end()
    while True:
        j = _skip_trivia(text, end)
        m = _IDENT.match(text, j)
        if not m:
            return end
        k = _skip_trivia(text, m.end())
        if k >= len(text) or text[k] != "(":
            return end
        end = _skip_balanced(text, k, floor_division=m.group(0) == "grid")


def _occurrences(text: str):
    """Offsets of the sugared op name outside comments and strings."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith(SUGARED_OP_NAME, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.")):
            end_name = i + len(SUGARED_OP_NAME)
            if end_name >= n or not (text[end_name].isalnum() or text[end_name] in "_."):
                yield i
            i = end_name
        else:
            i += 1


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


# --------------------------------------------------------------------------------------------
# Parsing one op
# --------------------------------------------------------------------------------------------

_TOKEN_NAMES = {
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "COMMA": "','",
    "COLON": "':'",
    "EQUAL": "'='",
    "SYMBOL": "a symbol (@name)",
    "NAME": "a name",
    "TYPE": "a Triton type",
    "STRING": "a string",
    "GRID_EXPR": "a grid expression",
    "TENSOR_TYPE": "a tensor type",
    "SIGNED_INT": "an integer",
    "SIGNED_FLOAT": "a number",
    "SIGNED_NUMBER": "a number",
    "SCALAR_TYPE": "a scalar type",
    "$END": "end of op",
}


def _expected(expected) -> str:
    names = sorted({_TOKEN_NAMES.get(e, e.lower().strip('"').join("''") if e.startswith('"') else _TOKEN_NAMES.get(e, e)) for e in expected})
    keywords = [n for n in names if n.startswith("'") and n.strip("'").isalpha()]
    if len(names) > 6 and keywords:
        return "a clause (" + ", ".join(c for c in _CLAUSES) + ")"
    return ", ".join(names[:8])


class _OpReader:
    """Turns the lark tree of one op into an AutotuneGroup, checking as it goes."""

    def __init__(self, text: str, filename: str, start_line: int, start_col: int):
        self.text = text
        self.filename = filename
        self.start_line = start_line
        self.start_col = start_col

    def loc(self, line: int, col: int) -> Location:
        if line == 1:
            col += self.start_col - 1
        return Location(self.filename, line + self.start_line - 1, col)

    def loc_of(self, node) -> Location:
        meta = node if isinstance(node, lark.Token) else node.meta
        return self.loc(meta.line, meta.column)

    def error(self, node, message: str) -> DiagnosticError:
        return DiagnosticError.at(self.loc_of(node), message)

    def parse(self) -> tuple[AutotuneGroup, dict[str, Location]]:
        try:
            tree = _parser().parse(self.text)
        except lark.exceptions.UnexpectedCharacters as err:
            ch = self.text[err.pos_in_stream] if err.pos_in_stream < len(self.text) else "end of input"
            raise DiagnosticError.at(self.loc(err.line, err.column), f"unexpected '{ch}' in {SUGARED_OP_NAME}") from None
        except lark.exceptions.UnexpectedToken as err:
            if err.token.type == "$END":
                line, col = self.text.count("\n") + 1, len(self.text) - self.text.rfind("\n")
                raise DiagnosticError.at(
                    self.loc(line, col), f"{SUGARED_OP_NAME} ends early; expected {_expected(err.expected)}"
                ) from None
            if err.token.type == "NAME" and str(err.token) not in _CLAUSES and err.token.column and "LPAR" not in err.expected:
                nxt = self.text[err.token.end_pos :].lstrip()[:1]
                if nxt == "(":
                    raise DiagnosticError.at(
                        self.loc(err.line, err.column),
                        f"unknown clause '{err.token}' in {SUGARED_OP_NAME}; expected one of: {', '.join(_CLAUSES)}",
                    ) from None
            raise DiagnosticError.at(
                self.loc(err.line, err.column), f"unexpected '{err.token}'; expected {_expected(err.expected)}"
            ) from None
        except lark.exceptions.UnexpectedEOF as err:  # pragma: no cover - LALR reports UnexpectedToken
            raise DiagnosticError.at(self.loc(1, 1), f"{SUGARED_OP_NAME} ends early") from None
        return self.build(tree)

    def build(self, tree) -> tuple[AutotuneGroup, dict[str, Location]]:
        name_tok = tree.children[0]
        group = AutotuneGroup(name=_symbol_name(name_tok), location=self.loc(1, 1))
        clause_locs: dict[str, Location] = {}
        for clause in tree.children[1:]:
            kind = clause.data
            if kind in clause_locs:
                raise DiagnosticError.at(
                    self.loc_of(clause),
                    f"duplicate clause '{kind}'",
                    [Diagnostic("note", "first given here", clause_locs[kind])],
                )
            clause_locs[kind] = self.loc_of(clause)
            getattr(self, "clause_" + kind)(group, clause)
        self.check(group, clause_locs)
        return group, clause_locs

    # --- clauses ---
    def clause_variants(self, group, node):
        seen: dict[str, lark.Token] = {}
        for tok in node.children:
            name = _symbol_name(tok)
            if name in seen:
                raise DiagnosticError.at(
                    self.loc_of(tok), f"variant @{name} is listed twice", [Diagnostic("note", "first listed here", self.loc_of(seen[name]))]
                )
            seen[name] = tok
        group.variants = list(seen)
        if not group.variants:
            raise self.error(node, "variants([...]) lists no variant")

    def clause_triton(self, group, node):
        path, kernel = (_string(t) for t in node.children)
        if not path:
            raise self.error(node.children[0], "empty kernel path in triton(...)")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel):
            raise self.error(node.children[1], f"'{kernel}' is not a Python identifier")
        group.triton = (path, kernel)

    def clause_signature(self, group, node):
        params: list[Param] = []
        seen: dict[str, Any] = {}
        for p in node.children:
            name_tok, type_tok = p.children[0], p.children[1]
            name, typ = str(name_tok), str(type_tok)
            if name in seen:
                raise DiagnosticError.at(
                    self.loc_of(name_tok), f"parameter '{name}' is declared twice", [Diagnostic("note", "first declared here", self.loc_of(seen[name]))]
                )
            seen[name] = name_tok
            base = typ[1:] if typ.startswith("*") else typ
            allowed = _POINTER_TYPES if typ.startswith("*") else _SCALAR_TYPES
            if base not in allowed:
                raise self.error(type_tok, f"unknown Triton type '{typ}' for parameter '{name}'; expected one of: " + ", ".join(("*" if typ.startswith("*") else "") + t for t in allowed))
            output = False
            if len(p.children) > 2:
                for flag in p.children[2].children:
                    if str(flag) != "output":
                        raise self.error(flag, f"unknown parameter flag '{flag}'; the only flag is 'output'")
                    output = True
                if output and not typ.startswith("*"):
                    raise self.error(p.children[2], f"'{name}' is marked {{output}} but is not a pointer")
            params.append(Param(name, typ, output))
        group.signature = params

    def clause_configs(self, group, node):
        configs = []
        for cfg in node.children:
            entries: list[tuple[str, Any]] = []
            seen: dict[str, Any] = {}
            for entry in cfg.children:
                key_tok, value_node = entry.children
                key = str(key_tok)
                if key in seen:
                    raise self.error(key_tok, f"config key '{key}' is given twice")
                seen[key] = key_tok
                value = _value(value_node)
                if key in OPTION_NAMES and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                    raise self.error(key_tok, f"'{key}' must be a positive integer")
                if key == "num_warps" and value & (value - 1):
                    raise self.error(key_tok, f"num_warps must be a power of two, got {value}")
                entries.append((key, value))
            configs.append(entries)
        if not configs:
            raise self.error(node, "configs([]) is empty: give at least one config")
        group.configs = configs

    def clause_workload(self, group, node):
        names = [str(t) for t in node.children]
        for tok in node.children:
            if names.count(str(tok)) > 1:
                raise self.error(tok, f"'{tok}' appears twice in workload(...)")
        group.workload = names
        self._workload_tokens = {str(t): t for t in node.children}

    def clause_grid(self, group, node):
        exprs = []
        for tok in node.children:
            text = str(tok)
            lead = len(text) - len(text.lstrip())
            try:
                expr = grid_mod.parse(text)
            except grid_mod.GridError as err:
                col = (err.column or 1) - 1
                raise DiagnosticError.at(self._offset(tok, col), str(err)) from None
            exprs.append((expr, tok, lead))
        if not 1 <= len(exprs) <= 3:
            raise self.error(node, f"a grid has 1 to 3 dimensions, got {len(exprs)}")
        group.grid = [grid_mod.format_expr(e) for e, _, _ in exprs]
        self._grid = exprs

    def clause_tune_workload(self, group, node):
        args = []
        for arg in node.children:
            if arg.data == "tune_tensor":
                args.append(str(arg.children[0]))
            else:
                num, typ = arg.children
                args.append(f"{num} : {typ}")
        group.tune_workload = args

    def clause_default(self, group, node):
        group.default = _symbol_name(node.children[0])

    def _offset(self, tok: lark.Token, col: int) -> Location:
        """Location of character ``col`` (0-based) inside token ``tok``."""
        before = str(tok)[:col]
        line = tok.line + before.count("\n")
        column = (tok.column + col) if "\n" not in before else len(before) - before.rfind("\n")
        return self.loc(line, column)

    # --- whole-op checks ---
    def check(self, group: AutotuneGroup, locs: dict[str, Location]) -> None:
        if group.variants is not None and group.triton is not None:
            raise DiagnosticError.at(locs["triton"], "give either variants([...]) or triton(...), not both")
        if group.variants is None and group.triton is None:
            raise DiagnosticError.at(group.location, f"@{group.name} needs variants([...]) or triton(\"file.py\", \"kernel\")")
        if group.default is not None and group.variants is not None and group.default not in group.variants:
            raise DiagnosticError.at(locs["default"], f"default(@{group.default}) is not one of the variants")
        if group.variants is not None:
            for clause in ("signature", "configs", "workload", "grid"):
                if clause in locs:
                    raise DiagnosticError.at(locs[clause], f"'{clause}' only applies to the triton(...) form; the variants([...]) form takes its layout and workload from the exports")
            return
        for clause in ("signature", "workload", "grid"):
            if clause not in locs:
                raise DiagnosticError.at(group.location, f"@{group.name}: the triton(...) form needs a {clause}(...) clause")
        scalars = {p.name: p for p in group.signature if not p.is_pointer}
        pointers = {p.name for p in group.signature if p.is_pointer}
        for name, tok in self._workload_tokens.items():
            if name in pointers:
                raise self.error(tok, f"workload value '{name}' is a pointer; the workload is made of integer scalars")
        in_scope = set(group.workload) | set(OPTION_NAMES)
        if group.configs is not None:
            in_scope |= set(group.constexpr_keys())
        for expr, tok, lead in self._grid:
            for nm in grid_mod.names(expr):
                # Without configs([...]) the constexprs come from the kernel's triton.autotune
                # configs; materialize-triton-variants checks the names then.
                if nm.name not in in_scope and group.configs is not None:
                    if nm.name in scalars:
                        hint = f"; add it to workload(...) to use it in the grid"
                    elif group.configs is not None and any(nm.name == k for cfg in group.configs for k, _ in cfg):
                        hint = "; it is missing from some configs"
                    else:
                        hint = ""
                    raise DiagnosticError.at(self._offset(tok, nm.column - 1), f"grid uses unknown name '{nm.name}'{hint}")
            if group.configs is not None:
                for cfg in group.configs:
                    env = {k: v for k, v in cfg if isinstance(v, int)}
                    env.setdefault("num_warps", 4)
                    env.setdefault("num_stages", 3)
                    env.setdefault("num_ctas", 1)
                    try:
                        grid_mod.CountEmitter({**env, **{w: f"%{w}" for w in group.workload}}).emit(expr)
                    except grid_mod.GridError as err:
                        raise DiagnosticError.at(self._offset(tok, lead), f"{err} for config {{{', '.join(f'{k} = {v}' for k, v in cfg)}}}") from None


def _symbol_name(tok) -> str:
    text = str(tok)[1:]
    if text.startswith('"'):
        return _string(text)
    return text


def _string(tok) -> str:
    import ast

    text = str(tok)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text[1:-1]


def _value(node) -> Any:
    kind = node.data
    tok = node.children[0] if node.children else None
    if kind == "int_value":
        return int(tok)
    if kind == "float_value":
        return float(tok)
    if kind == "true_value":
        return True
    if kind == "false_value":
        return False
    return _string(tok)


# --------------------------------------------------------------------------------------------
# Whole files
# --------------------------------------------------------------------------------------------


def lower_extension_syntax(source: SourceFile) -> tuple[str, list[tuple[AutotuneGroup, dict[str, Location]]]]:
    """Replace every sugared op by its generic form, keeping every line where it was.

    Returns the rewritten text and the parsed groups (with clause locations).
    Raises DiagnosticError for malformed ops.
    """
    text = source.text
    out: list[str] = []
    groups = []
    pos = 0
    for start in _occurrences(text):
        if start < pos:
            continue
        end = _op_extent(text, start)
        line, col = _line_col(text, start)
        reader = _OpReader(text[start:end], source.name, line, col)
        group, locs = reader.parse()
        groups.append((group, locs))
        generic = group.to_generic() + f' loc("-":{line}:{col})'
        out.append(text[pos:start])
        out.append(generic)
        out.append("\n" * text.count("\n", start, end))
        pos = end
    out.append(text[pos:])
    return "".join(out), groups


def parse_source(source: SourceFile, context=None):
    """Parse ``source`` into an ``iree.compiler.ir.Module``.

    Also checks that every extension op sits directly inside a ``hal.executable.source``.
    Raises DiagnosticError (locations name ``source.name``) for any syntax or verifier error.
    """
    from iree.compiler import ir

    generic_text, _ = lower_extension_syntax(source)
    ctx = context or new_context()
    try:
        module = ir.Module.parse(generic_text, ctx)
    except ir.MLIRError as err:
        raise from_mlir_error(err, source.name) from None
    try:
        module.operation.verify()
    except ir.MLIRError as err:
        raise from_mlir_error(err, source.name) from None
    for op, parent in find_groups(module, with_parent=True):
        if parent is None or parent.name != "hal.executable.source":
            grp = AutotuneGroup.from_op(op, source.name)
            where = parent.name if parent is not None else "the module"
            raise DiagnosticError.at(grp.location, f"{SUGARED_OP_NAME} must be directly inside a hal.executable.source, not {where}")
    return module


def find_groups(module, with_parent: bool = False):
    """All generic ``autotune.export`` ops of ``module`` in textual order (optionally with parent op)."""
    found = []

    def visit(op, parent):
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child_op = child.operation
                    if child_op.name == GENERIC_OP_NAME:
                        found.append((child_op, op if parent is not None or op.name != "builtin.module" else op))
                    visit(child_op, op)

    visit(module.operation, None)
    if with_parent:
        return [(op, (None if parent.name == "builtin.module" else parent)) for op, parent in found]
    return [op for op, _ in found]


_GENERIC_LINE = re.compile(r'^(?P<indent>[ \t]*)"autotune\.export"\(\).*$', re.M)


def print_module(module, filename: str | None = None, debug_info: bool = False) -> str:
    """Print ``module`` with the installed IREE's syntax and the sugared extension ops."""
    groups = [AutotuneGroup.from_op(op, filename) for op in find_groups(module)]
    text = module.operation.get_asm(enable_debug_info=debug_info, assume_verified=True)
    it = iter(groups)

    def replace(m):
        group = next(it)
        return group.to_sugar(m.group("indent"))

    return _GENERIC_LINE.sub(replace, text)
