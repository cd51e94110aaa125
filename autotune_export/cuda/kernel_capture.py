"""Kernels made at run time, carried in the exported module: a Triton kernel object as the
Python text of a module that defines it again, without the code that made it.

A library may build its kernels when it runs: a factory defines a ``@triton.jit`` function
inside a function (one per dtype, kept in a dict or a dataclass), a closure gives it values
(``BLOCK = tl.constexpr(128)`` in the enclosing function), ``triton.jit`` is applied to a
nested ``def``. Such a kernel has no file and module-level name to import it by, so
:func:`capture` writes what Triton compiles: the kernel's source (``JITFunction.src``, the
``def`` without its decorators) and of every ``@triton.jit`` function it calls, and each name
they read bound to the value it has in the kernel's scope (its closure first, then its
module's globals, as Triton's code generator looks names up: ``JITCallable.get_capture_scope``):

* ``None``, bools, ints, strings, floats (``float('inf')``/``nan`` spelled so), tuples and
  lists of them, ``tl.constexpr`` of them, Triton dtypes (``tl.float16``) and torch dtypes
  (``torch.float16``, which Triton hands to the kernel unchanged: the text imports torch) as
  literals; a plain int stays a plain int, so a kernel that reads a non-constexpr global fails
  to compile exactly as it does in Triton;
* modules of Triton and of the standard library (``tl``, ``libdevice``, ``math``) by an import;
  another module (``from . import utils``) as a module object holding the attributes the
  kernels read of it (``utils.helper``, ``utils.BLOCK``);
* ``@triton.jit`` functions by their source (captured the same way), Triton's own functions
  and builtins by an import from their module;
* anything else (an arbitrary object, a lambda, a class, a tensor) cannot be carried:
  :class:`CaptureError` names it at the line of the kernel that reads it.

The text binds every name in one namespace; two captured functions reading different values
under one name are refused (CaptureError), as are two functions of the same name. It is the
``kernel_source(...)`` clause of the exported group (docs/syntax.md, docs/call-sites.md);
:func:`autotune_export.cuda.triton_compile.group_kernel_source` writes it to a file that the
compile stage imports like any kernel file. Nothing here runs the kernel or compiles it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import math
import re
import sys
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

from autotune_export.ir.params import TritonDtype

__all__ = ["CaptureError", "capture"]

#: Top-level packages whose modules the text imports by name (Triton and the standard library
#: modules Triton's own dependency finder accepts in a kernel).
_IMPORTED_PACKAGES = ("triton", "math", "copy", "builtins")

_HEADER = """\
# The Triton kernel '{name}' ({where}), captured by autotune-export from the kernel
# object: its source, that of the @triton.jit functions it calls and the values of the
# names they read (autotune_export/cuda/kernel_capture.py).
import importlib as _atx_importlib
import types as _atx_types

