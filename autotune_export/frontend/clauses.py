"""Front end, step 2: parse one sugared op with ``dialects/autotuning.lark`` and check it
(clauses, names, grid expressions) into an :class:`~autotune_export.ir.group.AutotuneGroup`,
errors at the exact line and column (:mod:`.syntax_errors` words them).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import lark

from autotune_export.ir import grid as grid_mod
from autotune_export.ir import space as space_mod
from autotune_export.dialects import grammar
from autotune_export.contract import fits_i64
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location
from autotune_export.ir.group import SUGARED_OP_NAME, AutotuneGroup
from autotune_export.ir.group_clauses import CLAUSE_NAMES
from autotune_export.ir.group_values import format_value
from autotune_export.ir.params import NONE_TYPE, OPTION_NAMES, Param
from autotune_export.support.diagnostics import did_you_mean
from autotune_export.ir.params import descriptor_refusal
from autotune_export.frontend.literals import DtypeError, StringError, config_literal, mlir_problem, string_literal, symbol_name
from autotune_export.frontend.scanning import IDENT, SYMBOL, clause_spans, line_col, skip_trivia
from autotune_export.frontend.syntax_errors import accepted_terminals, backed_up, describe_expected, describe_token

# Triton's type names (``u1`` is what Triton 3.x calls a Python bool, ``*u1`` a bool tensor;
# ``i1`` is accepted too: both are tl.int1).
POINTER_TYPES = (
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "u1",
    "u8",
    "u16",
    "u32",
    "u64",
    "fp8e4nv",
    "fp8e5",
    "fp16",
    "bf16",
    "fp32",
    "fp64",
)
SCALAR_TYPES = ("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64")


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return lark.Lark(
        grammar("autotuning.lark"), parser="lalr", propagate_positions=True, maybe_placeholders=False, cache=True
    )  # lark keeps the LALR tables in a temp file keyed by grammar and options


class OpReader:
    """Turns the lark tree of one op into an AutotuneGroup, checking as it goes."""

    def __init__(self, text: str, filename: str, start_line: int, start_col: int, following: str = "end of file"):
        self.text = text
        self.filename = filename
        self.start_line = start_line
        self.start_col = start_col
        self.following = following  # what comes after the op in the file, for messages
        self.items: dict[str, Location] = {}  # clause items: "signature.x_ptr" -> where (see AutotuneGroup.clause_locations)

    def loc(self, line: int, col: int) -> Location:
        if line == 1:
            col += self.start_col - 1
        return Location(self.filename, line + self.start_line - 1, col)

    def loc_at(self, pos: int) -> Location:
        """Location of offset ``pos`` of the op text."""
        return self.loc(*line_col(self.text, pos))

    def loc_of(self, node) -> Location:
        meta = node if isinstance(node, lark.Token) else node.meta
        return self.loc(meta.line, meta.column)

    def error(self, node, message: str) -> DiagnosticError:
        return DiagnosticError.at(self.loc_of(node), message)

    def _context(self, pos: int) -> str:
        """`` in name(...)`` for the clause around offset ``pos`` (empty between clauses)."""
        for name, start, end in clause_spans(self.text):
            paren = self.text.find("(", start, end)
            if 0 <= paren < pos < end or (0 <= paren < pos == end and end == len(self.text)):
                return f" in {name}(...)"
        return ""

    def parse(self) -> tuple[AutotuneGroup, dict[str, Location]]:
        text = self.text
        rest = skip_trivia(text, len(SUGARED_OP_NAME))
        if not SYMBOL.match(text, rest):
            # op_extent stops after the name: look at what follows it in the file.
            raise DiagnosticError.at(
                self.loc_at(len(SUGARED_OP_NAME)),
                f"expected the group's symbol (@name) after '{SUGARED_OP_NAME}'",
            )
        try:
            tree = _parser().parse(text)
        except lark.exceptions.UnexpectedCharacters as err:
            pos = err.pos_in_stream
            raise DiagnosticError.at(
                self.loc_at(pos), f"unexpected character {describe_token(text, pos)}{self._context(pos)}"
            ) from None
        except lark.exceptions.UnexpectedToken as err:
            raise self._wrong_token(err) from None
        except lark.exceptions.UnexpectedEOF:  # pragma: no cover - LALR reports UnexpectedToken
            raise DiagnosticError.at(self.loc_at(len(text)), f"{SUGARED_OP_NAME} ends early") from None
        return self.build(tree)

    def _wrong_token(self, err) -> DiagnosticError:
        text = self.text
        tok = err.token
        expected = set(err.expected)
        if tok.type == "$END":
            pos = len(text)
            found = self.following
            # LALR merges the states after a value token (a config's value, a product's value):
            # their lookaheads are the union of every context's. What the parser would really
            # accept here is what survives the reductions.
            accepted = accepted_terminals(err)
            if accepted:
                expected &= accepted
        else:
            pos = tok.start_pos
            found = describe_token(text, pos)
        m = IDENT.match(text, pos) if tok.type != "$END" else None
        if m and any(e.lower() in CLAUSE_NAMES for e in expected):
            word = m.group(0)
            after = skip_trivia(text, m.end())
            if word not in CLAUSE_NAMES and after < len(text) and text[after] == "(":
                return DiagnosticError.at(
                    self.loc_at(pos),
                    f"unknown clause '{word}' in {SUGARED_OP_NAME}; expected one of: {', '.join(CLAUSE_NAMES)}"
                    + did_you_mean(word, CLAUSE_NAMES),
                )
        context = self._context(pos)
        if expected == {"LPAR"}:
            before = text[: backed_up(text, pos)].rstrip()
            clause = re.search(r"([a-z_]+)$", before)
            if clause and clause.group(1) in CLAUSE_NAMES:
                return DiagnosticError.at(self.loc_at(backed_up(text, pos)), f"expected '(' after '{clause.group(1)}'")
        return DiagnosticError.at(
            self.loc_at(backed_up(text, pos)), f"expected {describe_expected(expected)}{context}, found {found}"
        )

    def build(self, tree) -> tuple[AutotuneGroup, dict[str, Location]]:
        try:
            return self._build(tree)
        except StringError as err:
            if isinstance(err.token, lark.Token):
                raise DiagnosticError.at(self._offset(err.token, err.offset), str(err)) from None
            raise DiagnosticError.at(self.loc(1, 1), str(err)) from None

    def _build(self, tree) -> tuple[AutotuneGroup, dict[str, Location]]:
        name_tok = tree.children[0]
        group = AutotuneGroup(name=symbol_name(name_tok), location=self.loc(1, 1))
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
        for key, where in self.items.items():
            clause_locs.setdefault(key, where)
        group.clause_locations = dict(clause_locs)
        self.check(group, clause_locs)
        return group, clause_locs

    # --- clauses ---
    def clause_variants(self, group, node):
        seen: dict[str, lark.Token] = {}
        for tok in node.children:
            name = symbol_name(tok)
            if name in seen:
                raise DiagnosticError.at(
                    self.loc_of(tok),
                    f"variant @{name} is listed twice",
                    [Diagnostic("note", "first listed here", self.loc_of(seen[name]))],
                )
            seen[name] = tok
        group.variants = list(seen)
        if not group.variants:
            raise self.error(node, "variants([...]) lists no variant")

    def clause_triton(self, group, node):
        path, kernel = (string_literal(t) for t in node.children)
        self.items["triton.path"] = self.loc_of(node.children[0])
        self.items["triton.kernel"] = self.loc_of(node.children[1])
        if not path:
            raise self.error(node.children[0], "empty kernel path in triton(...)")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel):
            raise self.error(node.children[1], f"'{kernel}' is not a Python identifier")
        group.triton = (path, kernel)

    def clause_kernel_source(self, group, node):
        text = string_literal(node.children[0])
        if not text.strip():
            raise self.error(
                node.children[0],
                "empty kernel_source(...): it holds the Python text of a module defining the kernel named in triton(...)",
            )
        group.kernel_source = text

    def clause_signature(self, group, node):
        params: list[Param] = []
        seen: dict[str, Any] = {}
        for p in node.children:
            name_tok, type_tok = p.children[0], p.children[1]
            name, typ = str(name_tok), str(type_tok)
            typ, _, hint_text = typ.partition(":")
            hint = int(hint_text) if hint_text else 0
            if name in seen:
                raise DiagnosticError.at(
                    self.loc_of(name_tok),
                    f"parameter '{name}' is declared twice",
                    [Diagnostic("note", "first declared here", self.loc_of(seen[name]))],
                )
            seen[name] = name_tok
            self.items[f"signature.{name}"] = self.loc_of(name_tok)
            base = typ[1:] if typ.startswith("*") else typ
            allowed = POINTER_TYPES if typ.startswith("*") else SCALAR_TYPES
            if typ == NONE_TYPE:
                # The call passes None: Triton's JIT makes the argument a constexpr None.
                if hint:
                    raise self.error(type_tok, f"'{name}: {typ}:{hint}': a none parameter takes no specialization hint")
            elif descriptor_refusal(name, typ):
                raise self.error(type_tok, descriptor_refusal(name, typ))
            elif base not in allowed:
                choices = [("*" if typ.startswith("*") else "") + t for t in allowed] + (
                    [] if typ.startswith("*") else [NONE_TYPE]
                )
                raise self.error(
                    type_tok,
                    f"unknown Triton type '{typ}' for parameter '{name}'; expected one of: "
                    + ", ".join(choices)
                    + did_you_mean(typ, choices),
                )
            output = False
            if len(p.children) > 2:
                for flag in p.children[2].children:
                    if str(flag) != "output":
                        raise self.error(flag, f"unknown parameter flag '{flag}'; the only flag is 'output'")
                    output = True
                if output and not typ.startswith("*"):
                    raise self.error(p.children[2], f"'{name}' is marked {{output}} but is not a pointer")
            if hint == 16 and typ not in ("i32", "u32") and not typ.startswith("*"):
                raise self.error(
                    type_tok, f"'{name}: {typ}:16': only pointers and i32/u32 scalars take the divisibility hint ':16'"
                )
            if hint == 1 and typ not in ("i32", "u32"):
                raise self.error(type_tok, f"'{name}: {typ}:1': only i32/u32 scalars take the hint ':1' (equal to 1)")
            params.append(Param(name, typ, output, hint))
        group.signature = params
        if getattr(node.meta, "end_line", None) is not None:  # the closing ')'
            self.items["signature.end"] = self.loc(node.meta.end_line, node.meta.end_column - 1)

    def clause_configs(self, group, node):
        if node.children and not isinstance(node.children[0], lark.Token) and node.children[0].data == "space":
            return self._space(group, node.children[0])
        configs = []
        for index, cfg in enumerate(node.children):
            entries: list[tuple[str, Any]] = []
            seen: dict[str, Any] = {}
            self.items[f"configs.{index}"] = self.loc_of(cfg)
            for entry in cfg.children:
                key_tok, value_node = entry.children
                key = str(key_tok)
                self.items.setdefault(f"configs.{index}.{key}", self.loc_of(key_tok))
                if key in seen:
                    raise self.error(key_tok, f"config key '{key}' is given twice")
                seen[key] = key_tok
                entries.append((key, self._config_value(key_tok, value_node)))
            configs.append(entries)
        if not configs:
            raise self.error(node, "configs([]) is empty: give at least one config")
        group.configs = configs

    def _config_value(self, key_tok, value_node) -> Any:
        """A config value of ``key_tok`` (checked as in a config of configs([...]))."""
        key = str(key_tok)
        try:
            value = config_literal(value_node)
        except DtypeError as err:
            raise self.error(err.token, str(err)) from None
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            raise self.error(key_tok, f"config value {key} = {value} does not fit in 64 bits")
        if key in OPTION_NAMES and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise self.error(key_tok, f"'{key}' must be a positive integer")
        if key == "num_warps" and value & (value - 1):
            raise self.error(key_tok, f"num_warps must be a power of two, got {value}")
        return value

    def _space(self, group, node):
        """``configs(product(NAME in [v, ...], NAME = v, ...) where CONSTRAINT)``: the space is
        expanded here (:mod:`autotune_export.ir.space`); the group keeps both the space and
        its configs. Errors at the offending name, value or constraint token."""
        axes, seen = [], {}
        where_tok = None
        for child in node.children:
            if isinstance(child, lark.Token):  # the constraint's text
                where_tok = child
                continue
            key_tok, *value_nodes = child.children
            key = str(key_tok)
            if key in seen:
                raise DiagnosticError.at(
                    self.loc_of(key_tok),
                    f"'{key}' is given twice in product(...)",
                    [Diagnostic("note", "first given here", self.loc_of(seen[key]))],
                )
            seen[key] = key_tok
            self.items[f"space.{key}"] = self.loc_of(key_tok)
            values = [self._config_value(key_tok, v) for v in value_nodes]
            if child.data == "axis_values" and not values:
                raise self.error(key_tok, f"'{key} in []' gives no value: the space would be empty")
            if child.data == "axis_values" and len(set(map(repr, values))) != len(values):
                raise self.error(key_tok, f"'{key} in [...]' lists a value twice")
            axes.append((key, values, child.data == "axis_fixed"))
        if not axes:
            raise self.error(node, "product() names nothing: give NAME in [values] or NAME = value")
        where = None
        if where_tok is not None:
            # `//` starts a comment here, as outside grid(...): blanked, offsets kept.
            text = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), str(where_tok))
            self.items["space.where"] = self.loc_of(where_tok)
            where = text
        space = space_mod.space_of(axes, where)
        try:
            configs = space.expand()
        except space_mod.SpaceError as err:
            if where_tok is None or err.column is None:
                raise self.error(node, str(err)) from None
            raise DiagnosticError.at(self._offset(where_tok, (err.column or 1) - 1), str(err)) from None
        group.configs = configs
        group.space = axes
        group.space_where = space_mod.format_constraint(space.constraint()) if where is not None else None
        self.space_size = space.size()

    def clause_workload(self, group, node):
        names = [str(t) for t in node.children]
        for tok in node.children:
            if names.count(str(tok)) > 1:
                raise self.error(tok, f"'{tok}' appears twice in workload(...)")
        group.workload = names
        self._workload_tokens = {str(t): t for t in node.children}
        for tok in node.children:
            self.items[f"workload.{tok}"] = self.loc_of(tok)

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
            self.items[f"grid.{len(exprs) - 1}"] = self._offset(tok, lead)
            for nm in grid_mod.names(expr):
                self.items.setdefault(f"grid.{nm.name}", self._offset(tok, nm.column - 1))
        if not 1 <= len(exprs) <= 3:
            raise self.error(node, f"a grid has 1 to 3 dimensions, got {len(exprs)}")
        group.grid = [grid_mod.format_expr(e) for e, _, _ in exprs]
        self._grid = exprs

    def clause_tune_workload(self, group, node):
        lists = [c for c in node.children if not isinstance(c, lark.Token) and c.data == "tune_list"]
        if lists:
            group.tune_workload = [self._tune_args(lst.children) for lst in lists]
        else:
            group.tune_workload = [self._tune_args(node.children)]

    def _tune_args(self, children) -> list[str]:
        """One workload of ``tune_workload(...)``: MLIR text per host argument."""
        args = []
        for arg in children:
            if arg.data == "tune_tensor":
                tok = arg.children[0]
                if "?" in str(tok) or "*" in str(tok):
                    raise self.error(tok, f"tune_workload values need a static shape (fake data is made of them), got {tok}")
                self._check_mlir(tok, str(tok), "type")
                args.append(str(tok))
            else:
                num, typ = arg.children
                self._check_mlir(num, f"{num} : {typ}", "attribute")
                args.append(f"{num} : {typ}")
        return args

    def clause_choices(self, group, node):
        out, seen = [], {}
        for choice in node.children:
            *values, sym = choice.children
            key = tuple(int(str(v)) for v in values)
            for tok, v in zip(values, key):
                if not fits_i64(v):
                    raise self.error(
                        tok,
                        f"workload value {v} in choices(...) does not fit in a 64-bit signed integer "
                        "(the dispatch's workload values are i64)",
                    )
            if key in seen:
                raise DiagnosticError(
                    [
                        Diagnostic(
                            "error",
                            f"workload [{', '.join(map(str, key))}] is given twice in choices(...)",
                            self.loc_of(sym),
                            [Diagnostic("note", "first given here", self.loc_of(seen[key]))],
                        )
                    ]
                )
            seen[key] = sym
            self.items[f"choices.{len(out)}"] = self.loc_of(choice)
            out.append((key, symbol_name(sym)))
        group.choices = out

    def _check_mlir(self, node, text: str, kind: str) -> None:
        """Check that ``text`` parses as an MLIR type/attribute (reported at ``node``)."""
        problem = mlir_problem(text, kind)
        if problem:
            raise self.error(node, f"invalid {'type' if kind == 'type' else 'value'} '{text}' in tune_workload(...): {problem}")

    def clause_specialized(self, group, node):
        symbols = [c for c in node.children if isinstance(c, lark.Token) and c.type == "SYMBOL"]
        group.specialized = [symbol_name(t) for t in symbols]
        guards = {"divisible_by_16": [], "equal_to_1": []}
        for guard in (c for c in node.children if not isinstance(c, lark.Token)):
            kind = str(guard.children[0])
            if guards[kind]:
                raise self.error(guard, f"'{kind}' is given twice in specialized(...)")
            guards[kind] = [int(t) for t in guard.children[1:]]
        group.divisible = guards["divisible_by_16"]
        group.equal_one = guards["equal_to_1"]
        if not group.divisible and not group.equal_one:
            raise self.error(
                node, "specialized([...]) needs divisible_by_16 = [...] or equal_to_1 = [...] naming the constants it assumes"
            )

    def clause_default(self, group, node):
        group.default = symbol_name(node.children[0])

    def clause_reset_to_zero(self, group, node):
        self._output_refs(group, node, "reset_to_zero")

    def clause_restore_value(self, group, node):
        self._output_refs(group, node, "restore_value")

    def _output_refs(self, group, node, clause: str) -> None:
        """``reset_to_zero(...)`` / ``restore_value(...)``: parameter names (the triton(...)
        form) or result indices (the variants([...]) form), each once; which form is checked
        with the whole op (:meth:`_check_output_refs`)."""
        seen: dict[str, lark.Token] = {}
        for tok in node.children:
            if str(tok) in seen:
                raise DiagnosticError.at(
                    self.loc_of(tok),
                    f"'{tok}' appears twice in {clause}(...)",
                    [Diagnostic("note", "first given here", self.loc_of(seen[str(tok)]))],
                )
            seen[str(tok)] = tok
            if tok.type == "INT" and not fits_i64(int(tok)):
                raise self.error(tok, f"result index {tok} in {clause}(...) does not fit in a 64-bit signed integer")
            self.items[f"{clause}.{tok}"] = self.loc_of(tok)
        setattr(group, clause, [int(t) if t.type == "INT" else str(t) for t in node.children])
        if not hasattr(self, "_refs"):
            self._refs = {}  # clause -> its tokens, for _check_output_refs
        self._refs[clause] = list(node.children)

    def _check_output_refs(self, group: AutotuneGroup) -> None:
        """The items of reset_to_zero(...) / restore_value(...) name what the form can name:
        result indices in the variants([...]) form (the dispatch checks the range), ``{output}``
        pointers of the signature in the triton(...) form (Triton's autotuner refuses a name
        that is not a kernel argument; IREE can only zero-fill or restore what the dispatch
        returns, its operands being immutable)."""
        for clause, toks in getattr(self, "_refs", {}).items():
            for tok in toks:
                if group.variants is not None:
                    if tok.type != "INT":
                        raise self.error(
                            tok,
                            f"in the variants([...]) form {clause}(...) takes result indices of the group's "
                            f"dispatches (0, 1, ...), not names; '{tok}' is a name",
                        )
                    continue
                if tok.type == "INT":
                    raise self.error(
                        tok,
                        f"in the triton(...) form {clause}(...) names {{output}} parameters of the "
                        f"signature, not result indices; {tok} is an index",
                    )
                if group.signature is None:
                    continue  # reported as a missing signature(...)
                param = next((p for p in group.signature if p.name == str(tok)), None)
                if param is None:
                    raise self.error(
                        tok,
                        f"{clause}(...) names '{tok}', which is not a parameter of the signature "
                        f"({', '.join(p.name for p in group.signature)})"
                        + did_you_mean(str(tok), [p.name for p in group.signature if p.output]),
                    )
                if not (param.is_pointer and param.output):
                    raise self.error(
                        tok,
                        f"{clause}(...) names '{tok}', which is not an {{output}} pointer: IREE treats "
                        "dispatch operands as immutable, so only what the dispatch returns can be "
                        f"{'zero-filled' if clause == 'reset_to_zero' else 'restored'}"
                        + (f"; mark it '{tok}: {param.type} {{output}}'" if param.is_pointer else ""),
                    )

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
            raise DiagnosticError.at(group.location, f'@{group.name} needs variants([...]) or triton("file.py", "kernel")')
        if group.kernel_source is not None and group.triton is None:
            raise DiagnosticError.at(
                locs["kernel_source"],
                'kernel_source(...) holds the module of the kernel named in triton("file.py", "kernel"); it needs that clause',
            )
        self._check_output_refs(group)
        if group.default is not None and group.variants is not None and group.default not in group.variants:
            raise DiagnosticError.at(locs["default"], f"default(@{group.default}) is not one of the variants")
        if group.choices is not None:
            if group.variants is None:
                raise DiagnosticError.at(
                    locs["choices"],
                    "choices(...) names variants: it applies to the variants([...]) form (autotune-export --tuning-results writes it after materializing)",
                )
            for _, v in group.choices:
                if v not in group.variants:
                    raise DiagnosticError.at(locs["choices"], f"choices(...) picks @{v}, which is not one of the variants")
            if len({len(k) for k, _ in group.choices}) > 1:
                raise DiagnosticError.at(locs["choices"], "every workload of choices(...) must have the same number of values")
        if group.tune_workload is not None and len({len(w) for w in group.tune_workload}) > 1:
            raise DiagnosticError.at(
                locs["tune_workload"],
                "every workload of tune_workload([...], [...]) must give one value per host argument (they differ in length)",
            )
        if group.variants is not None:
            for clause in ("signature", "configs", "workload", "grid"):
                if clause in locs:
                    raise DiagnosticError.at(
                        locs[clause],
                        f"'{clause}' only applies to the triton(...) form; the variants([...]) form takes its layout and workload from the exports",
                    )
            if group.specialized is not None and len(group.specialized) != len(group.variants):
                raise DiagnosticError.at(
                    locs["specialized"],
                    f"specialized([...]) lists {len(group.specialized)} exports for {len(group.variants)} variants; give one per variant, in order",
                )
            return
        if "specialized" in locs:
            raise DiagnosticError.at(
                locs["specialized"],
                "'specialized' only applies to the variants([...]) form; in the triton(...) form write ':16' hints in the signature",
            )
        for clause in ("signature", "workload", "grid"):
            if clause not in locs:
                raise DiagnosticError.at(group.location, f"@{group.name}: the triton(...) form needs a {clause}(...) clause")
        scalars = {p.name: p for p in group.signature if not p.is_pointer and not p.is_none}
        pointers = {p.name for p in group.signature if p.is_pointer}
        nones = {p.name for p in group.signature if p.is_none}
        for name, tok in self._workload_tokens.items():
            if name in pointers:
                raise self.error(tok, f"workload value '{name}' is a pointer; the workload is made of integer scalars")
            if name in nones:
                raise self.error(
                    tok,
                    f"workload value '{name}' is none (the call passes None, so the dispatch does not pass it); the workload is made of integer scalars",
                )
        in_scope = set(group.workload) | set(OPTION_NAMES)
        if group.configs is not None:
            in_scope |= set(group.constexpr_keys())
        for expr, tok, lead in self._grid:
            for nm in grid_mod.names(expr):
                if nm.name in in_scope:
                    continue
                where = self._offset(tok, nm.column - 1)
                if nm.name in scalars:
                    raise DiagnosticError.at(
                        where, f"grid uses '{nm.name}', which is not in workload(...); add it there to use it in the grid"
                    )
                if nm.name in pointers:
                    raise DiagnosticError.at(
                        where,
                        f"grid uses '{nm.name}', which is a pointer; grids are computed from the workload and config constants",
                    )
                if nm.name in nones:
                    raise DiagnosticError.at(
                        where,
                        f"grid uses '{nm.name}', which is none (the call passes None); grids are computed from the workload and config constants",
                    )
                # Without configs([...]) the constexprs come from the kernel's triton.autotune
                # configs; materialize-triton-variants checks the names then.
                if group.configs is not None:
                    if any(nm.name == k for cfg in group.configs for k, _ in cfg):
                        hint = "; it is missing from some configs"
                    else:
                        hint = "; names in a grid are workload values, config constants and " + ", ".join(OPTION_NAMES)
                        hint += did_you_mean(nm.name, sorted(in_scope | set(group.constexpr_keys())))
                    raise DiagnosticError.at(where, f"grid uses unknown name '{nm.name}'{hint}")
            if group.configs is None:
                # Only constant subexpressions can be checked: every name stays symbolic.
                try:
                    grid_mod.fold(expr, {n.name: f"%{n.name}" for n in grid_mod.names(expr)})
                except grid_mod.GridError as err:
                    raise DiagnosticError.at(self._offset(tok, err.column - 1 if err.column else lead), str(err)) from None
                continue
            for cfg in group.configs:
                env = {k: v for k, v in cfg if isinstance(v, int) and not isinstance(v, bool)}
                env.setdefault("num_warps", 4)
                env.setdefault("num_stages", 3)
                env.setdefault("num_ctas", 1)
                try:
                    grid_mod.fold(expr, {**env, **{w: f"%{w}" for w in group.workload}})
                except grid_mod.GridError as err:
                    raise DiagnosticError.at(
                        self._offset(tok, err.column - 1 if err.column else lead),
                        f"{err} for config {{{', '.join(f'{k} = {format_value(v)}' for k, v in cfg)}}}",
                    ) from None
