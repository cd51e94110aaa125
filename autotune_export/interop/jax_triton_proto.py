"""jax-triton's call descriptor: the message classes and the backend-config codec.

jax-triton (0.3.x and 0.4.x) lowers each ``triton_call`` to a ``stablehlo.custom_call`` whose
backend config is ``zlib.compress(TritonAnyKernelCall.SerializeToString())``. The schema lives
in jaxlib (``jaxlib/gpu/triton.proto``); ours, with the same field numbers
(notes/jax-triton-facts.md), is ``autotune_export/interop/jax_triton.proto``, the source of
truth, and :mod:`autotune_export.interop.jax_triton_pb2` is the code protoc generated from it
(checked in; regenerate with ``python scripts/generate_proto.py``). This module re-exports the
message classes and adds what the bridge needs: :func:`decode_backend_config` /
:func:`encode_backend_config` for the compressed bytes.

The generated code registers ``autotune_export/interop/jax_triton.proto`` (messages
``jax_triton.*``) in protobuf's default descriptor pool, and needs a protobuf runtime at least
as new as the protoc that generated it (5.29.0, the floor in pyproject.toml); an older runtime
is reported by :class:`ImportError` on import.
"""

from __future__ import annotations

import zlib
from typing import Any

try:
    from autotune_export.interop import jax_triton_pb2 as _pb2
except Exception as _err:  # google.protobuf.runtime_version.VersionError, or no runtime_version (< 5.26)
    from google.protobuf import __version__ as _runtime

    raise ImportError(f"autotune_export.interop.jax_triton_pb2 needs protobuf>=5.29.0 (installed: {_runtime}): {_err}") from None

from google.protobuf import descriptor_pb2

__all__ = [
    "PACKAGE",
    "FILE_NAME",
    "DESCRIPTOR",
    "file_descriptor_proto",
    "TritonKernel",
    "TritonKernelCall",
    "TritonAutotunedKernelCall",
    "TritonAnyKernelCall",
    "ProtoError",
    "decode_backend_config",
    "encode_backend_config",
]

#: The generated file's descriptor (``google.protobuf.descriptor.FileDescriptor``).
DESCRIPTOR = _pb2.DESCRIPTOR
#: The proto package, as in jaxlib's schema.
PACKAGE = DESCRIPTOR.package
#: The file name the descriptor is registered under (ours, so it never clashes with jaxlib's).
FILE_NAME = DESCRIPTOR.name

TritonKernel = _pb2.TritonKernel
TritonKernelCall = _pb2.TritonKernelCall
TritonAutotunedKernelCall = _pb2.TritonAutotunedKernelCall
TritonAnyKernelCall = _pb2.TritonAnyKernelCall


def file_descriptor_proto() -> descriptor_pb2.FileDescriptorProto:
    """The schema as a ``FileDescriptorProto`` (a fresh copy of the generated descriptor)."""
    fd = descriptor_pb2.FileDescriptorProto()
    DESCRIPTOR.CopyToProto(fd)
    return fd


class ProtoError(ValueError):
    """Bytes that are not a (compressed) jax-triton call descriptor."""


def decode_backend_config(data: bytes | str) -> Any:
    """Parse jax-triton's backend config: zlib-compressed ``TritonAnyKernelCall`` bytes.

    ``data``: the attribute's bytes; ``str`` input is taken as Latin-1 (one byte per
    character), how an MLIR string attribute holding raw bytes may have been read.
    Uncompressed protobuf bytes are accepted too (tried when zlib fails). Returns a
    ``TritonAnyKernelCall``. Raises :class:`ProtoError` when the bytes are neither, or hold
    neither ``kernel_call`` nor ``autotuned_kernel_call``.
    """
    if isinstance(data, str):
        data = data.encode("latin-1")
    data = bytes(data)
    try:
        raw = zlib.decompress(data)
    except zlib.error:
        raw = data
    msg = TritonAnyKernelCall()
    try:
        msg.ParseFromString(raw)
    except Exception as err:  # google.protobuf.message.DecodeError
        raise ProtoError(f"backend config is not a jax-triton TritonAnyKernelCall: {err}") from None
    if msg.WhichOneof("value") is None:
        raise ProtoError("backend config is not a jax-triton call: it holds neither kernel_call nor autotuned_kernel_call")
    return msg


def encode_backend_config(call: Any, *, compress: bool = True) -> bytes:
    """Serialize a ``TritonAnyKernelCall`` the way jax-triton does: deterministic protobuf
    bytes, zlib-compressed unless ``compress=False``."""
    raw = call.SerializeToString(deterministic=True)
    return zlib.compress(raw) if compress else raw
