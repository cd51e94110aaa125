"""Front end, step 2b: read the lark tree of one sugared op (:mod:`.op_syntax`) clause by
clause into an :class:`~autotune_export.ir.group.AutotuneGroup`, each clause checked as it is
read (names, types, values, the generated config space, grid expressions), then the whole op
(:func:`.group_checks.check_group`); errors at the exact line and column.
"""

from __future__ import annotations

import re
from typing import Any

import lark

from autotune_export.contract import fits_i64
from autotune_export.frontend.group_checks import ClauseTokens, check_group
from autotune_export.frontend.literals import DtypeError, StringError, config_literal, mlir_problem, string_literal, symbol_name
from autotune_export.frontend.op_syntax import OpSyntax
from autotune_export.ir import grid as grid_mod
from autotune_export.ir import space as space_mod
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import NONE_TYPE, OPTION_NAMES, Param, descriptor_refusal
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, Location, did_you_mean

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


class OpReader(OpSyntax):
    """Turns the lark tree of one op into an AutotuneGroup, checking as it goes."""

    def __init__(self, text: str, filename: str, start_line: int, start_col: int, following: str = "end of file"):
        super().__init__(text, filename, start_line, start_col, following)
        self.items: dict[str, Location] = {}  # clause items: "signature.x_ptr" -> where (see AutotuneGroup.clause_locations)
        self.tokens = ClauseTokens()  # what the whole-op checks point at

    def parse(self) -> tuple[AutotuneGroup, dict[str, Location]]:
        """The op's group and where each clause starts (raises DiagnosticError)."""
        return self.build(self.parse_tree())

    def build(self, tree) -> tuple[AutotuneGroup, dict[str, Location]]:
        try:
            return self._build(tree)
        except StringError as err:
            if isinstance(err.token, lark.Token):
                raise DiagnosticError.at(self.offset(err.token, err.offset), str(err)) from None
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
        check_group(self, self.tokens, group, clause_locs)
        return group, clause_locs

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
            raise DiagnosticError.at(self.offset(where_tok, (err.column or 1) - 1), str(err)) from None
        group.configs = configs
        group.space = axes
        group.space_where = space_mod.format_constraint(space.constraint()) if where is not None else None

    def clause_workload(self, group, node):
        names = [str(t) for t in node.children]
        for tok in node.children:
            if names.count(str(tok)) > 1:
                raise self.error(tok, f"'{tok}' appears twice in workload(...)")
        group.workload = names
        self.tokens.workload = {str(t): t for t in node.children}
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
                raise DiagnosticError.at(self.offset(tok, col), str(err)) from None
            exprs.append((expr, tok, lead))
            self.items[f"grid.{len(exprs) - 1}"] = self.offset(tok, lead)
            for nm in grid_mod.names(expr):
                self.items.setdefault(f"grid.{nm.name}", self.offset(tok, nm.column - 1))
        if not 1 <= len(exprs) <= 3:
            raise self.error(node, f"a grid has 1 to 3 dimensions, got {len(exprs)}")
        group.grid = [grid_mod.format_expr(e) for e, _, _ in exprs]
        self.tokens.grid = exprs

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
        with the whole op (:func:`~autotune_export.frontend.group_checks.check_group`)."""
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
        self.tokens.refs[clause] = list(node.children)
