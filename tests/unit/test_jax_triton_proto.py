"""Our protobuf schema of jax-triton's call descriptor: jax_triton.proto, the generated
jax_triton_pb2.py and the codec in autotune_export/interop/jax_triton_proto.py."""

import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

import pytest
from google.protobuf import descriptor_pb2

from autotune_export.interop import jax_triton_proto as proto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _kernel_call(name="k", grid=(4, 1, 1), params=()):
    call = proto.TritonKernelCall(grid_0=grid[0], grid_1=grid[1], grid_2=grid[2])
    call.kernel.kernel_name = name
    call.kernel.num_warps = 4
    call.kernel.shared_mem_bytes = 1024
    call.kernel.ptx = ".version 8.6\n.target sm_80\n"
    call.kernel.compute_capability = 80
    call.kernel.num_ctas = 1
    for kind, value in params:
        p = call.parameters.add()
        if kind == "array":
            p.array.bytes_to_zero, p.array.ptr_divisibility = value
        else:
            setattr(p, kind, value)
    return call


# --------------------------------------------------------------------------------------------
# jax_triton.proto (the source of truth) against the generated jax_triton_pb2.py

PROTO_FILE = os.path.join(ROOT, "autotune_export", "interop", "jax_triton.proto")
GENERATED = os.path.join(ROOT, "autotune_export", "interop", "jax_triton_pb2.py")
SCRIPT = os.path.join(ROOT, "scripts", "generate_proto.py")

_F = descriptor_pb2.FieldDescriptorProto
_TYPE_NAMES = {
    _F.TYPE_STRING: "string", _F.TYPE_BYTES: "bytes", _F.TYPE_BOOL: "bool", _F.TYPE_INT32: "int32",
    _F.TYPE_UINT32: "uint32", _F.TYPE_INT64: "int64", _F.TYPE_UINT64: "uint64", _F.TYPE_FLOAT: "float",
    _F.TYPE_DOUBLE: "double",
}


def _render_message(msg, indent):
    """One message of a FileDescriptorProto in .proto syntax (nested messages first, then the
    fields in declaration order, real oneofs grouped at their first field)."""
    lines = [f"{indent}message {msg.name} {{"]
    inner = indent + "  "
    for sub in msg.nested_type:
        lines += _render_message(sub, inner)

    def field_line(f, pad):
        typ = _TYPE_NAMES.get(f.type) or f.type_name.removeprefix(f".{proto.PACKAGE}.")
        label = "repeated " if f.label == _F.LABEL_REPEATED else ("optional " if f.proto3_optional else "")
        return f"{pad}{label}{typ} {f.name} = {f.number};"

    in_oneof = lambda f: f.HasField("oneof_index") and not f.proto3_optional  # noqa: E731
    done = set()
    for f in msg.field:
        if not in_oneof(f):
            lines.append(field_line(f, inner))
        elif f.oneof_index not in done:
            done.add(f.oneof_index)
            lines.append(f"{inner}oneof {msg.oneof_decl[f.oneof_index].name} {{")
            lines += [field_line(g, inner + "  ") for g in msg.field if in_oneof(g) and g.oneof_index == f.oneof_index]
            lines.append(f"{inner}}}")
    lines.append(f"{indent}}}")
    return lines


def _render_proto(fd):
    lines = [f'syntax = "{fd.syntax}";', "", f"package {fd.package};"]
    for msg in fd.message_type:
        lines += [""] + _render_message(msg, "")
    return "\n".join(lines) + "\n"


def test_proto_file_matches_generated_descriptor():
    """The .proto file, comments dropped, is what the generated code's descriptor spells."""
    with open(PROTO_FILE) as f:
        text = "\n".join(line for line in f.read().splitlines() if not line.startswith("//"))
    fd = proto.file_descriptor_proto()
    assert fd.name == "autotune_export/interop/jax_triton.proto" == proto.FILE_NAME
    assert text.strip() == _render_proto(fd).strip()


def _protoc_command():
    """A protoc command line, or None: $PROTOC, protoc on PATH, grpc_tools in this interpreter."""
    if os.environ.get("PROTOC"):
        return os.environ["PROTOC"]
    if shutil.which("protoc"):
        return shutil.which("protoc")
    if importlib.util.find_spec("grpc_tools") is not None:
        return f"{sys.executable} -m grpc_tools.protoc"
    return None


