"""A stand-in for Triton's active driver while a kernel file is imported, so that libraries that
query the GPU when they are imported can be exported on a machine without one.

Libraries pick configs, block sizes or code paths when their module is imported, from what
Triton's driver says about the current GPU::

    target = triton.runtime.driver.active.get_current_target()        # GPUTarget("cuda", 90, 32)
    NUM_SMS = triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]

With no GPU (and no libcuda) Triton has no active driver, so such a module fails to import
("0 active drivers"). :func:`answering_for` makes ``triton.runtime.driver.active`` a
:class:`StubDriver` for the duration of an import: it answers for the compute capability the
variants are compiled for (``--target``), not for whatever GPU the build machine has, so an
export depends on its inputs only. It answers:

* ``get_current_target()`` -> ``GPUTarget("cuda", capability, 32)``;
* ``get_current_device()`` -> 0, ``set_current_device(0)``, ``get_device_capability(device)``
  -> ``(major, minor)``;
* ``utils.get_device_properties(device)`` -> the keys of Triton's CUDA driver
  (``max_shared_mem``, ``max_num_regs``, ``multiprocessor_count``, ``warpSize``,
  ``sm_clock_rate`` and ``mem_clock_rate`` in kHz, ``mem_bus_width`` in bits), from
  :data:`DEVICE_PROPERTIES`: the opt-in shared memory limit of
  :mod:`autotune_export.cuda.targets`, and SM count, clocks and bus width of one
  representative data-center part per capability (sm_80 A100 SXM, sm_86 A10, sm_89 L40S,
  sm_90 H100 SXM, sm_100 B200). Values derived from these at import time (a persistent
  kernel's grid of "one program per SM") are therefore those of that part;
* ``get_active_torch_device()`` -> ``torch.device("cuda", 0)`` and ``get_device_interface()``
  -> ``torch.cuda`` (as Triton's CUDA driver answers), when PyTorch is installed.

Everything else (streams, launching, benchmarking) is asked of Triton's real driver when there
is one, and raises :class:`StubDriverError` otherwise, naming what the library asked for. The
real driver is not created unless something asks it.

PyTorch, when the kernel file (or anything it imports) imports it inside the block, answers for
the same part (:func:`torch_device_properties`), by two mechanisms installed for the block only:

* the functions of ``torch.cuda`` that describe the device are replaced in the module's
  namespace (``is_available`` True, ``device_count`` 1, ``current_device`` 0,
  ``set_device(0)``, ``get_device_capability`` ``(9, 0)`` for sm_90, ``get_device_name``,
  ``get_device_properties`` a :class:`CudaDeviceProperties`); torch offers no documented way
  to describe a device that is not there, and replacing module attributes is what
  ``unittest.mock.patch`` does. Code inside ``torch.cuda`` that calls them (``is_bf16_supported``)
  sees them too. A replaced function kept by the module (``from torch.cuda import
  get_device_properties``) answers with the real one once the block has ended;
* a ``torch.overrides.TorchFunctionMode`` (torch's documented hook that sees every call of a
  torch function or tensor method, ``torch/overrides.py``; the same mechanism as
  ``torch.device("meta")`` used as a context manager, ``torch/utils/_device.py``) puts tensors
  that would be made on the GPU on the ``meta`` device instead: a ``device=`` argument that is
  ``"cuda"``, ``"cuda:N"``, a ``torch.device`` of type ``cuda`` or an int (``torch.empty(n,
  device="cuda")``, ``torch.zeros(n, device=DEVICE)``), ``x.to("cuda")``/``x.to(DEVICE)`` and
  ``x.cuda()``; ``torch.device("cuda")`` itself stays what it is. A meta tensor has a
  shape, a dtype and strides but no data: module-level workspaces and lookup tables import;
  reading their values (``.item()``, ``.tolist()``, ``.cpu()``) is an error. Torch function
  modes are per thread: tensors made by other threads are not moved.

Probes by other means, for the block too (:class:`~autotune_export.cuda.stub_probes.ProbeStandIns`): ``subprocess.Popen`` (what
``run``, ``check_output``, ``call`` and ``os.popen`` create) is a subclass that answers
``nvidia-smi --query-gpu=... --format=csv`` for the target (:func:`nvidia_smi_output`) and
refuses other uses of the tool naming the file:line that ran it; the class of ``os.environ``
is a subclass that records reads of GPU-related variables (:data:`GPU_VARIABLE`,
:class:`EnvironmentReads`), so that a failed import names the last one the library read.

When torch is not imported yet, a finder at the front of ``sys.meta_path`` installs both as soon
as an ``import torch`` inside the block has finished (so a kernel file that does not use torch
does not pay for importing it); a torch that is not installed changes nothing.

The parts answered for and the error are in :mod:`.stub_device`, PyTorch's stand-ins in
:mod:`.stub_torch`, the probes (``nvidia-smi``, environment variables) in :mod:`.stub_probes`.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any

from autotune_export.cuda.stub_device import (
    DEVICE_PROPERTIES,
    CudaDeviceProperties,
    StubDriverError,
    answering_capability,
    answering_stack,
    device_properties,
    torch_device_properties,
)
from autotune_export.cuda.stub_probes import GPU_VARIABLE, EnvironmentReads, ProbeStandIns, nvidia_smi_output
from autotune_export.cuda.stub_torch import TORCH_CUDA_FUNCTIONS, TorchImportWatch, TorchStandIns
from autotune_export.cuda.targets import max_shared_memory

__all__ = [
    "DEVICE_PROPERTIES",
    "CudaDeviceProperties",
    "EnvironmentReads",
    "GPU_VARIABLE",
    "StubDriver",
    "StubDriverError",
    "TORCH_CUDA_FUNCTIONS",
    "answering_for",
    "answering_capability",
    "device_properties",
    "nvidia_smi_output",
    "torch_device_properties",
]


def _real_driver():
    from triton.runtime.driver import driver

    return driver.default  # RuntimeError("0 active drivers ...") without a GPU


class _StubUtils:
    """``driver.active.utils``: device properties and the current device; the rest from the
    real driver's utils."""

    def __init__(self, owner: "StubDriver"):
        self._owner = owner

    def get_device_properties(self, device=0) -> dict[str, int]:
        return device_properties(self._owner.capability)

    def get_device_capability(self, device=0) -> tuple[int, int]:
        return self._owner.get_device_capability(device)

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        self._owner.set_current_device(device)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner._delegate(f"utils.{name}").utils, name)


