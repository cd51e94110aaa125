"""The kernel of a jax-triton call as the bridges see it: its launch model, its JIT function
and ``triton.autotune`` object, and the file and name it is importable by
(:func:`locate_kernel`; a kernel defined where no file holds it is captured into one).
"""

from __future__ import annotations

import inspect
import os
import sys
from dataclasses import dataclass
from typing import Any

from autotune_export.cuda import launch_model
from autotune_export.interop.jax_triton_types import JaxTritonError, KernelNotImportableError


# --------------------------------------------------------------------------------------------
# Kernels


@dataclass(frozen=True)
class TritonKernel:
    """A kernel object as the bridges see it: its launch model
    (:class:`autotune_export.cuda.launch_model.KernelModel`), the JIT function ``jit`` and the
    outermost ``triton.autotune`` object (``autotuner``, or None: its ``reset_to_zero`` /
    ``restore_value``)."""

    model: launch_model.KernelModel
    jit: Any
    autotuner: Any | None

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def arg_names(self) -> list[str]:
        return list(self.model.arg_names)

    @property
    def runtime_names(self) -> list[str]:
        return self.model.runtime_names

    @property
    def constexpr_names(self) -> list[str]:
        return list(self.model.constexpr_names)

    @property
    def defaults(self) -> dict[str, Any]:
        return dict(self.model.defaults)


def unwrap_kernel(kernel: Any) -> TritonKernel:
    """The launch model of a kernel object (:func:`autotune_export.cuda.launch_model.kernel_model`:
    ``triton.autotune`` / ``triton.heuristics`` / launcher wrappers peeled off). Raises
    JaxTritonError when it is not a Triton kernel."""
    try:
        model, jit = launch_model.kernel_model(kernel)
    except launch_model.LaunchModelError as err:
        raise JaxTritonError(str(err)) from None
    autotuner, obj = None, kernel
    while obj is not None and obj is not jit and autotuner is None:
        if hasattr(obj, "configs") and not hasattr(obj, "params"):
            autotuner = obj
        obj = getattr(obj, "fn", None)
    return TritonKernel(model, jit, autotuner)


def _wraps(obj: Any, jit: Any) -> bool:
    for _ in range(16):
        if obj is jit:
            return True
        obj = getattr(obj, "fn", None)
        if obj is None:
            return False
    return False


def locate_kernel(kernel: Any) -> tuple[str, str]:
    """``(path of the .py file, module attribute name)`` where ``kernel`` can be imported from.

    materialize-triton-variants imports that file as a fresh module and takes the attribute,
    so the kernel must be a module-level name of a real Python file. Raises
    KernelNotImportableError otherwise (a notebook cell, a closure, an interactive session).
    """
    k = unwrap_kernel(kernel)
    fn = k.jit.fn
    qual = getattr(fn, "__qualname__", fn.__name__)
    if "<locals>" in qual:
        raise KernelNotImportableError(
            f"kernel '{k.name}' is defined inside a function ({qual}); materialize-triton-variants imports "
            "kernels by file and module-level name: move it to module level, or pass kernel_source=(path, name)"
        )
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        path = None
    if not path or path.startswith("<") or not os.path.isfile(path):
        raise KernelNotImportableError(
            f"kernel '{k.name}' does not come from a Python file on disk (source: {path or 'unknown'}; "
            "a notebook cell or an interactive session?): put it in a .py file, or pass kernel_source=(path, name)"
        )
    module = sys.modules.get(getattr(fn, "__module__", ""), None)
    candidates = []
    if module is not None:
        for attr, value in vars(module).items():
            if value is kernel:
                candidates.insert(0, attr)
            elif _wraps(value, k.jit) and attr == k.name:
                candidates.append(attr)
    elif _wraps(kernel, k.jit):
        candidates.append(k.name)
    if not candidates:
        raise KernelNotImportableError(f"kernel '{k.name}' is not a module-level name of {path}; pass kernel_source=(path, name)")
    return os.path.abspath(path), candidates[0]


def captured_kernel(k: TritonKernel, why: KernelNotImportableError) -> tuple[str, str, str]:
    """``(file it was written in, kernel name, module text)`` of a kernel that cannot be
    imported by file and module-level name (made inside a function, in a notebook cell):
    its source and the values it reads, carried in the exported module as
    ``kernel_source(...)`` (:func:`autotune_export.cuda.kernel_capture.capture`), with a
    ``triton.autotune`` stand-in holding the autotuner's ``reset_to_zero`` /
    ``restore_value`` (and whether it had a ``pre_hook``) where the kernel has one, so that
    materialize-triton-variants reads them from the kernel as for a kernel file. Raises
    KernelNotImportableError naming what cannot be carried (``why`` is kept as its cause)."""
    from autotune_export.cuda import kernel_capture

    tuner = k.autotuner
    try:
        text = kernel_capture.capture(
            k.jit,
            reset_to_zero=tuple(getattr(tuner, "reset_to_zero", None) or ()),
            restore_value=tuple(getattr(tuner, "restore_value", None) or ()),
            pre_hook=bool(getattr(tuner, "user_defined_pre_hook", False)) if tuner is not None else False,
        )
    except kernel_capture.CaptureError as err:
        raise KernelNotImportableError(f"{err}; or pass kernel_source=(path, name) of a module-level kernel") from why
    fn = k.jit.fn
    return fn.__code__.co_filename, k.name, text
