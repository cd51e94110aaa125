"""No op text formatted and parsed back outside the front end (the project's rule: IR is built
with the bindings, never as text that is parsed again), and IR read through IREE's generated op
classes (no op identity by name, no hand decoding of ``operandSegmentSizes``), read off the
package's source with ``ast``:

* :func:`op_text_builders`: functions that format op text (an f-string, ``%`` or ``.format``
  whose literal parts spell an op: ``%x = arith.constant``, ``flow.dispatch @e::@g``,
  ``util.func public @f``); text in diagnostics, exceptions, prints and docstrings is not IR.
* :func:`parsed_back`: calls of an op parser (``Operation.parse``, ``Module.parse``,
  ``parse_detached``, ``parse_source``) whose text is generated: formatted in place, a local
  variable or parameter holding such text, or what a function returns that formats or passes on
  op text (followed through calls and parameters across the package).

Both are checked outside ``autotune_export/frontend`` (the front end normalizes older syntax
as text by design). The known offenders are listed by name: an entry that no longer offends
fails the test too, so the lists only shrink.
"""

from __future__ import annotations

import ast
import functools
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "autotune_export")

#: Functions (module:qualname) known to format op text (none: the jax-triton and PyTorch-launch
#: bridges build their modules with the bindings); add none.
KNOWN_BUILDERS: set[str] = set()
#: Parser calls known to read generated op text back (module:qualname of the caller): none.
KNOWN_PARSED_BACK: set[str] = set()

_DIALECTS = r"(?:util|flow|hal|func|arith|tensor|stablehlo|builtin|scf|cf|linalg|memref|vm|iree_[a-z_]+)"
#: Op syntax in a formatted string (interpolations read as ``%v``): an op name followed by a
#: symbol or an SSA value, or a value defined by an op.
_OP_SYNTAX = re.compile(
    rf"\b{_DIALECTS}\.[a-z_]+(?:\.[a-z_]+)*[ \t]+(?:(?:public|private)[ \t]+)?[@%]"
    rf"|%[\w.$-]+(?::\d+)?[ \t]*=[ \t]*\"?{_DIALECTS}\.[a-z_]+"
)
#: Calls whose text arguments are messages, not IR.
_MESSAGE_CALLS = {"DiagnosticError", "Diagnostic", "at", "warn", "print", "echo", "note", "remark", "append_note",
                  "ValueError", "TypeError", "RuntimeError", "KeyError", "AssertionError", "emit_remark"}
#: Op parsers: ``X.parse`` on these receivers, and these functions.
_PARSE_RECEIVERS = {"Operation", "Module"}
_PARSE_FUNCTIONS = {"parse_detached", "parse_source"}


@functools.lru_cache(maxsize=1)
def _sources() -> dict[str, ast.Module]:
    out = {}
    for dirpath, _, names in os.walk(PACKAGE):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, PACKAGE).replace(os.sep, "/")
                with open(path, encoding="utf-8") as f:
                    out[rel] = ast.parse(f.read(), path)
    return out