class StubDriver:
    """Triton's active driver while a kernel file is imported (see the module doc).
    ``capability``: compute capability it answers for (90 for sm_90); ``during``: what runs
    meanwhile, for its errors ("while the kernel file was imported")."""

    def __init__(self, capability: int, during: str = "while the kernel file was imported"):
        self.during = during
        max_shared_memory(capability)  # validates (TargetError)
        self.capability = int(capability)
        self.utils = _StubUtils(self)

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget

        return GPUTarget("cuda", self.capability, 32)

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        if int(device) != 0:
            raise StubDriverError(
                f"device {device}: while kernel files are imported there is one device, 0 "
                f"(sm_{self.capability}, the export's --target)"
            )

    def get_device_capability(self, device=0) -> tuple[int, int]:
        return divmod(self.capability, 10)

    def get_active_torch_device(self):
        """``torch.device("cuda", 0)``, as Triton's CUDA driver answers (tensors made on it
        while the file is imported are put on ``meta``: see the module doc)."""
        return _torch(f"get_active_torch_device() (sm_{self.capability})").device("cuda", 0)

    def get_device_interface(self):
        """``torch.cuda``, as Triton's CUDA driver answers (its device queries answer for the
        target while the file is imported)."""
        return _torch(f"get_device_interface() (sm_{self.capability})").cuda

    def map_python_to_cpp_type(self, ty: str) -> str:
        return self._delegate("map_python_to_cpp_type").map_python_to_cpp_type(ty)

    def _delegate(self, what: str):
        try:
            return _real_driver()
        except Exception as err:
            raise StubDriverError(
                f"Triton's driver was asked for {what} {self.during}; autotune-export "
                f"answers for the target only (sm_{self.capability}: get_current_target, get_current_device, "
                f"utils.get_device_properties) and this machine has no GPU driver ({err})"
            ) from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._delegate(name), name)

    def __repr__(self) -> str:
        return f"StubDriver(sm_{self.capability})"


