"""Triton's launch semantics, in one place: which configs a launch of a Triton kernel compiles,
with which constexpr values and options, as Triton 3.6-3.9's ``Autotuner``/``Heuristics``/
``JITFunction`` work them out (``triton/runtime/autotuner.py``, ``triton/runtime/jit.py``).

Every front end asks this module; none works it out itself:

* the CLI's Triton form (materialize-triton-variants): the op's ``configs([...])`` or the
  kernel's ``triton.autotune`` configs, pruned per dispatch and tuning workload;
* jax-triton's ``triton_call`` (:mod:`autotune_export.interop.jax_triton`, convention
  :data:`JAX_TRITON`) and a PyTorch-style launch ``kernel[grid](...)``
  (:mod:`autotune_export.interop.launch`, convention :data:`TRITON`).

The model, outermost first (the order Triton runs the wrappers at a launch)::

    KernelModel(layers = (Autotune | Heuristics, ...), arg_names, constexpr_names, defaults)
      + the launch's arguments by name (stand-ins where a value is not known when exporting)
      + the launch's keyword arguments (constexprs, num_warps, ...)
      -> launch_variants(...) -> LaunchPlan(variants = (LaunchVariant, ...), pruning)

Calling conventions (:class:`Convention`), where Triton and jax-triton differ:

* a keyword argument that a ``triton.autotune`` config also sets: Triton raises
  (``Autotuner._bench``: ``ValueError: Conflicting meta-parameters: X``; with one config, the
  final ``fn.run(**kwargs, **config.all_kwargs())`` raises ``TypeError``: got multiple values);
  jax-triton drops the configs that disagree with it;
* ``early_config_prune(configs, named_args, **kwargs)``: Triton passes the launch's keyword
  arguments, jax-triton none;
* ``triton.heuristics`` run in the wrapper order (Triton: a heuristics wrapper inside the
  autotuner sees the config and overrides a value the config gives, one outside it gives a
  keyword argument to the autotuner); jax-triton applies every heuristic per config, after it.

This module imports neither ``iree.compiler`` nor ``triton`` at import time (pruning answers
for a target through :mod:`autotune_export.cuda.stub_driver`, imported when it runs).

Stand-ins. At export time the launch's arguments are partly known: :class:`TensorArgument`
stands for a tensor (its dtype from the signature or the tensor given, its shape and strides
when the caller knows them), :class:`UnknownScalar` for a scalar whose value is not known.
What a stand-in does not know raises :class:`LaunchModelError` naming it (``x_ptr.shape``,
``n``), even where the user's function catches ``Exception``.
"""

from __future__ import annotations

import contextlib
import copy
import enum
import importlib.util
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

__all__ = [
    "Autotune",
    "Config",
    "Convention",
    "Heuristics",
    "JAX_TRITON",
    "KernelModel",
    "LaunchModelError",
    "LaunchPlan",
    "LaunchVariant",
    "PruneError",
    "PruneOutcome",
    "Pruned",
    "SitePruning",
    "StorageSpan",
    "TRITON",
    "TensorArgument",
    "UnknownScalar",
    "function_name",
    "kernel_model",
    "launch_variants",
    "prune_configs",
    "prune_per_site",
    "resolve_constexprs",
    "dense_strides",
    "storage_span",
]


class LaunchModelError(Exception):
    """The launch cannot be modelled (one-line message): a user function (heuristic, pruner,
    grid) raised or read what is not known when exporting (``unknown`` is then its name,
    ``"n"`` or ``"x_ptr.shape"``), a keyword argument conflicts with an autotuner's config, a
    constexpr has no value, or ``top_k`` is neither a float <= 1.0 nor an int."""

    def __init__(self, message: str, unknown: str | None = None, stage: str | None = None):
        super().__init__(message)
        self.unknown = unknown
        #: ``"prune"`` when ``prune_configs_by`` failed (else None).
        self.stage = stage


#: The name pruning's errors went by (kept for callers and tests that catch it).
PruneError = LaunchModelError


class _Unknown(BaseException):
    """Raised by the stand-ins; a BaseException so that ``except Exception`` in a user's
    function does not hide it. Becomes a LaunchModelError where the function is called."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


# --------------------------------------------------------------------------------------------
# Calling conventions


class Convention(enum.Enum):
    """Whose launch is modelled (module doc): ``TRITON`` (``kernel[grid](...)``, the CLI),
    ``JAX_TRITON`` (``jax_triton.triton_call``, 0.3.x)."""

    TRITON = "triton"
    JAX_TRITON = "jax-triton"


TRITON = Convention.TRITON
JAX_TRITON = Convention.JAX_TRITON


# --------------------------------------------------------------------------------------------
# Configs


@dataclass(frozen=True)
class Config:
    """One ``triton.Config``: ``kwargs`` the constexpr values it sets (name, value), in its
    order, values as Triton holds them (``tl.constexpr`` and ``tl.dtype`` objects kept), then
    the launch options with ``triton.Config``'s defaults (4 warps, 3 stages, 1 CTA, no
    register limit). ``pre_hook``: the config's own hook, or None."""

    kwargs: tuple[tuple[str, Any], ...] = ()
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: int | None = None
    pre_hook: Any = field(default=None, compare=False)

    #: The launch options a config carries, besides its constexprs (Triton's ``Config``).
    OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")

    @classmethod
    def of(cls, c: Any) -> "Config":
        """A ``triton.Config`` (or look-alike: ``.kwargs`` and the option attributes), or a dict
        ``{"kwargs": {...}, "num_warps": ...}`` as ``LoadedKernel.default_configs`` holds it;
        a missing or None option takes Triton's default (``maxnreg``: None)."""
        if isinstance(c, Config):
            return c
        get = c.get if isinstance(c, Mapping) else (lambda k, d=None: getattr(c, k, d))
        opts = {k: get(k) for k in cls.OPTIONS}
        defaults = cls()
        return cls(
            tuple(dict(get("kwargs") or {}).items()),
            *(getattr(defaults, k) if opts[k] is None and k != "maxnreg" else opts[k] for k in cls.OPTIONS),
            pre_hook=get("pre_hook"),
        )

    def options(self) -> dict[str, Any]:
        """``{num_warps, num_stages, num_ctas, maxnreg}``."""
        return {k: getattr(self, k) for k in self.OPTIONS}

    def all_kwargs(self) -> dict[str, Any]:
        """As ``triton.Config.all_kwargs()``: the constexprs, then the options that are not None."""
        return {**dict(self.kwargs), **{k: v for k, v in self.options().items() if v is not None}}


