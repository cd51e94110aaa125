"""Triton's ``prune_configs_by``, applied when exporting: one implementation for the CLI path
(materialize-triton-variants, a group without ``configs(...)`` of a ``triton.autotune``
kernel) and the jax-triton bridge (:mod:`autotune_export.interop.jax_triton`).

``triton.autotune(..., prune_configs_by={"early_config_prune": f, "perf_model": m, "top_k": k})``
prunes the configs before tuning, as Triton 3.9's ``Autotuner.prune_configs``
(``triton/runtime/autotuner.py``) does it:

1. ``early_config_prune(configs, named_args, **kwargs)`` returns the configs to keep; it must
   keep at least one (Triton raises ``AutotunerError``);
2. with a ``perf_model``: ``top_k`` is a fraction of the configs left when it is a float
   ``<= 1.0`` (``max(1, int(len(configs) * top_k))``), a count when an int, and any other
   value is Triton's ``TypeError``. When more configs are left than ``top_k``, each is
   estimated with ``perf_model(**named_args, **kwargs, **config.all_kwargs())`` and the
   ``top_k`` lowest estimates are kept, lowest first (ties in the given order).

``named_args`` are the kernel's arguments by name, ``kwargs`` the launch's keyword arguments.
At export time only part of them is known; the stand-ins of this module stand for the rest:
:class:`PointerArgument` for a tensor (its dtype is known from the signature, nothing else) and
:class:`UnknownScalar` for a scalar whose value the export does not determine. Reading what a
stand-in does not know raises :class:`PruneError` naming the argument (``unknown`` set to it),
even where the pruning function catches ``Exception``.

The functions run under :func:`autotune_export.cuda.stub_driver.answering_for` when a
``capability`` is given, so that ``triton.runtime.driver.active.utils.get_device_properties``,
``torch.cuda.get_device_capability()`` and the like answer for the target, as they do while a
kernel file is imported (pruning functions commonly compare a config's shared memory with
``max_shared_mem``).
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from autotune_export.cuda import stub_driver as _stub_driver
from autotune_export.cuda.triton_compile import TORCH_DTYPE, RuntimeArgument

__all__ = ["PointerArgument", "PruneError", "Pruned", "PruneOutcome", "UnknownScalar", "function_name", "prune_configs",
           "torch_dtype_name"]


class PruneError(Exception):
    """Pruning failed (one-line message): a pruning function raised, returned no config, read
    an argument not known at export time (``unknown`` is then its name, e.g. ``"N"`` or
    ``"x_ptr.shape"``), or ``top_k`` is neither a float <= 1.0 nor an int."""

    def __init__(self, message: str, unknown: str | None = None):
        super().__init__(message)
        self.unknown = unknown


class _Unknown(BaseException):
    """Raised by the stand-ins; a BaseException so that ``except Exception`` in a pruning
    function does not hide it. Becomes a PruneError in :func:`prune_configs`."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def torch_dtype_name(triton_type: str) -> str | None:
    """The ``torch`` dtype name of a tensor bound to pointer type ``triton_type`` (``*fp16`` ->
    ``"float16"``), None when torch has no such dtype or the type is not a pointer."""
    return TORCH_DTYPE.get(triton_type[1:]) if triton_type.startswith("*") else None


class PointerArgument(RuntimeArgument):
    """A tensor argument ``name`` of pointer type ``type`` (``*fp16``), as a pruning function
    sees it when exporting: :class:`~autotune_export.cuda.triton_compile.RuntimeArgument`
    (not None, ``.dtype`` and ``.element_size()`` from the signature), whose unknowns
    (``.shape``, ``.stride(0)``, ``.numel()``) raise the PruneError of :func:`prune_configs`
    even where the pruning function catches ``Exception``."""

    def _unknown(self, what: str):
        raise _Unknown(what)


def _unknown(self, *args, **kwargs):
    raise _Unknown(object.__getattribute__(self, "_name"))


class UnknownScalar:
    """A scalar argument ``name`` whose value is not known when exporting: every use of the
    value (arithmetic, comparison, ``int()``, truth, formatting) raises the PruneError of
    :func:`prune_configs` naming it. ``is None`` is False, as for the value a launch passes."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __repr__(self) -> str:
        return f"<scalar {self._name}, not known when exporting>"

    def __hash__(self) -> int:
        return hash(("UnknownScalar", self._name))


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or", "xor",
            "divmod", "matmul"):
    setattr(UnknownScalar, f"__{_op}__", _unknown)
    setattr(UnknownScalar, f"__r{_op}__", _unknown)
for _op in ("eq", "ne", "lt", "le", "gt", "ge", "bool", "int", "float", "index", "neg", "pos", "abs", "invert",
            "round", "trunc", "floor", "ceil", "complex", "format", "str", "getattr", "getitem", "iter", "len",
            "call", "contains"):
    setattr(UnknownScalar, f"__{_op}__", _unknown)
del _op


def function_name(fn: Callable) -> str:
    """How a remark names a pruning function: its qualified name without the enclosing
    functions (``prune_small_blocks``, ``Tuner.prune``, ``<lambda>``)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return str(name).rsplit("<locals>.", 1)[-1]


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
    TypeError Triton's call would raise, as a PruneError."""
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key in out:
                raise PruneError(f"{what} '{function_name(fn)}' would get argument '{key}' twice (from the kernel's "
                                 "arguments, the launch's keyword arguments and the config: Triton's TypeError)")
            out[key] = value
    return out


