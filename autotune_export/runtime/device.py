"""The device and the module's reflection: an ``iree.runtime.Config`` for a driver with a
reason when it cannot be made (:func:`make_config`), the device's identity that keys the
tuning cache (:func:`device_identity`) and the groups a module's ``@__autotune`` describes
(:func:`module_reflection`)."""

from __future__ import annotations

import pathlib
import platform
from collections.abc import Sequence

from autotune_export.contract import AUTOTUNE_FUNCTION, REFLECTION_KEY, GroupReflection, decode_reflection

__all__ = ["module_reflection", "device_identity", "make_config"]


def module_reflection(vm_module) -> list[GroupReflection]:
    """The groups of a loaded module (an ``iree.runtime.VmModule``) from ``@__autotune``'s
    reflection metadata (:func:`autotune_export.contract.decode_reflection`). Raises
    ValueError for a module without ``@__autotune`` or without the metadata, or malformed
    metadata."""
    fn = vm_module.lookup_function(AUTOTUNE_FUNCTION)
    if fn is None:
        raise ValueError(f"the module has no @{AUTOTUNE_FUNCTION} function: was it built by autotune-export?")
    meta = fn.reflection.get(REFLECTION_KEY)
    if meta is None:
        raise ValueError(f"@{AUTOTUNE_FUNCTION} carries no {REFLECTION_KEY} reflection metadata")
    return decode_reflection(meta)


def device_identity(driver: str) -> dict:
    """``{"driver", "device", "driver_version"}`` of the first device of an IREE driver.

    The device name comes from ``iree.runtime``'s driver query (e.g. "NVIDIA H200"); the
    driver version from ``/proc/driver/nvidia/version`` for CUDA, the OS for CPU drivers.
    """
    import iree.runtime as rt

    name = "unknown"
    try:
        devices = rt.get_driver(driver).query_available_devices()
        if devices:
            name = devices[0].get("name") or devices[0].get("path") or name
    except Exception:  # noqa: BLE001 - identity is best effort; tuning still works
        pass
    version = platform.platform()
    if driver.startswith("cuda"):
        try:
            text = pathlib.Path("/proc/driver/nvidia/version").read_text()
            version = (
                text.splitlines()[0].split("Kernel Module")[-1].split()[0] if "Kernel Module" in text else text.splitlines()[0]
            )
        except OSError:
            version = "unknown"
    if name == "unknown" and not driver.startswith("cuda"):
        name = platform.processor() or platform.machine()
    return {"driver": driver, "device": name, "driver_version": version}


def make_config(rt, driver: str, allocators: Sequence[str] = ()):
    """``iree.runtime.Config(driver)``; when the driver cannot make a device, a RuntimeError
    that says which driver and what is missing (rather than IREE's "Could not create
    device").

    ``allocators``: the device's allocator specs, IREE's ``--device_allocator`` of
    iree-run-module and iree-benchmark-module (e.g. ``["caching"]``: device memory a call frees
    is kept for the next call's allocation); given, the device is made afresh for this config
    (``create_device_by_uri(driver, allocators=...)``) instead of iree.runtime's cached one.
    On CUDA the caching allocator serves a program's per-call allocations only with the runtime
    flag ``--cuda_async_allocations=false`` (parsed before the first CUDA device of the process
    is made); otherwise they go to CUDA's stream-ordered pools (docs/runtime.md, "Per-call
    allocations"). An unknown spec is a RuntimeError from iree.runtime."""
    try:
        if allocators:
            return rt.Config(device=rt.get_driver(driver).create_device_by_uri(driver, allocators=list(allocators)))
        return rt.Config(driver)
    except (RuntimeError, ValueError) as err:
        if allocators and "allocator" in str(err):
            raw = str(err).splitlines()[0]
            raise RuntimeError(
                f"cannot create a device of IREE driver '{driver}' with allocators {list(allocators)}: "
                f"{raw.rsplit(';', 1)[-1].strip()} (IREE's --device_allocator specs, e.g. caching)"
            ) from None
        raw = (str(err).splitlines()[0] if str(err) else type(err).__name__).removesuffix(" Exception for last tried follows.")
        if isinstance(err, ValueError):
            reason = "iree.runtime has no such driver (drivers: cuda, local-task, local-sync)"
        else:
            name = driver.split(":", 1)[0]
            try:
                devices = rt.get_driver(name).query_available_devices()
                reason = "no device is available" if not devices else "the device could not be opened"
            except Exception as query:  # noqa: BLE001 - the driver's own reason is the answer
                text = str(query)
                if "libcuda" in text or "nvcuda" in text:
                    reason = "the CUDA driver library libcuda.so is not installed or not on the library path (no NVIDIA driver)"
                else:
                    reason = text.splitlines()[0] if text else "the driver cannot be created"
            if name == "cuda" and "device" in reason:
                reason += " (no NVIDIA GPU visible: check nvidia-smi and CUDA_VISIBLE_DEVICES)"
        hint = " A module built with --backend llvm-cpu runs on driver='local-task'." if driver.startswith("cuda") else ""
        raise RuntimeError(f"cannot create a device of IREE driver '{driver}': {reason} (iree.runtime: {raw}).{hint}") from None