@dataclass(frozen=True)
class Autotune:
    """A ``triton.autotune`` layer: its ``configs``, the ``triton.Config`` objects themselves
    (``triton_configs``, what pruning functions are given), ``early_config_prune``,
    ``perf_model`` and ``top_k`` of its ``prune_configs_by``."""

    configs: tuple[Config, ...]
    triton_configs: tuple = ()
    early_config_prune: Callable | None = None
    perf_model: Callable | None = None
    top_k: Any = 1.0

    @property
    def prunes(self) -> bool:
        return self.early_config_prune is not None or self.perf_model is not None


@dataclass(frozen=True)
class Heuristics:
    """A ``triton.heuristics`` layer: (name, ``f(args) -> value``) in Triton's order."""

    values: tuple[tuple[str, Callable], ...]


@dataclass(frozen=True)
class KernelModel:
    """What a launch needs of a kernel: ``name``, the ``def``'s ``arg_names`` in order, which
    are ``constexpr_names``, the ``def``'s ``defaults`` (name, value), and the wrappers around
    the JIT function, outermost first (``layers``)."""

    name: str
    arg_names: tuple[str, ...]
    constexpr_names: tuple[str, ...]
    defaults: tuple[tuple[str, Any], ...] = ()
    layers: tuple = ()

    @property
    def runtime_names(self) -> list[str]:
        return [n for n in self.arg_names if n not in self.constexpr_names]

    @property
    def autotune(self) -> Autotune | None:
        """The outermost ``triton.autotune`` (an inner one is not modelled)."""
        return next((layer for layer in self.layers if isinstance(layer, Autotune)), None)

    def heuristics(self, *, inside: bool | None = None) -> list[tuple[str, Callable]]:
        """The heuristics in Triton's order; ``inside``: only those inside (True) / outside
        (False) the outermost autotuner."""
        out, seen_tuner = [], False
        for layer in self.layers:
            if isinstance(layer, Autotune):
                seen_tuner = True
            elif isinstance(layer, Heuristics) and (inside is None or inside == seen_tuner):
                out.extend(layer.values)
        return out

    @classmethod
    def from_loaded(cls, kernel: Any) -> "KernelModel":
        """From :class:`autotune_export.cuda.triton_compile.LoadedKernel` (its ``wrappers``)."""
        layers = []
        for w in kernel.wrappers:
            if hasattr(w, "triton_configs") and hasattr(w, "prune_configs_by"):
                prune = dict(w.prune_configs_by)
                layers.append(
                    Autotune(
                        tuple(Config.of(c) for c in w.configs),
                        tuple(w.triton_configs),
                        prune.get("early_config_prune"),
                        prune.get("perf_model"),
                        prune.get("top_k", 1.0),
                    )
                )
            elif hasattr(w, "values") and isinstance(w.values, dict):
                layers.append(Heuristics(tuple(w.values.items())))
        return cls(
            kernel.fn.fn.__name__,
            tuple(kernel.arg_names),
            tuple(kernel.constexpr_names),
            tuple(kernel.constexpr_defaults.items()),
            tuple(layers),
        )


def kernel_model(kernel: Any) -> tuple[KernelModel, Any]:
    """``(model, JIT function)`` of a live kernel object: a ``@triton.jit`` function, possibly
    wrapped in ``triton.autotune`` / ``triton.heuristics`` or a library's own launcher keeping
    the kernel in ``.fn`` (duck typed: no triton import). Raises LaunchModelError when the
    chain does not end at a JIT function (``.params`` and a callable ``.fn``)."""
    import inspect

    layers: list = []
    obj = kernel
    for _ in range(16):
        if hasattr(obj, "configs") and hasattr(obj, "fn") and not hasattr(obj, "params"):
            layers.append(
                Autotune(
                    tuple(Config.of(c) for c in obj.configs),
                    tuple(obj.configs),
                    getattr(obj, "early_config_prune", None),
                    getattr(obj, "perf_model", None),
                    getattr(obj, "configs_top_k", 1.0),
                )
            )
            obj = obj.fn
        elif isinstance(getattr(obj, "values", None), dict) and hasattr(obj, "fn") and not hasattr(obj, "params"):
            layers.append(Heuristics(tuple(obj.values.items())))
            obj = obj.fn
        elif hasattr(obj, "fn") and not hasattr(obj, "params") and not inspect.isfunction(obj):
            obj = obj.fn
        else:
            break
    params = getattr(obj, "params", None)
    if params is None or not callable(getattr(obj, "fn", None)):
        raise LaunchModelError(f"`kernel` must be a Triton JITFunction, Heuristics or Autotuner, got {type(kernel).__name__}")
    names = tuple(p.name for p in params)
    constexprs = tuple(p.name for p in params if p.is_constexpr)
    defaults = tuple((p.name, p.default) for p in params if getattr(p, "has_default", False))
    return KernelModel(obj.fn.__name__, names, constexprs, defaults, tuple(layers)), obj


