"""PyTorch-style Triton launches as IREE modules: ``kernel[grid](x, y, out, n, BLOCK=1024)``.

PyTorch code launches a Triton kernel by indexing it with its grid and calling it with tensors
and scalars in the kernel's parameter order; the kernel writes into tensors the caller
allocated (``out = torch.empty_like(x)``). :func:`launch_to_mlir` takes the same call, plus the
names of the parameters the kernel writes, and returns the IREE module it amounts to: the
kernel's autotuning group (every config of a ``triton.autotune`` kernel) and a host function
that takes the input tensors and returns the written ones. Nothing runs and nothing is
compiled here (no GPU, no driver): ``autotune-export M.mlir --emit vmfb`` does that.

The call is mapped as jax-triton's ``triton_call`` maps its own
(:func:`autotune_export.interop.jax_triton.triton_call_to_mlir`, which does the work): tensors
become tensor arguments of the host function (static shapes: only ``.shape`` and ``.dtype``
are read, so torch, numpy and jax arrays all work, and so does anything else with those two
attributes), Python scalars are baked into the module as constants (the module is specialized
to them, as Triton's JIT specializes ``n == 1``), keyword arguments are constexpr values
(filtering a ``triton.autotune`` kernel's configs, as the launch would), and ``None`` is
Triton's constexpr None.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from autotune_export.interop import jax_triton as _jt

__all__ = ["launch_to_mlir"]


class _Spec:
    """Shape and dtype of a tensor argument (what the module needs of it)."""

    def __init__(self, shape, dtype: str):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype


def _spec(value: Any) -> Any:
    """``value`` if it is not a tensor; else its shape and dtype, with a torch dtype
    (``torch.float16``) named as numpy names it (``float16``)."""
    if not (hasattr(value, "shape") and hasattr(value, "dtype")):
        return value
    dtype = value.dtype
    text = str(dtype)
    if text.startswith("torch."):
        dtype = {"half": "float16", "float": "float32", "double": "float64", "bool": "bool"}.get(text[6:], text[6:])
    return _Spec(value.shape, dtype)


def launch_to_mlir(kernel: Any, grid: Any, *args: Any, outputs: Sequence[str | int], name: str = "main",
                   output: str | os.PathLike | None = None, relative_to: str | None = None,
                   kernel_source: tuple[str, str] | None = None, num_warps: int | None = None,
                   num_stages: int | None = None, target: str = "sm_80", **metaparams: Any) -> str:
    """The module text of the launch ``kernel[grid](*args, **metaparams)``.

    ``kernel``: a ``@triton.jit`` function, possibly wrapped in ``triton.autotune`` /
    ``triton.heuristics``, defined at module level of an importable ``.py`` file (or name it
    with ``kernel_source=(path, attribute)``). ``grid``: as at the launch, an int, a tuple of up
    to three ints, or a callable of the config's metaparameters
    (``lambda meta: (triton.cdiv(n, meta["BLOCK"]),)``). ``args``: the launch's positional
    arguments, one per non-constexpr kernel parameter, in order. ``outputs``: the tensor
    arguments the kernel writes, by parameter name (``"out_ptr"``) or by position in ``args``;
    the host function returns them (new buffers: their contents before the launch are not
    passed in) and takes the other tensors. ``metaparams``: the launch's keyword arguments
    (constexpr values). ``name``: the host function (``@main``). ``output``: the ``.mlir`` file
    to write; the kernel's path is then written relative to it (``relative_to``: relative to
    that folder instead; neither: absolute). ``num_warps``/``num_stages``: for a kernel without
    ``triton.autotune`` (defaults 4 and 3). ``target`` only goes into the header comment.

    Raises :class:`~autotune_export.interop.jax_triton.JaxTritonError` with a one-line reason
    (an output that is not a tensor or not a parameter, arguments that do not fit the kernel,
    a kernel that cannot be imported), OSError when ``output`` cannot be written.
    """
    names = _jt._unwrap(kernel).runtime_names  # the kernel's non-constexpr parameters, in order
    if len(args) != len(names):
        raise _jt.JaxTritonError(f"the launch passes {len(args)} positional argument(s); kernel has "
                                 f"{len(names)} non-constexpr parameters ({', '.join(names)})")
    wanted: list[str] = []
    for o in outputs:
        if isinstance(o, int) and not isinstance(o, bool):
            if not 0 <= o < len(names):
                raise _jt.JaxTritonError(f"outputs: position {o} is not an argument (there are {len(names)})")
            o = names[o]
        if o not in names:
            raise _jt.JaxTritonError(f"outputs: '{o}' is not a non-constexpr parameter of the kernel ({', '.join(names)})")
        if o in wanted:
            raise _jt.JaxTritonError(f"outputs: '{o}' is named twice")
        if not (hasattr(args[names.index(o)], "shape") and hasattr(args[names.index(o)], "dtype")):
            raise _jt.JaxTritonError(f"outputs: '{o}' is {type(args[names.index(o)]).__name__}, not a tensor")
        wanted.append(o)
    if not wanted:
        raise _jt.JaxTritonError("outputs names no parameter: the module would compute nothing")
    wanted.sort(key=names.index)
    inputs = [_spec(a) for p, a in zip(names, args) if p not in wanted]
    outs = [_spec(args[names.index(p)]) for p in wanted]
    return _jt.triton_call_to_mlir(*inputs, kernel=kernel, out_shape=outs, grid=grid, output_params=wanted, name=name,
                                   output=output, relative_to=relative_to, kernel_source=kernel_source,
                                   num_warps=num_warps, num_stages=num_stages, target=target, **metaparams)
