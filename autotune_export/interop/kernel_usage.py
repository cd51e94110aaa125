"""How a Triton kernel uses its parameters, read from its Python source: which ones it uses as
pointers (the address of a ``tl.load``, ``tl.store``, ``tl.atomic_*``, the base of
``tl.make_block_ptr`` / ``tl.make_tensor_descriptor``) and which ones only as scalars
(compared, multiplied, divided, a ``range`` bound). A call site (jax-triton's ``triton_call``)
that passes arguments in an order the kernel does not have then fails here, naming the
argument, instead of later as a Triton compile error of an impossible signature.

The reading is deliberately conservative: an address expression is followed through plain
assignments (``offs = pid * BLOCK + tl.arange(0, BLOCK)``, ``ptrs = x_ptr + offs``,
``ptrs += BLOCK``), its terms are those of ``+`` (and the left side of ``-``), products are
offsets; an address whose terms name more than one parameter is ambiguous and proves nothing;
a parameter passed to another function (a ``@triton.jit`` helper) is not judged. When the
source cannot be read, nothing is known.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field

__all__ = ["Use", "KernelUsage", "kernel_usage"]

#: ``tl.*`` calls whose first argument (or ``pointer=`` / ``base=``) is an address.
_POINTER_SINKS = {
    "load": "pointer",
    "store": "pointer",
    "atomic_add": "pointer",
    "atomic_max": "pointer",
    "atomic_min": "pointer",
    "atomic_and": "pointer",
    "atomic_or": "pointer",
    "atomic_xor": "pointer",
    "atomic_xchg": "pointer",
    "atomic_cas": "pointer",
    "make_block_ptr": "base",
    "make_tensor_descriptor": "base",
}
#: Calls that keep their first argument's role (shape changes of a tensor of pointers).
_PASS_THROUGH = {"broadcast_to", "reshape", "view", "expand_dims", "multiple_of", "max_contiguous", "max_constancy", "advance"}
#: Calls whose arguments are scalars (bounds, sizes).
_SCALAR_CALLS = {"range", "cdiv", "static_range"}


@dataclass(frozen=True)
class Use:
    """Where a parameter is used in a role: 1-based ``line`` in the kernel's file and the
    ``text`` of the expression."""

    line: int
    text: str


@dataclass
class KernelUsage:
    """``pointers``: parameters used as an address, with one use each; ``scalars``:
    parameters used only as scalars (never as an address, never passed to another
    function), with one use each."""

    pointers: dict[str, Use] = field(default_factory=dict)
    scalars: dict[str, Use] = field(default_factory=dict)


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


class _Reader:
    def __init__(self, fn: ast.FunctionDef, params: list[str], source: str, first_line: int):
        self.fn, self.params, self.source, self.first_line = fn, set(params), source, first_line
        self.assigned: dict[str, list[ast.AST]] = {}
        self.passed: set[str] = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self.assigned.setdefault(node.target.id, []).append(ast.BinOp(ast.Name(node.target.id), node.op, node.value))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.assigned.setdefault(node.target.id, []).append(node.value)

    def use(self, node: ast.AST) -> Use:
        text = ast.get_source_segment(self.source, node) or ast.dump(node)
        return Use(self.first_line + getattr(node, "lineno", 1) - 1, " ".join(text.split()))

    def terms(self, node: ast.AST, seen: frozenset = frozenset()) -> set[str]:
        """Parameters that may be the base of address expression ``node``."""
        if isinstance(node, ast.Name):
            if node.id in self.params and node.id not in self.assigned:
                return {node.id}
            if node.id in seen:
                return set()
            out: set[str] = set()
            for value in self.assigned.get(node.id, []):
                out |= self.terms(value, seen | {node.id})
            if node.id in self.params:
                out.add(node.id)
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.terms(node.left, seen) | self.terms(node.right, seen)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            return self.terms(node.left, seen)
        if isinstance(node, ast.Subscript):
            return self.terms(node.value, seen)
        if isinstance(node, ast.IfExp):
            return self.terms(node.body, seen) | self.terms(node.orelse, seen)
        if isinstance(node, ast.Call) and _call_name(node.func) in _PASS_THROUGH and node.args:
            return self.terms(node.args[0], seen)
        return set()

    def read(self) -> KernelUsage:
        usage = KernelUsage()
        scalar_uses: dict[str, Use] = {}
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Call):
                name = _call_name(node.func)
                if name in _POINTER_SINKS:
                    arg = (
                        node.args[0]
                        if node.args
                        else next((kw.value for kw in node.keywords if kw.arg == _POINTER_SINKS[name]), None)
                    )
                    if arg is not None:
                        found = self.terms(arg)
                        if len(found) == 1:
                            usage.pointers.setdefault(found.pop(), self.use(node))
                    rest = node.args[1:]
                elif name in _SCALAR_CALLS:
                    for a in node.args:
                        for p in self._names(a):
                            scalar_uses.setdefault(p, self.use(node))
                    continue
                elif name in _PASS_THROUGH or name in ("program_id", "num_programs", "arange", "zeros", "full"):
                    continue
                else:
                    rest = list(node.args)
                # A parameter handed to another function (a @triton.jit helper, tl.where...):
                # its role there is not read here.
                for a in rest + [kw.value for kw in node.keywords]:
                    if isinstance(a, ast.Name) and a.id in self.params:
                        self.passed.add(a.id)
            elif isinstance(node, ast.Compare) and not any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                for side in [node.left, *node.comparators]:
                    if isinstance(side, ast.Name) and side.id in self.params:
                        scalar_uses.setdefault(side.id, self.use(node))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv, ast.Mod, ast.Div, ast.Pow)):
                for side in (node.left, node.right):
                    if isinstance(side, ast.Name) and side.id in self.params:
                        scalar_uses.setdefault(side.id, self.use(node))
        for p, u in scalar_uses.items():
            if p not in usage.pointers and p not in self.passed:
                usage.scalars[p] = u
        return usage

    def _names(self, node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in self.params}


def kernel_usage(fn, params: list[str]) -> KernelUsage:
    """How the Python function ``fn`` (a Triton kernel's ``.fn``) uses ``params`` (its
    non-constexpr parameter names). An empty :class:`KernelUsage` when its source cannot be
    read or parsed."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return KernelUsage()
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return KernelUsage()
    node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None:
        return KernelUsage()
    return _Reader(node, params, source, first).read()


def call_mismatch(kernel_name: str, fn, params: list[str], given: list[tuple[str, str, bool, str]]) -> str | None:
    """Why a call passes the wrong kind of value for a parameter, in one line; None when
    nothing is known to be wrong. ``given``: per parameter in order, ``(what, parameter name,
    is an array, description)`` (``what`` e.g. ``"argument 1"`` or ``"output 0"``)."""
    usage = kernel_usage(fn, params)
    order = ", ".join(params)
    for what, name, is_array, describe in given:
        if not is_array and name in usage.pointers:
            u = usage.pointers[name]
            return (
                f"{what} ('{name}') is {describe}, but kernel '{kernel_name}' uses '{name}' as a pointer "
                f"(line {u.line}: {u.text}); pass an array there (the kernel's parameters, in order: {order}; "
                "the outputs come after all inputs)"
            )
        if is_array and name in usage.scalars:
            u = usage.scalars[name]
            return (
                f"{what} ('{name}') is an array ({describe}), but kernel '{kernel_name}' uses '{name}' as a scalar "
                f"(line {u.line}: {u.text}); the kernel's parameters, in order: {order}; the outputs come after "
                "all inputs"
            )
    return None