# --------------------------------------------------------------------------------------------
# Stand-ins for what is not known when exporting


def _dtype_tables():
    from autotune_export.cuda.triton_compile import ELEMENT_SIZE, TORCH_DTYPE, TRITON_DTYPE

    return TORCH_DTYPE, TRITON_DTYPE, ELEMENT_SIZE


class TensorArgument:
    """A tensor argument ``name`` (Triton type ``type``, ``*fp16``) as a heuristic, pruner or
    grid callable sees it when exporting: what a ``torch.Tensor`` answers, where it is known.

    * ``is not None`` holds;
    * ``.dtype``: ``dtype`` when given (the caller's tensor's own dtype object), else the
      ``torch`` dtype of the signature's type (what a PyTorch launch passes, so
      ``x.dtype == torch.float32`` and ``x.dtype in (torch.float16, torch.bfloat16)`` hold as
      at the launch), else, without torch or for a dtype torch lacks, the
      ``triton.language`` dtype;
    * ``.element_size()`` (bytes per element), from the signature;
    * with ``shape`` given (a tuple of ints): ``.shape``, ``.size(d)``, ``.numel()``/``.nelement()``,
      ``.dim()``/``.ndimension()``, ``.ndim``, ``len()``, ``.nbytes``; ``.itemsize`` as
      ``.element_size()``; with ``strides`` given (elements): ``.stride()``, ``.stride(d)``,
      ``.is_contiguous()``;
    * anything else (``.data_ptr()``, ``.device``, an unknown shape) raises the located
      :class:`LaunchModelError` naming it (``x_ptr.shape``), even through ``except Exception``.
    """

    def __init__(
        self, name: str, type: str, shape: Sequence[int] | None = None, strides: Sequence[int] | None = None, dtype: Any = None
    ):
        self._name, self._type = name, type
        self._pointee = type[1:] if type.startswith("*") else type
        self._shape = None if shape is None else tuple(int(d) for d in shape)
        self._strides = None if strides is None else tuple(int(s) for s in strides)
        self._dtype = dtype

    @classmethod
    def dense(cls, name: str, type: str, shape: Sequence[int], dtype: Any = None) -> "TensorArgument":
        """A tensor of ``shape`` stored densely in row-major order (an IREE buffer, a
        contiguous torch tensor): its strides in elements, ``(N*K, K, 1)`` for ``(M, N, K)``."""
        shape = tuple(int(d) for d in shape)
        strides, step = [], 1
        for d in reversed(shape):
            strides.insert(0, step)
            step *= max(d, 1)
        return cls(name, type, shape, tuple(strides), dtype)

    def _unknown(self, what: str):
        raise _Unknown(f"{self._name}.{what}")

    @property
    def dtype(self):
        if self._dtype is not None:
            return self._dtype
        torch_names, triton_names, _ = _dtype_tables()
        torch_name = torch_names.get(self._pointee)
        if torch_name is not None and importlib.util.find_spec("torch") is not None:
            import torch

            return getattr(torch, torch_name)
        import triton.language as tl

        return getattr(tl, triton_names[self._pointee])

    def element_size(self) -> int:
        return _dtype_tables()[2][self._pointee]

    @property
    def shape(self) -> tuple[int, ...]:
        if self._shape is None:
            self._unknown("shape")
        return self._shape

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        if self._shape is None:
            self._unknown("numel")
        return math.prod(self._shape)

    def dim(self) -> int:
        return len(self.shape)

    ndimension = dim

    def nelement(self) -> int:
        return self.numel()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")  # torch's message
        return self.shape[0]

    @property
    def itemsize(self) -> int:
        return self.element_size()

    @property
    def nbytes(self) -> int:
        return self.numel() * self.element_size()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def stride(self, dim: int | None = None):
        if self._strides is None:
            self._unknown("stride")
        return self._strides if dim is None else self._strides[dim]

    def is_contiguous(self) -> bool:
        shape, strides = self.shape, self.stride()
        expect = 1
        for d, s in zip(reversed(shape), reversed(strides)):
            if d != 1 and s != expect:
                return False
            expect *= d
        return True

    def __getattr__(self, attr: str):
        if attr.startswith("__") or attr.startswith("_"):
            raise AttributeError(attr)
        self._unknown(attr)

    def __repr__(self) -> str:
        shape = "" if self._shape is None else f", shape {self._shape}"
        return f"<tensor {self._name}: {self._type}{shape}>"


