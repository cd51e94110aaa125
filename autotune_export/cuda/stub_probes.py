"""Machine probes outside torch and Triton while a kernel file is imported: ``nvidia-smi`` run
through :mod:`subprocess` answers for the target's part, and reads of GPU-related environment
variables are recorded (see :mod:`autotune_export.cuda.stub_driver`'s module doc, which
installs them for an :func:`~autotune_export.cuda.stub_driver.answering_for` block)."""

from __future__ import annotations

import re
import sys
from typing import Callable

from autotune_export.cuda.stub_device import TORCH_PARTS, StubDriverError, answering_capability


#: ``nvidia-smi --query-gpu`` fields answered (nvidia-smi's own field names, ``nvidia-smi
#: --help-query-gpu``): field -> (CSV header, value for a capability, unit nvidia-smi appends).
_SMI_FIELDS: dict[str, tuple[str, Callable[[int], str], str]] = {
    "compute_cap": ("compute_cap", lambda cc: "%d.%d" % divmod(cc, 10), ""),
    "name": ("name", lambda cc: TORCH_PARTS[cc][0], ""),
    "gpu_name": ("name", lambda cc: TORCH_PARTS[cc][0], ""),
    "count": ("count", lambda cc: "1", ""),
    "index": ("index", lambda cc: "0", ""),
    "memory.total": ("memory.total [MiB]", lambda cc: str(TORCH_PARTS[cc][1]), " MiB"),
}

#: Environment variables whose value would differ on a GPU machine (matched in the name,
#: case-insensitively): what :class:`_WatchedEnviron` records.
GPU_VARIABLE = re.compile(r"CUDA|NVIDIA|GPU|ARCH", re.IGNORECASE)

_SUBPROCESS_FILES = ("subprocess.py", "os.py", "_collections_abc.py", "stub_driver.py", "stub_probes.py")
_FROZEN_STDLIB = ("<frozen os>", "<frozen _collections_abc>")  # Python 3.11+ runs these frozen


def _caller(skip_packages: bool = False) -> str | None:
    """``file:line`` of the innermost frame outside :mod:`subprocess`, :mod:`os`, this
    module and :mod:`~autotune_export.cuda.stub_driver` (the library code that asked); with ``skip_packages`` None when that frame is in
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
    """A subclass of ``subprocess.Popen`` (``real_popen``) that, inside an :func:`~autotune_export.cuda.stub_driver.answering_for`
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
    Triton, PyTorch and autotune-export while an :func:`~autotune_export.cuda.stub_driver.answering_for` block runs
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


class ProbeStandIns:
    """``subprocess.Popen`` answering nvidia-smi and ``os.environ`` recording GPU-related reads,
    for an outermost :func:`~autotune_export.cuda.stub_driver.answering_for` block; undone by :meth:`close`."""

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
