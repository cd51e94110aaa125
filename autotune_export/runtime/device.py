"""The device and the module's reflection: an ``iree.runtime.Config`` for a driver with a
reason when it cannot be made (:func:`make_config`), the device's identity that keys the
tuning cache (:func:`device_identity`) and the groups a module's ``@__autotune`` describes
(:func:`module_reflection`)."""

from __future__ import annotations

import pathlib
import platform
import re
from collections.abc import Sequence

from autotune_export.contract import AUTOTUNE_FUNCTION, REFLECTION_KEY, GroupReflection, decode_reflection

__all__ = ["module_reflection", "device_identity", "make_config", "allocator_specs", "iree_reason", "AllocatorSpecError"]


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


class AllocatorSpecError(RuntimeError):
    """The driver refused the device's allocator specs (IREE's INVALID_ARGUMENT for a
    ``--device_allocator`` spec): the message names them and gives IREE's reason
    (:func:`make_config`). A RuntimeError, as iree.runtime's own errors are."""


def runtime_flag_problem(flag: str) -> str | None:
    """Why ``flag`` (an ``iree.runtime`` flag, ``iree_flags`` / ``tune --iree-flag``) cannot be
    taken, or None: IREE's ``--device_allocator``, which iree.runtime's flag registry accepts but
    a device made by ``iree.runtime.Config`` (:func:`make_config`) never reads, so it would be
    silently ignored; the allocators are ``device_allocators``. The one rule for both."""
    if flag.lstrip("-").split("=", 1)[0] == "device_allocator":
        return (
            f"{flag}: a device iree.runtime makes does not read IREE's --device_allocator flag; "
            'give the allocators as device_allocators (e.g. ["caching"]; tune: --device-allocator caching)'
        )
    return None


def allocator_specs(allocators) -> list[str]:
    """``allocators`` (a sequence of IREE ``--device_allocator`` specs, e.g. ``["caching"]``;
    None: none, IREE's default allocator) as a list of str. Raises TypeError for a str (which
    would otherwise be read as one spec per character) and for a non-str element (iree.runtime
    answers it with a bare ``std::bad_cast``). The one check behind
    :class:`~autotune_export.runtime.tuner.AutotunedModule`'s ``device_allocators`` and
    :func:`make_config`."""
    if allocators is None:
        return []
    if isinstance(allocators, str):
        raise TypeError('device_allocators is a sequence of allocator specs, e.g. ["caching"], not a str')
    try:
        specs = list(allocators)
    except TypeError:
        raise TypeError(f'device_allocators is a sequence of allocator specs, e.g. ["caching"], not {allocators!r}') from None
    for spec in specs:
        if not isinstance(spec, str):
            raise TypeError(f'device_allocators: {spec!r} is not an allocator spec (a str such as "caching")')
    return specs


#: IREE's status text, ``file:line: CODE; message`` (iree_status_format), as iree.runtime puts it
#: after its own context ("Error creating driver: ...").
_IREE_STATUS = re.compile(r":\d+: ([A-Z][A-Z_]*); ")


def iree_reason(text: str) -> tuple[str | None, str]:
    """``(status code, message)`` of the first IREE status in an iree.runtime error text:
    ``"...: c/runtime/src/iree/base/bitfield.c:60: INVALID_ARGUMENT; unrecognized bitfield
    member 'foo'"`` -> ``("INVALID_ARGUMENT", "unrecognized bitfield member 'foo'")``. The
    message is the rest of the status's line, whole (a ``;`` inside a quoted name stays in
    it); without a status, ``(None, first line)``."""
    line = text.splitlines()[0] if text else ""
    found = _IREE_STATUS.search(line)
    if found is None:
        return None, line
    return found.group(1), line[found.end() :].strip()


def make_config(rt, driver: str, allocators: Sequence[str] | None = ()):
    """``iree.runtime.Config(driver)``; when the driver cannot make a device, a RuntimeError
    that says which driver (and allocators) and what is missing (rather than IREE's "Could not
    create device").

    ``allocators``: the device's allocator specs, IREE's ``--device_allocator`` of
    iree-run-module and iree-benchmark-module (e.g. ``["caching"]``: device memory a call frees
    is kept for the next call's allocation; checked by :func:`allocator_specs`); given, the
    device is made afresh for this config (``create_device_by_uri(driver, allocators=...)``)
    instead of iree.runtime's cached one. On CUDA the caching allocator serves a program's
    per-call allocations only with the runtime flag ``--cuda_async_allocations=false`` (parsed
    before the first CUDA device of the process is made); otherwise they go to CUDA's
    stream-ordered pools (docs/runtime.md, "Per-call allocations"). A spec the driver refuses
    (IREE's INVALID_ARGUMENT) is an :class:`AllocatorSpecError` (a RuntimeError) naming the
    allocators with IREE's own reason (e.g. ``unrecognized bitfield member 'foo'`` for
    ``caching:foo=1``); any other failure names them too, with the driver's reason. Raises TypeError for specs that are not a
    sequence of str (:func:`allocator_specs`)."""
    allocators = allocator_specs(allocators)
    made_by = f" with allocators {allocators}" if allocators else ""
    if allocators:
        try:
            hal_driver = rt.get_driver(driver)
        except (RuntimeError, ValueError) as err:
            _refuse(rt, driver, made_by, err)
        try:
            return rt.Config(device=hal_driver.create_device_by_uri(driver, allocators=allocators))
        except (RuntimeError, ValueError) as err:
            code, reason = iree_reason(str(err))
            if code != "INVALID_ARGUMENT":  # not the specs: the driver's own reason
                _refuse(rt, driver, made_by, err)
            raise AllocatorSpecError(
                f"cannot create a device of IREE driver '{driver}'{made_by}: "
                f"{reason or type(err).__name__} (IREE's --device_allocator specs, e.g. caching)"
            ) from None
    try:
        return rt.Config(driver)
    except (RuntimeError, ValueError) as err:
        _refuse(rt, driver, made_by, err)


def _refuse(rt, driver: str, made_by: str, err: Exception):
    """Raise the RuntimeError of :func:`make_config` for a driver that made no device (``err``:
    iree.runtime's error): the driver's own reason, asked from ``rt.get_driver``; "no such
    driver" only when IREE has no driver of that name."""
    raw = (str(err).splitlines()[0] if str(err) else type(err).__name__).removesuffix(" Exception for last tried follows.")
    name = driver.split(":", 1)[0]
    try:
        devices = rt.get_driver(name).query_available_devices()
        reason = "no device is available" if not devices else "the device could not be opened"
    except Exception as query:  # noqa: BLE001 - the driver's own reason is the answer
        text = str(query)
        code, message = iree_reason(text)
        if "libcuda" in text or "nvcuda" in text:
            reason = "the CUDA driver library libcuda.so is not installed or not on the library path (no NVIDIA driver)"
        elif code == "NOT_FOUND" and "no driver" in message:
            reason = "iree.runtime has no such driver (drivers: cuda, local-task, local-sync)"
        else:
            reason = message or "the driver cannot be created"
    if name == "cuda" and "device" in reason:
        reason += " (no NVIDIA GPU visible: check nvidia-smi and CUDA_VISIBLE_DEVICES)"
    hint = " A module built with --backend llvm-cpu runs on driver='local-task'." if driver.startswith("cuda") else ""
    raise RuntimeError(
        f"cannot create a device of IREE driver '{driver}'{made_by}: {reason} (iree.runtime: {raw}).{hint}"
    ) from None