# --------------------------------------------------------------------------------------------
# What a launch's tensor argument addresses


@dataclass(frozen=True)
class StorageSpan:
    """The memory a tensor argument of a launch can reach, and the dense tensor that holds it.

    Triton's launcher passes a tensor as its data pointer, ``data_ptr()``, the address of the
    view's first element (its storage offset included; ``triton/backends/nvidia/driver.py``),
    and nothing else: the kernel reaches element ``(i_0, ..., i_r)`` at ``data_ptr + sum(i_d *
    stride_d)`` with the strides the launch passes as separate integer arguments. So what a
    kernel can address is the *span* of the view: the elements from its first one to its last
    one, in the storage's order. ``view_shape``/``strides``: the view as the launch gave it
    (elements). ``shape``: the dense row-major tensor of that span, the module's argument
    (the host passes the storage's elements in this shape). ``kind``:

    * ``"dense"``: row-major contiguous (size-1 dimensions' strides do not matter, as in
      ``torch.Tensor.is_contiguous``), or zero elements: ``shape`` is ``view_shape``;
    * ``"permuted"``: a permutation of a dense block (``b.t()``, a column-major
      ``torch.empty(n, m).t()``, channels-last): ``shape`` is the view's dimensions of size
      > 1 in the storage's order (strides decreasing), the storage's own shape: for ``b.t()``
      of a row-major ``(N, K)`` ``b``, ``(N, K)``; ``order`` the view's dimensions in that order;
    * ``"broadcast"``: dimensions of stride 0 (``bias.expand(M, N)``, strides ``(0, 1)``): the
      kernel reads the same elements for every index of such a dimension, so they are not part
      of the span; ``shape`` is that of the remaining dimensions, dense or permuted as above
      (``(N,)``); ``overlaps`` is True;
    * ``"gapped"``: non-overlapping but with elements between those of the view (``x[:, :64]``
      of a ``(M, 128)`` ``x``, ``x[::2]``): ``shape`` is the 1-D span, ``(span,)``, ``span = 1 +
      sum((size_d - 1) * stride_d)`` elements from the first one;
    * ``"overlapping"``: two indices reach the same element through non-zero strides
      (``as_strided``): ``shape`` is ``(span,)``; ``overlaps`` is True.

    ``span``: the number of elements of ``shape``. Only the view's shape and strides decide;
    see :func:`storage_span`."""

    view_shape: tuple[int, ...]
    strides: tuple[int, ...]
    shape: tuple[int, ...]
    kind: str
    order: tuple[int, ...] = ()

    @property
    def span(self) -> int:
        return math.prod(self.shape)

    @property
    def overlaps(self) -> bool:
        """Two indices of the view reach the same element (a stride-0 broadcast, or an
        overlapping ``as_strided`` view): what the kernel writes there is a race."""
        return self.kind in ("broadcast", "overlapping")

    @property
    def strided(self) -> bool:
        """The module's argument is not a dense tensor of the view's shape."""
        return self.kind != "dense"

    def describe(self) -> str:
        """One line for diagnostics and the module's header: ``(256, 512) view, strides (1, 256)``."""
        return f"{self.view_shape} view, strides {self.strides}"


def dense_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a dense row-major tensor of ``shape`` (``torch.empty(shape).stride()``)."""
    out, step = [], 1
    for d in reversed(tuple(shape)):
        out.append(step)
        step *= max(int(d), 1)
    return tuple(reversed(out))


def storage_span(shape: Sequence[int], strides: Sequence[int]) -> StorageSpan:
    """The :class:`StorageSpan` of a view of ``shape`` with element ``strides`` (as
    ``torch.Tensor.stride()`` gives them). Raises ValueError for a rank mismatch or a negative
    stride (a numpy view such as ``x[::-1]``: Triton's launcher takes no such tensor, torch has
    none)."""
    shape, strides = tuple(int(d) for d in shape), tuple(int(s) for s in strides)
    if len(shape) != len(strides):
        raise ValueError(f"shape {shape} and strides {strides} differ in rank")
    if any(s < 0 for d, s in zip(shape, strides) if d > 1):
        raise ValueError(f"negative stride in {strides}: the view runs backwards through its storage")
    if (
        0 in shape
        or strides == dense_strides(shape)
        or all(d == 1 or s == e for d, s, e in zip(shape, strides, dense_strides(shape)))
    ):
        return StorageSpan(shape, strides, shape, "dense", tuple(range(len(shape))))
    dims = [d for d in range(len(shape)) if shape[d] > 1]
    live = [d for d in dims if strides[d] != 0]
    broadcast = len(live) < len(dims)
    # The view's dimensions in the storage's order: strides decreasing (a stable sort: equal
    # strides, which only an overlapping view has, keep the view's order).
    order = sorted(live, key=lambda d: -strides[d])
    sizes = [shape[d] for d in order]
    expect, dense = 1, True
    for d in reversed(order):
        if strides[d] != expect:
            dense = False
            break
        expect *= shape[d]
    if dense:  # (every dimension broadcast: the one element, shape (1,))
        return StorageSpan(shape, strides, tuple(sizes) or (1,), "broadcast" if broadcast else "permuted", tuple(order))
    span = 1 + sum((shape[d] - 1) * strides[d] for d in live)
    # Disjoint when each stride clears the extent of the dimensions below it (the usual test,
    # torch's too: a view it cannot prove disjoint counts as overlapping).
    overlapping = any(strides[a] < strides[b] * shape[b] for a, b in zip(order, order[1:]))
    kind = "broadcast" if broadcast else ("overlapping" if overlapping else "gapped")
    return StorageSpan(shape, strides, (span,), kind, tuple(order))


def _unknown(self, *args, **kwargs):
    raise _Unknown(object.__getattribute__(self, "_name"))


class UnknownScalar:
    """A scalar argument ``name`` whose value is not known when exporting: every use of the
    value (arithmetic, comparison, ``int()``, truth, formatting) raises the LaunchModelError
    of the function that used it, naming it. ``is None`` is False, as for the value a launch
    passes."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __repr__(self) -> str:
        return f"<scalar {self._name}, not known when exporting>"

    def __hash__(self) -> int:
        return hash(("UnknownScalar", self._name))


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or", "xor", "divmod", "matmul"):
    setattr(UnknownScalar, f"__{_op}__", _unknown)
    setattr(UnknownScalar, f"__r{_op}__", _unknown)
