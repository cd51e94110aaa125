"""PyTorch's device queries and GPU tensors while a kernel file is imported: the ``torch.cuda``
functions that describe the device answer for the target's part, and tensors made for the GPU
go to the ``meta`` device (see :mod:`autotune_export.cuda.stub_driver`'s module doc, which
installs them for an :func:`~autotune_export.cuda.stub_driver.answering_for` block)."""

from __future__ import annotations

import importlib.abc
import re
import sys
from typing import Callable

from autotune_export.cuda.stub_device import StubDriverError, answering_capability, torch_device_properties


#: The functions of ``torch.cuda`` replaced inside an :func:`~autotune_export.cuda.stub_driver.answering_for` block.
TORCH_CUDA_FUNCTIONS = (
    "is_available",
    "device_count",
    "current_device",
    "set_device",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
)

_CUDA_TEXT = re.compile(r"cuda(:\d+)?")


def _device_index(torch, device, capability: int) -> int:
    """The device index torch's ``_get_device_index`` reads from ``device`` (None, an int,
    ``"cuda"``/``"cuda:0"``, a ``torch.device``); only 0 exists. Raises StubDriverError."""
    if device is None:
        return 0
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "cuda":
            raise StubDriverError(f"torch.cuda was asked about device '{device}', which is not a CUDA device")
        index = 0 if device.index is None else device.index
    else:
        index = int(device)
    if index != 0:
        raise StubDriverError(
            f"device {index}: while kernel files are imported there is one CUDA device, 0 "
            f"(sm_{capability}, the export's --target)"
        )
    return index


def _torch_cuda_functions(torch, real: dict[str, Callable]) -> dict[str, Callable]:
    """Stand-ins for :data:`TORCH_CUDA_FUNCTIONS`: each answers for
    :func:`answering_capability`, and calls the real function (``real``) outside every block."""

    def answer(name: str, fn: Callable) -> Callable:
        def stand_in(*args, **kwargs):
            cc = answering_capability()
            return real[name](*args, **kwargs) if cc is None else fn(cc, *args, **kwargs)

        stand_in.__name__ = stand_in.__qualname__ = name
        stand_in.__doc__ = f"torch.cuda.{name}, answering for the export's --target (autotune_export.cuda.stub_driver)"
        return stand_in

    def set_device(cc, device):
        _device_index(torch, device, cc)

    def get_device_capability(cc, device=None):
        _device_index(torch, device, cc)
        return divmod(cc, 10)

    def get_device_name(cc, device=None):
        _device_index(torch, device, cc)
        return torch_device_properties(cc).name

    def get_device_properties(cc, device=None):
        _device_index(torch, device, cc)
        return torch_device_properties(cc)

    table = {
        "is_available": lambda cc: True,
        "device_count": lambda cc: 1,
        "current_device": lambda cc: 0,
        "set_device": set_device,
        "get_device_capability": get_device_capability,
        "get_device_name": get_device_name,
        "get_device_properties": get_device_properties,
    }
    return {name: answer(name, fn) for name, fn in table.items()}


def _meta_mode(torch):
    """A ``TorchFunctionMode`` that puts tensors made for the GPU on the ``meta`` device."""
    meta = torch.device("meta")
    to_cuda, to = torch.Tensor.cuda, torch.Tensor.to

    def on_gpu(value) -> bool:
        if isinstance(value, torch.device):
            return value.type == "cuda"
        return isinstance(value, str) and _CUDA_TEXT.fullmatch(value) is not None

    class CudaTensorsOnMeta(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is to_cuda:  # x.cuda(device=None, non_blocking=False)
                return args[0].to(meta)
            device = kwargs.get("device")
            if on_gpu(device) or (isinstance(device, int) and not isinstance(device, bool)):
                kwargs["device"] = meta  # torch.empty(n, device="cuda"), device=0, device=DEVICE
            if func is to:  # x.to("cuda"), x.to(DEVICE, torch.float16)
                args = tuple(meta if on_gpu(a) else a for a in args)
            return func(*args, **kwargs)

    return CudaTensorsOnMeta()


class TorchStandIns:
    """The replaced ``torch.cuda`` functions and the entered meta-device mode, undone by
    :meth:`close` (same thread)."""

    def __init__(self, torch):
        self._torch = torch
        self._saved = {name: getattr(torch.cuda, name) for name in TORCH_CUDA_FUNCTIONS}
        for name, fn in _torch_cuda_functions(torch, self._saved).items():
            setattr(torch.cuda, name, fn)
        self._mode = _meta_mode(torch)
        self._mode.__enter__()

    def close(self) -> None:
        try:
            self._mode.__exit__(None, None, None)
        finally:
            for name, fn in self._saved.items():
                setattr(self._torch.cuda, name, fn)


class _AfterExec(importlib.abc.Loader):
    """The loader of ``torch`` while its import is watched: runs the real loader, gives the
    module its real loader back, then calls ``then(module)``."""

    def __init__(self, loader, then: Callable):
        self._loader, self._then = loader, then

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._then(module)


class TorchImportWatch(importlib.abc.MetaPathFinder):
    """At the front of ``sys.meta_path`` inside an :func:`~autotune_export.cuda.stub_driver.answering_for` block while torch is
    not imported: finds ``torch`` with the finders after it and calls ``then(torch)`` once
    its import has finished."""

    def __init__(self, then: Callable):
        self._then = then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _AfterExec(spec.loader, self._then)
                return spec
        return None
