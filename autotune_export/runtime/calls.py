"""Live calls' arguments and results: results copied to the host (:func:`to_host`), and the
keys that tell live workloads apart (:func:`argument_bucket`, a cheap hashable key; :func:`workload_key`
and :func:`values_key`, the tuning cache's text keys)."""

from __future__ import annotations

import weakref
from typing import Sequence

__all__ = [
    "as_list",
    "to_host",
    "argument_bucket",
    "values_key",
    "workload_key",
    "ML_DTYPES_ELEMENT_TYPES",
    "device_arguments",
    "ml_dtypes_array_to_device",
]


def as_list(result) -> list:
    return list(result) if isinstance(result, (list, tuple)) else [result]


#: numpy dtype names of ml_dtypes' types (what ``np.asarray`` of a jax or torch bf16/fp8 array
#: holds) -> the name of their ``iree.runtime.HalElementType``. iree.runtime 3.13 takes none of
#: them as numpy arguments ("can't convert np.ndarray of type ml_dtypes.bfloat16"), but returns
#: results of these types as ml_dtypes arrays.
ML_DTYPES_ELEMENT_TYPES = {
    "bfloat16": "BFLOAT_16",
    "float8_e4m3fn": "FLOAT_8_E4M3_FN",
    "float8_e4m3fnuz": "FLOAT_8_E4M3_FNUZ",
    "float8_e5m2": "FLOAT_8_E5M2",
    "float8_e5m2fnuz": "FLOAT_8_E5M2_FNUZ",
}


def ml_dtypes_array_to_device(rt, device, array):
    """A numpy array of an ml_dtypes type (``array.dtype.name`` a key of
    :data:`ML_DTYPES_ELEMENT_TYPES`, any shape) copied to ``device`` as an
    ``iree.runtime.DeviceArray`` whose buffer view has the IREE element type of that name
    (the bytes are copied as they are: bf16 as 2 bytes, fp8 as 1). Raises KeyError for other
    dtypes."""
    import numpy as np

    element_type = getattr(rt.HalElementType, ML_DTYPES_ELEMENT_TYPES[array.dtype.name])
    raw = np.ascontiguousarray(array).view(np.uint8 if array.dtype.itemsize == 1 else np.uint16)
    view = device.allocator.allocate_buffer_copy(
        memory_type=rt.MemoryType.DEVICE_LOCAL,
        allowed_usage=rt.BufferUsage.DEFAULT,
        device=device,
        buffer=raw,
        element_type=element_type,
    )
    return rt.DeviceArray(device, view, implicit_host_transfer=True)


def _is_ml_dtypes_host_array(a) -> bool:
    """Whether ``a`` is a host array of an ml_dtypes type (not yet on a device)."""
    return getattr(getattr(a, "dtype", None), "name", None) in ML_DTYPES_ELEMENT_TYPES and not hasattr(a, "_buffer_view")


def device_arguments(rt, device, args):
    """``args`` with every ml_dtypes numpy array (bf16, fp8) copied to ``device``
    (:func:`ml_dtypes_array_to_device`); the same tuple object when there is none (the common
    case costs one dtype look-up per argument)."""
    if not any(_is_ml_dtypes_host_array(a) for a in args):
        return args
    return tuple(ml_dtypes_array_to_device(rt, device, a) if _is_ml_dtypes_host_array(a) else a for a in args)


def to_host(result):
    if isinstance(result, (list, tuple)):
        return tuple(r.to_host() if hasattr(r, "to_host") else r for r in result)
    return result.to_host() if hasattr(result, "to_host") else result


#: id(DeviceArray) -> (weak reference, shape): iree.runtime's DeviceArray.shape asks the buffer
#: view each time (~4 us); a round-robin call must look its workload up in well under that.
_DEVICE_SHAPES: dict[int, tuple] = {}


def _shape_of(a) -> tuple:
    if not hasattr(a, "_buffer_view"):
        return tuple(a.shape)
    hit = _DEVICE_SHAPES.get(id(a))
    if hit is not None and hit[0]() is a:
        return hit[1]
    shape = tuple(a.shape)
    try:
        if len(_DEVICE_SHAPES) > 4096:
            _DEVICE_SHAPES.clear()
        _DEVICE_SHAPES[id(a)] = (weakref.ref(a), shape)
    except TypeError:  # not weakly referenceable: no caching
        pass
    return shape


def _arg_key(a):
    if hasattr(type(a), "dtype") and hasattr(type(a), "shape"):
        shape = _shape_of(a)
        if not shape and hasattr(a, "item") and not hasattr(a, "_buffer_view"):
            return a.item()  # a numpy scalar: its value, as a Python scalar's
        return shape, a.dtype
    return a


def argument_bucket(args):
    """A cheap hashable key of live arguments: shapes and dtypes of arrays, values of scalars
    (the same partition as :func:`workload_key`, which spells it as text for the cache)."""
    try:
        key = tuple(_arg_key(a) for a in args)
        hash(key)
        return key
    except TypeError:
        return workload_key(args)


def values_key(values: Sequence[int]) -> str:
    """The tuning-cache key of a live workload of a group with a per-workload table: its
    workload values as ``choices(...)`` spells them, e.g. ``"[4096, 4096, 4096]"``."""
    return "[" + ", ".join(str(v) for v in values) + "]"


def workload_key(args) -> str:
    """A cache key for live arguments: shapes and dtypes of arrays, values of scalars."""
    parts = []
    for a in args:
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            parts.append("x".join(str(d) for d in a.shape) + ":" + str(a.dtype))
        else:
            parts.append(repr(a))
    return ",".join(parts)
