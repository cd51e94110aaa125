"""What ptxas gave each function of a cubin: registers, local memory (spills), stack, static
shared memory, read with ``cuobjdump --dump-resource-usage`` (bundled with Triton's CUDA
tools; ``TRITON_CUOBJDUMP_PATH`` overrides). No GPU is needed.

Used where a compiled variant is made (:mod:`autotune_export.cuda.triton_compile` records
``n_regs`` and ``n_spills`` in its metadata, as Triton's ``CompiledKernel`` names them) and by
``autotune-export inspect`` (:mod:`autotune_export.tools.inspection`).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass

from autotune_export.cuda import ptx as ptx_mod

__all__ = ["Resources", "ResourceError", "cuobjdump_path", "parse_resource_usage", "cubin_resources"]


@dataclass
class Resources:
    """What ptxas gave one function (cuobjdump ``--dump-resource-usage``), per thread:
    registers, local memory and stack frame bytes (spilled registers live in the stack frame),
    and the static shared memory bytes of a block."""

    registers: int
    local_bytes: int
    stack_bytes: int
    static_shared_bytes: int

    @property
    def spills(self) -> int:
        """Triton's ``n_spills``: the function's local memory per thread (the driver's
        ``CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES``: stack frame plus local arrays) / 4."""
        return (self.stack_bytes + self.local_bytes) // 4


class ResourceError(Exception):
    """Resource usage could not be read (one-line message)."""


def cuobjdump_path() -> str:
    """``TRITON_CUOBJDUMP_PATH``, else the cuobjdump next to Triton's ptxas."""
    env = os.environ.get("TRITON_CUOBJDUMP_PATH")
    if env:
        return env
    return os.path.join(os.path.dirname(ptx_mod.ptxas_path()), "cuobjdump")


def parse_resource_usage(text: str) -> dict[str, Resources]:
    """Parse ``cuobjdump --dump-resource-usage`` output: one entry per ``Function NAME:``."""
    out: dict[str, Resources] = {}
    name = None
    for line in text.splitlines():
        m = re.match(r"\s*Function\s+(\S+?):\s*$", line)
        if m:
            name = m.group(1)
            continue
        if name is not None and "REG:" in line:
            values = dict((k, int(v)) for k, v in re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", line))
            out[name] = Resources(values.get("REG", 0), values.get("LOCAL", 0), values.get("STACK", 0), values.get("SHARED", 0))
            name = None
    return out


def cubin_resources(cubin: bytes) -> dict[str, Resources]:
    """Registers and spills of every function of ``cubin``, by function name. Raises
    :class:`ResourceError` when cuobjdump is missing or fails."""
    exe = cuobjdump_path()
    if not os.path.isfile(exe):
        raise ResourceError(f"cuobjdump not found at {exe} (set TRITON_CUOBJDUMP_PATH)")
    with tempfile.TemporaryDirectory(prefix="autotune-resources-") as tmp:
        path = os.path.join(tmp, "module.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        proc = subprocess.run([exe, "--dump-resource-usage", path], capture_output=True, text=True)
    if proc.returncode != 0:
        first = (proc.stderr or proc.stdout).strip().splitlines()[:1]
        raise ResourceError(f"cuobjdump failed: {first[0] if first else proc.returncode}")
    return parse_resource_usage(proc.stdout)
