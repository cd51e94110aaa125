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
  kernel's grid of "one program per SM") are therefore those of that part.

Everything else (streams, launching, ``get_device_interface()``, benchmarking) is asked of
Triton's real driver when there is one, and raises :class:`StubDriverError` otherwise, naming
what the library asked for. The real driver is not created unless something asks it.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from autotune_export.cuda.targets import max_shared_memory

__all__ = ["DEVICE_PROPERTIES", "StubDriver", "StubDriverError", "answering_for", "device_properties"]

#: Per compute capability: (multiprocessor_count, sm_clock_rate kHz, mem_clock_rate kHz,
#: mem_bus_width bits) of a representative part (NVIDIA's data sheets): A100 SXM, A10, L40S,
#: H100 SXM, B200.
_PARTS = {
    80: (108, 1410000, 1593000, 5120),
    86: (72, 1695000, 6251000, 384),
    89: (142, 2520000, 9001000, 384),
    90: (132, 1980000, 2619000, 5120),
    100: (148, 1965000, 4000000, 8192),
}

#: Registers per thread block (64 Ki 32-bit registers on every supported capability).
_MAX_REGISTERS_PER_BLOCK = 65536


def device_properties(capability: int) -> dict[str, int]:
    """What Triton's CUDA ``utils.get_device_properties(device)`` returns, for the
    representative part of ``capability`` (80 for sm_80). Raises TargetError (a ValueError)
    for an unsupported capability."""
    limit = max_shared_memory(capability)
    sms, sm_clock, mem_clock, bus = _PARTS[capability]
    return {"max_shared_mem": limit, "max_num_regs": _MAX_REGISTERS_PER_BLOCK, "multiprocessor_count": sms,
            "warpSize": 32, "sm_clock_rate": sm_clock, "mem_clock_rate": mem_clock, "mem_bus_width": bus}


#: capability -> :func:`device_properties` (for documentation and tests).
DEVICE_PROPERTIES = {cc: device_properties(cc) for cc in _PARTS}


class StubDriverError(RuntimeError):
    """A library asked the stand-in driver for something only a GPU can give (one line)."""


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
    ``capability``: compute capability it answers for (90 for sm_90)."""

    def __init__(self, capability: int):
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
            raise StubDriverError(f"device {device}: while kernel files are imported there is one device, 0 "
                                  f"(sm_{self.capability}, the export's --target)")

    def get_device_capability(self, device=0) -> tuple[int, int]:
        return divmod(self.capability, 10)

    def map_python_to_cpp_type(self, ty: str) -> str:
        return self._delegate("map_python_to_cpp_type").map_python_to_cpp_type(ty)

    def _delegate(self, what: str):
        try:
            return _real_driver()
        except Exception as err:
            raise StubDriverError(
                f"the kernel file asked Triton's driver for {what} while being imported; autotune-export "
                f"answers for the target only (sm_{self.capability}: get_current_target, get_current_device, "
                f"utils.get_device_properties) and this machine has no GPU driver ({err})"
            ) from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._delegate(name), name)

    def __repr__(self) -> str:
        return f"StubDriver(sm_{self.capability})"


_lock = threading.RLock()


@contextlib.contextmanager
def answering_for(capability: int):
    """Make ``triton.runtime.driver.active`` a :class:`StubDriver` for ``capability`` inside the
    block, and restore what was active (or nothing, if no driver had been made yet) after it.
    Reentrant and serialized across threads (the driver is process-wide)."""
    from triton.runtime.driver import driver

    with _lock:
        saved = getattr(driver, "_active", None)  # None: no driver made yet (none is made here)
        driver.set_active(StubDriver(capability))
        try:
            yield
        finally:
            driver._active = saved