def _call(what: str, fn: Callable, /, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except _Unknown as u:
        raise PruneError(f"{what} '{function_name(fn)}' reads argument '{u.name}', which is not known when exporting",
                         unknown=u.name) from None
    except PruneError:
        raise
    except Exception as e:
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        raise PruneError(f"{what} '{function_name(fn)}' raised {type(e).__name__}: {first}") from e


def prune_configs(configs: Sequence, named_args: Mapping[str, Any], kwargs: Mapping[str, Any] | None = None, *,
                  early_config_prune: Callable | None = None, perf_model: Callable | None = None,
                  top_k: Any = 1.0, early_kwargs: Mapping[str, Any] | None = None,
                  capability: int | None = None) -> PruneOutcome:
    """Apply ``prune_configs_by`` to ``configs`` (``triton.Config`` objects or look-alikes with
    ``kwargs`` and ``all_kwargs()``), as Triton 3.9's ``Autotuner.prune_configs`` does (module
    doc). ``named_args``: the kernel's arguments by name (stand-ins allowed); ``kwargs``: the
    launch's keyword arguments, given to both functions unless ``early_kwargs`` says what the
    early pruner gets (jax-triton calls it with none). ``capability`` (90 for sm_90): run the
    functions with Triton's driver and torch answering for it (None: as the process is).

    The early pruner gets shallow copies of the configs (their ``kwargs`` dicts copied), so one
    that changes a config in place (``config.num_stages = 2``, as Triton's matmul pruner once
    did) changes what is exported, not the kernel module's own configs. Returns a
    :class:`PruneOutcome`. Raises :class:`PruneError`."""
    kwargs = dict(kwargs or {})
    early_kwargs = kwargs if early_kwargs is None else dict(early_kwargs)
    given = []
    for c in configs:
        c2 = copy.copy(c)
        if isinstance(getattr(c2, "kwargs", None), dict):
            c2.kwargs = dict(c2.kwargs)
        given.append(c2)
    index_of = {id(c): i for i, c in enumerate(given)}
    with _stub_driver.answering_for(capability) if capability is not None else contextlib.nullcontext():
        current = list(given)
        pruned: list[Pruned] = []
        if early_config_prune is not None:
            name = function_name(early_config_prune)
            result = _call("early_config_prune", early_config_prune, list(given), named_args, **early_kwargs)
            try:
                current = list(result)
            except TypeError:
                raise PruneError(f"early_config_prune '{name}' returned {type(result).__name__}, not a list of configs") from None
            if not current:
                raise PruneError(f"early_config_prune '{name}' kept no config: Triton requires at least one "
                                 "(AutotunerError: No valid autotuner configs after pruning)")
            kept_ids = {id(c) for c in current}
            pruned += [Pruned(i, "early_config_prune", f"early_config_prune '{name}' did not keep it")
                       for i, c in enumerate(given) if id(c) not in kept_ids]
        estimates: dict[int, Any] = {}
        if perf_model is not None:
            k = top_k
            if isinstance(k, float) and k <= 1.0:
                k = max(1, int(len(current) * k))
            elif not isinstance(k, int):
                raise PruneError(f"prune_configs_by top_k = {top_k!r}: Triton requires a float <= 1.0 or an int (TypeError)")
            if k < 1:
                raise PruneError(f"prune_configs_by top_k = {top_k!r} keeps no config: Triton would have none to run")
            if len(current) > k:
                name = function_name(perf_model)
                est = [_call("perf_model", perf_model, **_keywords("perf_model", perf_model, named_args, kwargs, c.all_kwargs()))
                       for c in current]
                try:
                    order = sorted(range(len(current)), key=lambda j: est[j])
                except TypeError as e:
                    raise PruneError(f"perf_model '{name}' returned values that do not compare: {e}") from None
                for j, e in enumerate(est):
                    if id(current[j]) in index_of:
                        estimates[index_of[id(current[j])]] = e
                cut = est[order[k - 1]]
                for j in order[k:]:
                    i = index_of.get(id(current[j]))
                    if i is not None:
                        pruned.append(Pruned(i, "perf_model", f"perf_model '{name}' estimates {est[j]!r}; top_k = {top_k!r} "
                                                              f"keeps the {k} lowest (up to {cut!r})"))
                current = [current[j] for j in order[:k]]
    pruned.sort(key=lambda p: p.index)
    return PruneOutcome(kept=current, kept_indices=[index_of.get(id(c)) for c in current], pruned=pruned,
                        estimates=estimates)
