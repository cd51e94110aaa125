"""jax-triton bridge: ``triton_call``-style invocations and exported JAX programs as IREE input.

Two entry points:

:func:`triton_call_to_mlir`
    Takes the arguments of ``jax_triton.triton_call`` (0.3.x calling convention) and returns
    the text of a module holding a Triton-form ``hal.executable.autotuning.export`` group and a
    public host function that dispatches it. ``autotune-export - --emit iree`` (or ``vmfb``)
    compiles it like any hand-written input. Works without jax, jax-triton or a GPU: array
    arguments are anything with ``.shape`` and ``.dtype`` (``jax.ShapeDtypeStruct``, numpy
    arrays, jax arrays).

:func:`convert_stablehlo`
    Takes what ``jax.export`` wrote for a program calling jax-triton kernels (StableHLO text, or
    MLIR bytecode) and returns IREE input: each ``stablehlo.custom_call @triton_kernel_call``
    (0.3.x: ``backend_config = "..."``) or ``@triton_kernel_call_ffi`` (0.4.x:
    ``mhlo.backend_config = {opaque = "..."}``) becomes a ``flow.dispatch`` of the PTX that
    jax-triton compiled, reused as is (no recompilation). An autotuned call becomes a group of
    one export per config, tuned at run time by the module's ``@__autotune``.

Calling conventions bridged (notes/jax-triton-facts.md, notes/iree-hal-facts.md):

* jax-triton kernel parameters are the call's inputs (arrays as pointers, Python scalars in
  place) then one pointer per output; constexpr metaparameters are baked into the code.
  IREE's CUDA HAL passes one pointer per binding (tensor operands, then untied results) and
  then one 32-bit value per constant: the PTX parameters are reordered by
  :func:`autotune_export.cuda.ptx.link`, Triton's hidden scratch pointers dropped.
* ``zeroed_outputs`` / ``bytes_to_zero``: the output is a zero-filled tensor passed as an
  operand, and the result is tied to it (``-> %zeros``); the group says so with
  ``reset_to_zero(...)`` (output names, or result indices for a converted autotuned call), so
  zero-fill-outputs keeps the fills distinct and the benchmark entries zero the output
  before every timed run.
* ``input_output_aliases``: jax-triton 0.3.x gives the aliased output its own kernel
  parameter; we pass a clone of the aliased input as a tied operand (the kernel reads the input
  through its input pointer, writes the clone, which becomes the result; IREE removes the copy
  when the input is dead). When the descriptor has no parameter for the aliased output (0.4.x),
  the result is tied to the input operand itself.
* Read-only bindings: an input binding is ``ReadOnly`` unless the kernel may store through it,
  which :func:`convert_stablehlo` learns from the kernel's TTIR in the descriptor
  (:mod:`autotune_export.cuda.ttir`); without an answer every pointer counts as written.
* Static scalars: i32/u32/f32 become IREE constants (f32 as its bits). Scalars the IREE ABI
  cannot carry (bool, 64-bit ints, f64: jax-triton 0.3.x types a Python ``float`` as fp64)
  are baked into the PTX of :func:`convert_stablehlo` (each ``ld.param`` of the parameter
  becomes a ``mov`` of the value); :func:`triton_call_to_mlir` types a Python float as fp32
  when it is exactly representable (as jax-triton 0.4 does), and leaves other unsupported
  types to the ABI check of materialize-triton-variants.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import struct
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from autotune_export import contract
from autotune_export.ir import binding as _binding
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.group import NONE_TYPE, OPTION_NAMES, AutotuneGroup, Param, TorchDtype, TritonDtype, descriptor_refusal
from iree.compiler import ir
from autotune_export.cuda import launch_model
from autotune_export.cuda import ptx as ptx_mod
from autotune_export.cuda.bundle import Bundle, ExportSpec, GroupSpec, link_object
from autotune_export.cuda.targets import TargetError
from autotune_export.cuda.ttir import written_params_from_ttir
from autotune_export.ir import builders
from autotune_export.cuda.targets import parse_target
from iree.compiler.dialects import arith
from autotune_export.frontend.reader import SourceFile, new_context, print_module
from autotune_export.interop import jax_triton_proto as proto
from autotune_export.interop.kernel_usage import call_mismatch
from autotune_export.ir.walk import walk
from autotune_export.passes import PassContext, run_pipeline
from autotune_export.passes.build_bundle import write_bundle
import argparse
from autotune_export.support import files
from autotune_export.support.diagnostics import DiagnosticError

__all__ = [
    "JaxTritonError",
    "KernelNotImportableError",
    "triton_call_to_mlir",
    "convert_stablehlo",
    "locate_kernel",
    "TRITON_CALL_TARGETS",
]

#: ``call_target_name`` values of jax-triton's custom calls (0.3.x, 0.4.x).
TRITON_CALL_TARGETS = ("triton_kernel_call", "triton_kernel_call_ffi")


class JaxTritonError(ValueError):
    """A triton_call or exported program that cannot be bridged (the message says why)."""


class KernelNotImportableError(JaxTritonError):
    """The kernel has no importable ``file.py`` + attribute name (notebook cell, closure, ...)."""


# --------------------------------------------------------------------------------------------
# Types

#: numpy dtype name -> (Triton type, MLIR element type)
_DTYPES = {
    "bool": ("i1", "i1"),
    "int8": ("i8", "i8"),
    "int16": ("i16", "i16"),
    "int32": ("i32", "i32"),
    "int64": ("i64", "i64"),
    "uint8": ("u8", "i8"),
    "uint16": ("u16", "i16"),
    "uint32": ("u32", "i32"),
    "uint64": ("u64", "i64"),
    "float16": ("fp16", "f16"),
    "bfloat16": ("bf16", "bf16"),
    "float32": ("fp32", "f32"),
    "float64": ("fp64", "f64"),
    "float8_e4m3fn": ("fp8e4nv", "f8E4M3FN"),
    "float8_e5m2": ("fp8e5", "f8E5M2"),
}
#: MLIR element type (the second half of :data:`_DTYPES`) -> its constructor in the bindings.
_ELEMENT_TYPES = {
    "i1": lambda: ir.IntegerType.get_signless(1),
    "i8": lambda: ir.IntegerType.get_signless(8),
    "i16": lambda: ir.IntegerType.get_signless(16),
    "i32": lambda: ir.IntegerType.get_signless(32),
    "i64": lambda: ir.IntegerType.get_signless(64),
    "f16": ir.F16Type.get,
    "bf16": ir.BF16Type.get,
    "f32": ir.F32Type.get,
    "f64": ir.F64Type.get,
    "f8E4M3FN": ir.Float8E4M3FNType.get,
    "f8E5M2": ir.Float8E5M2Type.get,
}
_ITEMSIZE = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}


def _dtype_name(dtype: Any) -> str:
    """Canonical numpy name of a dtype-like (np.dtype, jnp type, ml_dtypes type, string)."""
    name = getattr(dtype, "name", None)
    if not isinstance(name, str):
        name = getattr(dtype, "__name__", None) or str(dtype)
    name = str(name).lower()
    aliases = {
        "float": "float32",
        "f32": "float32",
        "f16": "float16",
        "half": "float16",
        "bf16": "bfloat16",
        "i32": "int32",
        "int": "int32",
        "bool_": "bool",
        "i1": "bool",
    }
    return aliases.get(name, name)


def _array_types(dtype: Any, what: str) -> tuple[str, str]:
    name = _dtype_name(dtype)
    if name not in _DTYPES:
        raise JaxTritonError(f"{what} has dtype {name}, which has no Triton pointer type here (supported: {', '.join(_DTYPES)})")
    return _DTYPES[name]


def _tensor_type(shape: Sequence[int], elem: str) -> str:
    dims = [int(d) for d in shape]
    for d in dims:
        if d < 0:
            raise JaxTritonError(f"shape {tuple(shape)} is not static")
    return "tensor<" + "".join(f"{d}x" for d in dims) + elem + ">"


def _scalar_type(value: Any) -> str:
    """Triton type of a static Python scalar (jax-triton's rules; floats as fp32 when exact).
    A value carrying a ``triton_type`` string (launch.py's Triton-JIT-typed ints) has that type."""
    forced = getattr(value, "triton_type", None)
    if isinstance(forced, str):
        return forced
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return "i32"
        if 2**31 <= value < 2**32:
            return "u32"
        if -(2**63) <= value < 2**63:
            return "i64"
        if 2**63 <= value < 2**64:
            return "u64"
        raise JaxTritonError(f"integer {value} does not fit 64 bits")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or struct.unpack("<f", struct.pack("<f", value))[0] == value:
            return "fp32"
        return "fp64"
    raise JaxTritonError(f"cannot type static argument {value!r} ({type(value).__name__})")


def _f32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(value)))[0]


