"""Our own protobuf schema of jax-triton's call descriptor, built with the protobuf runtime.

jax-triton (0.3.x and 0.4.x) lowers each ``triton_call`` to a ``stablehlo.custom_call`` whose
backend config is ``zlib.compress(TritonAnyKernelCall.SerializeToString())``. The schema lives
in jaxlib (``jaxlib/gpu/triton.proto``); this module rebuilds it from the field numbers only
(notes/jax-triton-facts.md), as a ``FileDescriptorProto`` made in Python, so neither jaxlib nor
``protoc`` is needed: only the ``protobuf`` package's runtime. ``autotune_export/jax_triton.proto``
spells the same schema as a ``.proto`` file (checked equal by the unit tests, see
:func:`render_proto`).

Use :func:`decode_backend_config` / :func:`encode_backend_config` for the compressed bytes, and
the message classes (:data:`TritonAnyKernelCall`, ...) to build or read calls.
"""

from __future__ import annotations

import zlib
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = [
    "PACKAGE",
    "FILE_NAME",
    "file_descriptor_proto",
    "TritonKernel",
    "TritonKernelCall",
    "TritonAutotunedKernelCall",
    "TritonAnyKernelCall",
    "ProtoError",
    "decode_backend_config",
    "encode_backend_config",
    "render_proto",
]

PACKAGE = "jax_triton"
#: A file name of our own, so the descriptor never clashes with jaxlib's if both are loaded.
FILE_NAME = "autotune_export/jax_triton.proto"

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "bool": _F.TYPE_BOOL,
    "int32": _F.TYPE_INT32,
    "uint32": _F.TYPE_UINT32,
    "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64,
    "float": _F.TYPE_FLOAT,
    "double": _F.TYPE_DOUBLE,
}

# The schema: message name -> (fields, nested messages, oneofs). A field is
# (name, number, type, flag) with flag "" (singular), "repeated", "optional" (proto3 optional)
# or "oneof:NAME". A type that is not a scalar names a message (relative to the package).
_SCHEMA: list[tuple[str, list[tuple[str, int, str, str]], list, list[str]]] = [
    (
        "TritonKernel",
        [
            ("kernel_name", 1, "string", ""),
            ("num_warps", 2, "uint32", ""),
            ("shared_mem_bytes", 3, "uint32", ""),
            ("ptx", 4, "string", ""),
            ("ttir", 5, "string", ""),
            ("compute_capability", 6, "uint32", ""),
            ("num_ctas", 10, "uint32", "optional"),
            ("module_image", 11, "bytes", ""),
            ("global_scratch_size", 12, "uint32", "optional"),
            ("global_scratch_align", 13, "uint32", "optional"),
        ],
        [],
        [],
    ),
    (
        "TritonKernelCall",
        [
            ("kernel", 1, "TritonKernel", ""),
            ("grid_0", 2, "uint32", ""),
            ("grid_1", 3, "uint32", ""),
            ("grid_2", 4, "uint32", ""),
            ("parameters", 5, "TritonKernelCall.Parameter", "repeated"),
        ],
        [
            (
                "Parameter",
                [
                    ("array", 1, "TritonKernelCall.Parameter.Array", "oneof:value"),
                    ("bool_", 2, "bool", "oneof:value"),
                    ("i32", 3, "int32", "oneof:value"),
                    ("u32", 4, "uint32", "oneof:value"),
                    ("i64", 5, "int64", "oneof:value"),
                    ("u64", 6, "uint64", "oneof:value"),
                    ("f32", 7, "float", "oneof:value"),
                    ("f64", 8, "double", "oneof:value"),
                ],
                [
                    (
                        "Array",
                        [("bytes_to_zero", 1, "uint64", ""), ("ptr_divisibility", 2, "uint64", "")],
                        [],
                        [],
                    )
                ],
                ["value"],
            )
        ],
        [],
    ),
    (
        "TritonAutotunedKernelCall",
        [
            ("name", 1, "string", ""),
            ("configs", 2, "TritonAutotunedKernelCall.Config", "repeated"),
            ("input_output_aliases", 3, "TritonAutotunedKernelCall.InputOutputAlias", "repeated"),
        ],
        [
            ("Config", [("kernel_call", 1, "TritonKernelCall", ""), ("description", 2, "string", "")], [], []),
            (
                "InputOutputAlias",
                [
                    ("input_buffer_idx", 1, "uint32", ""),
                    ("output_buffer_idx", 2, "uint32", ""),
                    ("buffer_size_bytes", 3, "uint64", ""),
                ],
                [],
                [],
            ),
        ],
        [],
    ),
    (
        "TritonAnyKernelCall",
        [
            ("kernel_call", 1, "TritonKernelCall", "oneof:value"),
            ("autotuned_kernel_call", 2, "TritonAutotunedKernelCall", "oneof:value"),
            ("metadata", 3, "bytes", ""),
            ("name", 4, "string", ""),
        ],
        [],
        ["value"],
    ),
]


