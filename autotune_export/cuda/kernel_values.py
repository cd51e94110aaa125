"""What a Triton kernel's values are to autotune-export: a constexpr value as held here
(:func:`plain_value`: ``tl.constexpr`` unwrapped, dtypes as :class:`~autotune_export.ir.group.TritonDtype`
/ :class:`~autotune_export.ir.params.TorchDtype`), a ``triton.Config`` as a dict
(:func:`config_dict`), the pointee tables (Triton and torch dtype names, element sizes in
bytes), and the values a kernel reads that Triton's cache key leaves out (:func:`values_read`).
Part of the compile stage (:mod:`autotune_export.cuda.kernel_files` and
:mod:`autotune_export.cuda.triton_compile` re-export the public names)."""

from __future__ import annotations

import ast
import inspect
import types

from triton.runtime.jit import DependenciesFinder, JITCallable, JITFunction

from autotune_export.ir.params import TorchDtype, TritonDtype


def plain_value(value):
    """A constexpr value as autotune-export holds it: ``tl.constexpr`` unwrapped, a
    ``triton.language.dtype`` as :class:`~autotune_export.ir.group.TritonDtype`, anything else
    unchanged."""
    seen = 0
    while type(value).__name__ == "constexpr" and hasattr(value, "value") and seen < 8:
        value, seen = value.value, seen + 1
    dtype = TritonDtype.of(value)
    if dtype is None:
        dtype = TorchDtype.of(value)  # kept a torch dtype: Triton hands it to the kernel unchanged
    return dtype if dtype is not None else value


#: Pointee of a signature's pointer type (``*fp16``) -> the ``triton.language`` dtype name.
TRITON_DTYPE = {
    "i1": "int1",
    "u1": "int1",
    "i8": "int8",
    "u8": "uint8",
    "i16": "int16",
    "u16": "uint16",
    "i32": "int32",
    "u32": "uint32",
    "i64": "int64",
    "u64": "uint64",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "fp8e4nv": "float8e4nv",
    "fp8e5": "float8e5",
    "fp8e4b8": "float8e4b8",
    "fp8e5b16": "float8e5b16",
    "fp8e4b15": "float8e4b15",
}

#: The same pointee -> the ``torch`` dtype of the tensor a PyTorch launch passes (None: torch
#: has none; Triton's ``type_canonicalisation_dict`` in ``triton/runtime/jit.py`` maps back).
TORCH_DTYPE = {
    "i1": "bool",
    "u1": "bool",
    "i8": "int8",
    "u8": "uint8",
    "i16": "int16",
    "u16": "uint16",
    "i32": "int32",
    "u32": "uint32",
    "i64": "int64",
    "u64": "uint64",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "fp8e4nv": "float8_e4m3fn",
    "fp8e5": "float8_e5m2",
    "fp8e4b8": "float8_e4m3fnuz",
    "fp8e5b16": "float8_e5m2fnuz",
    "fp8e4b15": None,
}

#: Bytes per element of each pointee (a bool is one byte).
ELEMENT_SIZE = {
    "i1": 1,
    "u1": 1,
    "i8": 1,
    "u8": 1,
    "i16": 2,
    "u16": 2,
    "i32": 4,
    "u32": 4,
    "i64": 8,
    "u64": 8,
    "fp16": 2,
    "bf16": 2,
    "fp32": 4,
    "fp64": 8,
    "fp8e4nv": 1,
    "fp8e5": 1,
    "fp8e4b8": 1,
    "fp8e5b16": 1,
    "fp8e4b15": 1,
}


def config_dict(c) -> dict:
    """A ``triton.Config`` (or look-alike) as :attr:`LoadedKernel.default_configs` holds it:
    ``{"kwargs": {...plain values}, "num_warps", "num_stages", "num_ctas", "maxnreg"}``
    (missing fields: Triton's defaults 4, 3, 1, None)."""
    return {
        "kwargs": {k: plain_value(v) for k, v in dict(c.kwargs).items()},
        "num_warps": getattr(c, "num_warps", 4),
        "num_stages": getattr(c, "num_stages", 3),
        "num_ctas": getattr(c, "num_ctas", 1),
        "maxnreg": getattr(c, "maxnreg", None),
    }