def _answer_as_cuda_driver() -> None:
    """Make a :class:`StubDriver` an instance of Triton's CUDA driver class for ``isinstance``
    (a virtual subclass: ``CudaDriver.register``), as it answers in its place. Kernel files
    that torch.compile (Inductor) writes call ``triton_helpers.set_driver_to_gpu()`` when
    imported: it keeps the active driver when it is an instance of the active GPU backend's
    driver class, and otherwise makes that class's driver (which needs libcuda). Methods the
    stub does not answer still raise :class:`StubDriverError` naming them. Idempotent; does
    nothing when Triton has no CUDA backend."""
    try:
        from triton.backends.nvidia.driver import CudaDriver
    except Exception:  # noqa: BLE001 - a Triton built without its NVIDIA backend
        return
    if not issubclass(StubDriver, CudaDriver):
        CudaDriver.register(StubDriver)


_lock = threading.RLock()

#: GPU-related environment variables read inside the outermost :func:`~autotune_export.cuda.stub_driver.answering_for` block.
_reads: "EnvironmentReads | None" = None


def _torch(what: str):
    """The torch module, for a query that needs it. Raises StubDriverError without torch."""
    try:
        import torch
    except ImportError as err:
        raise StubDriverError(f"the kernel file asked Triton's driver for {what}, which needs PyTorch ({err})") from None
    return torch


@contextlib.contextmanager
def answering_for(capability: int, during: str = "while the kernel file was imported"):
    """Make ``triton.runtime.driver.active`` a :class:`StubDriver` for ``capability`` inside the
    block, and restore what was active (or nothing, if no driver had been made yet) after it;
    PyTorch's device queries and GPU tensors are answered for the same part while the block
    runs, once torch is imported (see the module doc). Reentrant (an inner block answers for
    its own capability) and serialized across threads (the driver is process-wide).
    Also for the block (outermost): ``nvidia-smi`` run through :mod:`subprocess` answers for
    the target (:func:`nvidia_smi_output`) or raises StubDriverError naming the file:line that
    ran it, and reads of GPU-related environment variables are recorded: the block yields the
    :class:`EnvironmentReads`, and an exception leaving it gets a note (``add_note``) naming
    the last variable read.
    ``during`` says what runs inside, in the errors of what is not answered. Raises
    :class:`~autotune_export.cuda.targets.TargetError` for a capability without a target."""
    from triton.runtime.driver import driver

    stub = StubDriver(capability, during)
    _answer_as_cuda_driver()
    with _lock:
        saved = getattr(driver, "_active", None)  # None: no driver made yet (none is made here)
        driver.set_active(stub)
        answering_stack.append(stub.capability)
        outermost = len(answering_stack) == 1
        stand_ins: list = []
        watch = None
        global _reads
        try:
            if outermost:
                _reads = EnvironmentReads()
                stand_ins.append(ProbeStandIns(_reads))
                if "torch" in sys.modules:
                    stand_ins.append(TorchStandIns(sys.modules["torch"]))
                else:
                    watch = TorchImportWatch(lambda torch: stand_ins.append(TorchStandIns(torch)))
                    sys.meta_path.insert(0, watch)
            reads = _reads
            try:
                yield reads
            except BaseException as err:
                if outermost and reads.hint() and isinstance(err, Exception) and reads.hint() not in str(err):
                    err.add_note(f"{during}, {reads.hint()}")
                raise
        finally:
            if watch is not None:
                with contextlib.suppress(ValueError):
                    sys.meta_path.remove(watch)
            try:
                with contextlib.ExitStack() as undo:  # each undone, last installed first, even if one raises
                    for s in stand_ins:
                        undo.callback(s.close)
            finally:
                answering_stack.pop()
                driver._active = saved
