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

import enum
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from autotune_export.cuda.kernel_model import Autotune, Config, Heuristics, KernelModel, kernel_model
from autotune_export.cuda.launch_arguments import (
    StorageSpan,
    TensorArgument,
    UnknownScalar,
    dense_strides,
    numpy_scalar_refusal,
    storage_span,
)
from autotune_export.cuda.launch_errors import LaunchModelError, PruneError
from autotune_export.cuda.launch_pruning import (
    PruneOutcome,
    Pruned,
    SitePruning,
    call_user,
    function_name,
    prune_configs,
    prune_per_site,
)

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
    "numpy_scalar_refusal",
    "prune_configs",
    "prune_per_site",
    "resolve_constexprs",
    "dense_strides",
    "storage_span",
]


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
    launches: Sequence[int] | None = None,
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
    ``named_args``); ``prune_configs_by`` runs for each and the variants are the configs some
    launch keeps (:func:`prune_per_site`, ``launches``: per site its launch, when several sites
    are one launch on several tuning workloads; :attr:`SitePruning.allowed` says what each
    launch may run); like Triton, pruning runs only with more than one config. ``capability``: the target pruning answers for. ``prune=False`` skips pruning.
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
                launches=launches if sites else None,
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
