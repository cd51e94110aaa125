"""The group a ``jax_triton.triton_call`` (or a PyTorch-style launch) writes: its variants from
Triton's launch model (:func:`call_variants`, under the call's convention), each variant as a
config row of the group and as what the grid callable sees (:func:`config_rows`), the outputs
zero-filled before the launch (:func:`zeroed_output_indices`), the kernel's file
(:func:`kernel_file`) and the group op itself (:func:`call_group`). Each step raises
JaxTritonError with a one-line reason.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Mapping, Sequence

from autotune_export.cuda import launch_model
from autotune_export.interop.jax_triton_host import CallArg
from autotune_export.interop.jax_triton_kernel import TritonKernel, captured_kernel, locate_kernel
from autotune_export.interop.jax_triton_types import JaxTritonError, KernelNotImportableError
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import OPTION_NAMES, Param, TorchDtype, TritonDtype

__all__ = ["call_variants", "config_rows", "zeroed_output_indices", "kernel_file", "call_group"]


def call_variants(
    k: TritonKernel,
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


def config_rows(
    k: TritonKernel,
    variants: list,
    metaparams: Mapping[str, Any],
    named_args: Mapping[str, Any],
    convention: launch_model.Convention,
    positional_constexprs: Mapping[str, Any] | None,
) -> tuple[list[list[tuple[str, Any]]], list[dict[str, Any]], list[dict[str, int]]]:
    """Per variant (:func:`call_variants`): ``(rows, metas, envs)``. ``rows``: the group's config,
    every constexpr the kernel needs in declaration order (values through
    :func:`_config_value`), then ``num_warps``, ``num_stages`` and, when set, ``num_ctas``
    (other than 1) and ``maxnreg``; a constexpr named like a launch option is left to the
    option (Triton binds the launch's num_warps to both; the config holds it once).
    ``metas``: what the grid callable gets: under Triton's convention every kernel argument
    by name and the variant's constexprs (Triton's launcher calls ``grid(bound_args)``); under
    jax-triton's the metaparameters and the constexprs the call, the config or a heuristic
    gave. ``envs``: the config's integer constexprs (not bools, not options), the names a
    grid expression may use. Raises JaxTritonError for a config value of another type."""
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
    return rows, metas, envs


def zeroed_output_indices(
    zeroed_outputs: Sequence[int] | Callable[[dict], Sequence[int]], metas: list[dict[str, Any]], n_outs: int
) -> set[int]:
    """The output indices zero-filled before the launch: ``zeroed_outputs`` itself, or, when it
    is a callable of the metaparameters, the union of its answers over the configs (``metas``:
    each config's metaparameter dict, a copy passed). Raises JaxTritonError for an index that
    is not one of the ``n_outs`` outputs."""
    zeroed: set[int] = set()
    for meta in metas:
        z = zeroed_outputs(dict(meta)) if callable(zeroed_outputs) else zeroed_outputs
        for j in z or ():
            if not 0 <= int(j) < n_outs:
                raise JaxTritonError(f"zeroed_outputs: output {j} does not exist (there are {n_outs})")
            zeroed.add(int(j))
    return zeroed


def kernel_file(
    kernel: Any, k: TritonKernel, kernel_source: tuple[str, str] | None, relative_to: str | None
) -> tuple[str, str, Any]:
    """``(path, attribute, embedded)`` of the ``triton("path", "attribute")`` clause: the kernel
    located from its Python function (:func:`~autotune_export.interop.jax_triton_kernel.locate_kernel`),
    else, for a kernel that cannot be imported from a file, its captured source embedded in the
    group (``embedded``, :func:`~autotune_export.interop.jax_triton_kernel.captured_kernel`);
    ``kernel_source`` as given instead (the path made absolute). The path is made relative to
    ``relative_to`` when given. Raises JaxTritonError (KernelNotImportableError) when the kernel
    can be neither located nor captured."""
    embedded = None
    if kernel_source is None:
        try:
            path, attr = locate_kernel(kernel)
        except KernelNotImportableError as err:
            path, attr, embedded = captured_kernel(k, err)
    else:
        path, attr = kernel_source
        path = os.path.abspath(path)
    if relative_to is not None and os.path.isabs(path):
        path = os.path.relpath(path, relative_to)
    return path, attr, embedded


def call_group(
    k: TritonKernel,
    path: str,
    attr: str,
    embedded: Any,
    call_args: list[CallArg],
    out_args: list[CallArg],
    rows: list[list[tuple[str, Any]]],
    grid_exprs: list,
    convention: launch_model.Convention,
    zeroed: set[int],
    aliases: Mapping[int, int],
) -> AutotuneGroup:
    """The group of the call: named after the kernel (characters other than ``[A-Za-z0-9_]``
    made ``_``), its signature in kernel parameter order (outputs marked), the configs
    ``rows``, an empty workload (shapes and scalars are static) and the grid ``grid_exprs``.
    Under jax-triton's convention ``zeroed`` outputs are its ``reset_to_zero`` and the
    aliased outputs not zeroed its ``restore_value``, written whenever the kernel has the
    corresponding autotuner lists; under Triton's both clauses are left out (see below)."""
    kname = re.sub(r"[^A-Za-z0-9_]", "_", k.name)
    runtime = k.runtime_names
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
    return group