@functools.lru_cache(maxsize=None)
def _walked(node: ast.AST) -> tuple[ast.AST, ...]:
    """``ast.walk(node)`` as a tuple, walked once per node (the checks read each function and
    module several times; AST nodes hash by identity)."""
    return tuple(ast.walk(node))


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _formatted_text(node: ast.AST) -> str | None:
    """The literal text of a formatting expression, interpolations as ``%v``; None for
    anything else."""
    if isinstance(node, ast.JoinedStr) and any(isinstance(v, ast.FormattedValue) for v in node.values):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "%v" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        parts = [_formatted_text(node.left) or _literal(node.left), _formatted_text(node.right) or _literal(node.right)]
        if any(p is not None for p in parts):
            return "%v".join(p or "" for p in parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _literal(node.func.value)
    return None


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Functions(ast.NodeVisitor):
    """Per function (``module:qualname``): its node, and the formatting expressions in it that
    are not messages."""

    def __init__(self, rel: str):
        self.rel, self.stack, self.functions = rel, [], {}

    def visit_FunctionDef(self, node):
        self.stack.append(node.name)
        self.functions[f"{self.rel}:{'.'.join(self.stack)}"] = node
        self.generic_visit(node)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()


def _formats_op_text(fn: ast.AST) -> bool:
    messages: set[int] = set()
    nodes = _walked(fn)
    for node in nodes:
        if isinstance(node, ast.Call) and _call_name(node) in _MESSAGE_CALLS:
            messages.update(id(n) for a in [*node.args, *(k.value for k in node.keywords)] for n in ast.walk(a))
        elif isinstance(node, (ast.Raise, ast.Assert)):
            messages.update(id(n) for n in ast.walk(node))
    for node in nodes:
        if id(node) in messages:
            continue
        text = _formatted_text(node)
        if text is not None and _OP_SYNTAX.search(text):
            return True
    return False


def _all_functions(sources) -> dict[str, ast.AST]:
    functions = {}
    for rel, tree in sources.items():
        visitor = _Functions(rel)
        visitor.visit(tree)
        functions.update(visitor.functions)
    return functions


@functools.lru_cache(maxsize=1)
def _package_functions() -> dict[str, ast.AST]:
    """:func:`_all_functions` of the package, found once (three checks read them)."""
    return _all_functions(_sources())


@functools.lru_cache(maxsize=1)
def _package_formatters() -> frozenset[str]:
    """The package's functions that format op text (:func:`_formats_op_text`), found once."""
    return frozenset(name for name, fn in _package_functions().items() if _formats_op_text(fn))


def _functions_and_formatters(sources) -> tuple[dict[str, ast.AST], set[str]]:
    """The functions of ``sources`` (None: the package's) and those of them that format op text."""
    if sources is None:
        return _package_functions(), set(_package_formatters())
    functions = _all_functions(sources)
    return functions, {name for name, fn in functions.items() if _formats_op_text(fn)}


def op_text_builders(sources=None) -> set[str]:
    """Functions outside the front end that format op text (see the module docstring)."""
    return {name for name in _functions_and_formatters(sources)[1] if not name.startswith("frontend/")}


def _parse_calls(fn: ast.AST):
    for node in _walked(fn):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        f = node.func
        receiver = f.value.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) else (
            f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None)
        if (isinstance(f, ast.Attribute) and f.attr == "parse" and receiver in _PARSE_RECEIVERS) or _call_name(node) in _PARSE_FUNCTIONS:
            text = node.args[0]
            if isinstance(text, ast.Call) and _call_name(text) == "SourceFile" and text.args:
                text = text.args[0]
            yield text


def parsed_back(sources=None) -> set[str]:
    """Functions outside the front end whose op parser reads generated op text (see the module
    docstring): a fixed point over text-returning functions and tainted parameters, functions
    matched by their simple name."""
    functions, returns_text = _functions_and_formatters(sources)
    by_simple: dict[str, list[str]] = {}
    for name in functions:
        by_simple.setdefault(name.rsplit(":", 1)[1].rsplit(".", 1)[-1], []).append(name)
    tainted_params: dict[str, set[str]] = {name: set() for name in functions}
    nodes = {name: _walked(fn) for name, fn in functions.items()}
    assigns = {name: [n for n in ns if isinstance(n, ast.Assign)] for name, ns in nodes.items()}
    returns = {name: [n.value for n in ns if isinstance(n, ast.Return) and n.value is not None] for name, ns in nodes.items()}
    calls = {name: [n for n in ns if isinstance(n, ast.Call) and _call_name(n) in by_simple] for name, ns in nodes.items()}

    def tainted_names(name: str, fn) -> set[str]:
        """Local names holding generated text: tainted parameters, names assigned from
        formatting or from calls of text-returning functions (to a fixed point)."""
        names = set(tainted_params[name])
        changed = True
        while changed:
            changed = False
            for node in assigns[name]:
                if is_text(node.value, names):
                    for t in node.targets:
                        if isinstance(t, ast.Name) and t.id not in names:
                            names.add(t.id)
                            changed = True
        return names

    def is_text(expr, names: set[str]) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in names
        if _formatted_text(expr) is not None and _OP_SYNTAX.search(_formatted_text(expr) or ""):
            return True
        if isinstance(expr, ast.Call):
            callee = _call_name(expr)
            if any(f in returns_text for f in by_simple.get(callee, ())):
                return True
            if callee in ("join", "replace", "strip") and isinstance(expr.func, ast.Attribute):
                return is_text(expr.func.value, names) or any(is_text(a, names) for a in expr.args)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return is_text(expr.left, names) or is_text(expr.right, names)
        return False

    changed = True
    while changed:
        changed = False
        for name, fn in functions.items():
            names = tainted_names(name, fn)
            if name not in returns_text and any(is_text(v, names) for v in returns[name]):
                returns_text.add(name)
                changed = True
            for call in calls[name]:
                for callee in by_simple.get(_call_name(call), ()):
                    params = [a.arg for a in functions[callee].args.args]
                    if params and params[0] in ("self", "cls"):
                        params = params[1:]
                    hits = {params[i] for i, a in enumerate(call.args) if i < len(params) and is_text(a, names)}
                    hits |= {k.arg for k in call.keywords if k.arg in params and is_text(k.value, names)}
                    if not hits <= tainted_params[callee]:
                        tainted_params[callee] |= hits
                        changed = True
    out = set()
    for name, fn in functions.items():
        if name.startswith("frontend/"):
            continue
        names = tainted_names(name, fn)
        if any(is_text(text, names) for text in _parse_calls(fn)):
            out.add(name)
    return out


