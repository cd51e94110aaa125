"""CUDA targets (``sm_XY``) and the limits that decide what can run on them.

The one parser of ``--target`` spellings: ``sm_80``, ``sm_90a``, ``90``, and comma-separated
lists (``sm_80,sm_90``: one object per architecture). Limits come from NVIDIA's CUDA C++
Programming Guide ("Technical Specifications per Compute Capability") and from IREE 3.13's
CUDA HAL (``native_executable.c``: bindings and constants per export, checked at load).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CudaTarget",
    "TargetError",
    "parse_target",
    "parse_targets",
    "max_shared_memory",
    "SUPPORTED_CAPABILITIES",
    "MAX_THREADS_PER_BLOCK",
    "MAX_REGISTERS_PER_BLOCK",
    "MAX_BINDINGS",
    "MAX_CONSTANTS",
    "MAX_GRID",
    "grid_limit_problem",
    "IREE_CODEGEN_CAPABILITIES",
    "iree_codegen_target",
    "MIN_PTX_VERSION",
    "check_ptx_version",
]

#: Opt-in maximum of dynamic shared memory per thread block, in bytes (KB = 1024 bytes):
#: 163 KB for 8.0, 99 KB for 8.6 and 8.9, 227 KB for 9.0 and 10.0.
_MAX_SHARED_MEMORY = {80: 163 * 1024, 86: 99 * 1024, 89: 99 * 1024, 90: 227 * 1024, 100: 227 * 1024}
#: Compute capabilities (major * 10 + minor) that the toolkit compiles for.
SUPPORTED_CAPABILITIES = tuple(_MAX_SHARED_MEMORY)
#: Threads per block on every supported architecture.
MAX_THREADS_PER_BLOCK = 1024
#: 32-bit registers per thread block on every supported architecture (64K; at most 255 per
#: thread): a block of ``threads`` threads using ``n_regs`` each cannot launch above it.
MAX_REGISTERS_PER_BLOCK = 64 * 1024
#: IREE 3.13 CUDA HAL: bindings per export ("binding_flags count N exceeds maximum of 16").
MAX_BINDINGS = 16
#: IREE 3.13 CUDA HAL: 32-bit constants per export ("constant_count N exceeds maximum of 64").
MAX_CONSTANTS = 64
#: Thread blocks per grid dimension (x, y, z) on every supported architecture: x up to 2**31 - 1,
#: y and z up to 65535 (CUDA C++ Programming Guide, "Technical Specifications per Compute
#: Capability": maximum x-, y- and z-dimension of a grid of thread blocks). ``cuLaunchKernel``
#: refuses a larger grid at launch (CUDA_ERROR_INVALID_VALUE); IREE's CUDA HAL passes a
#: dispatch's workgroup count to it as the grid, and a Triton grid ``(gx, gy, gz)`` launches
#: ``(gx * num_ctas, gy, gz)`` blocks (../shared/notes/triton-aot-facts.md, "Launch
#: convention"; :mod:`autotune_export.ir.grid`: grid dimension i is workgroup count i).
MAX_GRID = (2**31 - 1, 65535, 65535)

#: The oldest PTX ISA (major * 10 + minor: 80 is 8.0) whose ``.target`` may name each architecture
#: as Triton compiles for it (``sm_arch_from_capability`` in Triton's NVIDIA backend, 3.6 to 3.9:
#: sm_90 and later get the "a" suffix, sm_90a / sm_100a): NVIDIA's PTX ISA manual, "PTX ISA Version"
#: notes per target (sm_80 7.0, sm_86 7.1, sm_89 7.8, sm_90a 8.0, sm_100a 8.6), the same figures as
#: LLVM's NVPTX back end, which aborts the process ("LLVM ERROR: PTX version 7.0 does not support
#: target 'sm_90a'") when given less.
MIN_PTX_VERSION = {80: 70, 86: 71, 89: 78, 90: 80, 100: 86}

_SPELLING = re.compile(r"(?:sm_)?(\d+)([af]?)")


class TargetError(ValueError):
    """A ``--target`` that names no supported CUDA architecture (one-line message)."""


@dataclass(frozen=True)
class CudaTarget:
    """One CUDA architecture: ``capability`` is major * 10 + minor (90 for sm_90), ``suffix``
    ``""``, ``"a"`` (arch-specific, e.g. sm_90a) or ``"f"`` (family)."""

    capability: int
    suffix: str = ""

    @property
    def name(self) -> str:
        """``sm_90`` / ``sm_90a``."""
        return f"sm_{self.capability}{self.suffix}"

    @property
    def max_shared_memory(self) -> int:
        """Bytes of dynamic shared memory per block (opt-in maximum)."""
        return _MAX_SHARED_MEMORY[self.capability]

    def __str__(self) -> str:
        return self.name


def parse_target(text: str, *, supported_only: bool = True) -> CudaTarget:
    """``sm_90`` / ``sm_90a`` / ``90`` -> :class:`CudaTarget`. Raises TargetError for other
    spellings and, with ``supported_only`` (the default: what ``--target`` may name), for
    architectures outside :data:`SUPPORTED_CAPABILITIES`; without it any ``sm_XY`` reads (the
    architecture of someone else's PTX or object key)."""
    m = _SPELLING.fullmatch(str(text).strip())
    if m is None:
        raise TargetError(f"unknown CUDA target '{text}' (expected sm_XY, e.g. sm_80 or sm_90)")
    cc = int(m.group(1))
    if supported_only and cc not in _MAX_SHARED_MEMORY:
        supported = ", ".join(f"sm_{c}" for c in SUPPORTED_CAPABILITIES)
        raise TargetError(f"unsupported CUDA target '{text}': supported are {supported}")
    return CudaTarget(cc, m.group(2))


def parse_targets(text: str) -> list[CudaTarget]:
    """A comma-separated list of targets, in order. Raises TargetError when empty, for an
    unknown target, or when one architecture is given twice."""
    out: list[CudaTarget] = []
    for part in [p.strip() for p in str(text).split(",")]:
        if not part:
            continue
        target = parse_target(part)
        if any(t.capability == target.capability for t in out):
            raise TargetError(f"target {part} is given twice in --target {text}")
        out.append(target)
    if not out:
        raise TargetError("no CUDA target given (expected e.g. sm_80 or sm_80,sm_90)")
    return out


def max_shared_memory(capability: int) -> int:
    """Opt-in maximum of dynamic shared memory per thread block on compute capability
    ``capability`` (80 means 8.0), in bytes: sm_80 166912, sm_86/sm_89 101376, sm_90/sm_100
    232448. Raises TargetError for an architecture outside :data:`SUPPORTED_CAPABILITIES`."""
    try:
        return _MAX_SHARED_MEMORY[capability]
    except KeyError:
        supported = ", ".join(f"sm_{c}" for c in SUPPORTED_CAPABILITIES)
        raise TargetError(f"unsupported CUDA target sm_{capability}: supported are {supported}") from None


def grid_limit_problem(blocks) -> str | None:
    """Why a launch of ``blocks`` thread blocks per dimension (``(x, y, z)``, up to three ints;
    missing ones are 1) cannot run on CUDA (:data:`MAX_GRID`), or None when it can. One line,
    naming the first dimension over its limit: ``grid y is 70000 blocks; CUDA allows at most
    65535 in y (x: 2**31 - 1, y and z: 65535)``. The one home of CUDA's grid limits."""
    for axis, (n, limit) in enumerate(zip(blocks, MAX_GRID)):
        if n > limit:
            shown = "2**31 - 1" if limit == MAX_GRID[0] else str(limit)
            name = "xyz"[axis]
            return f"grid {name} is {n} blocks; CUDA allows at most {shown} in {name} (x: 2**31 - 1, y and z: 65535)"
    return None


def check_ptx_version(ptx_version: int | None, capability: int) -> None:
    """Raise TargetError (one line, naming the minimum) when the PTX ISA ``ptx_version``
    (86 = 8.6; None: Triton's default, the newest its ptxas takes) is older than
    :data:`MIN_PTX_VERSION` allows for compute capability ``capability`` (90 = sm_90):
    compiling it would end the process inside LLVM. Raises TargetError for an unsupported
    ``capability`` too (:func:`max_shared_memory`)."""
    max_shared_memory(capability)
    minimum = MIN_PTX_VERSION[capability]
    if ptx_version is not None and ptx_version < minimum:
        name = f"sm_{capability}a" if capability >= 90 else f"sm_{capability}"
        raise TargetError(
            f"PTX ISA {ptx_version // 10}.{ptx_version % 10} cannot target sm_{capability} (Triton "
            f"compiles it as {name}): the minimum is {minimum // 10}.{minimum % 10} "
            f"(--ptx-version {minimum // 10}.{minimum % 10} or later)"
        )


#: CUDA architectures IREE 3.13's own code generator has a target description for (checked by
#: compiling an IREE-generated dispatch with ``--iree-cuda-target=sm_XY``; sm_90, sm_90a and
#: sm_100 fail with "missing GPU target in #hal.executable.target").
IREE_CODEGEN_CAPABILITIES = (80, 86, 87, 89)


def iree_codegen_target(target: CudaTarget) -> str:
    """The ``--iree-cuda-target`` for a module built for ``target``: the target itself when
    IREE 3.13 can generate code for it, else the most capable architecture it can below it
    (sm_90 and sm_100 -> sm_89). Only the dispatches IREE generates itself (fills it cannot do
    with a DMA, e.g. of 64-bit values, and any computation in the host program) are compiled
    for it, as PTX that the driver JIT-compiles for the GPU it runs on; the Triton objects keep
    their own architecture (their object key has no ``target_arch``, so it matches any CUDA
    target). Raises TargetError below sm_80."""
    usable = [cc for cc in IREE_CODEGEN_CAPABILITIES if cc <= target.capability]
    if not usable:
        raise TargetError(f"IREE has no CUDA code generation for {target.name}")
    best = max(usable)
    return target.name if best == target.capability else f"sm_{best}"