def _message_proto(name, fields, nested, oneofs) -> descriptor_pb2.DescriptorProto:
    msg = descriptor_pb2.DescriptorProto(name=name)
    for sub in nested:
        msg.nested_type.append(_message_proto(*sub))
    oneof_names = list(oneofs)
    for oneof in oneofs:
        msg.oneof_decl.add(name=oneof)
    synthetic: list[str] = []
    for fname, number, ftype, flag in fields:
        field = msg.field.add(name=fname, number=number, json_name=_json_name(fname))
        if ftype in _SCALARS:
            field.type = _SCALARS[ftype]
        else:
            field.type = _F.TYPE_MESSAGE
            field.type_name = f".{PACKAGE}.{ftype}"
        field.label = _F.LABEL_REPEATED if flag == "repeated" else _F.LABEL_OPTIONAL
        if flag.startswith("oneof:"):
            field.oneof_index = oneof_names.index(flag.split(":", 1)[1])
        elif flag == "optional":
            # proto3 `optional`: a synthetic oneof named `_field`, declared after the real ones.
            field.proto3_optional = True
            synthetic.append(fname)
            field.oneof_index = len(oneof_names) + len(synthetic) - 1
    for fname in synthetic:
        msg.oneof_decl.add(name="_" + fname)
    return msg


def _json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def file_descriptor_proto() -> descriptor_pb2.FileDescriptorProto:
    """The schema as a ``FileDescriptorProto`` (a fresh copy)."""
    fd = descriptor_pb2.FileDescriptorProto(name=FILE_NAME, package=PACKAGE, syntax="proto3")
    for entry in _SCHEMA:
        fd.message_type.append(_message_proto(*entry))
    return fd


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(file_descriptor_proto())


def _cls(name: str):
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))


TritonKernel = _cls("TritonKernel")
TritonKernelCall = _cls("TritonKernelCall")
TritonAutotunedKernelCall = _cls("TritonAutotunedKernelCall")
TritonAnyKernelCall = _cls("TritonAnyKernelCall")


class ProtoError(ValueError):
    """Bytes that are not a (compressed) jax-triton call descriptor."""


def decode_backend_config(data: bytes | str) -> Any:
    """Parse jax-triton's backend config: zlib-compressed ``TritonAnyKernelCall`` bytes.

    ``str`` input is taken as Latin-1 (one byte per character), how an MLIR string attribute
    holding raw bytes may have been read. Uncompressed protobuf bytes are accepted too.
    Raises :class:`ProtoError` when the bytes are neither.
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
    """Serialize a ``TritonAnyKernelCall`` the way jax-triton does (zlib-compressed)."""
    raw = call.SerializeToString(deterministic=True)
    return zlib.compress(raw) if compress else raw


# --------------------------------------------------------------------------------------------
# The .proto spelling (documentation; tests compare it with jax_triton.proto)

_TYPE_NAMES = {v: k for k, v in _SCALARS.items()}


def _render_message(msg: descriptor_pb2.DescriptorProto, indent: str) -> list[str]:
    lines = [f"{indent}message {msg.name} {{"]
    inner = indent + "  "
    for sub in msg.nested_type:
        lines += _render_message(sub, inner)
    real_oneofs = {}
    for f in msg.field:
        if f.HasField("oneof_index") and not f.proto3_optional:
            real_oneofs.setdefault(f.oneof_index, []).append(f)

    def field_line(f, pad):
        typ = _TYPE_NAMES.get(f.type) or f.type_name.removeprefix(f".{PACKAGE}.")
        label = "repeated " if f.label == _F.LABEL_REPEATED else ("optional " if f.proto3_optional else "")
        return f"{pad}{label}{typ} {f.name} = {f.number};"

    emitted_oneofs = set()
    for f in msg.field:
        if f.HasField("oneof_index") and not f.proto3_optional:
            if f.oneof_index in emitted_oneofs:
                continue
            emitted_oneofs.add(f.oneof_index)
            lines.append(f"{inner}oneof {msg.oneof_decl[f.oneof_index].name} {{")
            lines += [field_line(g, inner + "  ") for g in real_oneofs[f.oneof_index]]
            lines.append(f"{inner}}}")
        else:
            lines.append(field_line(f, inner))
    lines.append(f"{indent}}}")
    return lines


def render_proto() -> str:
    """The schema in ``.proto`` syntax (no comments), from the descriptor this module uses."""
    fd = file_descriptor_proto()
    lines = [f'syntax = "{fd.syntax}";', "", f"package {fd.package};"]
    for msg in fd.message_type:
        lines.append("")
        lines += _render_message(msg, "")
    return "\n".join(lines) + "\n"