def test_no_new_op_text_builders():
    """Outside the front end, only the listed functions format op text."""
    assert op_text_builders() == KNOWN_BUILDERS


def test_no_generated_op_text_parsed_back():
    """Outside the front end, no op parser reads op text the package formatted (beyond the
    listed known offenders)."""
    assert parsed_back() == KNOWN_PARSED_BACK


def test_interop_builds_no_new_op_text():
    """interop/ (jax-triton, launches) builds its IR with the bindings: its op-text builders are
    only the known ones, which are to go."""
    assert {n for n in op_text_builders() if n.startswith("interop/")} <= KNOWN_BUILDERS


#: Functions of interop/ that call an MLIR parser, and why: the user's module
#: (convert_stablehlo), and StableHLO's output_operand_alias, for which IREE's bindings have no
#: attribute class (aliases_of reads its parameters as a dictionary attribute). Add none.
KNOWN_INTEROP_PARSERS = {"interop/jax_triton_stablehlo.py:convert_stablehlo", "interop/jax_triton_custom_call.py:aliases_of"}


def ir_parsers_called(sources=None, under: str = "interop/") -> set[str]:
    """Functions under ``under`` that call an MLIR parser on any text at all: ``X.parse`` on an
    IR class (``Operation``, ``Module``, ``Attribute``, ``Type`` and every ``...Type`` /
    ``...Attr`` class: op, type and attribute text alike), ``parse_source``,
    ``parse_detached``. Wider than :func:`parsed_back`, which sees op text only: a front end
    that builds with the bindings has no text to parse (a type is ``RankedTensorType.get``, not
    a formatted ``tensor<...>``)."""
    out = set()
    for name, fn in (_package_functions() if sources is None else _all_functions(sources)).items():
        if not name.startswith(under):
            continue
        for node in _walked(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            receiver = (f.value.attr if isinstance(f.value, ast.Attribute) else f.value.id if isinstance(f.value, ast.Name)
                        else None) if isinstance(f, ast.Attribute) else None
            ir_class = receiver is not None and (receiver in ("Operation", "Module", "Attribute", "Type")
                                                 or re.fullmatch(r"[A-Z]\w*(?:Type|Attr)", receiver) is not None)
            if (isinstance(f, ast.Attribute) and f.attr == "parse" and ir_class) or _call_name(node) in _PARSE_FUNCTIONS:
                out.add(name)
    return out


def test_interop_parses_no_generated_ir_text():
    """interop/ builds no op, type or attribute text to parse: the only parser calls are the
    known ones (the user's input, StableHLO's alias attribute)."""
    assert ir_parsers_called() == KNOWN_INTEROP_PARSERS


def test_the_ir_parser_check_sees_type_and_attribute_text():
    code = ('def f(a):\n    return ir.RankedTensorType.parse(a.tensor_type)\n'
            'def g(t):\n    return ir.Attribute.parse("{" + t + "}")\n'
            'def h(src):\n    return grid_mod.parse(src), ast.parse(src), ir.RankedTensorType.get([4], ir.F32Type.get())\n')
    assert ir_parsers_called({"interop/sample.py": ast.parse(code)}) == {"interop/sample.py:f", "interop/sample.py:g"}


@pytest.mark.parametrize("code, builder, parsed", [
    # generated op text into Operation.parse, through a local variable
    ('def f(x):\n    t = f"%r = arith.constant {x} : i32"\n    return ir.Operation.parse(t)\n', True, True),
    # through another function's result and a parameter, into parse_source(SourceFile(...))
    ('def g(e):\n    return "\\n".join([f"  flow.dispatch @{e}::@k()"])\n'
     'def h(text):\n    return parse_source(SourceFile(text, "x", "."))\n'
     'def k():\n    return h(g("ex"))\n', True, True),
    # a diagnostic naming an op is not IR; parsing a file's text is not parsing generated text
    ('def f(exe):\n    raise DiagnosticError.at(None, f"add a flow.dispatch @{exe}::@g")\n'
     'def r(path):\n    return parse_source(SourceFile(open(path).read(), path, "."))\n', False, False),
    # attribute text (ir/hal_attrs's business) is not op text
    ('def f(n):\n    return ir.Attribute.parse(f"#hal.pipeline.layout<constants = {n}>")\n', False, False),
])
def test_checks_see_generated_op_text(code, builder, parsed):
    """The checks themselves: they catch op text formatted and parsed back (in place, through
    locals, return values and parameters) and leave messages and attribute text alone."""
    sources = {"interop/sample.py": ast.parse(code)}
    assert bool(op_text_builders(sources)) == builder
    assert bool(parsed_back(sources)) == parsed


#: Dialects whose ops have generated classes in iree.compiler.dialects (compare with those).
_CLASSED = re.compile(r"^(?:flow|util|hal|func|arith|tensor|builtin|scf|cf|linalg|memref|stream|vector)\.[a-z_.]+$")


def op_names_compared(sources=None) -> list[str]:
    """Op identity by name (``module:line``) for ops that have a generated class: a comparison
    (``==``, ``!=``, ``in``, ``not in`` a literal tuple/list/set) with such an op's name on either
    side, whatever the other side is (``op.name == "flow.dispatch"``, or a local holding
    ``op.operation.name``), and a dict keyed by such names (a table of ops looked up by name,
    ``{"arith.addi": ...}``): such ops are told apart with ``ir.walk.isa`` / ``isinstance`` on
    their classes instead. Triton's own IR (cuda/ttir*.py read ``tt.*`` ops with Triton's
    bindings) is not IREE's, and the front end's older-syntax rewriter (frontend/) works on
    tokens of text by design."""
    sources = sources or _sources()
    found = []

    def names_an_op(node) -> bool:
        items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
        return any(_literal(i) is not None and _CLASSED.match(_literal(i)) for i in items)

    for rel, tree in sources.items():
        if rel.startswith(("cuda/ttir", "frontend/")):
            continue
        for node in _walked(tree):
            if isinstance(node, ast.Compare) and any(names_an_op(s) for s in [node.left, *node.comparators]):
                found.append(f"{rel}:{node.lineno}")
            elif isinstance(node, ast.Dict) and any(k is not None and names_an_op(k) for k in node.keys):
                found.append(f"{rel}:{node.lineno}")
    return found


def segment_sizes_decoded(sources=None) -> list[str]:
    """Reads of ``X.attributes["operandSegmentSizes"]`` (``module:line``): a dispatch's operand
    groups come from ``flow.DispatchOp``'s accessors (``workload``, ``arguments``, ...)."""
    sources = sources or _sources()
    return [f"{rel}:{node.lineno}" for rel, tree in sources.items() for node in _walked(tree)
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _literal(node.slice) == "operandSegmentSizes"]


def test_ops_are_told_apart_by_their_classes():
    assert op_names_compared() == []
    assert segment_sizes_decoded() == []


def test_the_op_name_check_sees_comparisons():
    code = ('def f(op, d):\n    if op.name == "flow.dispatch":\n        return 1\n'
            '    return d.operation.name in ("util.func", "func.func") or op.name == "autotune.export"\n')
    assert op_names_compared({"passes/sample.py": ast.parse(code)}) == ["passes/sample.py:2", "passes/sample.py:4"]
    # through a local, and a table of ops keyed by name (materialize's arith evaluator had both)
    code = ('def g(value):\n    name = value.owner.operation.name\n    if name == "arith.constant":\n        return 0\n'
            '    return _OPS[name]\n_OPS = {"arith.addi": lambda a, b: a + b}\n'
            'def h(kind):\n    return kind == "note" or isinstance(kind, arith.AddIOp)\n')
    assert sorted(op_names_compared({"passes/sample.py": ast.parse(code)})) == ["passes/sample.py:3", "passes/sample.py:6"]
    code = 'def f(d):\n    s = list(d.attributes["operandSegmentSizes"])\n    attrs = {"operandSegmentSizes": s}\n'
    assert segment_sizes_decoded({"passes/sample.py": ast.parse(code)}) == ["passes/sample.py:2"]
