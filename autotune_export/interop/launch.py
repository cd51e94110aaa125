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
to them, as Triton's JIT specializes ``n == 1``; a float is fp32, as the JIT types it; a numpy
scalar such as ``np.int64`` is refused, as Triton's launch refuses it: pass ``int(n)``), keyword arguments are constexpr values
(filtering a ``triton.autotune`` kernel's configs, as the launch would), and ``None`` is
Triton's constexpr None.

A strided view (``b.t()``, a column-major output, ``bias.expand(M, N)``, a slice at a storage
offset; strides read from torch's ``stride()`` or numpy's ``strides``) becomes its storage span
(:func:`autotune_export.cuda.launch_model.storage_span`): the module's argument or result is
the dense tensor of the elements from the view's first one to its last one, in the storage's
order, and the strides the launch passes reach the kernel as they are (docs/limits.md,
"Strided tensors"). The module's header comment, its host function's ``iree.reflection``
(``autotune.strided``) and ``autotune-export inspect`` name each one.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Sequence

import numpy as np

from autotune_export.cuda import launch_model
from autotune_export.interop import jax_triton_call as _jt_call
from autotune_export.interop import jax_triton_kernel as _jt_kernel
from autotune_export.interop import jax_triton_types as _jt

__all__ = ["KernelNotImportableError", "LaunchError", "answering_for_target", "launch_to_mlir"]


class LaunchError(ValueError):
    """A launch that :func:`launch_to_mlir` cannot export (one-line message: arguments that do
    not fit the kernel, an output that is not a tensor, a metaparameter that conflicts with
    the kernel's ``triton.autotune`` configs, a heuristic or pruner reading what is not known
    when exporting)."""


class KernelNotImportableError(LaunchError):
    """A kernel with no importable ``file.py`` + attribute name (made inside a function, in a
    notebook cell) reads a value that cannot be carried in the module with its source
    (:mod:`autotune_export.cuda.kernel_capture`; the message starts with ``file:line:col:`` of
    the read and names it): make it a ``tl.constexpr``, or pass ``kernel_source=(path, name)``."""


@contextlib.contextmanager
def answering_for_target(target: str = "sm_90"):
    """Run a PyTorch call site on a machine with no GPU, for ``target`` (``"sm_90"``): inside
    the block Triton's active driver and ``torch.cuda``'s device queries answer for that
    architecture's representative part, and tensors made for the GPU (``device="cuda"``,
    ``.cuda()``) are made on the ``meta`` device (shape and dtype, no data): the same stand-ins
    that answer while a kernel file is imported (:mod:`autotune_export.cuda.stub_driver`,
    docs/call-sites.md). For libraries whose wrappers ask the GPU when called (a grid of one
    program per SM from ``get_device_properties``, a workspace allocated on ``"cuda"``), so
    that the launch the wrapper makes can be given to :func:`launch_to_mlir`::

        with answering_for_target("sm_90"):
            x = torch.empty(4096, 512, device="cuda", dtype=torch.float16)   # a meta tensor
            grid = (torch.cuda.get_device_properties(0).multi_processor_count,)  # 132
            text = launch_to_mlir(kernel, grid, x, out, 4096, outputs=["out_ptr"], target="sm_90")

    What only a GPU has (streams, launching, benchmarking, reading a tensor's values) raises
    :class:`~autotune_export.cuda.stub_driver.StubDriverError` naming the query. ``nvidia-smi``
    run through :mod:`subprocess` answers for the target too (or is refused naming the line that
    ran it); the block yields the GPU-related environment variables read inside it
    (:class:`~autotune_export.cuda.stub_driver.EnvironmentReads`), and an exception leaving it
    gets a note naming the last one. Raises
    :class:`~autotune_export.cuda.targets.TargetError` for an unsupported ``target``."""
    from autotune_export.cuda import stub_driver
    from autotune_export.cuda.targets import parse_target

    with stub_driver.answering_for(parse_target(target).capability, "inside answering_for_target") as reads:
        yield reads


class _Spec:
    """Shape and dtype of a tensor argument (what the module needs of it); ``source_dtype``:
    the tensor's own dtype when it is a ``torch.dtype`` (what heuristics and pruners then see,
    as at the launch), else None. ``span``: for a strided view, its
    :class:`~autotune_export.cuda.launch_model.StorageSpan` (``shape`` is then the span's: the
    module's argument), else None."""

    def __init__(self, shape, dtype: str, source_dtype: Any = None, span: launch_model.StorageSpan | None = None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.source_dtype = source_dtype
        self.span = span


def _spec(value: Any) -> Any:
    """``value`` if it is not a tensor; else its shape and dtype, with a torch dtype
    (``torch.float16``) named as numpy names it (``float16``)."""
    if not (hasattr(value, "shape") and hasattr(value, "dtype")) or isinstance(value, np.generic):
        return value  # numpy scalars (np.float32) are scalars
    dtype = source = value.dtype
    text = str(dtype)
    if text.startswith("torch."):
        dtype = {"half": "float16", "float": "float32", "double": "float64", "bool": "bool"}.get(text[6:], text[6:])
    source = source if type(source).__module__ == "torch" else None
    span = _span_of(value)
    if span is not None and span.strided:
        return _Spec(span.shape, dtype, source, span)
    return _Spec(value.shape, dtype, source)


def launch_to_mlir(
    kernel: Any,
    grid: Any,
    *args: Any,
    outputs: Sequence[str | int] = (),
    inplace: Sequence[str | int] = (),
    name: str = "main",
    output: str | os.PathLike | None = None,
    relative_to: str | None = None,
    kernel_source: tuple[str, str] | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
    target: str = "sm_80",
    **metaparams: Any,
) -> str:
    """The module text of the launch ``kernel[grid](*args, **metaparams)``.

    ``kernel``: a ``@triton.jit`` function, possibly wrapped in ``triton.autotune`` /
    ``triton.heuristics``: one defined at module level of an importable ``.py`` file is named
    by file and name (or name it with ``kernel_source=(path, attribute)``); one made at run
    time (inside a function, a factory's, a closure) is carried in the module, its source and
    the values it reads (``kernel_source("...")``, docs/call-sites.md). ``grid``: as at the launch, an int, a tuple of up
    to three ints, or a callable of the config's metaparameters
    (``lambda meta: (triton.cdiv(n, meta["BLOCK"]),)``). ``args``: the launch's positional
    arguments, one per non-constexpr kernel parameter, in order; as at a launch, positional
    arguments may also give constexprs (they fill the ``def``'s parameters in order), a
    parameter may be given by keyword (``X_ptr=x``), and one with a default in the ``def`` may
    be left out (what ``triton.runtime.jit``'s binder accepts). ``outputs``: the tensor arguments
    the kernel writes, by parameter name (``"out_ptr"``) or by position; the host function
    returns them (new buffers: their contents before the launch are not passed in) and takes
    the other tensors. ``inplace``: the tensor arguments the kernel reads and writes (``x +=
    y``, a gradient stored over its input, a buffer written only in part): the host function
    takes each like an input and returns it after the launch (the dispatch's result is tied to
    its operand, IREE's in-place form); the host function's arguments are then the input and
    in-place tensors in kernel parameter order. ``metaparams``: the launch's keyword
    arguments (constexpr values, and ``num_warps``/``num_stages``). ``name``: the host
    function (``@main``). ``output``: the ``.mlir`` file
    to write; the kernel's path is then written relative to it (``relative_to``: relative to
    that folder instead; neither: absolute). ``num_warps``/``num_stages``: for a kernel without
    ``triton.autotune`` (defaults 4 and 3). ``target`` only goes into the header comment.

    The launch means what it means in Triton (:mod:`autotune_export.cuda.launch_model`,
    convention ``TRITON``): a keyword argument that a ``triton.autotune`` config also sets, or
    ``num_warps``/``num_stages`` given to an autotuned kernel, is Triton's error (its Autotuner
    raises); ``triton.heuristics``, ``prune_configs_by`` functions and a grid callable see
    each tensor as a :class:`~autotune_export.cuda.launch_model.TensorArgument` (its torch
    dtype, ``.shape``, ``.numel()``, ``.stride()``, ``.element_size()``), the pruners also the
    constexprs given by position, and the grid callable every kernel argument by name in its
    ``META``; what a stand-in cannot answer (``.data_ptr()``) is an error naming it.

    A tensor that is a strided view is passed as its storage span (module docstring): the host
    function takes (and returns) the storage, in its own order, not a tensor of the view's shape.

    Raises :class:`LaunchError` with a one-line reason (an output that is not a tensor or not
    a parameter, arguments that do not fit the kernel, a numpy scalar argument (``np.int64``:
    Triton's launch raises ``TypeError: failed to specialize argument``; the reason names the
    argument and the fix, ``int(n)``), a metaparameter that conflicts with the
    autotuner, a written view that overlaps or a new output with gaps, naming the pattern; two
    arguments that are views of one storage with overlapping spans, one of them written, naming
    both (:func:`_check_aliasing`);
    :class:`KernelNotImportableError` for a kernel made at run time that reads a value which
    cannot be carried),
    OSError when ``output`` cannot be written.
    """
    try:
        return _launch_to_mlir(
            kernel,
            grid,
            args,
            outputs=outputs,
            inplace=inplace,
            name=name,
            output=output,
            relative_to=relative_to,
            kernel_source=kernel_source,
            num_warps=num_warps,
            num_stages=num_stages,
            target=target,
            metaparams=metaparams,
        )
    except _jt.KernelNotImportableError as err:
        raise KernelNotImportableError(str(err)) from None
    except _jt.JaxTritonError as err:
        raise LaunchError(str(err)) from None


def _launch_to_mlir(
    kernel, grid, args, *, outputs, inplace, name, output, relative_to, kernel_source, num_warps, num_stages, target, metaparams
) -> str:
    k = _jt_kernel.unwrap_kernel(kernel)
    names = k.runtime_names  # the kernel's non-constexpr parameters, in order
    metaparams = dict(metaparams)
    keywords = [n for n in k.runtime_names if n in metaparams]  # runtime arguments given by keyword
    bound, positional = _bind(k, args, metaparams)
    args = tuple(_jit_typed(a) for a in bound)
    if len(args) != len(names):
        raise LaunchError(
            f"the launch passes {len(args)} positional argument(s); kernel has "
            f"{len(names)} non-constexpr parameters ({', '.join(names)})"
        )
    for p, a in zip(names, bound):  # np.int64 and kin: Triton's launch refuses them
        refusal = launch_model.numpy_scalar_refusal(p, a)
        if refusal:
            raise LaunchError(refusal)
    wanted: list[str] = []
    tied = [_param_name(o, names, "inplace") for o in inplace]
    for o in list(outputs) + tied:
        if isinstance(o, int) and not isinstance(o, bool):
            if not 0 <= o < len(names):
                raise LaunchError(f"outputs: position {o} is not an argument (there are {len(names)})")
            o = names[o]
        if o not in names:
            raise LaunchError(f"outputs: '{o}' is not a non-constexpr parameter of the kernel ({', '.join(names)})")
        if o in wanted:
            raise LaunchError(f"outputs/inplace: '{o}' is named twice")
        if not isinstance(_spec(args[names.index(o)]), _Spec):
            raise LaunchError(f"outputs: '{o}' is {type(args[names.index(o)]).__name__}, not a tensor")
        wanted.append(o)
    if not wanted:
        raise LaunchError("outputs names no parameter (nor does inplace): the module would compute nothing")
    wanted.sort(key=names.index)
    for p, a in zip(names, args):
        _check_span(p, a, written=p in wanted, in_place=p in tied)
    _check_aliasing(names, args, wanted, tied)
    inputs = [_spec(a) for p, a in zip(names, args) if p not in wanted]
    outs = [_spec(args[names.index(p)]) for p in wanted]
    note = f" (in place: {', '.join(p for p in wanted if p in tied)})" if tied else ""
    # The launch's semantics are Triton's (launch_model.TRITON): a metaparameter an autotuner's
    # config sets is an error, pruners get the keyword arguments, heuristics and the grid see
    # stand-ins of the tensors. In-place tensors are host arguments the results are tied to.
    return _jt_call.call_to_mlir(
        inputs,
        kernel=kernel,
        out_shape=outs,
        grid=grid,
        num_warps=num_warps,
        num_stages=num_stages,
        num_ctas=1,
        input_output_aliases=None,
        zeroed_outputs=(),
        name=name,
        target=target,
        kernel_source=kernel_source,
        relative_to=relative_to,
        output=output,
        output_params=wanted,
        compute_capability=None,
        metaparams=metaparams,
        convention=launch_model.TRITON,
        origin="autotune_export.interop.launch.launch_to_mlir",
        origin_note=note,
        host_outputs=[p for p in wanted if p in tied],
        positional_constexprs=positional,
        keyword_arguments=keywords,
    )


class _JitInt(int):
    """A Python int that Triton's JIT types differently from jax-triton (``triton_type``)."""

    triton_type = "i64"


def _jit_typed(value: Any) -> Any:
    """A launch argument typed as Triton's JIT types it (``triton/runtime/jit.py``,
    ``mangle_type``), where that differs from jax-triton's rules (which
    ``triton_call_to_mlir`` follows): a Python float is an fp32 scalar (not fp64 when fp32
    does not hold it exactly; rounded as the launch rounds it), an int in [2^31, 2^32) is an
    i64 (not u32). ``np.float64``, a subclass of ``float``, is a float there too. Other values
    are returned as they are."""
    if isinstance(value, float) and not isinstance(value, np.float32):
        return np.float32(value)
    if type(value) is int and 2**31 <= value < 2**32:
        return _JitInt(value)
    return value


def _strides_of(value: Any) -> tuple[int, ...] | None:
    """The element strides of tensor ``value``: torch's ``stride()``, numpy's ``strides`` (bytes,
    divided by the item size); None for an object with neither (``jax.ShapeDtypeStruct``:
    dense)."""
    if isinstance(value, np.ndarray):
        return tuple(s // value.itemsize for s in value.strides)
    stride = getattr(value, "stride", None)
    if callable(stride) and hasattr(value, "shape"):
        try:
            got = stride()
            return tuple(int(s) for s in got)
        except Exception:  # noqa: BLE001 - a look-alike without strides: dense
            return None
    return None


def _span_of(value: Any) -> launch_model.StorageSpan | None:
    """The storage span of tensor ``value`` (:func:`autotune_export.cuda.launch_model.storage_span`),
    None when its strides are not known (dense) or run backwards (refused by
    :func:`_check_span`)."""
    strides = _strides_of(value)
    if strides is None or len(strides) != len(value.shape):
        return None
    try:
        return launch_model.storage_span(value.shape, strides)
    except ValueError:
        return None


def _check_span(p: str, value: Any, *, written: bool, in_place: bool) -> None:
    """Refuse tensor argument ``p`` when its view cannot be a module argument (docs/limits.md):
    a negative stride (numpy), a written tensor (``outputs``/``inplace``) whose view reaches an
    element from several indices (a stride-0 broadcast, an overlapping ``as_strided`` view:
    Triton's launch would race on it), a written output whose view leaves gaps in its span
    (the result's elements between would be undefined: name it in ``inplace``). Raises
    LaunchError naming the argument and the pattern."""
    strides = _strides_of(value) if hasattr(value, "shape") and not isinstance(value, np.generic) else None
    if strides is None or len(strides) != len(value.shape):
        return
    shape = tuple(int(d) for d in value.shape)
    try:
        span = launch_model.storage_span(shape, strides)
    except ValueError as err:
        raise LaunchError(
            f"argument '{p}' ({shape} view, strides {strides}): {err}; Triton's launcher takes no such tensor: pass '{p}.copy()'"
        ) from None
    how = "inplace" if in_place else "outputs"
    if written and span.overlaps:
        pattern = "a stride-0 (broadcast, expanded) dimension" if span.kind == "broadcast" else "overlapping strides (as_strided)"
        raise LaunchError(
            f"argument '{p}' is written ({how}) but its {span.describe()} has {pattern}: several indices reach the same "
            f"element, so what the kernel writes there depends on the order its programs run (a race in Triton too); "
            f"pass a tensor without overlap ('{p}.contiguous()')"
        )
    if written and not in_place and span.kind == "gapped":
        raise LaunchError(
            f"output '{p}' is a {span.describe()} that leaves gaps in its storage (a slice): as a new result "
            f"the module would return its span of {span.span} elements with the ones between undefined; name it in "
            f"inplace=[...] (the host passes the span and gets it back, gaps kept), or pass a dense tensor"
        )


def _storage_of(value: Any) -> tuple[Any, int, int] | None:
    """Where tensor ``value``'s view lies: ``(storage, first, end)``, the bytes ``[first, end)``
    of ``storage`` from the view's first element to past its last one (its span,
    :func:`autotune_export.cuda.launch_model.storage_span`, times the element size). ``storage``
    identifies the memory: for a torch tensor its storage (``untyped_storage()``, shared by all
    views of it, meta tensors included) with the offset in bytes from the storage's start; for
    a numpy array the process's memory with the element's address. None for what has no
    storage to share (a jax array or ``ShapeDtypeStruct``: the module copies it like a value),
    a scalar, an empty view, or a view whose span is not known (refused by :func:`_check_span`)."""
    if not hasattr(value, "shape") or isinstance(value, np.generic):
        return None
    span = _span_of(value)
    if span is None or span.span == 0:
        return None
    if isinstance(value, np.ndarray):
        first = int(value.__array_interface__["data"][0])
        return ("memory", "cpu"), first, first + span.span * value.itemsize
    storage = getattr(value, "untyped_storage", None)
    if type(value).__module__.startswith("torch") and callable(storage):
        size = int(value.element_size())
        first = int(value.storage_offset()) * size
        return ("torch", storage()._cdata), first, first + span.span * size
    return None


def _check_aliasing(names: list[str], args: tuple, written: list[str], tied: list[str]) -> None:
    """Refuse two tensor arguments that are views of one storage with overlapping spans
    (``x`` and ``x[1:]``, ``a`` and ``a.t()``, one tensor passed twice), one of them written
    (``outputs``/``inplace``): Triton's launch hands the kernel two pointers into the same
    memory, so what it reads through one can be what it wrote through the other, while the
    module gives each argument a buffer of its own (a new output, or the in-place operand
    IREE ties its result to) and the kernel reads the values from before the launch. For a
    kernel that is not element-wise the results differ. Two read-only views may share memory.
    Raises LaunchError naming both arguments (parameter and position) and the bytes they share."""
    seen = []
    for i, (p, a) in enumerate(zip(names, args)):
        where = _storage_of(a)
        if where is None:
            continue
        for j, q, (storage, first, end) in seen:
            if storage != where[0] or max(first, where[1]) >= min(end, where[2]):
                continue
            if q not in written and p not in written:
                continue
            how = lambda n: (" (written in place)" if n in tied else " (written: outputs)") if n in written else " (read)"
            shared = min(end, where[2]) - max(first, where[1])
            raise LaunchError(
                f"arguments '{q}' (argument {j}){how(q)} and '{p}' (argument {i}){how(p)} are views of one storage "
                f"whose spans overlap ({shared} bytes in common): Triton's launch gives the kernel pointers into the same "
                f"memory, so it can read what it writes, but the module gives each argument a buffer of its own "
                f"(a kernel that is not element-wise then computes something else); pass a copy of the one it reads "
                f"('{q if q not in written else p}.clone()'), or make them one argument"
            )
        seen.append((i, p, where))


def _param_name(o: str | int, names: list[str], what: str) -> str:
    """Parameter ``o`` (a name, or a position among the non-constexpr parameters) by name."""
    if isinstance(o, int) and not isinstance(o, bool):
        if not 0 <= o < len(names):
            raise LaunchError(f"{what}: position {o} is not an argument (there are {len(names)})")
        return names[o]
    return o


def _bind(k: Any, args: tuple, metaparams: dict) -> tuple:
    """The launch's arguments of the non-constexpr parameters, in order, as Triton's binder
    fills the parameters: ``args`` in the order of the ``def`` (constexprs included: one given
    by position moves into ``metaparams``), then those given by keyword (taken out of
    ``metaparams``), then the ``def``'s defaults. ``args`` is returned as it is when it holds
    exactly the non-constexpr parameters and no keyword names one."""
    names = k.runtime_names
    given = [n for n in names if n in metaparams]
    if not given and len(args) == len(names):
        return args, {}
    if len(args) > len(k.arg_names):
        raise LaunchError(
            f"the launch passes {len(args)} positional argument(s); kernel '{k.name}' has "
            f"{len(k.arg_names)} parameters ({', '.join(k.arg_names)})"
        )
    by_name = dict(zip(k.arg_names, args))
    positional = {}
    for n in list(by_name):
        if n in k.constexpr_names:
            if n in metaparams:
                raise LaunchError(f"constexpr '{n}' is given twice (by position and by keyword)")
            positional[n] = by_name.pop(n)
    for n in given:
        if n in by_name:
            raise LaunchError(f"parameter '{n}' is given twice (by position and by keyword)")
        by_name[n] = metaparams.pop(n)
    out = []
    for n in names:
        if n in by_name:
            out.append(by_name[n])
        elif n in k.defaults:
            out.append(k.defaults[n])
        else:
            raise LaunchError(
                f"the launch passes {len(args)} positional argument(s) and gives no argument for "
                f"parameter '{n}'; kernel '{k.name}' has {len(names)} non-constexpr parameters "
                f"({', '.join(names)})"
            )
    return tuple(out), positional
