"""Run Triton's bundled ``ptxas`` (found without importing Triton; ``TRITON_PTXAS_PATH``
overrides it) to assemble or check PTX."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import tempfile

from autotune_export.cuda.targets import TargetError, parse_target
from autotune_export.cuda.ptx.syntax import PtxError


# --------------------------------------------------------------------------------------------
# ptxas


def _triton_bin(tool: str) -> str:
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        raise PtxError(f"triton is not installed; set TRITON_{tool.upper().replace('-', '_')}_PATH to a {tool} binary")
    return os.path.join(list(spec.submodule_search_locations)[0], "backends", "nvidia", "bin", tool)


def ptxas_path() -> str:
    """Path of the ptxas used by :func:`assemble`.

    ``$TRITON_PTXAS_PATH`` if set (Triton's own override), else the ptxas bundled with Triton,
    ``triton/backends/nvidia/bin/ptxas`` (CUDA 12.8, PTX ISA up to 8.7, in Triton 3.6 and 3.7;
    CUDA 12.9, up to 8.8, in 3.8 and 3.9). Triton is located without being imported.
    """
    env = os.environ.get("TRITON_PTXAS_PATH")
    if env:
        return env
    return _triton_bin("ptxas")


def _gpu_name(arch: str) -> str:
    """``arch`` as ptxas's ``--gpu-name`` (``sm_80``, ``sm_90a``); PtxError for a target that
    :func:`autotune_export.cuda.targets.parse_target` refuses."""
    try:
        return parse_target(arch).name
    except TargetError as err:
        raise PtxError(str(err)) from None


def assemble(ptx: str, arch: str, *, output: str = "cubin", threads: int = 1) -> bytes:
    """Assemble PTX text with Triton's bundled ptxas for ``arch`` (``"sm_80"``, ``"sm_90a"``;
    any spelling :func:`autotune_export.cuda.targets.parse_target` accepts).

    ``output="cubin"`` returns the ELF cubin bytes (loadable by ``cuModuleLoadData``, e.g. as a
    ``dense<...> : vector<Nxi8>`` HAL executable object); ``output="sass"`` returns the SASS
    listing of that cubin (bundled ``nvdisasm``) as UTF-8 bytes. Runs with no GPU and no driver.
    ``threads`` > 1 lets ptxas optimize that many functions at once (``--split-compile``; the
    cubin is byte-identical to a one-thread run: checked with the bundled ptxas of CUDA 12.9).

    Raises :class:`PtxError` for an unsupported ``arch``, or if ptxas is missing or rejects the
    PTX; the message carries the first lines of ptxas's stderr (the temporary file name
    replaced by ``input.ptx``).
    """
    if output not in ("cubin", "sass"):
        raise PtxError(f"unknown assemble output {output!r} (expected 'cubin' or 'sass')")
    gpu = _gpu_name(arch)
    exe = ptxas_path()
    if not os.path.isfile(exe):
        raise PtxError(f"ptxas not found at {exe}")
    with tempfile.TemporaryDirectory(prefix="autotune-ptxas-") as tmp:
        src = os.path.join(tmp, "input.ptx")
        dst = os.path.join(tmp, "output.cubin")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ptx)
        split = [f"--split-compile={int(threads)}"] if threads and int(threads) > 1 else []
        proc = subprocess.run([exe, *split, f"--gpu-name={gpu}", src, "-o", dst], capture_output=True, text=True)
        if proc.returncode != 0:
            log = (proc.stderr or proc.stdout or "").replace(src, "input.ptx")
            lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
            detail = " | ".join(lines[:3]) or f"exit status {proc.returncode}"
            if len(lines) > 3:
                detail += f" | ... ({len(lines) - 3} more lines)"
            err = PtxError(f"ptxas --gpu-name={gpu} failed: {detail}")
            err.stderr = log  # type: ignore[attr-defined]
            raise err
        with open(dst, "rb") as f:
            cubin = f.read()
        if output == "cubin":
            return cubin
        nvdisasm = os.environ.get("TRITON_NVDISASM_PATH") or os.path.join(os.path.dirname(exe), "nvdisasm")
        proc = subprocess.run([nvdisasm, "-c", dst], capture_output=True)
        if proc.returncode != 0:
            first = proc.stderr.decode(errors="replace").strip().splitlines()[:1]
            raise PtxError(f"nvdisasm failed: {first[0] if first else proc.returncode}")
        return proc.stdout


def check(ptx: str, arch: str) -> None:
    """Assemble ``ptx`` for ``arch`` and discard the result: a validity check that needs no GPU.

    Raises :class:`PtxError` with ptxas's first error lines if the PTX does not assemble.
    """
    assemble(ptx, arch)