import triton as _atx_triton
import triton.language as _atx_tl
"""

_MODULE_HELPER = '''

def _atx_module(name, attributes):
    """A module object holding what the kernels read of a module of the library."""
    module = _atx_types.ModuleType(name)
    module.__dict__.update(attributes)
    return module
'''


class CaptureError(ValueError):
    """A kernel reads a value that cannot be written as Python text (one line, starting with
    ``file:line:col:`` of the read in the kernel's source). ``name``: what it reads
    (``"scale"``, ``"cfg.table"``)."""

    def __init__(self, message: str, name: str):
        super().__init__(message)
        self.name = name


@dataclass
class _Text:
    """The module being written: value bindings that use no captured function (``early``),
    the functions' definitions (``defs``), bindings that use one (``late``), the names bound
    (name -> (identity of the value, expression)), the functions captured (id -> def name)."""

    early: list[str] = field(default_factory=list)
    defs: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    bound: dict[str, tuple[Any, str]] = field(default_factory=dict)
    functions: dict[int, str] = field(default_factory=dict)
    torch: bool = False
    modules: bool = False


def _is_jit(value: Any) -> bool:
    """A ``@triton.jit`` function (a JITFunction with its source, or the InterpretedFunction of
    ``TRITON_INTERPRET=1``): duck typed, Triton is not imported here."""
    if not inspect.isfunction(getattr(value, "fn", None)) or isinstance(value, types.FunctionType):
        return False
    return isinstance(getattr(value, "src", None), str) or type(value).__name__ == "InterpretedFunction"


def _source(jit: Any) -> str:
    """The ``def`` of ``jit`` without its decorators, dedented: ``JITFunction.src``, or made
    the same way from the wrapped function's source (Triton's ``JITCallable.__init__``)."""
    src = getattr(jit, "src", None)
    if isinstance(src, str):
        return src
    text = textwrap.dedent(inspect.getsource(jit.fn))
    found = re.search(r"^def\s+\w+\s*\(", text, re.MULTILINE)
    return text[found.start() :] if found else text


def _parse(jit: Any) -> ast.FunctionDef:
    return ast.parse(_source(jit)).body[0]


def _scope(jit: Any) -> dict[str, Any]:
    """The names ``jit`` reads, as Triton looks them up: its module's globals, overridden by
    its closure (``JITCallable.get_capture_scope``)."""
    fn = jit.fn
    scope = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:  # an empty cell: not bound when the kernel was made
                pass
    return scope


def _nonlocal_names(jit: Any) -> set[str]:
    return set(jit.fn.__code__.co_freevars)


def _where(jit: Any) -> tuple[str, int, int]:
    """``(file, line of the def, column of the def)`` of ``jit`` in its file (1-based)."""
    fn = jit.fn
    path = fn.__code__.co_filename
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return path, fn.__code__.co_firstlineno, 1
    for i, text in enumerate(lines):
        if re.match(r"\s*def\s", text):
            return path, max(start, 1) + i, len(text) - len(text.lstrip()) + 1
    return path, max(start, 1), 1


def _locate(jit: Any, node: ast.AST) -> str:
    path, line, col = _where(jit)
    return f"{path}:{line + getattr(node, 'lineno', 1) - 1}:{col + getattr(node, 'col_offset', 0)}"


def _local_names(fdef: ast.FunctionDef) -> set[str]:
    """Every name the function binds (parameters, assignments, loop and ``with`` targets):
    Python makes each local to the whole function."""
    out = {a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg)}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not fdef:
            out.update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
    return out


def _attribute_path(node: ast.AST) -> tuple[str, list[str]] | None:
    """``("utils", ["sub", "helper"])`` for ``utils.sub.helper``; None when the chain does not
    start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return (node.id, parts) if isinstance(node, ast.Name) else None


def _importable(module_name: str) -> bool:
    return module_name.split(".")[0] in _IMPORTED_PACKAGES or module_name in sys.stdlib_module_names


def _import_expr(value: Any) -> str | None:
    """An expression importing ``value`` again when it is a module of Triton or the standard
    library, or an object of such a module reachable by its qualified name; else None."""
    if isinstance(value, types.ModuleType):
        name = value.__name__
        if _importable(name):
            return f"_atx_importlib.import_module({name!r})"
        return None
    module, qual = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qual, str) or "<" in qual or not _importable(module):
        return None
    try:
        found: Any = importlib.import_module(module)
        for part in qual.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    if found is not value:
        return None
    expr = f"_atx_importlib.import_module({module!r})"
    return expr + "".join(f".{part}" for part in qual.split("."))