class _ValuesFinder(DependenciesFinder):
    """Triton's own ``DependenciesFinder`` (the visitor behind ``JITFunction.cache_key``,
    ``triton/runtime/jit.py``, 3.6 to 3.9), made to also write down the values its key leaves
    out: what it hands to ``record_reference`` under a global's name (it keeps only those
    wrapped in ``tl.constexpr`` in the key) and under an attribute read (``cfg.FACTOR``, which
    it does not keep at all), and the same in every JIT function reached (``_update_hash``).
    Which names count, and what a reference is, stay Triton's."""

    def __init__(self, fn, found: set, seen: set):
        super().__init__(
            name=getattr(fn, "_fn_name", fn.__name__),
            globals=fn.__globals__,
            nonlocals=inspect.getclosurevars(fn.fn).nonlocals,
            src=fn.src,
        )
        self._found, self._seen, self._labels = found, seen, []

    def visit_Attribute(self, node):
        self._labels.append(ast.unparse(node))
        try:
            return super().visit_Attribute(node)
        finally:
            self._labels.pop()

    def record_reference(self, val, var_dict=None, name=None):
        super().record_reference(val, var_dict, name)
        label = name if var_dict is not None else (self._labels[-1] if self._labels else None)
        if label is None or getattr(self, "visiting_arg_default_value", False) or not _is_data(val):
            return
        self._found.add((label, _value_text(val)))

    def _update_hash(self, func):
        super()._update_hash(func)
        func = getattr(func, "__func__", func)  # a bound constexpr function
        if id(func) not in self._seen and hasattr(func, "parse"):
            self._seen.add(id(func))
            _ValuesFinder(func, self._found, self._seen).visit(func.parse())


def _is_data(value) -> bool:
    """Whether Triton's code generator reads ``value`` as a constant (not a module, class,
    function, JIT function or Triton builtin)."""
    import triton.language as tl

    if value is None or isinstance(value, (types.ModuleType, type, JITCallable)):
        return False
    if getattr(value, "__triton_builtin__", False) or getattr(value, "__triton_aggregate__", False):
        return False
    return isinstance(value, tl.constexpr) or not callable(value)


def _value_text(value) -> str:
    """A value as the same text in every process: ``tl.constexpr`` unwrapped, a Triton dtype
    as ``tl.float16``, containers element by element, anything else as its type and repr (an
    object whose repr holds its address then never matches another process's: a cache miss,
    never a wrong hit)."""
    value = plain_value(value)
    if isinstance(value, (TritonDtype, TorchDtype)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[" + ", ".join(_value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "dict{" + ", ".join(f"{k!r}: {_value_text(v)}" for k, v in value.items()) + "}"
    return f"{type(value).__qualname__}:{value!r}"


def values_read(fn: JITFunction) -> tuple[tuple[str, str], ...]:
    """What the JIT function ``fn`` and the JIT functions it calls read that Triton's cache key
    (``fn.cache_key``) does not cover, though the compiled code depends on it: the value of
    each global they read that is not a ``tl.constexpr`` (``ACC = tl.float16``: Triton's key
    holds only the constexpr ones, and its launcher checks the others in the process that
    compiled, not across processes) and of each attribute they read from a module
    (``cfg.FACTOR``), found by Triton's own visitor (:class:`_ValuesFinder`). Sorted
    ``(name or attribute text, value text)`` pairs. Raises what ``fn.cache_key`` raises."""
    found: set = set()
    _ValuesFinder(fn, found, {id(fn)}).visit(fn.parse())
    return tuple(sorted(found))
