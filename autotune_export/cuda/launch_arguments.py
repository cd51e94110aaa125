"""Stand-ins for a launch's arguments at export time, for the launch model
(:mod:`autotune_export.cuda.launch_model`): :class:`TensorArgument` for a tensor (its dtype
from the signature, its shape and strides when known), :class:`UnknownScalar` for a scalar
whose value is not known; what they do not know raises, naming it. And what a tensor
argument addresses (:func:`storage_span`: dense, broadcast, gapped or overlapping views).
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from typing import Any, Sequence
from autotune_export.cuda.launch_errors import UnknownRead


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
        raise UnknownRead(f"{self._name}.{what}")

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
# Scalars a launch passes


def numpy_scalar_refusal(name: str, value: Any) -> str | None:
    """Why a launch ``kernel[grid](...)`` cannot pass ``value`` as argument ``name``, when
    ``value`` is a numpy scalar that Triton's launch refuses; None for anything else.

    Triton's JIT types each argument when it specializes the launch (``mangle_type`` /
    ``native_specialize_impl``, ``triton/runtime/jit.py``): a Python ``bool``/``int``/``float``
    is a scalar, a tensor is whatever has ``data_ptr()``, and a numpy scalar (``np.int64``,
    ``np.int32``, ``np.float32``, ``np.float16``, ``np.bool_``, ...) is neither, so the launch
    raises ``TypeError: failed to specialize argument of type: int64`` (Triton 3.9; 3.6 names
    it ``numpy.int64``), checked with both. ``np.float64`` is the exception: it is a subclass of
    Python's ``float``, so Triton types it fp32 like any float, and it is not refused here.
    The reason names the argument, Triton's error and the fix (``int(n)``, ``float(x)``,
    ``bool(b)``): what numpy code gets from ``np.prod(x.shape)`` or ``a.size * 2`` is such a
    scalar."""
    bases = {t.__name__ for t in type(value).__mro__ if t.__module__ == "numpy"}
    if "generic" not in bases or isinstance(value, (bool, int, float)):
        return None  # not a numpy scalar, or np.float64 (a float: fp32, as Triton types it)
    kind = type(value).__name__  # numpy's name: int64, float32, bool
    fix = "bool" if bases & {"bool", "bool_"} else "int" if "integer" in bases else "float" if "floating" in bases else None
    how = f"pass a Python scalar ({fix}({name}))" if fix else "pass a Python scalar or a tensor"
    return (
        f"argument '{name}' is a numpy scalar (numpy.{kind}), which Triton's launch refuses "
        f"(TypeError: failed to specialize argument of type: {kind}): {how}"
    )


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
    raise UnknownRead(object.__getattribute__(self, "_name"))


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