class _Capture:
    def __init__(self, kernel: Any):
        self.kernel = kernel
        self.text = _Text()

    # ---------------------------------------------------------------------------------------
    def refuse(self, jit: Any, node: ast.AST, label: str, value: Any, why: str = "") -> CaptureError:
        whose = "its closure" if label.split(".")[0] in _nonlocal_names(jit) else "its module's globals"
        via = "" if jit is self.kernel else f" (through '{jit.fn.__name__}', which it calls)"
        kind = type(value).__qualname__
        return CaptureError(
            f"{_locate(jit, node)}: kernel '{self.kernel.fn.__name__}'{via} reads '{label}' (a {kind}) from {whose}, which "
            f"cannot be carried into the exported module{why}: only None, bools, ints, floats, strings, tuples and lists "
            "of them, tl.constexpr, Triton and torch dtypes, modules and @triton.jit functions can; make it a "
            "tl.constexpr, pass it as a constexpr argument, or define the kernel at module level",
            label,
        )

    def expr(self, jit: Any, node: ast.AST, label: str, value: Any, depth: int = 0) -> tuple[str, bool]:
        """``(Python expression of value, whether it uses a captured function)``."""
        if depth > 16:
            raise self.refuse(jit, node, label, value, " (nested too deeply)")
        if value is None or isinstance(value, (bool, int, str)):
            return repr(value), False
        if isinstance(value, float):
            if math.isfinite(value):
                return repr(value), False
            return f"float({str(value)!r})", False
        if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
            parts = [self.expr(jit, node, f"{label}[{i}]", v, depth + 1) for i, v in enumerate(value)]
            body = ", ".join(p for p, _ in parts)
            text = f"({body}{',' if len(parts) == 1 else ''})" if isinstance(value, tuple) else f"[{body}]"
            return text, any(late for _, late in parts)
        if type(value).__name__ == "constexpr" and type(value).__module__.startswith("triton.language"):
            inner, late = self.expr(jit, node, label, value.value, depth + 1)
            return f"_atx_tl.constexpr({inner})", late
        dtype = TritonDtype.of(value)
        if dtype is not None:
            return f"_atx_tl.{dtype.name}", False
        if type(value).__name__ == "dtype" and type(value).__module__ == "torch":
            self.text.torch = True
            return f"_atx_torch.{str(value).removeprefix('torch.')}", False
        if _is_jit(value):
            imported = _import_expr(value)
            if imported is not None:
                return imported, False
            return self.function(value), True
        imported = _import_expr(value)
        if imported is not None:
            return imported, False
        if isinstance(value, types.ModuleType):
            raise AssertionError("modules of the library are bound by bind_module")  # pragma: no cover
        raise self.refuse(jit, node, label, value)

    def bind(self, jit: Any, node: ast.AST, name: str, value: Any, expr: str, late: bool) -> None:
        known = self.text.bound.get(name)
        if known is not None:
            if known[1] == expr and (known[0] is value or _is_plain(value)):
                return
            raise CaptureError(
                f"{_locate(jit, node)}: kernel '{self.kernel.fn.__name__}': '{jit.fn.__name__}' reads '{name}' as "
                f"{expr}, but another captured function reads a different '{name}' ({known[1]}); one module cannot "
                "hold both: rename one of them",
                name,
            )
        self.text.bound[name] = (value, expr)
        (self.text.late if late else self.text.early).append(f"{name} = {expr}")

    def module_expr(
        self, jit: Any, node: ast.AST, label: str, module: types.ModuleType, paths: list[list[str]], depth: int = 0
    ) -> tuple[str, bool]:
        """A library module as a module object holding the attributes read of it (``paths``:
        the attribute chains after it)."""
        imported = _import_expr(module)
        if imported is not None:
            return imported, False
        if not paths:
            raise self.refuse(jit, node, label, module, " (a module of the library the kernel uses as a value)")
        children: dict[str, list[list[str]]] = {}
        for p in paths:
            children.setdefault(p[0], []).append(p[1:])
        items, late = [], False
        for attr, rest in children.items():
            sub = f"{label}.{attr}"
            try:
                value = getattr(module, attr)
            except AttributeError:
                continue  # Triton reports the missing attribute when it compiles, as it would
            if isinstance(value, types.ModuleType):
                text, uses = self.module_expr(jit, node, sub, value, [r for r in rest if r], depth + 1)
            else:
                text, uses = self.expr(jit, node, sub, value, depth + 1)
            items.append(f"{attr!r}: {text}")
            late = late or uses
        self.text.modules = True
        return f"_atx_module({module.__name__!r}, {{{', '.join(items)}}})", late

    def function(self, jit: Any) -> str:
        """Capture the ``@triton.jit`` function ``jit``: its definition and what it reads;
        returns its name in the text."""
        known = self.text.functions.get(id(jit))
        if known is not None:
            return known
        name = jit.fn.__name__
        if name in self.text.functions.values() or name in self.text.bound:
            raise CaptureError(
                f"{_locate(jit, _parse(jit))}: kernel '{self.kernel.fn.__name__}' calls two "
                f"different functions named '{name}'; one module cannot hold both: rename one",
                name,
            )
        self.text.functions[id(jit)] = name
        self.text.bound[name] = (jit, name)
        fdef = _parse(jit)
        self.text.defs.append(_decorator(jit) + _source(jit).rstrip() + "\n")
        scope, local = _scope(jit), _local_names(fdef)
        seen: set[str] = set()
        reads = sorted(
            (n for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
            key=lambda n: (n.lineno, n.col_offset),
        )
        for node in reads:
            if node.id in local or node.id in seen or node.id not in scope:
                continue  # a local, a builtin (range, min) or a name Triton reports as undefined
            seen.add(node.id)
            value = scope[node.id]
            if value is jit:
                continue
            if isinstance(value, types.ModuleType):
                paths = []
                for n in ast.walk(fdef):
                    path = _attribute_path(n) if isinstance(n, ast.Attribute) else None
                    if path is not None and path[0] == node.id and path[1]:
                        paths.append(path[1])
                expr, late = self.module_expr(jit, node, node.id, value, _longest(paths))
            else:
                expr, late = self.expr(jit, node, node.id, value)
            if expr == node.id:
                continue  # the function itself, under its own name
            self.bind(jit, node, node.id, value, expr, late)
        return name

    def text_of(self) -> str:
        name = self.function(self.kernel)
        path, line, _ = _where(self.kernel)
        qual = self.kernel.fn.__qualname__
        where = f"{qual} in {path.rsplit('/', 1)[-1]}"
        out = [_HEADER.format(name=name, where=where)]
        if self.text.torch:
            out.append("import torch as _atx_torch\n")
        if self.text.modules:
            out.append(_MODULE_HELPER)
        if self.text.early:
            out.append("\n" + "\n".join(self.text.early) + "\n")
        for d in reversed(self.text.defs):  # helpers first, the kernel last
            out.append("\n\n" + d)
        if self.text.late:
            out.append("\n" + "\n".join(self.text.late) + "\n")
        return "".join(out)


def _is_plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, tuple, list)) or TritonDtype.of(value) is not None