def test_generated_module_is_current():
    """Regenerate from the .proto with protoc (into a temporary folder) and compare: the text
    when protoc is the pinned version, the descriptors otherwise."""
    cmd = _protoc_command()
    if cmd is None:
        pytest.skip("no protoc ($PROTOC, protoc on PATH or grpc_tools); the descriptor test above still ran")
    proc = subprocess.run([sys.executable, SCRIPT, "--check", "--no-install", "--protoc", cmd],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_gencode_version_matches_protobuf_floor():
    """Generated code needs a runtime >= its gencode version: pyproject's floor is that version,
    the script pins the protoc that makes it, and the installed runtime loads it."""
    with open(GENERATED) as f:
        gencode = re.search(r"^# Protobuf Python Version: (\d+)\.(\d+)\.(\d+)$", f.read(), re.M).groups()
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        floor = re.search(r'"protobuf>=(\d+)\.(\d+)\.(\d+)"', f.read()).groups()
    assert gencode == floor
    spec = importlib.util.spec_from_file_location("generate_proto", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.PROTOC_VERSION == f"libprotoc {gencode[1]}.{gencode[2]}"  # protoc 29.0 makes Python 5.29.0
    from google.protobuf import __version__ as runtime

    assert tuple(int(x) for x in runtime.split(".")[:3]) >= tuple(int(x) for x in gencode)


def test_round_trip_single_call():
    msg = proto.TritonAnyKernelCall(name="my_call", metadata=b"\x00\x01meta")
    msg.kernel_call.CopyFrom(
        _kernel_call(params=[("array", (0, 16)), ("i32", -7), ("u32", 2**32 - 1), ("f32", 0.5), ("array", (64, 16))])
    )
    blob = proto.encode_backend_config(msg)
    assert blob[:1] == b"x"  # zlib stream
    back = proto.decode_backend_config(blob)
    assert back == msg
    assert back.WhichOneof("value") == "kernel_call"
    params = back.kernel_call.parameters
    assert [p.WhichOneof("value") for p in params] == ["array", "i32", "u32", "f32", "array"]
    assert params[1].i32 == -7 and params[2].u32 == 2**32 - 1 and params[3].f32 == 0.5
    assert (params[4].array.bytes_to_zero, params[4].array.ptr_divisibility) == (64, 16)
    assert back.kernel_call.kernel.HasField("num_ctas") and back.kernel_call.kernel.num_ctas == 1
    assert not back.kernel_call.kernel.HasField("global_scratch_size")


def test_round_trip_autotuned_call():
    msg = proto.TritonAnyKernelCall()
    auto = msg.autotuned_kernel_call
    auto.name = "k (k) {'n': 7}"
    for i in range(3):
        cfg = auto.configs.add(description=f"BLOCK: {128 << i}, num_warps: 4")
        cfg.kernel_call.CopyFrom(_kernel_call(grid=(8 >> i, 1, 1), params=[("array", (0, 16)), ("i64", 2**40), ("f64", 0.1)]))
    auto.input_output_aliases.add(input_buffer_idx=0, output_buffer_idx=1, buffer_size_bytes=4096)
    back = proto.decode_backend_config(proto.encode_backend_config(msg))
    assert back == msg
    assert [c.kernel_call.grid_0 for c in back.autotuned_kernel_call.configs] == [8, 4, 2]
    assert back.autotuned_kernel_call.configs[0].kernel_call.parameters[1].i64 == 2**40
    alias = back.autotuned_kernel_call.input_output_aliases[0]
    assert (alias.input_buffer_idx, alias.output_buffer_idx, alias.buffer_size_bytes) == (0, 1, 4096)


def test_wire_format_field_numbers():
    """Bytes written by hand with jaxlib's field numbers decode as expected."""

    def varint(n):
        out = b""
        while True:
            b, n = n & 0x7F, n >> 7
            out += bytes([b | (0x80 if n else 0)])
            if not n:
                return out

    def field(num, wire, payload):
        return varint(num << 3 | wire) + payload

    def ld(num, data):
        return field(num, 2, varint(len(data)) + data)

    kernel = ld(1, b"add") + field(2, 0, varint(8)) + field(3, 0, varint(96)) + ld(4, b"PTX") + field(6, 0, varint(90)) + field(10, 0, varint(1))
    array = ld(1, field(1, 0, varint(128)) + field(2, 0, varint(16)))
    f32 = field(7, 5, struct.pack("<f", 2.5))
    call = ld(1, kernel) + field(2, 0, varint(3)) + field(3, 0, varint(2)) + field(4, 0, varint(1)) + ld(5, array) + ld(5, f32)
    blob = zlib.compress(ld(1, call) + ld(3, b"meta") + ld(4, b"nm"))
    msg = proto.decode_backend_config(blob)
    k = msg.kernel_call.kernel
    assert (k.kernel_name, k.num_warps, k.shared_mem_bytes, k.ptx, k.compute_capability, k.num_ctas) == ("add", 8, 96, "PTX", 90, 1)
    c = msg.kernel_call
    assert (c.grid_0, c.grid_1, c.grid_2) == (3, 2, 1)
    assert c.parameters[0].array.bytes_to_zero == 128 and c.parameters[0].array.ptr_divisibility == 16
    assert c.parameters[1].f32 == 2.5
    assert (msg.metadata, msg.name) == (b"meta", "nm")


def test_uncompressed_and_latin1_inputs():
    msg = proto.TritonAnyKernelCall()
    msg.kernel_call.CopyFrom(_kernel_call())
    raw = proto.encode_backend_config(msg, compress=False)
    assert proto.decode_backend_config(raw) == msg
    assert proto.decode_backend_config(proto.encode_backend_config(msg).decode("latin-1")) == msg


def test_garbage_is_rejected():
    with pytest.raises(proto.ProtoError):
        proto.decode_backend_config(zlib.compress(b"\xff\xff\xff"))
    with pytest.raises(proto.ProtoError, match="neither kernel_call"):
        proto.decode_backend_config(zlib.compress(b""))
