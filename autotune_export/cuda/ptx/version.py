"""The PTX ISA version, as ``--ptx-version`` and a module's ``.version`` spell it."""

from __future__ import annotations

import argparse
import re


_VERSION_FMT = re.compile(r"^\d+\.\d+$")


class PtxVersionError(ValueError, argparse.ArgumentTypeError):
    """A PTX ISA version that :func:`parse_ptx_version` cannot read. A ValueError, and an
    argparse.ArgumentTypeError so that a command using the parser as an argument ``type``
    prints the message as it is."""


def parse_ptx_version(value: str | int) -> int:
    """A PTX ISA version in either spelling the tools accept, as Triton's ``ptx_version``
    option writes it: ``"8.6"``, ``"86"`` and ``86`` all give 86 (major * 10 + minor; ISA
    versions have one minor digit). The one parser behind ``autotune-export --ptx-version`` and
    the jax-triton converter's ``--ptx-version``.

    Raises :class:`PtxVersionError` for anything else (``"8"``, ``"8.10"``, ``"860"``, ``"x"``,
    a bool)."""
    if isinstance(value, bool):
        raise PtxVersionError(f"PTX ISA version must look like 86 or 8.6, got {value!r}")
    text = str(value).strip()
    m = re.fullmatch(r"([1-9])\.(\d)|([1-9]\d)", text)
    if m is None:
        raise PtxVersionError(f"PTX ISA version must look like 86 or 8.6, got {value!r}")
    return int(m.group(3)) if m.group(3) else int(m.group(1)) * 10 + int(m.group(2))


def ptx_version_text(version: str | int) -> str:
    """``86`` (or ``"8.6"``, ``"86"``) as the ``.version`` directive writes it: ``"8.6"``.
    Raises :class:`PtxVersionError` (see :func:`parse_ptx_version`)."""
    v = parse_ptx_version(version)
    return f"{v // 10}.{v % 10}"
