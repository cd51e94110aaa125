"""``jax_triton.triton_call`` -> a module in the Triton form (the CLI's input): the call's
arguments typed (:mod:`.jax_triton_args`), its configs from Triton's launch model (convention
``JAX_TRITON``) and its group (:mod:`.jax_triton_group`), the grid (:mod:`.jax_triton_grid`),
and the host function that dispatches the group, built with
the bindings. This front end enters the stages at the launch model: materialize-triton-variants
compiles what it writes (``docs/architecture.md``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence

from autotune_export.cuda import launch_model
from autotune_export.cuda.targets import TargetError, parse_target
from autotune_export.interop.jax_triton_args import (
    check_argument_order,
    checked_aliases,
    flatten_arguments,
    named_arguments,
    parameter_names,
    typed_arguments,
)
from autotune_export.interop.jax_triton_grid import grid_expressions
from autotune_export.interop.jax_triton_group import call_group, call_variants, config_rows, kernel_file, zeroed_output_indices
from autotune_export.interop.jax_triton_host import host_text
from autotune_export.interop.jax_triton_kernel import unwrap_kernel
from autotune_export.interop.jax_triton_types import JaxTritonError
from autotune_export.support import files


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
    constants is written (see :func:`~autotune_export.interop.jax_triton_grid.grid_expressions`); every form is checked against the callable's
    value for every config. The workload is empty: shapes and scalars are static.

    Raises JaxTritonError (KernelNotImportableError) with a one-line reason, OSError when
    ``output`` cannot be written.
    """
    del custom_call_target_name, enable_fp_fusion, debug, serialized_metadata
    return call_to_mlir(
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


def call_to_mlir(
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
    size) and the grid callable every kernel argument by name. Raises JaxTritonError.

    The steps, in order (each raises JaxTritonError for what it checks, so the first problem
    of a call is the one reported), the arguments' (:mod:`.jax_triton_args`):
    ``parameter_names`` (which parameters the arguments and outputs are), ``typed_arguments``
    and ``check_argument_order`` (each argument typed; an order the kernel does not have),
    ``checked_aliases``, ``named_arguments`` (what heuristics, pruners and the grid see); then
    the group's (:mod:`.jax_triton_group`): ``call_variants`` (Triton's launch model),
    ``config_rows`` (the group's configs and each config's grid arguments),
    :func:`~autotune_export.interop.jax_triton_grid.grid_expressions`,
    ``zeroed_output_indices``, ``kernel_file`` and ``call_group`` (the group); last
    :func:`~autotune_export.interop.jax_triton_host.host_text` (the module)."""
    if output is not None:
        relative_to = os.path.dirname(os.path.abspath(os.fspath(output)))
    if compute_capability is not None:
        target = f"sm_{int(compute_capability)}"
    k = unwrap_kernel(kernel)
    flat = flatten_arguments(args)
    outs = list(out_shape) if isinstance(out_shape, (list, tuple)) else [out_shape]
    if not outs:
        raise JaxTritonError("`out_shape` lists no output")
    runtime = k.runtime_names
    in_names, out_names, outs = parameter_names(k, len(flat), outs, output_params, metaparams)
    call_args, out_args = typed_arguments(flat, outs, in_names, out_names)
    check_argument_order(k, len(flat), call_args, out_args)
    aliases = checked_aliases(input_output_aliases, call_args, out_args)
    named_args = named_arguments(convention, call_args, out_args, runtime, positional_constexprs)
    try:
        capability = parse_target(target).capability
    except TargetError:
        capability = None  # the header comment names it; the CLI's --target decides
    variants = call_variants(
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
    rows, metas, envs = config_rows(k, variants, metaparams, named_args, convention, positional_constexprs)
    grid_exprs, _how = grid_expressions(grid, metas, envs)
    zeroed = zeroed_output_indices(zeroed_outputs, metas, len(outs))
    path, attr, embedded = kernel_file(kernel, k, kernel_source, relative_to)
    group = call_group(k, path, attr, embedded, call_args, out_args, rows, grid_exprs, convention, zeroed, aliases)
    exe = f"{group.name}_ex"
    func = name or "main"
    text = host_text(
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