for _op in (
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "bool",
    "int",
    "float",
    "index",
    "neg",
    "pos",
    "abs",
    "invert",
    "round",
    "trunc",
    "floor",
    "ceil",
    "complex",
    "format",
    "str",
    "getattr",
    "getitem",
    "iter",
    "len",
    "call",
    "contains",
):
    setattr(UnknownScalar, f"__{_op}__", _unknown)
del _op


# --------------------------------------------------------------------------------------------
# Calling the user's functions


def function_name(fn: Callable) -> str:
    """How a message names a user function: its qualified name without the enclosing
    functions (``prune_small_blocks``, ``Tuner.prune``, ``<lambda>``)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return str(name).rsplit("<locals>.", 1)[-1]


def call_user(what: str, fn: Callable, /, *args, **kwargs):
    """``fn(*args, **kwargs)``; what it raises becomes a LaunchModelError naming ``what``
    (``"early_config_prune"``, ``"triton.heuristics for 'EVEN'"``) and the function: a read of
    what is not known (``unknown`` set), or another exception (its type and first line)."""
    try:
        return fn(*args, **kwargs)
    except _Unknown as u:
        raise LaunchModelError(
            f"{what} '{function_name(fn)}' reads argument '{u.name}', which is not known when exporting", unknown=u.name
        ) from None
    except LaunchModelError:
        raise
    except Exception as e:
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        raise LaunchModelError(f"{what} '{function_name(fn)}' raised {type(e).__name__}: {first}") from e


# --------------------------------------------------------------------------------------------
# prune_configs_by


@dataclass(frozen=True)
class Pruned:
    """A config that did not survive: ``index`` among the given configs, ``by``
    (``"early_config_prune"`` or ``"perf_model"``), ``reason`` (one line, naming the function)."""

    index: int
    by: str
    reason: str


@dataclass
class PruneOutcome:
    """``kept``: the configs left, in Triton's order (the perf model's lowest estimate first
    when it pruned); ``kept_indices``: for each, its index among the given configs, or None for
    a config the early pruner made itself; ``pruned``: the configs dropped, in the given order;
    ``estimates``: the perf model's estimate per given index (when it ran)."""

    kept: list
    kept_indices: list
    pruned: list[Pruned] = field(default_factory=list)
    estimates: dict[int, Any] = field(default_factory=dict)


def _keywords(what: str, fn: Callable, *parts: Mapping[str, Any]) -> dict[str, Any]:
    """``parts`` merged as ``f(**a, **b, **c)`` passes them; a name in two of them is the
    TypeError Triton's call would raise, as a LaunchModelError."""
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key in out:
                raise LaunchModelError(
                    f"{what} '{function_name(fn)}' would get argument '{key}' twice (from the kernel's "
                    "arguments, the launch's keyword arguments and the config: Triton's TypeError)"
                )
            out[key] = value
    return out


