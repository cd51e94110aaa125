"""A Triton kernel as the launch model sees it (:mod:`autotune_export.cuda.launch_model`):
its ``triton.Config`` s, its ``triton.autotune`` and ``triton.heuristics`` wrappers outermost
first, its parameters, constexprs and defaults (:class:`KernelModel`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping
from autotune_export.cuda.launch_errors import LaunchModelError


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
