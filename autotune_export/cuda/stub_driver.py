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

Probes by other means, for the block too (:class:`_ProbeStandIns`): ``subprocess.Popen`` (what
``run``, ``check_output``, ``call`` and ``os.popen`` create) is a subclass that answers
``nvidia-smi --query-gpu=... --format=csv`` for the target (:func:`nvidia_smi_output`) and
refuses other uses of the tool naming the file:line that ran it; the class of ``os.environ``
is a subclass that records reads of GPU-related variables (:data:`GPU_VARIABLE`,
:class:`EnvironmentReads`), so that a failed import names the last one the library read.

When torch is not imported yet, a finder at the front of ``sys.meta_path`` installs both as soon
as an ``import torch`` inside the block has finished (so a kernel file that does not use torch
does not pay for importing it); a torch that is not installed changes nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.abc
import re
import sys
import threading
from typing import Any, Callable

from autotune_export.cuda.targets import max_shared_memory

__all__ = [
    "DEVICE_PROPERTIES",
    "CudaDeviceProperties",
    "EnvironmentReads",
    "GPU_VARIABLE",
    "StubDriver",
    "StubDriverError",
    "answering_for",
    "answering_capability",
    "device_properties",
    "nvidia_smi_output",
    "torch_device_properties",
]

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
_TORCH_PARTS = {
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
    name, mib, threads = _TORCH_PARTS[capability]
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

#: GPU-related environment variables read inside the outermost :func:`answering_for` block.
_reads: "EnvironmentReads | None" = None

#: Capabilities answered for by the enclosing :func:`answering_for` blocks, innermost last
#: (changed under ``_lock``).
_answering: list[int] = []


def answering_capability() -> int | None:
    """The compute capability the stand-ins answer for now (the innermost
    :func:`answering_for`), or None outside every block."""
    return _answering[-1] if _answering else None


def _torch(what: str):
    """The torch module, for a query that needs it. Raises StubDriverError without torch."""
    try:
        import torch
    except ImportError as err:
        raise StubDriverError(f"the kernel file asked Triton's driver for {what}, which needs PyTorch ({err})") from None
    return torch


# --------------------------------------------------------------------------------------------
# PyTorch's device queries and GPU tensors while a kernel file is imported (see the module doc)

#: The functions of ``torch.cuda`` replaced inside an :func:`answering_for` block.
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


class _TorchStandIns:
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


class _TorchImportWatch(importlib.abc.MetaPathFinder):
    """At the front of ``sys.meta_path`` inside an :func:`answering_for` block while torch is
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
        _answering.append(stub.capability)
        outermost = len(_answering) == 1
        stand_ins: list = []
        watch = None
        global _reads
        try:
            if outermost:
                _reads = EnvironmentReads()
                stand_ins.append(_ProbeStandIns(_reads))
                if "torch" in sys.modules:
                    stand_ins.append(_TorchStandIns(sys.modules["torch"]))
                else:
                    watch = _TorchImportWatch(lambda torch: stand_ins.append(_TorchStandIns(torch)))
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
                _answering.pop()
                driver._active = saved


# --------------------------------------------------------------------------------------------
# Machine probes outside torch and Triton: nvidia-smi and GPU-related environment variables

#: ``nvidia-smi --query-gpu`` fields answered (nvidia-smi's own field names, ``nvidia-smi
#: --help-query-gpu``): field -> (CSV header, value for a capability, unit nvidia-smi appends).
_SMI_FIELDS: dict[str, tuple[str, Callable[[int], str], str]] = {
    "compute_cap": ("compute_cap", lambda cc: "%d.%d" % divmod(cc, 10), ""),
    "name": ("name", lambda cc: _TORCH_PARTS[cc][0], ""),
    "gpu_name": ("name", lambda cc: _TORCH_PARTS[cc][0], ""),
    "count": ("count", lambda cc: "1", ""),
    "index": ("index", lambda cc: "0", ""),
    "memory.total": ("memory.total [MiB]", lambda cc: str(_TORCH_PARTS[cc][1]), " MiB"),
}

#: Environment variables whose value would differ on a GPU machine (matched in the name,
#: case-insensitively): what :class:`_WatchedEnviron` records.
GPU_VARIABLE = re.compile(r"CUDA|NVIDIA|GPU|ARCH", re.IGNORECASE)

_SUBPROCESS_FILES = ("subprocess.py", "os.py", "_collections_abc.py", "stub_driver.py")
_FROZEN_STDLIB = ("<frozen os>", "<frozen _collections_abc>")  # Python 3.11+ runs these frozen


def _caller(skip_packages: bool = False) -> str | None:
    """``file:line`` of the innermost frame outside :mod:`subprocess`, :mod:`os` and this
    module (the library code that asked); with ``skip_packages`` None when that frame is in
    Triton, PyTorch or autotune-export (their own reads are not the library's)."""
    frame = sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename.endswith(_SUBPROCESS_FILES) or frame.f_code.co_filename in _FROZEN_STDLIB
    ):
        frame = frame.f_back
    if frame is None:
        return None
    name = frame.f_code.co_filename
    if skip_packages and re.search(r"[/\\](triton|torch|autotune_export|importlib)[/\\]|<frozen ", name):
        return None
    return f"{name}:{frame.f_lineno}"


def nvidia_smi_output(capability: int, args: list[str], where: str = "the kernel file") -> str:
    """What ``nvidia-smi`` prints for ``args`` (its arguments, argv[1:]) on the representative
    part of ``capability`` (90 for sm_90, see :data:`DEVICE_PROPERTIES`): only ``--query-gpu=F,...``
    (fields of :data:`_SMI_FIELDS`: ``compute_cap`` ``"9.0"``, ``name``, ``count``, ``index``,
    ``memory.total`` in MiB) with ``--format=csv[,noheader][,nounits]`` and optionally ``-i 0``
    / ``--id=0``, in nvidia-smi's CSV layout (``", "`` between fields, a header line unless
    ``noheader``). Raises StubDriverError naming ``nvidia-smi``, what is not answered and
    ``where`` (the file:line that ran it) for anything else (the full table, ``-L``, other
    fields or devices)."""

    def refuse(what: str):
        raise StubDriverError(
            f"{where} ran nvidia-smi {' '.join(args)}".rstrip() + f": {what}; while kernel files are imported "
            f"autotune-export answers only nvidia-smi --query-gpu=<{','.join(_SMI_FIELDS)}> --format=csv[,noheader]"
            f"[,nounits] for sm_{capability} (the export's --target)"
        )

    fields: list[str] | None = None
    fmt: list[str] | None = None
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--query-gpu="):
            fields = [f.strip() for f in a.split("=", 1)[1].split(",") if f.strip()]
        elif a.startswith("--format="):
            fmt = [f.strip() for f in a.split("=", 1)[1].split(",")]
        elif a in ("-i", "--id") or a.startswith("--id="):
            value = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            i += 0 if "=" in a else 1
            if value != "0":
                refuse(f"device '{value}' is not answered (there is one device, 0)")
        else:
            refuse(f"'{a}' is not answered")
        i += 1
    if fields is None or fmt is None or not fmt or fmt[0] != "csv" or set(fmt[1:]) - {"noheader", "nounits"}:
        refuse("only --query-gpu with --format=csv is answered")
    unknown = [f for f in fields if f not in _SMI_FIELDS]
    if unknown or not fields:
        refuse(f"field {', '.join(map(repr, unknown)) or 'list'} is not answered")
    rows = []
    if "noheader" not in fmt:
        rows.append(", ".join(_SMI_FIELDS[f][0] for f in fields))  # units stay in the header with nounits
    rows.append(", ".join(_SMI_FIELDS[f][1](capability) + ("" if "nounits" in fmt else _SMI_FIELDS[f][2]) for f in fields))
    return "\n".join(rows) + "\n"


def _argv(args, shell: bool) -> list[str]:
    """The argument vector ``subprocess.Popen(args, shell=shell)`` runs (a shell command line
    split as the shell would split a simple command)."""
    import os
    import shlex

    if isinstance(args, (str, bytes, os.PathLike)):
        text = os.fsdecode(args)
        if not shell:
            return [text]
        try:
            return shlex.split(text)
        except ValueError:
            return [text]
    return [os.fsdecode(a) if isinstance(a, (str, bytes, os.PathLike)) else str(a) for a in args]


def _answering_popen(real_popen):
    """A subclass of ``subprocess.Popen`` (``real_popen``) that, inside an :func:`answering_for`
    block, runs ``nvidia-smi`` (argv[0], any directory) as a process that prints
    :func:`nvidia_smi_output` for the target and exits 0 (so ``run``, ``check_output``,
    pipes and ``communicate`` behave as with the real tool), or raises StubDriverError naming
    the file:line that ran it. Any other program runs as it is."""
    import os

    class Popen(real_popen):
        def __init__(self, args, *rest, **kwargs):
            cc = answering_capability()
            argv = _argv(args, bool(kwargs.get("shell")))
            if cc is not None and argv and os.path.basename(argv[0]) in ("nvidia-smi", "nvidia-smi.exe"):
                out = nvidia_smi_output(cc, argv[1:], _caller() or "the kernel file")
                kwargs.pop("executable", None)
                kwargs["shell"] = False
                args = [sys.executable, "-I", "-S", "-c", "import sys; sys.stdout.write(sys.argv[1])", out]
            super().__init__(args, *rest, **kwargs)

    Popen.__qualname__ = Popen.__name__ = "Popen"
    Popen.__module__ = real_popen.__module__
    return Popen


class EnvironmentReads:
    """The GPU-related environment variables (:data:`GPU_VARIABLE`) read by code outside
    Triton, PyTorch and autotune-export while an :func:`answering_for` block runs
    (``os.environ[...]``, ``os.environ.get``, ``os.getenv``, ``in os.environ``), in order:
    ``reads`` is a list of (name, value or None when unset, file:line)."""

    def __init__(self):
        self.reads: list[tuple[str, str | None, str]] = []

    def hint(self) -> str:
        """One sentence naming the last variable read (empty when none was): what to set when
        the library's import failed because the build machine is not its GPU machine."""
        if not self.reads:
            return ""
        name, value, where = self.reads[-1]
        state = "unset" if value is None else f"= {value!r}"
        return (
            f"the last GPU-related environment variable it read was {name} ({state}, at {where}): "
            f"set it as on the target's GPU machine"
        )


def _watched_environ_class(base: type, reads: EnvironmentReads) -> type:
    """A subclass of ``os.environ``'s class recording reads of GPU-related variables in
    ``reads`` (``get``, ``getenv`` and ``in`` go through ``__getitem__``)."""

    class _WatchedEnviron(base):
        def __getitem__(self, key):
            try:
                value = base.__getitem__(self, key)
            except KeyError:
                value = None
                raise
            finally:
                if isinstance(key, str) and GPU_VARIABLE.search(key):
                    where = _caller(skip_packages=True)
                    if where is not None:
                        reads.reads.append((key, value, where))
            return value

    return _WatchedEnviron


class _ProbeStandIns:
    """``subprocess.Popen`` answering nvidia-smi and ``os.environ`` recording GPU-related reads,
    for an outermost :func:`answering_for` block; undone by :meth:`close`."""

    def __init__(self, reads: EnvironmentReads):
        import os
        import subprocess

        self._subprocess, self._popen = subprocess, subprocess.Popen
        self._environ, self._environ_class = os.environ, type(os.environ)
        subprocess.Popen = _answering_popen(self._popen)
        try:
            os.environ.__class__ = _watched_environ_class(self._environ_class, reads)
        except TypeError:  # pragma: no cover - an os.environ replaced by something else: not watched
            pass

    def close(self) -> None:
        try:
            self._environ.__class__ = self._environ_class
        finally:
            self._subprocess.Popen = self._popen