def prune_configs(
    configs: Sequence,
    named_args: Mapping[str, Any],
    kwargs: Mapping[str, Any] | None = None,
    *,
    early_config_prune: Callable | None = None,
    perf_model: Callable | None = None,
    top_k: Any = 1.0,
    early_kwargs: Mapping[str, Any] | None = None,
    capability: int | None = None,
) -> PruneOutcome:
    """Apply ``prune_configs_by`` to ``configs`` (``triton.Config`` objects or look-alikes with
    ``kwargs`` and ``all_kwargs()``), as Triton 3.9's ``Autotuner.prune_configs`` does:

    1. ``early_config_prune(configs, named_args, **kwargs)`` returns the configs to keep; it
       must keep at least one (Triton raises ``AutotunerError``);
    2. with a ``perf_model``: ``top_k`` is a fraction of the configs left when it is a float
       ``<= 1.0`` (``max(1, int(len(configs) * top_k))``), a count when an int, and any other
       value is Triton's ``TypeError``. When more configs are left than ``top_k``, each is
       estimated with ``perf_model(**named_args, **kwargs, **config.all_kwargs())`` and the
       ``top_k`` lowest estimates are kept, lowest first (ties in the given order).

    ``named_args``: the kernel's arguments by name (stand-ins allowed); ``kwargs``: the
    launch's keyword arguments, given to both functions unless ``early_kwargs`` says what the
    early pruner gets (jax-triton calls it with none). ``capability`` (90 for sm_90): run the
    functions with Triton's driver and torch answering for it
    (:func:`autotune_export.cuda.stub_driver.answering_for`; None: as the process is).

    The early pruner gets shallow copies of the configs (their ``kwargs`` dicts copied), so one
    that changes a config in place (``config.num_stages = 2``) changes what is exported, not the
    kernel module's own configs. Raises :class:`LaunchModelError`."""
    kwargs = dict(kwargs or {})
    early_kwargs = kwargs if early_kwargs is None else dict(early_kwargs)
    given = []
    for c in configs:
        c2 = copy.copy(c)
        if isinstance(getattr(c2, "kwargs", None), dict):
            c2.kwargs = dict(c2.kwargs)
        given.append(c2)
    index_of = {id(c): i for i, c in enumerate(given)}
    if capability is not None:
        from autotune_export.cuda import stub_driver

        answering = stub_driver.answering_for(capability)
    else:
        answering = contextlib.nullcontext()
    with answering:
        current = list(given)
        pruned: list[Pruned] = []
        if early_config_prune is not None:
            name = function_name(early_config_prune)
            result = call_user("early_config_prune", early_config_prune, list(given), named_args, **early_kwargs)
            try:
                current = list(result)
            except TypeError:
                raise LaunchModelError(
                    f"early_config_prune '{name}' returned {type(result).__name__}, not a list of configs"
                ) from None
            if not current:
                raise LaunchModelError(
                    f"early_config_prune '{name}' kept no config: Triton requires at least one "
                    "(AutotunerError: No valid autotuner configs after pruning)"
                )
            kept_ids = {id(c) for c in current}
            pruned += [
                Pruned(i, "early_config_prune", f"early_config_prune '{name}' did not keep it")
                for i, c in enumerate(given)
                if id(c) not in kept_ids
            ]
        estimates: dict[int, Any] = {}
        if perf_model is not None:
            k = top_k
            if isinstance(k, float) and k <= 1.0:
                k = max(1, int(len(current) * k))
            elif not isinstance(k, int):
                raise LaunchModelError(
                    f"prune_configs_by top_k = {top_k!r}: Triton requires a float <= 1.0 or an int (TypeError)"
                )
            if k < 1:
                raise LaunchModelError(f"prune_configs_by top_k = {top_k!r} keeps no config: Triton would have none to run")
            if len(current) > k:
                name = function_name(perf_model)
                est = [
                    call_user("perf_model", perf_model, **_keywords("perf_model", perf_model, named_args, kwargs, c.all_kwargs()))
                    for c in current
                ]
                try:
                    order = sorted(range(len(current)), key=lambda j: est[j])
                except TypeError as e:
                    raise LaunchModelError(f"perf_model '{name}' returned values that do not compare: {e}") from None
                for j, e in enumerate(est):
                    if id(current[j]) in index_of:
                        estimates[index_of[id(current[j])]] = e
                cut = est[order[k - 1]]
                for j in order[k:]:
                    i = index_of.get(id(current[j]))
                    if i is not None:
                        pruned.append(
                            Pruned(
                                i,
                                "perf_model",
                                f"perf_model '{name}' estimates {est[j]!r}; top_k = "
                                f"{top_k!r} keeps the {k} lowest (up to {cut!r})",
                            )
                        )
                current = [current[j] for j in order[:k]]
    pruned.sort(key=lambda p: p.index)
    return PruneOutcome(kept=current, kept_indices=[index_of.get(id(c)) for c in current], pruned=pruned, estimates=estimates)


@dataclass(frozen=True)
class SitePruning:
    """Pruning of one config list for several launches of the same compiled variants (the
    dispatches of one group, each on each tuning workload: the *sites*), which share one
    choice: ``outcomes`` per site (:class:`PruneOutcome`, same order as the sites given);
    ``kept``: the configs kept at EVERY site, in the first site's order (so a config pruned
    for one site is never selected for it); ``kept_keys``: their identity (see
    :func:`prune_per_site`)."""

    outcomes: tuple
    kept: tuple
    kept_indices: tuple


def _config_key(c: Any) -> tuple:
    conf = Config.of(c)
    return (tuple((k, repr(v)) for k, v in conf.kwargs), tuple(conf.options().items()))


def prune_per_site(
    configs: Sequence,
    sites: Sequence[Mapping[str, Any]],
    kwargs: Mapping[str, Any] | None = None,
    *,
    autotune: Autotune,
    early_kwargs: Mapping[str, Any] | None = None,
    capability: int | None = None,
) -> SitePruning:
    """:func:`prune_configs` of ``configs`` once per site (``sites``: the named arguments of each
    launch the variants serve), and the configs every site keeps: a config the pruner made or
    changed counts as the same at two sites when its constexprs and options are equal.
    Raises LaunchModelError (that of the first site whose pruning fails) and when no config is
    kept at every site."""
    outcomes = [
        prune_configs(
            configs,
            named,
            kwargs,
            early_config_prune=autotune.early_config_prune,
            perf_model=autotune.perf_model,
            top_k=autotune.top_k,
            early_kwargs=early_kwargs,
            capability=capability,
        )
        for named in sites
    ]
    keys = [{_config_key(c) for c in o.kept} for o in outcomes]
    kept, indices = [], []
    for c, i in zip(outcomes[0].kept, outcomes[0].kept_indices):
        if all(_config_key(c) in k for k in keys[1:]):
            kept.append(c)
            indices.append(i)
    if not kept:
        raise LaunchModelError(
            "no config is kept for every launch: "
            + "; ".join(
                f"launch {s} keeps configs {', '.join('new' if i is None else str(i) for i in o.kept_indices)}"
                for s, o in enumerate(outcomes)
            )
        )
    return SitePruning(tuple(outcomes), tuple(kept), tuple(indices))


