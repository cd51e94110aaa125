"""Live calls' arguments and results: results copied to the host (:func:`to_host`), and the
keys that tell live workloads apart (:func:`argument_bucket`, a cheap hashable key; :func:`workload_key`
and :func:`values_key`, the tuning cache's text keys)."""

from __future__ import annotations

import weakref
from typing import Sequence

__all__ = ["as_list", "to_host", "argument_bucket", "values_key", "workload_key"]


def as_list(result) -> list:
    return list(result) if isinstance(result, (list, tuple)) else [result]

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