def _i32(value: int) -> int:
    """A 32-bit value as a signed i32 (MLIR's arith.constant range)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


# --------------------------------------------------------------------------------------------
# Kernels


@dataclass(frozen=True)
class _Kernel:
    """A kernel object as the bridges see it: its launch model
    (:class:`autotune_export.cuda.launch_model.KernelModel`), the JIT function ``jit`` and the
    outermost ``triton.autotune`` object (``autotuner``, or None: its ``reset_to_zero`` /
    ``restore_value``)."""

    model: launch_model.KernelModel
    jit: Any
    autotuner: Any | None

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def arg_names(self) -> list[str]:
        return list(self.model.arg_names)

    @property
    def runtime_names(self) -> list[str]:
        return self.model.runtime_names

    @property
    def constexpr_names(self) -> list[str]:
        return list(self.model.constexpr_names)

    @property
    def defaults(self) -> dict[str, Any]:
        return dict(self.model.defaults)


def _unwrap(kernel: Any) -> _Kernel:
    """The launch model of a kernel object (:func:`autotune_export.cuda.launch_model.kernel_model`:
    ``triton.autotune`` / ``triton.heuristics`` / launcher wrappers peeled off). Raises
    JaxTritonError when it is not a Triton kernel."""
    try:
        model, jit = launch_model.kernel_model(kernel)
    except launch_model.LaunchModelError as err:
        raise JaxTritonError(str(err)) from None
    autotuner, obj = None, kernel
    while obj is not None and obj is not jit and autotuner is None:
        if hasattr(obj, "configs") and not hasattr(obj, "params"):
            autotuner = obj
        obj = getattr(obj, "fn", None)
    return _Kernel(model, jit, autotuner)


def _wraps(obj: Any, jit: Any) -> bool:
    for _ in range(16):
        if obj is jit:
            return True
        obj = getattr(obj, "fn", None)
        if obj is None:
            return False
    return False


def locate_kernel(kernel: Any) -> tuple[str, str]:
    """``(path of the .py file, module attribute name)`` where ``kernel`` can be imported from.

    materialize-triton-variants imports that file as a fresh module and takes the attribute,
    so the kernel must be a module-level name of a real Python file. Raises
    KernelNotImportableError otherwise (a notebook cell, a closure, an interactive session).
    """
    k = _unwrap(kernel)
    fn = k.jit.fn
    qual = getattr(fn, "__qualname__", fn.__name__)
    if "<locals>" in qual:
        raise KernelNotImportableError(
            f"kernel '{k.name}' is defined inside a function ({qual}); materialize-triton-variants imports "
            "kernels by file and module-level name: move it to module level, or pass kernel_source=(path, name)"
        )
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        path = None
    if not path or path.startswith("<") or not os.path.isfile(path):
        raise KernelNotImportableError(
            f"kernel '{k.name}' does not come from a Python file on disk (source: {path or 'unknown'}; "
            "a notebook cell or an interactive session?): put it in a .py file, or pass kernel_source=(path, name)"
        )
    module = sys.modules.get(getattr(fn, "__module__", ""), None)
    candidates = []
    if module is not None:
        for attr, value in vars(module).items():
            if value is kernel:
                candidates.insert(0, attr)
            elif _wraps(value, k.jit) and attr == k.name:
                candidates.append(attr)
    elif _wraps(kernel, k.jit):
        candidates.append(k.name)
    if not candidates:
        raise KernelNotImportableError(f"kernel '{k.name}' is not a module-level name of {path}; pass kernel_source=(path, name)")
    return os.path.abspath(path), candidates[0]


def _captured(k: _Kernel, why: KernelNotImportableError) -> tuple[str, str, str]:
    """``(file it was written in, kernel name, module text)`` of a kernel that cannot be
    imported by file and module-level name (made inside a function, in a notebook cell):
    its source and the values it reads, carried in the exported module as
    ``kernel_source(...)`` (:func:`autotune_export.cuda.kernel_capture.capture`), with a
    ``triton.autotune`` stand-in holding the autotuner's ``reset_to_zero`` /
    ``restore_value`` (and whether it had a ``pre_hook``) where the kernel has one, so that
    materialize-triton-variants reads them from the kernel as for a kernel file. Raises
    KernelNotImportableError naming what cannot be carried (``why`` is kept as its cause)."""
    from autotune_export.cuda import kernel_capture

    tuner = k.autotuner
    try:
        text = kernel_capture.capture(
            k.jit,
            reset_to_zero=tuple(getattr(tuner, "reset_to_zero", None) or ()),
            restore_value=tuple(getattr(tuner, "restore_value", None) or ()),
            pre_hook=bool(getattr(tuner, "user_defined_pre_hook", False)) if tuner is not None else False,
        )
    except kernel_capture.CaptureError as err:
        raise KernelNotImportableError(f"{err}; or pass kernel_source=(path, name) of a module-level kernel") from why
    fn = k.jit.fn
    return fn.__code__.co_filename, k.name, text


# --------------------------------------------------------------------------------------------
# Grid expressions from a grid callable


class _NotTraceable(Exception):
    pass


class _Sym:
    """An integer expression over config constants, built by running the grid callable."""

    def __init__(self, text: str, prec: int = 9):
        self.text, self.prec = text, prec

    @staticmethod
    def wrap(v: Any) -> "_Sym":
        if isinstance(v, _Sym):
            return v
        if isinstance(v, bool) or not isinstance(v, int):
            raise _NotTraceable(f"non-integer {v!r}")
        return _Sym(str(v) if v >= 0 else f"(0 - {-v})")

    def _bin(self, op: str, other: Any, prec: int, swap: bool = False) -> "_Sym":
        a, b = (self.wrap(other), self) if swap else (self, self.wrap(other))
        lhs = a.text if a.prec >= prec else f"({a.text})"
        rhs = b.text if b.prec > prec else f"({b.text})"
        return _Sym(f"{lhs} {op} {rhs}", prec)

    __add__ = lambda s, o: s._bin("+", o, 1)  # noqa: E731
    __radd__ = lambda s, o: s._bin("+", o, 1, True)  # noqa: E731
    __sub__ = lambda s, o: s._bin("-", o, 1)  # noqa: E731
    __rsub__ = lambda s, o: s._bin("-", o, 1, True)  # noqa: E731
    __mul__ = lambda s, o: s._bin("*", o, 2)  # noqa: E731
    __rmul__ = lambda s, o: s._bin("*", o, 2, True)  # noqa: E731
    __floordiv__ = lambda s, o: s._bin("//", o, 2)  # noqa: E731
    __rfloordiv__ = lambda s, o: s._bin("//", o, 2, True)  # noqa: E731
    __mod__ = lambda s, o: s._bin("%", o, 2)  # noqa: E731
    __rmod__ = lambda s, o: s._bin("%", o, 2, True)  # noqa: E731

    def __neg__(self):
        return _Sym("0", 9)._bin("-", self, 1)

    def __pos__(self):
        return self

    def _refuse(self, *_):
        raise _NotTraceable("operation not expressible in a grid expression")

    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __int__ = __index__ = __float__ = __bool__ = __round__ = __trunc__ = __floor__ = __ceil__ = _refuse
    __and__ = __or__ = __xor__ = __lshift__ = __rshift__ = _refuse

    def __eq__(self, other):  # pragma: no cover - only reached by odd grid callables
        self._refuse()

    __hash__ = object.__hash__


def _normalize_grid(g: Any) -> tuple:
    if isinstance(g, (int, _Sym)) and not isinstance(g, bool):
        g = (g,)
    g = tuple(g)
    if not 1 <= len(g) <= 3:
        raise JaxTritonError(f"`grid` should have one to three dimensions, got {len(g)}")
    return g + (1,) * (3 - len(g))


def _grid_exprs(grid: Any, metas: list[dict[str, Any]], envs: list[dict[str, int]]) -> tuple[list[str], str]:
    """Grid clause expressions valid for every config, and how they were found.

    ``metas[i]`` is what the grid callable receives for config i (jax-triton: metaparams and
    the config's kwargs); ``envs[i]`` the integer constants a grid expression may name for
    config i (what materialize-triton-variants puts in scope). Strategies, first that works:
    ``constant`` (every config has the same grid), ``traced`` (the callable, run on symbols,
    gives integer arithmetic over the constants), ``selected`` (a sum over configs of grid
    value times an indicator ``1 - min(1, sum((K - k_i) * (K - k_i)))`` that is 1 only for
    config i's constants). Each result is checked by evaluating it for every config.
    """
    concrete = []
    for meta in metas:
        g = grid(dict(meta)) if callable(grid) else grid
        g = _normalize_grid(g)
        for d in g:
            if isinstance(d, bool) or not isinstance(d, int):
                try:
                    d2 = int(d)
                except Exception:
                    raise JaxTritonError(f"grid dimension {d!r} is not an integer") from None
                if d2 != d:
                    raise JaxTritonError(f"grid dimension {d!r} is not an integer")
        concrete.append(tuple(int(d) for d in g))

    def trim(dims):
        dims = list(dims)
        while len(dims) > 1 and dims[-1] == "1":
            dims.pop()
        return dims

    if all(c == concrete[0] for c in concrete):
        return trim(str(d) for d in concrete[0]), "constant"

    def check(exprs: list[str]) -> bool:
        try:
            parsed = [grid_mod.parse(e) for e in exprs]
            return all(tuple(grid_mod.evaluate(p, env) for p in parsed) == c for env, c in zip(envs, concrete))
        except grid_mod.GridError:
            return False

    if callable(grid):
        try:
            sym_meta = {k: (_Sym(k) if k in envs[0] and all(k in e for e in envs) else v) for k, v in metas[0].items()}
            traced = _normalize_grid(grid(sym_meta))
            exprs = [_Sym.wrap(d).text if not isinstance(d, int) else str(d) for d in traced]
            exprs = [grid_mod.format_expr(grid_mod.parse(e)) for e in exprs]
            if check(exprs):
                return trim(exprs), "traced"
        except (_NotTraceable, grid_mod.GridError, KeyError, TypeError, ValueError, ArithmeticError):
            pass

    keys = [k for k in envs[0] if all(k in e for e in envs)]
    seen: dict[tuple, tuple] = {}
    for env, c in zip(envs, concrete):
        key = tuple(env[k] for k in keys)
        if seen.setdefault(key, c) != c:
            raise JaxTritonError(
                "the grid differs between configs that agree on every integer constant "
                f"({', '.join(keys) or 'none'}); a grid expression cannot tell them apart"
            )
    exprs = []
    for dim in range(3):
        if all(c[dim] == concrete[0][dim] for c in concrete):
            exprs.append(str(concrete[0][dim]))
            continue
        terms = []
        for key, c in seen.items():
            if c[dim] == 0:
                continue
            dist = " + ".join(f"({k} - {v}) * ({k} - {v})" for k, v in zip(keys, key)) or "0"
            terms.append(f"{c[dim]} * (1 - min(1, {dist}))")
        exprs.append(" + ".join(terms) or "0")
    exprs = [grid_mod.format_expr(grid_mod.parse(e)) for e in exprs]
    if not check(exprs):  # pragma: no cover - the construction is exact
        raise JaxTritonError("could not express the per-config grid as a grid expression")
    return trim(exprs), "selected"


# --------------------------------------------------------------------------------------------
# triton_call -> module text


@dataclass
class _CallArg:
    index: int  # position among the kernel's runtime parameters
    name: str
    value: Any
    is_array: bool
    triton_type: str
    shape: tuple[int, ...] = ()
    elem: str = ""

    @property
    def tensor_type(self) -> str:
        return _tensor_type(self.shape, self.elem)


def _view_of(a: "_CallArg") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and element strides of array argument ``a`` as the launch passed it: the view of a
    :class:`~autotune_export.cuda.launch_model.StorageSpan` (``a.value.span``, set by
    launch_to_mlir for a strided tensor), else ``a.shape`` dense in row-major order."""
    span = getattr(a.value, "span", None)
    if span is not None:
        return span.view_shape, span.strides
    return a.shape, launch_model.dense_strides(a.shape)


def _flatten(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)) and not hasattr(item, "shape"):
            out.extend(_flatten(item))
        else:
            out.append(item)
    return out


def _is_static_scalar(value: Any) -> bool:
    if isinstance(value, (bool, int, float)):
        return True
    return type(value).__name__ == "float32" and type(value).__module__ == "numpy"


def _variants(
    k: _Kernel,
    metaparams: dict,
    named_args: dict,
    num_warps,
    num_stages,
    num_ctas,
    capability: int | None,
    convention,
    positional: Mapping[str, Any] | None = None,
    keywords: Sequence[str] = (),
) -> list:
    """The variants the call compiles (:func:`autotune_export.cuda.launch_model.launch_variants`,
    under ``convention``: jax-triton's or Triton's rules for metaparameters, heuristics and
    ``prune_configs_by``), with Triton's driver answering for ``capability`` while pruning."""
    kwargs = dict(metaparams)
    for key, value, default in (("num_warps", num_warps, None), ("num_stages", num_stages, None), ("num_ctas", num_ctas, 1)):
        if value is not None and value != default:
            kwargs[key] = value
    if convention is launch_model.JAX_TRITON and k.autotuner is not None:
        for key in ("num_warps", "num_stages", "num_ctas"):
            kwargs.pop(key, None)  # jax-triton takes them from the configs
    try:
        return list(
            launch_model.launch_variants(
                k.model,
                named_args,
                kwargs,
                convention=convention,
                capability=capability,
                positional=positional,
                keywords=keywords,
            ).variants
        )
    except launch_model.LaunchModelError as err:
        if err.stage == "prune":
            raise JaxTritonError(f"prune_configs_by of the triton.autotune kernel '{k.name}': {err}") from None
        raise JaxTritonError(str(err)) from None


def _config_value(v: Any, key: str) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    dtype = TritonDtype.of(v) or TorchDtype.of(v)  # OUT_DTYPE=tl.float16; torch.float16 stays a torch dtype
    if dtype is not None:
        return dtype
    inner = getattr(v, "value", None)  # tl.constexpr
    if inner is None and type(v).__name__ == "constexpr":
        return None
    if isinstance(inner, (bool, int, float, str)) or TritonDtype.of(inner) is not None:
        return _config_value(inner, key)
    if type(v).__module__.startswith("numpy") and hasattr(v, "item"):
        return v.item()
    raise JaxTritonError(
        f"constexpr '{key}' = {v!r}: a config value must be an int, float, bool, str, None, a Triton dtype or a torch dtype"
    )


def triton_call_to_mlir(
    *args: Any,
    kernel: Any,
    out_shape: Any,
    grid: Any,
    num_warps: int | None = None,
    num_stages: int | None = None,
    num_ctas: int = 1,
    input_output_aliases: Mapping[int, int] | None = None,
    zeroed_outputs: Sequence[int] | Callable[[dict], Sequence[int]] = (),
    name: str = "",
    target: str = "sm_80",
    kernel_source: tuple[str, str] | None = None,
    relative_to: str | None = None,
    output: str | os.PathLike | None = None,
    output_params: Sequence[str] | None = None,
    custom_call_target_name: str | None = None,
    compute_capability: int | None = None,
    enable_fp_fusion: bool = True,
    debug: bool = False,
    serialized_metadata: bytes = b"",
    **metaparams: Any,
) -> str:
    """The module that ``jax_triton.triton_call(*args, kernel=..., ...)`` amounts to, as text.

    Arguments follow ``jax_triton.triton_call`` (0.3.x): ``args`` are arrays (anything with
    ``.shape`` and ``.dtype``), static Python scalars (``bool``/``int``/``float``/
    ``np.float32``) and ``None`` (an optional tensor or scalar left out: Triton makes it a
    constexpr None, so the dispatch does not pass it; signature type ``none``), flattened if
    nested in lists or tuples; ``out_shape`` one such array spec
    or a list/tuple of them; ``grid`` an int, a tuple of up to three ints, or a callable of the
    metaparameter dict; ``input_output_aliases`` maps an index among the ARRAY arguments to an
    output index (0.3.x counts arrays only); ``zeroed_outputs`` output indices (or a callable
    of the metaparameters giving them, its union over the configs) zero-filled before the
    launch: the group's ``reset_to_zero``, also before every timed run; ``**metaparams`` the
    constexpr values (ints, floats, bools, strings, None, Triton dtypes such as ``tl.float16``). A ``triton.autotune`` kernel contributes every config that agrees with
    the explicit metaparameters (then its ``prune_configs_by`` pruning), ``triton.heuristics``
    are applied per config; a plain kernel gets one config from the metaparameters,
    ``num_warps`` (default 4) and ``num_stages`` (default 3).

    Returned text (sugared, the autotune-export CLI's input)::

        hal.executable.source private @KERNEL_ex {
          hal.executable.autotuning.export @KERNEL triton("/abs/kernel.py", "KERNEL")
              signature(...) configs([...]) workload() grid(...)
        }
        util.func public @main(%arg0: tensor<...>, ...) -> (tensor<...>, ...) { ... flow.dispatch ... }

    ``name`` names the host function (default ``main``). ``target`` only goes into the header
    comment (the CLI's ``--target`` chooses what variants are compiled for); a
    ``compute_capability`` (jax-triton's argument, e.g. 90) overrides it. ``kernel_source``
    gives ``(path, attribute)`` when the kernel cannot be located from its Python function
    (see :func:`locate_kernel`). The kernel's path in ``triton("...")``: relative to the
    directory of ``output`` when given (the .mlir file the text is for, which is then written,
    atomically: the module and its kernel move together), else relative to ``relative_to``,
    else absolute (text that is not yet anywhere can only name the kernel absolutely).
    ``output_params`` names the kernel parameters the outputs are, wherever they are in its
    parameter list (a PyTorch-style launch ``kernel[grid](x, y, out, n)`` passes ``out`` before
    ``n``; see :func:`autotune_export.interop.launch.launch_to_mlir`); the arguments then fill
    the other parameters in order, and the results come in kernel parameter order. Default:
    jax-triton's convention, the outputs are the last parameters.
    ``custom_call_target_name``,
    ``enable_fp_fusion``, ``debug`` and ``serialized_metadata`` are accepted for signature
    compatibility and ignored.

    The grid clause: one expression evaluated per config by materialize-triton-variants. When
    every config has the same grid it is that constant; otherwise the callable is re-run on
    symbols (``lambda m: (triton.cdiv(4096, m["BLOCK"]),)`` gives ``(4096 + BLOCK - 1) // BLOCK``)
    and, if it uses operations a grid expression lacks, a per-config selection over the config
    constants is written (see :func:`_grid_exprs`); every form is checked against the callable's
    value for every config. The workload is empty: shapes and scalars are static.

    Raises JaxTritonError (KernelNotImportableError) with a one-line reason, OSError when
    ``output`` cannot be written.
    """
    del custom_call_target_name, enable_fp_fusion, debug, serialized_metadata
    return _call_to_mlir(
        args,
        kernel=kernel,
        out_shape=out_shape,
        grid=grid,
        num_warps=num_warps,
        num_stages=num_stages,
        num_ctas=num_ctas,
        input_output_aliases=input_output_aliases,
        zeroed_outputs=zeroed_outputs,
        name=name,
        target=target,
        kernel_source=kernel_source,
        relative_to=relative_to,
        output=output,
        output_params=output_params,
        compute_capability=compute_capability,
        metaparams=metaparams,
        convention=launch_model.JAX_TRITON,
        origin="autotune_export.interop.jax_triton.triton_call_to_mlir",
    )


def _call_to_mlir(
    args: Sequence[Any],
    *,
    kernel: Any,
    out_shape: Any,
    grid: Any,
    num_warps: int | None,
    num_stages: int | None,
    num_ctas: int,
    input_output_aliases: Mapping[int, int] | None,
    zeroed_outputs: Sequence[int] | Callable[[dict], Sequence[int]],
    name: str,
    target: str,
    kernel_source: tuple[str, str] | None,
    relative_to: str | None,
    output: str | os.PathLike | None,
    output_params: Sequence[str] | None,
    compute_capability: int | None,
    metaparams: dict,
    convention: launch_model.Convention,
    origin: str,
    host_outputs: Sequence[str] = (),
    positional_constexprs: Mapping[str, Any] | None = None,
    origin_note: str = "",
    keyword_arguments: Sequence[str] = (),
) -> str:
    """:func:`triton_call_to_mlir`'s work, shared with the PyTorch-style launch
    (:func:`autotune_export.interop.launch.launch_to_mlir`): ``convention`` is the launch
    semantics (:mod:`autotune_export.cuda.launch_model`: jax-triton's or Triton's), ``origin``
    the function the header comment names (``origin_note`` follows it). ``host_outputs``:
    outputs (parameter names) the host function takes as arguments and returns, written in
    place (the dispatch's result tied to the argument itself); the host function's arguments
    are then every tensor it takes in kernel parameter order. ``positional_constexprs``:
    constexprs the launch gave by position (the pruners see them among the named arguments,
    as Triton's ``Autotuner.nargs``). ``keyword_arguments``: non-constexpr parameters the
    launch gave by keyword: the pruners see them among their keyword arguments, not the named
    ones (Triton's ``Autotuner.run``). Under Triton's convention the heuristics, pruners and
    grid callable see each tensor as a
    :class:`~autotune_export.cuda.launch_model.TensorArgument` (dtype, shape, strides, element
    size) and the grid callable every kernel argument by name. Raises JaxTritonError."""
    if output is not None:
        relative_to = os.path.dirname(os.path.abspath(os.fspath(output)))
    if compute_capability is not None:
        target = f"sm_{int(compute_capability)}"
    k = _unwrap(kernel)
    flat = _flatten(args)
    outs = list(out_shape) if isinstance(out_shape, (list, tuple)) else [out_shape]
    if not outs:
        raise JaxTritonError("`out_shape` lists no output")
    runtime = k.runtime_names
    if output_params is None:  # jax-triton: the outputs are the last parameters
        in_names, out_names = runtime[: len(flat)], runtime[len(flat) :]
    else:
        out_names = list(output_params)
        bad = [p for p in out_names if p not in runtime]
        if bad:
            raise JaxTritonError(
                f"output_params: '{bad[0]}' is not a non-constexpr parameter of '{k.name}' ({', '.join(runtime)})"
            )
        if len(set(out_names)) != len(out_names) or len(out_names) != len(outs):
            raise JaxTritonError(
                f"output_params names {len(out_names)} parameter(s) ({', '.join(out_names)}), but there are {len(outs)} output(s)"
            )
        order = sorted(range(len(outs)), key=lambda j: runtime.index(out_names[j]))  # kernel order
        outs, out_names = [outs[j] for j in order], [out_names[j] for j in order]
        in_names = [p for p in runtime if p not in out_names]
    if len(flat) + len(outs) != len(runtime):
        raise JaxTritonError(
            f"kernel '{k.name}' has {len(runtime)} non-constexpr parameters ({', '.join(runtime)}), but the call passes "
            f"{len(flat)} argument(s) and {len(outs)} output(s)"
        )
    unknown = [m for m in metaparams if m not in k.constexpr_names]
    if unknown:
        raise JaxTritonError(
            f"'{unknown[0]}' is not a constexpr parameter of '{k.name}' (constexprs: {', '.join(k.constexpr_names) or 'none'})"
        )

    call_args: list[_CallArg] = []
    for i, a in enumerate(flat):
        pname = in_names[i]
        if a is None:
            # Triton's JIT makes a None argument a constexpr None: not a kernel parameter, and
            # not passed by the dispatch (signature type `none`).
            call_args.append(_CallArg(i, pname, None, False, NONE_TYPE))
        elif _is_static_scalar(a):
            value = float(a) if not isinstance(a, (bool, int, float)) else a
            ttype = "fp32" if not isinstance(a, (bool, int, float)) else _scalar_type(a)
            call_args.append(_CallArg(i, pname, value, False, ttype))
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            tt, elem = _array_types(a.dtype, f"argument {i} ('{pname}')")
            call_args.append(_CallArg(i, pname, a, True, "*" + tt, tuple(int(d) for d in a.shape), elem))
        elif hasattr(a, "block_shape") and hasattr(a, "base"):
            # triton.tools.tensor_descriptor.TensorDescriptor: a host-side TMA descriptor.
            raise JaxTritonError(
                descriptor_refusal(
                    pname, f"tensordesc<{str(getattr(a.base, 'dtype', '?')).replace('torch.', '')}{list(a.block_shape)}>"
                )
            )
        else:
            raise JaxTritonError(
                f"argument {i} ('{pname}') is neither an array (.shape/.dtype), a static bool/int/float nor None: {type(a).__name__}"
            )
    out_args: list[_CallArg] = []
    for j, o in enumerate(outs):
        pname = out_names[j]
        if not (hasattr(o, "shape") and hasattr(o, "dtype")):
            raise JaxTritonError(f"output {j} ('{pname}') has no .shape/.dtype")
        tt, elem = _array_types(o.dtype, f"output {j} ('{pname}')")
        out_args.append(_CallArg(len(flat) + j, pname, o, True, "*" + tt, tuple(int(d) for d in o.shape), elem))
    # Arguments in an order the kernel does not have: say which one (not a compile error later).
    wrong = call_mismatch(
        k.name,
        k.jit.fn,
        runtime,
        [
            (
                f"output {a.index - len(flat)}" if a in out_args else f"argument {a.index}",
                a.name,
                a.is_array,
                a.tensor_type if a.is_array else f"a static {a.triton_type} ({a.value!r})",
            )
            for a in call_args + out_args
            if a.triton_type != NONE_TYPE
        ],
    )
    if wrong is not None:
        raise JaxTritonError(wrong)

    arrays = [a for a in call_args if a.is_array]
    aliases = dict(input_output_aliases or {})
    for src, dst in aliases.items():
        if not 0 <= int(src) < len(arrays):
            raise JaxTritonError(f"input_output_aliases: input {src} is not an array argument (there are {len(arrays)})")
        if not 0 <= int(dst) < len(outs):
            raise JaxTritonError(f"input_output_aliases: output {dst} does not exist (there are {len(outs)})")
        a, o = arrays[int(src)], out_args[int(dst)]
        if (a.shape, a.elem) != (o.shape, o.elem):
            raise JaxTritonError(f"input_output_aliases: input {src} is {a.tensor_type} but output {dst} is {o.tensor_type}")
    if len(set(aliases.values())) != len(aliases):
        raise JaxTritonError("input_output_aliases: two inputs alias the same output")

    if convention is launch_model.TRITON:
        # What Triton's launch hands to heuristics, pruners and the grid: the tensors (here
        # stand-ins answering what a torch.Tensor of that dtype and shape answers), the
        # scalars, and the constexprs given by position.
        # A strided view (launch_to_mlir: ``a.value.span``) answers with the view's own shape
        # and strides, as the tensor the library passed does; the module's argument is its span.
        named_args = {
            a.name: (
                launch_model.TensorArgument(a.name, a.triton_type, *_view_of(a), getattr(a.value, "source_dtype", None))
                if a.is_array
                else a.value
            )
            for a in call_args + out_args
        }
        named_args = {p: named_args[p] for p in runtime if p in named_args}
        named_args.update(positional_constexprs or {})
    else:
        named_args = {a.name: a.value for a in call_args + out_args}
    try:
        capability = parse_target(target).capability
    except TargetError:
        capability = None  # the header comment names it; the CLI's --target decides
    variants = _variants(
        k,
        metaparams,
        named_args,
        num_warps,
        num_stages,
        num_ctas,
        capability,
        convention,
        positional_constexprs,
        keyword_arguments,
    )

    # Config entries: every constexpr the kernel needs, in declaration order, then options.
    # A constexpr named like a launch option has the option's value (Triton binds the
    # launch's num_warps to both); the group's config holds it once, as the option.
    rows: list[list[tuple[str, Any]]] = []
    metas: list[dict[str, Any]] = []
    envs: list[dict[str, int]] = []
    for v in variants:
        cfg = v.config
        row = [(c, _config_value(value, c)) for c, value in v.constexprs if c not in OPTION_NAMES]
        row.append(("num_warps", int(cfg.num_warps)))
        row.append(("num_stages", int(cfg.num_stages)))
        if cfg.num_ctas not in (None, 1):
            row.append(("num_ctas", int(cfg.num_ctas)))
        if cfg.maxnreg is not None:
            row.append(("maxnreg", int(cfg.maxnreg)))
        rows.append(row)
        given = {
            c: value
            for c, value in v.constexprs
            if c in metaparams or c in dict(cfg.kwargs) or c in dict(k.model.heuristics()) or c in (positional_constexprs or {})
        }
        if convention is launch_model.TRITON:
            # Triton's launcher calls grid(bound_args): every argument of the kernel by name.
            metas.append({**named_args, **dict(v.constexprs)})
        else:
            metas.append({**metaparams, **given})
        envs.append(
            {key: val for key, val in row if key not in OPTION_NAMES and isinstance(val, int) and not isinstance(val, bool)}
        )
    grid_exprs, _how = _grid_exprs(grid, metas, envs)

    zeroed: set[int] = set()
    for meta in metas:
        z = zeroed_outputs(dict(meta)) if callable(zeroed_outputs) else zeroed_outputs
        for j in z or ():
            if not 0 <= int(j) < len(outs):
                raise JaxTritonError(f"zeroed_outputs: output {j} does not exist (there are {len(outs)})")
            zeroed.add(int(j))

    embedded = None
    if kernel_source is None:
        try:
            path, attr = locate_kernel(kernel)
        except KernelNotImportableError as err:
            path, attr, embedded = _captured(k, err)
    else:
        path, attr = kernel_source
        path = os.path.abspath(path)
    if relative_to is not None and os.path.isabs(path):
        path = os.path.relpath(path, relative_to)

    kname = re.sub(r"[^A-Za-z0-9_]", "_", k.name)
    group = AutotuneGroup(
        name=kname,
        triton=(path, attr),
        signature=sorted(
            [Param(a.name, a.triton_type) for a in call_args] + [Param(o.name, o.triton_type, True) for o in out_args],
            key=lambda p: runtime.index(p.name),
        ),  # the kernel's parameter order
        configs=rows,
        workload=[],
        grid=grid_exprs,
        kernel_source=embedded,
    )
    # zeroed_outputs as the group's reset_to_zero (zero-fill-outputs zero-fills them at every
    # call, as jax-triton before every launch, and before every timed run). jax-triton ignores a
    # triton.autotune's own reset_to_zero / restore_value, so the clauses are explicit whenever
    # the kernel has them: restored are the aliased outputs (jax-triton's tuner saves and
    # restores the aliased buffers), which are written in place.
    # A PyTorch-style launch (convention TRITON) leaves both clauses out, so that the kernel's
    # own triton.autotune(reset_to_zero=..., restore_value=...) apply as in Triton: materialize
    # reads them from the kernel, their one home (an empty clause here would override them and
    # leave an atomic accumulator an undefined buffer).
    tuner = k.autotuner
    if convention is not launch_model.TRITON and (zeroed or getattr(tuner, "reset_to_zero", None)):
        group.reset_to_zero = [out_args[j].name for j in sorted(zeroed)]
    if convention is not launch_model.TRITON and getattr(tuner, "restore_value", None):
        group.restore_value = [out_args[j].name for j in sorted({int(v) for v in aliases.values()} - zeroed)]
    exe = f"{kname}_ex"
    func = name or "main"
    text = _host_text(
        group,
        exe,
        func,
        call_args,
        out_args,
        aliases,
        zeroed,
        target,
        _how,
        origin + origin_note,
        [p for p in runtime if p in host_outputs],
    )
    if output is not None:
        files.atomic_write(os.fspath(output), text)
    return text


def _strided_tensors(takes, out_args, host_outs) -> list:
    """The :class:`~autotune_export.contract.StridedTensor` of each array argument that is a
    strided view (``a.value.span``, set by launch_to_mlir), with the host function's argument
    (its place in ``takes``) and result (its place among ``out_args``) that carry it."""
    out = []
    for a in list(takes) + [o for o in out_args if o not in takes]:
        span = getattr(a.value, "span", None)
        if span is None or not span.strided:
            continue
        argument = takes.index(a) if a in takes else None
        result = out_args.index(a) if a in out_args else None
        out.append(
            contract.StridedTensor(a.name, argument, result, list(span.view_shape), list(span.strides), span.kind, a.tensor_type)
        )
    return out


def _ranked_tensor_type(a: _CallArg) -> ir.RankedTensorType:
    """``a``'s tensor type (static shape, element type of :data:`_DTYPES`), made with the
    bindings in the current context."""
    return ir.RankedTensorType.get(list(a.shape), _ELEMENT_TYPES[a.elem]())


def _scalar_constant(a: _CallArg) -> ir.Value:
    """``arith.constant`` of static scalar ``a`` at the current insertion point: ``i1``, a
    32-bit integer as signless ``i32`` (a ``u32`` by its bits), a 64-bit one as ``i64``, ``fp32``
    (the value rounded to f32, as the launch passes it) or ``fp64``. Raises JaxTritonError for
    another type."""
    t = a.triton_type
    if t == "i1":
        return arith.ConstantOp(
            ir.IntegerType.get_signless(1), ir.IntegerAttr.get(ir.IntegerType.get_signless(1), int(bool(a.value)))
        ).result
    if t in ("i32", "u32"):
        i32 = ir.IntegerType.get_signless(32)
        return arith.ConstantOp(i32, ir.IntegerAttr.get(i32, _i32(int(a.value)))).result
    if t in ("i64", "u64"):
        i64 = ir.IntegerType.get_signless(64)
        v = int(a.value) & (2**64 - 1)
        return arith.ConstantOp(i64, ir.IntegerAttr.get(i64, v - 2**64 if v >= 2**63 else v)).result
    if t == "fp32":
        f32 = ir.F32Type.get()
        return arith.ConstantOp(f32, ir.FloatAttr.get(f32, struct.unpack("<f", struct.pack("<f", float(a.value)))[0])).result
    if t == "fp64":
        f64 = ir.F64Type.get()
        return arith.ConstantOp(f64, ir.FloatAttr.get(f64, float(a.value))).result
    raise JaxTritonError(f"cannot pass static {t} argument '{a.name}'")


def _zero_splat(rtype: ir.RankedTensorType) -> ir.Value:
    """``flow.tensor.splat`` of a zero of ``rtype``'s element type, at the current insertion point."""
    elem = rtype.element_type
    if isinstance(elem, ir.IntegerType):
        zero = arith.ConstantOp(elem, ir.IntegerAttr.get(elem, 0)).result
    else:
        zero = arith.ConstantOp(elem, ir.FloatAttr.get(elem, 0.0)).result
    return ir.Operation.create("flow.tensor.splat", results=[rtype], operands=[zero]).result


def _host_text(
    group: AutotuneGroup,
    exe: str,
    func: str,
    call_args,
    out_args,
    aliases,
    zeroed,
    target,
    how,
    origin: str,
    host_outs: Sequence[str] = (),
) -> str:
    """The module of one call, built with the bindings and printed (the group in its sugared
    form): ``hal.executable.source @exe`` holding ``group``, and ``util.func public @func``
    that dispatches it. The host function takes the array arguments (in call order; with
    ``host_outs``, those outputs too, every tensor in kernel parameter order) and returns the
    outputs in kernel order. Dispatch operands: the arguments in kernel order (static scalars
    as constants, None left out), then, when any output is tied (``zeroed``, ``aliases``,
    ``host_outs``), one operand per output that its result is tied to: a zero splat (zeroed),
    a clone of the aliased input, the host's own argument (``host_outs``), else an empty
    tensor."""
    from autotune_export.ir import functions

    arrays = [a for a in call_args if a.is_array]
    alias_of = {dst: src for src, dst in aliases.items()}
    takes = arrays + [o for o in out_args if o.name in host_outs]
    if host_outs:
        order = [p.name for p in group.signature]
        takes.sort(key=lambda a: order.index(a.name))  # kernel parameter order
    tie_all = bool(zeroed) or bool(aliases) or bool(host_outs)
    header = [
        f"// Generated by {origin} from kernel '{group.triton[1]}'.",
        f"// Compile: autotune-export THIS.mlir --emit vmfb --target {target} -o OUT.vmfb",
        f"// Grid: {how} ({len(group.configs)} config{'s' if len(group.configs) != 1 else ''}).",
    ]
    for a in call_args + out_args:
        span = getattr(a.value, "span", None) if a.is_array else None
        if span is not None and span.strided:
            header.append(
                f"// Strided: '{a.name}' is a {span.describe()} ({span.kind}); the module's "
                f"{'result' if a in out_args and a.name not in host_outs else 'argument'} is its storage "
                f"span from its first element, {a.tensor_type}; the strides are passed as given "
                '(docs/call-sites.md, "Strided tensors").'
            )
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        top = ir.InsertionPoint(module.body)
        source = builders.executable_source(exe, ip=top)
        group.build(ip=builders.source_block(source))
        in_types = [_ranked_tensor_type(a) for a in takes]
        res_types = [_ranked_tensor_type(o) for o in out_args]

        def body(params: list) -> list:
            value_of = {id(a): v for a, v in zip(takes, params)}
            operands = []
            for a in call_args:
                if a.triton_type == NONE_TYPE:
                    continue  # a constexpr None: not passed
                operands.append(value_of[id(a)] if a.is_array else _scalar_constant(a))
            tied = []
            for j, o in enumerate(out_args):
                if not tie_all:
                    tied.append(-1)
                    continue
                rtype = res_types[j]
                if o.name in host_outs:
                    operands.append(value_of[id(o)])
                elif j in zeroed:
                    operands.append(_zero_splat(rtype))
                elif j in alias_of:
                    src = value_of[id(arrays[alias_of[j]])]
                    operands.append(ir.Operation.create("flow.tensor.clone", results=[rtype], operands=[src]).result)
                else:
                    operands.append(ir.Operation.create("flow.tensor.empty", results=[rtype], operands=[]).result)
                tied.append(len(operands) - 1)
            attrs = {
                "entry_points": ir.ArrayAttr.get([ir.SymbolRefAttr.get([exe, group.name])]),
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(operands), 0, 0]),
            }
            if tie_all:
                attrs["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), t) for t in tied])
            dispatch = ir.Operation.create("flow.dispatch", results=res_types, operands=operands, attributes=attrs)
            return list(dispatch.results)

        strided = _strided_tensors(takes, out_args, host_outs)
        attributes = None
        if strided:
            attributes = {
                "iree.reflection": ir.DictAttr.get({contract.STRIDED_KEY: ir.StringAttr.get(contract.encode_strided(strided))})
            }
        functions.util_func(func, in_types, res_types, body, attributes=attributes, ip=top)
        module.operation.verify()
        lines = print_module(module).rstrip("\n").split("\n")
        if lines[0] == "module {" and lines[-1] == "}":  # the top-level ops without the implicit module
            lines = [line[2:] if line.startswith("  ") else line for line in lines[1:-1]]
            lines = [x for i, line in enumerate(lines) for x in ([line, ""] if line == "}" and i + 1 < len(lines) else [line])]
        return "\n".join(header) + "\n\n" + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# jax.export StableHLO -> IREE input


@dataclass
class _Variant:
    """One config of a jax-triton call: its PTX entry and launch."""

    call: Any  # TritonKernelCall
    description: str
    entry: str = ""
    ptx: str = ""
    skipped: str | None = None


def _attrs(op) -> dict:
    return {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}


def _backend_bytes(op) -> bytes | None:

    attrs = _attrs(op)
    for key in ("backend_config", "mhlo.backend_config"):
        attr = attrs.get(key)
        if attr is None:
            continue
        if isinstance(attr, ir.StringAttr):
            return attr.value_bytes
        if isinstance(attr, ir.DictAttr):
            d = ir.DictAttr(attr)
            if "opaque" in d:
                return ir.StringAttr(d["opaque"]).value_bytes
    return None


#: Mnemonic of the elements of a custom call's ``output_operand_aliases``.
_ALIAS_ATTR = "#stablehlo.output_operand_alias<"


def _aliases_of(op) -> dict[int, int]:
    """output index -> operand index, from the custom call's ``output_operand_aliases``.

    The attribute is an ``ArrayAttr`` (read with the bindings) of
    ``#stablehlo.output_operand_alias<output_tuple_indices = [i], operand_index = n,
    operand_tuple_indices = []>``. IREE's Python bindings have no StableHLO attribute classes,
    so the parameters of each element, the text between its ``<`` and the closing ``>``, are
    read as a builtin dictionary attribute (``ir.DictAttr`` of an ``ArrayAttr`` and an
    ``IntegerAttr``). An empty ``output_tuple_indices`` (a call with one, non-tuple result)
    means output 0. Raises JaxTritonError for an element of another kind.
    """

    attrs = _attrs(op)
    out: dict[int, int] = {}
    if "output_operand_aliases" not in attrs:
        return out
    with op.context:
        for elem in ir.ArrayAttr(attrs["output_operand_aliases"]):
            text = str(elem)
            if not (text.startswith(_ALIAS_ATTR) and text.endswith(">")):
                raise JaxTritonError(f"output_operand_aliases: expected {_ALIAS_ATTR}...>, got {text[:80]}")
            try:
                fields = ir.DictAttr(ir.Attribute.parse("{" + text[len(_ALIAS_ATTR) : -1] + "}"))
                outputs = (
                    [ir.IntegerAttr(i).value for i in ir.ArrayAttr(fields["output_tuple_indices"])]
                    if "output_tuple_indices" in fields
                    else []
                )
                operand = ir.IntegerAttr(fields["operand_index"]).value
            except (ir.MLIRError, KeyError, ValueError, TypeError):
                raise JaxTritonError(f"output_operand_aliases: cannot read {text[:120]}") from None
            out[outputs[0] if outputs else 0] = int(operand)
    return out


def _config_fields(description: str) -> dict[str, str]:
    """The ``KEY: VALUE`` items of jax-triton's config description, in order.

    jax-triton describes each config of an autotuned call by Triton's ``str(triton.Config)``:
    ``"BLOCK: 128, num_warps: 4, num_ctas: 1, num_stages: 2, maxnreg: None"`` (the constexpr
    kwargs, then the options), items joined by ``", "``. Values are kept as text (stripped); an
    item without ``:`` or whose key is not an identifier is skipped, and a value holding a
    comma (a tuple) keeps only its first part.
    """
    out: dict[str, str] = {}
    for item in description.split(","):
        key, sep, value = item.partition(":")
        key = key.strip()
        if sep and key.isidentifier() and value.strip():
            out[key] = value.strip()
    return out


#: Config description keys that are Triton options, not constexpr values.
_OPTION_KEYS = (
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "ir_override",
    "num_buffers_warp_spec",
    "num_consumer_groups",
    "reg_dec_producer",
    "reg_inc_consumer",
)


def _variant_suffix(description: str, k: int) -> str:
    """``0_128_w4_s2``: config ``k``'s suffix of its export name, from jax-triton's description
    (see :func:`_config_fields`): ``k``, the constexpr values joined by ``x`` (``.`` spelled
    ``p``, ``-`` spelled ``m``, other non-alphanumerics dropped, ``None`` left out), then
    ``_wN`` / ``_sN`` for num_warps / num_stages. Just ``k`` when the description has no items."""
    pairs = _config_fields(description)
    if not pairs:
        return str(k)
    consts = [v for key, v in pairs.items() if key not in _OPTION_KEYS]
    body = "x".join(re.sub(r"[^A-Za-z0-9]", "", c.replace(".", "p").replace("-", "m")) for c in consts if c not in ("None",))
    tail = "".join(f"_{t}{pairs[key]}" for key, t in (("num_warps", "w"), ("num_stages", "s")) if key in pairs)
    return f"{k}" + (f"_{body}" if body else "") + tail


_REG_BITS = (("%rd", 64), ("%fd", 64), ("%rs", 16), ("%rq", 128), ("%hh", 32), ("%r", 32), ("%f", 32), ("%h", 16))


def _bake_scalar(ptx: str, param: str, bits: int, nbytes: int) -> str:
    """Replace every ``ld.param.T %reg, [param];`` by ``mov.bN %reg, VALUE;``.

    ``bits`` is the value's bit pattern (``nbytes`` wide), moved at the width of the register.
    Raises JaxTritonError when the parameter is used in another way.
    """
    pat = re.compile(r"ld\.param\.([a-z]+)(\d+)\s+(%[A-Za-z0-9_$]+)\s*,\s*\[\s*" + re.escape(param) + r"\s*\]\s*;")

    def repl(m):
        reg = m.group(3)
        width = next((w for prefix, w in _REG_BITS if reg.startswith(prefix) and reg[len(prefix) :][:1].isdigit()), None)
        if width is None:
            raise JaxTritonError(f"cannot bake static parameter {param}: unknown register class of {reg}")
        value = bits & ((1 << (8 * nbytes)) - 1)
        if width < 8 * nbytes:
            value &= (1 << width) - 1
        return f"mov.b{width} {reg}, {value};"

    out = pat.sub(repl, ptx)
    body = out.split(")", 1)[1] if ")" in out else out
    if re.search(r"(?<![A-Za-z0-9_$])" + re.escape(param) + r"(?![A-Za-z0-9_$])", body):
        raise JaxTritonError(f"cannot bake static parameter {param}: the kernel uses it other than by ld.param")
    return out


def _bits_of(kind: str, value: Any) -> tuple[int, int]:
    if kind == "bool_":
        return int(bool(value)), 1
    if kind in ("i64", "u64"):
        return int(value) & (2**64 - 1), 8
    if kind == "f64":
        return struct.unpack("<Q", struct.pack("<d", float(value)))[0], 8
    if kind in ("i32", "u32"):
        return int(value) & 0xFFFFFFFF, 4
    if kind == "f32":
        return _f32_bits(value), 4
    raise JaxTritonError(f"unknown scalar parameter kind {kind}")


@dataclass
class _CallPlan:
    """What one jax-triton custom call becomes: the executable source to build
    (:func:`_build_source`, from ``bundle``: its objects, exports and group) and the
    ``flow.dispatch`` replacing the call (:func:`_rewrite_call`).

    ``group``: the symbol the dispatch names (the group of an autotuned call, else the single
    export). ``operands``: per dispatch tensor operand, ``("operand", i)``, ``("zeros", type)``
    or ``("clone", i)``; ``constants``: the 32-bit constants (signed i32 values); ``tied``: per
    result, the dispatch operand it is tied to or -1. ``loc``: the custom call's location.
    """

    op: Any
    index: int
    exe: str
    group: str
    variants: list[_Variant]
    loc: Any
    bundle: Bundle
    operands: list  # ("operand", i) | ("zeros", type) | ("clone", i)
    constants: list[int]
    tied: list[int]  # per result: argument index or -1


def _plan_call(
    op,
    index: int,
    msg,
    *,
    arch_limit: int | None,
    object_format: str,
    ptx_version: str | None,
    name_prefix: str,
    device: Any | None,
) -> _CallPlan:
    """Plan the rewrite of custom call ``op`` (the ``index``-th jax-triton call) whose decoded
    descriptor is ``msg``. ``device`` (a :class:`autotune_export.cuda.targets.CudaTarget`, or
    None) is the GPU the result runs on: PTX that cannot run there is refused; configs needing
    more than ``arch_limit`` bytes of shared memory are skipped. Raises JaxTritonError."""

    kind = msg.WhichOneof("value")
    if kind == "kernel_call":
        raw = [(msg.kernel_call, "")]
    else:
        raw = [(c.kernel_call, c.description) for c in msg.autotuned_kernel_call.configs]
    if not raw:
        raise JaxTritonError(f"triton call {index} has no configs")
    kname = re.sub(r"[^A-Za-z0-9_]", "_", raw[0][0].kernel.kernel_name or "triton_kernel")
    loc = f"triton call {index} ('{raw[0][0].kernel.kernel_name}')"
    operands = list(op.operands)
    n_in, n_out = len(operands), len(op.results)
    aliases = _aliases_of(op)  # output -> operand

    # Parameters: identical kinds (and scalar values) across configs.
    first = raw[0][0].parameters
    kinds = [p.WhichOneof("value") for p in first]
    for call, _ in raw[1:]:
        if [p.WhichOneof("value") for p in call.parameters] != kinds:
            raise JaxTritonError(f"{loc}: configs disagree on the kernel parameters")
    array_params = [i for i, kd in enumerate(kinds) if kd == "array"]
    if len(array_params) == n_in + n_out:
        own_alias_param = True  # 0.3.x: every output has its own pointer
    elif len(array_params) == n_in + n_out - len(aliases):
        own_alias_param = False  # 0.4.x: an aliased output is its input's pointer
    else:
        raise JaxTritonError(
            f"{loc}: the descriptor lists {len(array_params)} array parameters, but the call has {n_in} operands and {n_out} results"
        )
    zeroed: set[int] = set()  # output indices
    param_of_output: dict[int, int] = {}
    param_of_input = {i: array_params[i] for i in range(n_in)}
    rest = array_params[n_in:]
    j = 0
    for o in range(n_out):
        if o in aliases and not own_alias_param:
            continue
        param_of_output[o] = rest[j]
        j += 1
    for call, _ in raw:
        for o, pidx in param_of_output.items():
            if call.parameters[pidx].array.bytes_to_zero:
                zeroed.add(o)
        for i, pidx in param_of_input.items():
            if call.parameters[pidx].array.bytes_to_zero:
                raise JaxTritonError(f"{loc}: input {i} is to be zeroed; only outputs can be")

    # Operands of the dispatch: call operands, then one tensor per tied output.
    # Operands are kept as indices into the call's operands: values are read when rewriting,
    # after earlier calls (whose results this one may use) were replaced.
    disp_operands: list = [("operand", i) for i in range(n_in)]
    tied = [-1] * n_out
    binding_of_param: dict[int, int] = {pidx: i for i, pidx in param_of_input.items()}
    for o in range(n_out):
        rtype = op.results[o].type
        if o in zeroed:
            disp_operands.append(("zeros", rtype))
        elif o in aliases and own_alias_param:
            disp_operands.append(("clone", aliases[o]))
        elif o in aliases:
            tied[o] = aliases[o]
            continue
        else:
            continue
        tied[o] = len(disp_operands) - 1
    # IREE's binding rule (autotune_export.ir.binding): a tied output writes through its
    # operand's binding, the untied ones through bindings after the tensor operands.
    slots = _binding.result_bindings(tied, range(len(disp_operands)))
    for o, pidx in param_of_output.items():
        binding_of_param[pidx] = slots[o]
    n_bindings = len(disp_operands) + sum(1 for t in tied if t < 0)

    # Scalars: 32-bit ones are constants, the others are baked into the PTX.
    constants: list[int] = []
    const_params: list[int] = []
    baked: list[tuple[int, int, int]] = []  # (param index, bits, nbytes)
    for pidx, kd in enumerate(kinds):
        if kd == "array":
            continue
        values = {repr(getattr(call.parameters[pidx], kd)) for call, _ in raw}
        if len(values) != 1:
            raise JaxTritonError(f"{loc}: configs pass different values to scalar parameter {pidx}")
        bits, nbytes = _bits_of(kd, getattr(first[pidx], kd))
        if kd in ("i32", "u32", "f32"):
            constants.append(_i32(bits))
            const_params.append(pidx)
        else:
            baked.append((pidx, bits, nbytes))
    order_known = [None] * n_bindings
    for pidx, b in binding_of_param.items():
        order_known[b] = pidx
    order = order_known + const_params
    if any(o is None for o in order):  # pragma: no cover - bindings are complete by construction
        raise JaxTritonError(f"{loc}: internal error: unmapped binding")

    variants: list[_Variant] = []
    written: set[int] = set()
    parts = []
    nparams = len(kinds)
    for k, (call, desc) in enumerate(raw):
        kern = call.kernel
        v = _Variant(call, desc)
        variants.append(v)
        ptx = kern.ptx
        if not ptx:
            v.skipped = "the descriptor carries no PTX (a ROCm kernel?)"
            continue
        if kern.HasField("num_ctas") and kern.num_ctas > 1:
            v.skipped = f"num_ctas = {kern.num_ctas} needs a cluster launch, which IREE's CUDA HAL does not do"
            continue
        if kern.HasField("global_scratch_size") and kern.global_scratch_size > 0:
            v.skipped = f"needs {kern.global_scratch_size} bytes of global scratch per program, which IREE does not pass"
            continue
        if arch_limit is not None and kern.shared_mem_bytes > arch_limit:
            v.skipped = f"needs {kern.shared_mem_bytes} bytes of shared memory, over the target's {arch_limit}"
            continue
        try:
            entry = ptx_mod.parse_entry(ptx)
        except ptx_mod.PtxError as err:
            raise JaxTritonError(f"{loc}, config {k}: {err}") from None
        if device is not None:
            try:
                runs = _arch_runs_on(entry.target, device)
            except TargetError as err:
                raise JaxTritonError(f"{loc}, config {k}: the PTX's .target: {err}") from None
            if not runs:
                raise JaxTritonError(f"{loc}, config {k}: the PTX targets {entry.target}, which does not run on {device.name}")
        if len(entry.params) < nparams:
            raise JaxTritonError(f"{loc}, config {k}: the PTX entry has {len(entry.params)} parameters, the descriptor {nparams}")
        for pidx, bits, nbytes in baked:
            ptx = _bake_scalar(ptx, entry.params[pidx].name, bits, nbytes)
        # Pointers the kernel writes through, from its TTIR (descriptor field 5; its function's
        # arguments are the descriptor's parameters). Without TTIR, when the analysis cannot
        # tell, or when it names a parameter that is not an array (the two lists disagree),
        # every pointer parameter counts as written.
        wr = written_params_from_ttir(kern.ttir) if kern.ttir else None
        written |= set(array_params) if wr is None or not wr <= set(array_params) else wr
        v.ptx = ptx
        v.entry = f"{name_prefix}{kname}" + (f"_{_variant_suffix(desc, k)}" if kind != "kernel_call" else "")
        drop = [pidx for pidx, _, _ in baked] + list(range(nparams, len(entry.params)))
        parts.append(ptx_mod.LinkPart(ptx, v.entry, order, drop))
    live = [v for v in variants if v.skipped is None]
    if not live:
        reasons = "; ".join(f"config {k}: {v.skipped}" for k, v in enumerate(variants))
        raise JaxTritonError(f"{loc}: no config can run under IREE ({reasons})")
    try:
        # The link stage's object (no check of the linker's edits: the descriptor's PTX was not
        # assembled by this toolkit; no memo).
        obj = link_object(parts, object_format=object_format, ptx_version=ptx_version, check=False, jobs=1)
    except ptx_mod.PtxError as err:
        raise JaxTritonError(f"{loc}: {err}") from None

    written_bindings = {binding_of_param[p] for p in written if p in binding_of_param}
    tied_operands = {t for t in tied if t >= 0}
    read_only = [b < n_in and b not in tied_operands and b not in written_bindings for b in range(n_bindings)]

    exe = f"{name_prefix}{kname}_ex{index}"
    exports = []
    for ordinal, v in enumerate(live):
        call, kern = v.call, v.call.kernel
        entry = ptx_mod.parse_entry(v.ptx)
        threads = entry.reqntid[0] if entry.reqntid else int(kern.num_warps) * 32
        grid = (int(call.grid_0), int(call.grid_1), int(call.grid_2))
        exports.append(
            ExportSpec(name=v.entry, ordinal=ordinal, threads=(threads,), shared=(int(kern.shared_mem_bytes),), count=grid)
        )
    group_name = f"{name_prefix}{kname}"
    group = None
    if kind != "kernel_call":
        # bytes_to_zero (jax-triton's zeroed_outputs): the results tied to zero splats.
        zeroed_results = [o for o, t in enumerate(tied) if t >= 0 and disp_operands[t][0] == "zeros"]
        group = GroupSpec(name=group_name, variants=[v.entry for v in live], reset_to_zero=zeroed_results or None)
    bundle = Bundle(exe, (obj,), tuple(exports), read_only, len(constants), (), group)
    target_symbol = group_name if kind != "kernel_call" else live[0].entry
    return _CallPlan(
        op,
        index,
        exe,
        target_symbol,
        variants,
        op.location,
        bundle=bundle,
        operands=disp_operands,
        constants=constants,
        tied=tied,
    )


def _build_source(plan: _CallPlan, ip) -> None:
    """Build the call's ``hal.executable.source`` at ``ip`` (inside its context, at the call's
    location): the bundle written by the one builder
    (:func:`autotune_export.passes.build_bundle.write_bundle`): the one object (PTX string or
    cubin bytes) keyed by the generic CUDA target, the group op of an autotuned call, then one
    export per config with the shared pipeline layout, a count region returning the constant
    grid, the block size and the dynamic shared memory."""
    with plan.loc:
        write_bundle(plan.bundle, ip=ip)


def _arch_runs_on(ptx_target: str, device: Any) -> bool:
    """Whether PTX whose ``.target`` is ``ptx_target`` (``sm_80``, ``sm_90a``) can be
    JIT-compiled for ``device`` (a :class:`autotune_export.cuda.targets.CudaTarget`):
    arch-specific PTX (``a`` suffix) only on its own architecture, other PTX on its
    architecture and newer ones (any ``sm_XY``, also one the toolkit does not compile for).
    Raises TargetError for a ``.target`` not spelled ``sm_XY[a]``."""
    built = parse_target(ptx_target, supported_only=False)
    if built.suffix == "a":
        return built.capability == device.capability
    return built.capability <= device.capability


def _rewrite_call(plan: _CallPlan) -> None:

    op = plan.op
    with op.context, op.location:
        point = ir.InsertionPoint(op)
        i32 = ir.IntegerType.get_signless(32)
        args = []
        for item in plan.operands:
            if item[0] == "zeros":
                rtype = ir.RankedTensorType(item[1])
                elem = rtype.element_type
                with point:
                    if isinstance(elem, ir.IntegerType):
                        zero = arith.ConstantOp(elem, ir.IntegerAttr.get(elem, 0)).result
                    else:
                        zero = arith.ConstantOp(elem, ir.FloatAttr.get(elem, 0.0)).result
                    args.append(ir.Operation.create("flow.tensor.splat", results=[rtype], operands=[zero], ip=point).result)
            elif item[0] == "clone":
                value = op.operands[item[1]]
                args.append(ir.Operation.create("flow.tensor.clone", results=[value.type], operands=[value], ip=point).result)
            else:
                args.append(op.operands[item[1]])
        for c in plan.constants:
            with point:
                args.append(arith.ConstantOp(i32, ir.IntegerAttr.get(i32, c)).result)
        attrs = {
            "entry_points": ir.ArrayAttr.get([ir.SymbolRefAttr.get([plan.exe, plan.group])]),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(args), 0, 0]),
        }
        if any(t >= 0 for t in plan.tied):
            index = ir.IndexType.get()
            attrs["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(index, t) for t in plan.tied])
        new = ir.Operation.create(
            "flow.dispatch", results=[r.type for r in op.results], operands=args, attributes=attrs, ip=point
        )
        for old, repl in zip(op.results, new.results):
            old.replace_all_uses_with(repl)
        op.erase()


def convert_stablehlo(
    text_or_bytes: str | bytes,
    *,
    target: str | None = None,
    lower: bool = True,
    object_format: str = "ptx",
    ptx_version: str | int | None = None,
    call_targets: Sequence[str] = TRITON_CALL_TARGETS,
    filename: str = "<stablehlo>",
) -> str:
    """Turn a ``jax.export`` module with jax-triton calls into IREE input (text).

    ``text_or_bytes``: ``exported.mlir_module()`` text, or MLIR bytecode of a StableHLO module
    (``ir.Module.parse(bytes)``; the VHLO portable artifact in ``exported.mlir_module_serialized``
    is not readable by IREE's bindings: pass the text). Every ``stablehlo.custom_call`` whose
    target is in ``call_targets`` is replaced by a ``flow.dispatch`` into a new
    ``hal.executable.source`` that embeds the call's PTX (all configs linked into one module):

    * one config: one export; the dispatch names it;
    * several configs (``triton.autotune``): one export per config and a
      ``hal.executable.autotuning.export`` group over them, lowered (``lower=True``, the
      default) by verify-autotuning-groups, emit-autotune-initializer and
      lower-autotuning-dispatch into IREE's condition/fallback chain with ``@__autotune``.

    ``target`` (``"sm_80"``, read by :func:`autotune_export.cuda.targets.parse_target`; one
    of its supported architectures): the GPU the result will run on; configs needing more
    shared memory than it has are dropped, and PTX built for a newer architecture (or
    arch-specific PTX, ``sm_90a``, for another one) is refused.
    ``object_format="cubin"`` embeds a cubin assembled by Triton's ptxas instead of PTX;
    ``ptx_version`` (``"8.6"``, ``"86"`` or ``86``, as ``autotune-export --ptx-version``:
    :func:`autotune_export.cuda.ptx.parse_ptx_version`) rewrites the linked PTX's ``.version``.
    ``lower=False`` returns
    the module with the groups still in the sugared form (the CLI's input).

    Each executable source is built with the bindings (:mod:`autotune_export.ir.builders`,
    :mod:`autotune_export.ir.hal_attrs`) and placed at the top of the module, in call order.
    A binding is ``ReadOnly`` when it is an untied input that no config writes through,
    according to the TTIR the descriptor carries
    (:func:`autotune_export.cuda.ttir.written_params_from_ttir`); without TTIR, or when the
    analysis cannot tell, every pointer counts as written.

    The result is what ``iree-compile --iree-input-type=stablehlo --iree-hal-target-device=cuda
    --iree-cuda-target=sm_80`` accepts. Raises JaxTritonError (an unsupported ``target``
    included; DiagnosticError from the passes).
    """

    if object_format not in ("ptx", "cubin"):
        raise JaxTritonError(f"object_format must be 'ptx' or 'cubin', got {object_format!r}")
    device = None
    if target is not None:
        try:
            device = parse_target(target)
        except TargetError as err:
            raise JaxTritonError(str(err)) from None
    ctx = new_context()
    if isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(text_or_bytes)
        try:
            module = ir.Module.parse(data if data.startswith(b"ML\xefR") else data.decode(), ctx)
        except ir.MLIRError as err:
            raise JaxTritonError(
                f"cannot parse the module: {str(err).splitlines()[0]} (jax.export's mlir_module_serialized is a VHLO "
                "portable artifact; pass exported.mlir_module() text instead)"
            ) from None
    else:
        try:
            module = ir.Module.parse(text_or_bytes, ctx)
        except ir.MLIRError as err:
            raise JaxTritonError(f"cannot parse the module: {err}") from None

    arch_limit = device.max_shared_memory if device is not None else None

    calls = []
    for op in walk(module.operation):
        if op.name != "stablehlo.custom_call":
            continue
        tname = ir.StringAttr(op.attributes["call_target_name"]).value
        if tname not in call_targets:
            continue
        payload = _backend_bytes(op)
        if payload is None:
            raise JaxTritonError(f"custom call @{tname} has no backend_config bytes")
        try:
            msg = proto.decode_backend_config(payload)
        except proto.ProtoError as err:
            raise JaxTritonError(f"custom call @{tname} #{len(calls)}: {err}") from None
        calls.append((op, msg))

    plans = []
    for index, (op, msg) in enumerate(calls):
        plans.append(
            _plan_call(
                op,
                index,
                msg,
                arch_limit=arch_limit,
                object_format=object_format,
                ptx_version=ptx_version,
                name_prefix="",
                device=device,
            )
        )
    if plans:
        # The executable sources go first in the module, in call order.
        first = next(iter(module.body.operations), None)
        with ctx:
            point = ir.InsertionPoint(first.operation) if first is not None else ir.InsertionPoint(module.body)
            for plan in plans:
                _build_source(plan, point)
    for plan in plans:
        _rewrite_call(plan)
    with ctx, ir.Location.unknown():
        module.operation.verify()
    if lower and plans:
        pctx = PassContext(source=SourceFile(text="", name=filename, base_dir=os.getcwd()), remark=lambda diag: None)
        run_pipeline(
            [
                "zero-fill-outputs",
                "verify-autotuning-groups",
                "emit-autotune-initializer",
                "lower-autotuning-dispatch",
                "split-architectures",
            ],
            pctx,
            module,
            target=target or "sm_80",
        )
    return print_module(module, filename)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m autotune_export.interop.jax_triton convert IN.mlir [-o OUT] [--target sm_80] ...``"""

    ap = argparse.ArgumentParser(prog="python -m autotune_export.interop.jax_triton", description="jax-triton bridge")
    sub = ap.add_subparsers(dest="command", required=True)
    conv = sub.add_parser("convert", help="jax.export StableHLO with jax-triton calls -> IREE input")
    conv.add_argument("input", help="StableHLO text or MLIR bytecode ('-' for stdin)")
    conv.add_argument("-o", "--output", default="-")
    conv.add_argument("--target", default=None, help="GPU the result runs on (e.g. sm_80): prunes configs over its shared memory")
    conv.add_argument("--no-lower", action="store_true", help="keep the groups in the sugared form (autotune-export's input)")
    conv.add_argument("--object-format", choices=("ptx", "cubin"), default="ptx")
    conv.add_argument(
        "--ptx-version",
        type=ptx_mod.parse_ptx_version,
        default=None,
        metavar="VERSION",
        help="rewrite the linked PTX's .version: 86 or 8.6 (default: keep jax-triton's)",
    )
    args = ap.parse_args(argv)
    data = sys.stdin.buffer.read() if args.input == "-" else open(args.input, "rb").read()
    if not data.startswith(b"ML\xefR"):
        data = data.decode()
    try:
        out = convert_stablehlo(
            data,
            target=args.target,
            lower=not args.no_lower,
            object_format=args.object_format,
            ptx_version=args.ptx_version,
            filename="<stdin>" if args.input == "-" else args.input,
        )
    except (JaxTritonError, DiagnosticError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(out)
    else:
        with open(args.output, "w") as f:
            f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