# --------------------------------------------------------------------------------------------
# Launch variants


@dataclass(frozen=True)
class LaunchVariant:
    """One variant a launch compiles: ``config`` (the autotuner's config as tuned, or the
    launch's own options for a kernel without ``triton.autotune``), ``index`` its position among
    the configs given (None: made by a pruner, or no autotuner), ``constexprs`` every
    constexpr parameter of the ``def`` with its value (name, value; heuristics, the launch's
    keyword arguments and the ``def``'s defaults applied; a constexpr named like an option takes
    the option's value), in ``def`` order. Values are as Triton holds them."""

    config: Config
    index: int | None
    constexprs: tuple[tuple[str, Any], ...]

    @property
    def num_warps(self) -> int:
        return self.config.num_warps

    @property
    def num_stages(self) -> int:
        return self.config.num_stages


@dataclass(frozen=True)
class LaunchPlan:
    """The variants of a launch, in Triton's order, and how pruning went (None: not pruned)."""

    variants: tuple[LaunchVariant, ...]
    pruning: SitePruning | None = None


def _check_conflicts(model: KernelModel, kwargs: Mapping[str, Any], configs: Sequence[Config]) -> None:
    """Triton's Autotuner with keyword arguments that its configs also give (module doc)."""
    options = [k for k in Config.OPTIONS if k in kwargs]
    if options:
        raise LaunchModelError(
            f"{options[0]} = {kwargs[options[0]]!r} is given to the triton.autotune kernel '{model.name}', whose configs "
            f"set it (Triton's Autotuner passes each config's {options[0]}: TypeError, got multiple values for keyword "
            f"argument '{options[0]}'); leave it out, or launch the kernel without triton.autotune"
        )
    conflicts = sorted({k for c in configs for k, _ in c.kwargs if k in kwargs})
    if conflicts:
        raise LaunchModelError(
            f"Conflicting meta-parameters: {', '.join(conflicts)}: given to the triton.autotune kernel '{model.name}' "
            "whose configs set them (Triton's Autotuner raises ValueError: make sure that you don't re-define auto-tuned "
            "symbols)"
        )


def resolve_constexprs(
    model: KernelModel, values: Mapping[str, Any], config: Config, what: str = "the launch"
) -> tuple[tuple[str, Any], ...]:
    """Every constexpr of ``model`` with its value, in ``def`` order: ``values`` (keyword
    arguments, config, heuristics), a constexpr named like a launch option the option's value
    (Triton binds the launch's ``num_warps`` to both), else the ``def``'s default. Raises
    LaunchModelError naming the first constexpr without a value (``what`` says whose)."""
    defaults = dict(model.defaults)
    options = config.options()
    out = []
    for c in model.constexpr_names:
        if c in Config.OPTIONS:
            out.append((c, values.get(c, options[c])))
        elif c in values:
            out.append((c, values[c]))
        elif c in defaults:
            out.append((c, defaults[c]))
        else:
            raise LaunchModelError(
                f"{what} gives no value for constexpr parameter '{c}' of '{model.name}'", unknown=c, stage="constexpr"
            )
    return tuple(out)


def _apply(heuristics, named_args: Mapping[str, Any], values: dict, keep: frozenset = frozenset()) -> None:
    """Run ``heuristics`` in order, each on the arguments and the values so far (Triton's
    ``Heuristics.run``: ``kwargs[v] = heur({**named_args, **kwargs})``); a name in ``keep`` is
    not overridden. A failure's LaunchModelError has ``stage = "heuristic NAME"``."""
    for name, fn in heuristics:
        if name in keep:
            continue
        try:
            values[name] = call_user(f"triton.heuristics for '{name}'", fn, {**named_args, **values})
        except LaunchModelError as err:
            err.stage = f"heuristic {name}"
            raise


