"""``prune_configs_by`` as Triton's ``Autotuner.prune_configs`` runs it
(``early_config_prune``, ``perf_model``, ``top_k``), per launch site, and how the user's
functions are called (:func:`call_user`: what they raise or read that is not known becomes a
:class:`~autotune_export.cuda.launch_errors.LaunchModelError` naming it). Part of the launch
model (:mod:`autotune_export.cuda.launch_model`).
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence
from autotune_export.cuda.launch_errors import LaunchModelError, UnknownRead
from autotune_export.cuda.kernel_model import Autotune, Config


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
    except UnknownRead as u:
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


class _Probe:
    """A config with nothing in it: what :func:`installed_top_k` hands Triton's rule."""

    kwargs: dict = {}

    def all_kwargs(self) -> dict:
        return {}


def installed_top_k(top_k: Any, n_given: int, n_left: int) -> int:
    """How many of ``n_left`` configs (what ``early_config_prune`` kept of ``n_given``) the
    installed Triton's ``Autotuner.prune_configs`` keeps by ``perf_model`` for ``top_k``:
    ``n_left`` when it keeps them all. Triton itself answers (its method run on a stand-in
    autotuner of empty configs whose estimates all tie), so the rule is the one of the Triton
    that compiles the kernels: 3.6 takes a fraction of all configs with no floor
    (``int(len(self.configs) * top_k)``, 0 possible), 3.9 of those left, at least one. Raises
    LaunchModelError for a ``top_k`` Triton refuses (its TypeError)."""
    from types import SimpleNamespace

    from triton.runtime.autotuner import Autotuner

    given = [_Probe() for _ in range(n_given)]
    stand_in = SimpleNamespace(
        configs=given,
        early_config_prune=lambda configs, named_args, **kw: given[:n_left],
        perf_model=lambda **kw: 0.0,
        configs_top_k=top_k,
        nargs={},
    )
    try:
        return len(Autotuner.prune_configs(stand_in, {}))
    except TypeError:
        raise LaunchModelError(
            f"prune_configs_by top_k = {top_k!r}: Triton requires a float <= 1.0 or an int (TypeError)"
        ) from None


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
    ``kwargs`` and ``all_kwargs()``), as the installed Triton's ``Autotuner.prune_configs`` does
    (Triton 3.9's words below; how many ``top_k`` keeps is asked of the installed Triton,
    :func:`installed_top_k`, whose rule changed after 3.6):

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
            k = installed_top_k(top_k, len(given), len(current))
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
    dispatches of one group, each on each tuning workload: the *sites*): ``outcomes`` per site
    (:class:`PruneOutcome`, same order as the sites given); ``kept``: the configs some launch
    may run (a config no launch may run is not compiled), those of the first launch first, in
    its order, then each later launch's others in its order; ``kept_indices``: for each, its
    index among the given configs (None: made by the pruner); ``allowed``: per launch the
    positions in ``kept`` of the configs it may run, in its own order (Triton's order at that
    launch: the perf model's lowest estimate first). A launch may run the configs that every
    one of its sites keeps (each of its tuning workloads), so a config pruned for a site is
    never run there (:func:`prune_per_site`)."""

    outcomes: tuple
    kept: tuple
    kept_indices: tuple
    allowed: tuple = ()


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
    launches: Sequence[int] | None = None,
) -> SitePruning:
    """:func:`prune_configs` of ``configs`` once per site (``sites``: the named arguments of each
    launch the variants serve, on each of its tuning workloads; Triton prunes at every launch
    with that launch's arguments), and per launch the configs every one of its sites keeps
    (``launches``: per site the number of its launch, 0, 1, ...; None: each site a launch of
    its own). A config the pruner made or changed counts as the same at two sites when its
    constexprs and options are equal. Raises LaunchModelError (that of the first site whose
    pruning fails, e.g. a pruner that keeps nothing for it) and when no config is kept for
    every site of one launch."""
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
    launches = list(range(len(outcomes))) if launches is None else list(launches)
    kept, indices, position = [], [], {}
    allowed = []
    for launch in sorted(set(launches)):
        mine_sites = [o for o, l in zip(outcomes, launches) if l == launch]
        keys = [{_config_key(c) for c in o.kept} for o in mine_sites[1:]]
        mine = []
        for c, i in zip(mine_sites[0].kept, mine_sites[0].kept_indices):
            key = _config_key(c)
            if not all(key in k for k in keys):
                continue
            if key not in position:
                position[key] = len(kept)
                kept.append(c)
                indices.append(i)
            if position[key] not in mine:
                mine.append(position[key])
        if not mine:
            raise LaunchModelError(
                f"no config is kept for every tuning workload of launch {launch}: "
                + "; ".join(
                    f"site {s} keeps configs {', '.join('new' if i is None else str(i) for i in o.kept_indices)}"
                    for s, (o, l) in enumerate(zip(outcomes, launches))
                    if l == launch
                )
            )
        allowed.append(tuple(mine))
    return SitePruning(tuple(outcomes), tuple(kept), tuple(indices), tuple(allowed))
