"""The device the stand-ins of :mod:`autotune_export.cuda.stub_driver` answer for: one
representative data-center part per compute capability (what Triton's driver, PyTorch and
``nvidia-smi`` are told about it), the error raised for what only a GPU can give, and the
capability answered for now."""

from __future__ import annotations

import dataclasses

from autotune_export.cuda.targets import max_shared_memory


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
    return {
        "max_shared_mem": limit,
        "max_num_regs": _MAX_REGISTERS_PER_BLOCK,
        "multiprocessor_count": sms,
        "warpSize": 32,
        "sm_clock_rate": sm_clock,
        "mem_clock_rate": mem_clock,
        "mem_bus_width": bus,
    }


#: capability -> :func:`device_properties` (for documentation and tests).
DEVICE_PROPERTIES = {cc: device_properties(cc) for cc in _PARTS}

#: Per compute capability, more of the same part for PyTorch: (the name torch reports, memory
#: in MiB as nvidia-smi reports it, resident threads per SM from the CUDA C++ Programming
#: Guide's table of compute capabilities).
TORCH_PARTS = {
    80: ("NVIDIA A100-SXM4-80GB", 81920, 2048),
    86: ("NVIDIA A10", 23028, 1536),
    89: ("NVIDIA L40S", 46068, 1536),
    90: ("NVIDIA H100 80GB HBM3", 81559, 2048),
    100: ("NVIDIA B200", 183359, 2048),
}

#: Shared memory a block may use without opting in (48 KiB), and what CUDA reserves per block
#: out of an SM's shared memory (1 KiB: the SM has the opt-in limit plus 1 KiB).
_SHARED_PER_BLOCK = 49152
_RESERVED_SHARED_PER_BLOCK = 1024


class StubDriverError(RuntimeError):
    """A library asked the stand-in driver for something only a GPU can give (one line)."""


class _UnansweredProperty(AttributeError):
    """A field of :class:`CudaDeviceProperties` that is not answered (an AttributeError, so
    ``getattr(props, name, default)`` and ``hasattr`` work as with torch's object)."""


@dataclasses.dataclass(frozen=True)
class CudaDeviceProperties:
    """What ``torch.cuda.get_device_properties(d)`` returns while a kernel file is imported: the
    fields of torch's ``_CudaDeviceProperties`` (``torch/_C/__init__.pyi``; CUDA's
    ``cudaDeviceProp``) that do not vary between boards of a part. Units: ``total_memory`` and
    the ``shared_memory_*`` fields bytes, ``clock_rate`` and ``memory_clock_rate`` kHz,
    ``memory_bus_width`` bits. Another field (``uuid``, ``L2_cache_size``, PCI ids) raises an
    AttributeError naming the fields answered."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int
    max_threads_per_multi_processor: int
    warp_size: int
    regs_per_multiprocessor: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    shared_memory_per_multiprocessor: int
    clock_rate: int
    memory_clock_rate: int
    memory_bus_width: int
    is_integrated: int = 0
    is_multi_gpu_board: int = 0

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        answered = ", ".join(f.name for f in dataclasses.fields(self))
        raise _UnansweredProperty(
            f"torch.cuda.get_device_properties(): '{name}' is not answered while kernel files are "
            f"imported (autotune-export answers for sm_{self.major}{self.minor}, the export's "
            f"--target: {answered})"
        )


def torch_device_properties(capability: int) -> CudaDeviceProperties:
    """What ``torch.cuda.get_device_properties()`` answers for ``capability`` (90 for sm_90):
    the representative part of :func:`device_properties` (same SM count, clocks, bus width and
    opt-in shared memory). Raises TargetError (a ValueError) for an unsupported capability."""
    triton_props = device_properties(capability)
    name, mib, threads = TORCH_PARTS[capability]
    major, minor = divmod(capability, 10)
    optin = triton_props["max_shared_mem"]
    return CudaDeviceProperties(
        name=name,
        major=major,
        minor=minor,
        total_memory=mib * 1024 * 1024,
        multi_processor_count=triton_props["multiprocessor_count"],
        max_threads_per_multi_processor=threads,
        warp_size=32,
        regs_per_multiprocessor=_MAX_REGISTERS_PER_BLOCK,
        shared_memory_per_block=_SHARED_PER_BLOCK,
        shared_memory_per_block_optin=optin,
        shared_memory_per_multiprocessor=optin + _RESERVED_SHARED_PER_BLOCK,
        clock_rate=triton_props["sm_clock_rate"],
        memory_clock_rate=triton_props["mem_clock_rate"],
        memory_bus_width=triton_props["mem_bus_width"],
    )


#: Capabilities answered for by the enclosing :func:`~autotune_export.cuda.stub_driver.answering_for` blocks, innermost last
#: (changed under :mod:`~autotune_export.cuda.stub_driver`'s lock).
answering_stack: list[int] = []


def answering_capability() -> int | None:
    """The compute capability the stand-ins answer for now (the innermost
    :func:`~autotune_export.cuda.stub_driver.answering_for`), or None outside every block."""
    return answering_stack[-1] if answering_stack else None