def launch_variants(
    model: KernelModel,
    named_args: Mapping[str, Any],
    kwargs: Mapping[str, Any] | None = None,
    *,
    convention: Convention = TRITON,
    configs: Sequence[Any] | None = None,
    sites: Sequence[Mapping[str, Any]] | None = None,
    capability: int | None = None,
    prune: bool = True,
    positional: Mapping[str, Any] | None = None,
    keywords: Sequence[str] = (),
) -> LaunchPlan:
    """The variants a launch of ``model`` compiles.

    ``named_args``: the launch's arguments by name, the runtime parameters and the constexprs
    given by position (what Triton's ``Autotuner`` calls ``nargs``): values, :class:`TensorArgument`,
    :class:`UnknownScalar` or None. ``kwargs``: the launch's keyword arguments (constexprs and
    ``num_warps``/``num_stages``/``num_ctas``/``maxnreg``). ``convention``: :data:`TRITON` or
    :data:`JAX_TRITON` (module doc). ``configs``: configs that replace the autotuner's (the CLI's
    ``configs([...])``: not pruned; a value such a config gives is not overridden by a
    heuristic, so a config may stand in for a heuristic export cannot evaluate), or None.
    ``sites``: the named arguments of every launch the variants serve (default: just
    ``named_args``); ``prune_configs_by`` runs for each and the variants are the configs every
    site keeps (:func:`prune_per_site`); like Triton, pruning runs only with more than one
    config. ``capability``: the target pruning answers for. ``prune=False`` skips pruning.
    ``positional``: constexprs the launch gave by position (they are among ``named_args`` too,
    as in Triton's ``nargs``): values of the variants and, like a keyword, an error when a
    config sets them (Triton's binder gets them twice), but not among the keyword arguments
    the pruners get. ``keywords``: non-constexpr arguments the launch gave by keyword (they are
    among ``named_args``): Triton's ``Autotuner.run`` hands ``prune_configs_by``'s functions the
    positional arguments as ``named_args`` and every keyword argument as ``**kwargs``, so the
    pruners get these among the keywords, not the named arguments (gemlite's
    ``load_scales_as_block=...``).

    Without an autotuner (and without ``configs``) there is one variant, its options from
    ``kwargs`` or ``triton.Config``'s defaults. Raises :class:`LaunchModelError`."""
    kwargs = dict(kwargs or {})
    tuner = model.autotune
    # A constexpr named like an option (``num_warps: tl.constexpr``) gets the option's value too.
    options = {k: kwargs[k] if k in model.constexpr_names else kwargs.pop(k) for k in Config.OPTIONS if k in kwargs}
    explicit = configs is not None
    if explicit:
        given = [Config.of(c) for c in configs]
        triton_configs = list(given)
    elif tuner is not None:
        given, triton_configs = list(tuner.configs), list(tuner.triton_configs or tuner.configs)
    else:
        given, triton_configs = None, None
    pre, post = model.heuristics(inside=False), model.heuristics(inside=True)
    if convention is JAX_TRITON:
        pre, post = [], model.heuristics()
    if given is None:
        values = {**dict(positional or {}), **kwargs}
        _apply(model.heuristics(), named_args, values)
        config = Config.of({"kwargs": {}, **options})
        return LaunchPlan((LaunchVariant(config, None, resolve_constexprs(model, values, config)),))
    outer = dict(kwargs)
    _apply(pre, named_args, outer)
    pruning = None
    indices: list[int | None] = list(range(len(given)))
    if convention is JAX_TRITON:
        keep = [j for j, c in enumerate(given) if all(dict(c.kwargs).get(k, v) == v for k, v in outer.items())]
        given, triton_configs, indices = [given[j] for j in keep], [triton_configs[j] for j in keep], keep
        if not given:
            raise LaunchModelError(
                f"no config of the triton.autotune kernel '{model.name}' is left after pruning: none "
                "agrees with the explicit metaparameters "
                f"({', '.join(f'{k} = {v!r}' for k, v in kwargs.items()) or 'none'})"
            )
    elif not explicit:
        _check_conflicts(model, {**dict(positional or {}), **outer, **options}, given)
    if prune and not explicit and tuner is not None and tuner.prunes and len(given) > 1:
        try:
            moved = [k for k in keywords if k in named_args]  # Triton: in the pruners' **kwargs, not in nargs
            prune_sites = [{k: v for k, v in site.items() if k not in moved} for site in (list(sites) if sites else [named_args])]
            pruning = prune_per_site(
                triton_configs,
                prune_sites,
                {**outer, **{k: named_args[k] for k in moved}},
                autotune=tuner,
                early_kwargs={} if convention is JAX_TRITON else None,
                capability=capability,
            )
        except LaunchModelError as err:
            err.stage = "prune"
            raise
        given = [Config.of(c) for c in pruning.kept]
        indices = [None if i is None else indices[i] for i in pruning.kept_indices]
    variants = []
    for c, index in zip(given, indices):
        if c.pre_hook is not None and convention is JAX_TRITON:
            raise LaunchModelError("`pre_hook` is not supported (jax-triton raises NotImplementedError too)")
        if c.pre_hook is not None:
            # Triton's Autotuner.run calls the chosen config's pre_hook(full_nargs) before the
            # launch itself (gemlite: init_to_zero("c_ptr") for its split-K configs), so what
            # the launch computes depends on what the hook did; a module cannot run it.
            raise LaunchModelError(
                f"config {index if index is not None else '(made by the pruner)'} {dict(c.kwargs)} of the triton.autotune "
                f"kernel '{model.name}' has a pre_hook ('{function_name(c.pre_hook)}'), which Triton runs before "
                "every launch with that config (e.g. zeroing an output that split-K partial sums are added to); "
                "autotune-export cannot run it, and without it the variant computes something else"
            )
        values = {**dict(positional or {}), **outer, **dict(c.kwargs)}
        _apply(post, named_args, values, frozenset(dict(c.kwargs)) if explicit else frozenset())
        what = f"config {index}" if index is not None else "a config the pruner made"
        variants.append(LaunchVariant(c, index, resolve_constexprs(model, values, c, what)))
    return LaunchPlan(tuple(variants), pruning)
