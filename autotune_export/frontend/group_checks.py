"""Front end, step 2c: the whole-op checks of one sugared op, once its clauses are read
(:func:`check_group`): which form it has and which clauses that form takes, the names the
clauses share (variants, ``{output}`` parameters, workload values) and every grid expression,
errors at the exact line and column of the offending clause or token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autotune_export.frontend.op_syntax import OpSyntax
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.group_values import format_value
from autotune_export.ir.params import OPTION_NAMES
from autotune_export.support.diagnostics import DiagnosticError, Location, did_you_mean

__all__ = ["ClauseTokens", "check_group"]


@dataclass
class ClauseTokens:
    """The tokens of the clauses that the whole-op checks point at, kept by the clause reader:
    ``workload`` (name -> its token in ``workload(...)``), ``grid`` (per dimension: the parsed
    expression, its token and the offset of its first character in the token) and ``refs``
    (``reset_to_zero``/``restore_value`` -> their tokens)."""

    workload: dict[str, Any] = field(default_factory=dict)
    grid: list[tuple[Any, Any, int]] = field(default_factory=list)
    refs: dict[str, list] = field(default_factory=dict)


def check_group(syntax: OpSyntax, tokens: ClauseTokens, group: AutotuneGroup, locs: dict[str, Location]) -> None:
    """Check the group as a whole, once every clause was read: the form (``variants([...])`` or
    ``triton(...)``) and the clauses it takes, ``default`` and ``choices`` against the variants,
    ``reset_to_zero``/``restore_value`` against the form and the signature, the workload's names,
    and every grid expression against the names in scope and, per config, its constant
    folding. ``locs``: where each clause starts; ``tokens``: the tokens the messages point at
    (``syntax`` gives their locations). Raises DiagnosticError at the offending clause or token."""
    if group.variants is not None and group.triton is not None:
        raise DiagnosticError.at(locs["triton"], "give either variants([...]) or triton(...), not both")
    if group.variants is None and group.triton is None:
        raise DiagnosticError.at(group.location, f'@{group.name} needs variants([...]) or triton("file.py", "kernel")')
    if group.kernel_source is not None and group.triton is None:
        raise DiagnosticError.at(
            locs["kernel_source"],
            'kernel_source(...) holds the module of the kernel named in triton("file.py", "kernel"); it needs that clause',
        )
    _check_output_refs(syntax, tokens, group)
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
    for name, tok in tokens.workload.items():
        if name in pointers:
            raise syntax.error(tok, f"workload value '{name}' is a pointer; the workload is made of integer scalars")
        if name in nones:
            raise syntax.error(
                tok,
                f"workload value '{name}' is none (the call passes None, so the dispatch does not pass it); the workload is made of integer scalars",
            )
    in_scope = set(group.workload) | set(OPTION_NAMES)
    if group.configs is not None:
        in_scope |= set(group.constexpr_keys())
    for expr, tok, lead in tokens.grid:
        for nm in grid_mod.names(expr):
            if nm.name in in_scope:
                continue
            at = syntax.offset(tok, nm.column - 1)
            if nm.name in scalars:
                raise DiagnosticError.at(
                    at, f"grid uses '{nm.name}', which is not in workload(...); add it there to use it in the grid"
                )
            if nm.name in pointers:
                raise DiagnosticError.at(
                    at,
                    f"grid uses '{nm.name}', which is a pointer; grids are computed from the workload and config constants",
                )
            if nm.name in nones:
                raise DiagnosticError.at(
                    at,
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
                raise DiagnosticError.at(at, f"grid uses unknown name '{nm.name}'{hint}")
        if group.configs is None:
            # Only constant subexpressions can be checked: every name stays symbolic.
            try:
                grid_mod.fold(expr, {n.name: f"%{n.name}" for n in grid_mod.names(expr)})
            except grid_mod.GridError as err:
                raise DiagnosticError.at(syntax.offset(tok, err.column - 1 if err.column else lead), str(err)) from None
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
                    syntax.offset(tok, err.column - 1 if err.column else lead),
                    f"{err} for config {{{', '.join(f'{k} = {format_value(v)}' for k, v in cfg)}}}",
                ) from None


def _check_output_refs(syntax: OpSyntax, tokens: ClauseTokens, group: AutotuneGroup) -> None:
    """The items of reset_to_zero(...) / restore_value(...) name what the form can name:
    result indices in the variants([...]) form (the dispatch checks the range), ``{output}``
    pointers of the signature in the triton(...) form (Triton's autotuner refuses a name
    that is not a kernel argument; IREE can only zero-fill or restore what the dispatch
    returns, its operands being immutable)."""
    for clause, toks in tokens.refs.items():
        for tok in toks:
            if group.variants is not None:
                if tok.type != "INT":
                    raise syntax.error(
                        tok,
                        f"in the variants([...]) form {clause}(...) takes result indices of the group's "
                        f"dispatches (0, 1, ...), not names; '{tok}' is a name",
                    )
                continue
            if tok.type == "INT":
                raise syntax.error(
                    tok,
                    f"in the triton(...) form {clause}(...) names {{output}} parameters of the "
                    f"signature, not result indices; {tok} is an index",
                )
            if group.signature is None:
                continue  # reported as a missing signature(...)
            param = next((p for p in group.signature if p.name == str(tok)), None)
            if param is None:
                raise syntax.error(
                    tok,
                    f"{clause}(...) names '{tok}', which is not a parameter of the signature "
                    f"({', '.join(p.name for p in group.signature)})"
                    + did_you_mean(str(tok), [p.name for p in group.signature if p.output]),
                )
            if not (param.is_pointer and param.output):
                raise syntax.error(
                    tok,
                    f"{clause}(...) names '{tok}', which is not an {{output}} pointer: IREE treats "
                    "dispatch operands as immutable, so only what the dispatch returns can be "
                    f"{'zero-filled' if clause == 'reset_to_zero' else 'restored'}"
                    + (f"; mark it '{tok}: {param.type} {{output}}'" if param.is_pointer else ""),
                )