def _longest(paths: list[list[str]]) -> list[list[str]]:
    """The attribute chains, each once (``a.b`` and ``a.b.c``: both kept; the module object
    resolves them step by step)."""
    out: list[list[str]] = []
    for p in paths:
        if p not in out:
            out.append(p)
    return out


def _decorator(jit: Any) -> str:
    """``@_atx_triton.jit(...)`` with the options of ``jit`` that change what it compiles to
    (``do_not_specialize``, ``do_not_specialize_on_alignment`` by parameter name,
    ``noinline``, ``debug``); ``repr`` and ``launch_metadata`` (names and profiling only) are
    not carried."""
    params = getattr(jit, "params", None)
    options = []
    if params is None:  # an InterpretedFunction keeps the decorator's arguments
        given = getattr(jit, "kwargs", {}) or {}
        names = list(inspect.signature(jit.fn).parameters)
        by_name = lambda key: [n for i, n in enumerate(names) if i in (given.get(key) or ()) or n in (given.get(key) or ())]  # noqa: E731
        dns, dnsa = by_name("do_not_specialize"), by_name("do_not_specialize_on_alignment")
        jit = types.SimpleNamespace(noinline=given.get("noinline"), debug=given.get("debug"))
    else:
        dns = [p.name for p in params if getattr(p, "do_not_specialize", False)]
        dnsa = [p.name for p in params if getattr(p, "do_not_specialize_on_alignment", False)]
    if dns:
        options.append(f"do_not_specialize={dns!r}")
    if dnsa:
        options.append(f"do_not_specialize_on_alignment={dnsa!r}")
    for option in ("noinline", "debug"):
        value = getattr(jit, option, None)
        if value is not None:
            options.append(f"{option}={bool(value)!r}")
    return f"@_atx_triton.jit({', '.join(options)})\n" if options else "@_atx_triton.jit\n"


_PRE_HOOK = """

def _atx_pre_hook(*args, **kwargs):
    raise RuntimeError("the pre_hook of the triton.autotune of {name} was not carried into the module")
"""


def capture(jit: Any, *, reset_to_zero: tuple[str, ...] = (), restore_value: tuple[str, ...] = (), pre_hook: bool = False) -> str:
    """The Python text of a module that defines the ``@triton.jit`` function ``jit`` (a
    JITFunction, or the InterpretedFunction of ``TRITON_INTERPRET=1``) under its own name
    (``jit.fn.__name__``), as the module doc says. With ``reset_to_zero`` / ``restore_value``
    (parameter names) or ``pre_hook`` (the kernel's ``triton.autotune`` has a user pre_hook,
    which is not carried: the stand-in raises if called), the name holds a
    ``triton.autotune`` of one empty config around it that has them, so that what reads a
    kernel's autotuner (materialize-triton-variants) finds them; configs are not carried (the
    export lists every variant's). Executing the text needs Triton (and torch when a torch
    dtype is read). Raises :class:`CaptureError` for a value that cannot be carried."""
    if not _is_jit(jit):
        raise TypeError(f"capture: expected a @triton.jit function, got {type(jit).__name__}")
    text = _Capture(jit).text_of()
    if not (reset_to_zero or restore_value or pre_hook):
        return text
    name = jit.fn.__name__
    options = [f"reset_to_zero={list(reset_to_zero)!r}", f"restore_value={list(restore_value)!r}"]
    if pre_hook:
        text += _PRE_HOOK.replace("{name}", repr(name))
        options.append("pre_hook=_atx_pre_hook")
    return (
        text + f"\n# The triton.autotune around '{name}': its configs are the export's; what else it gives.\n"
        f"{name} = _atx_triton.autotune(configs=[_atx_triton.Config({{}})], key=[], {', '.join(options)})({name})\n"
    )
