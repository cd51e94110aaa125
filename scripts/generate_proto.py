"""Regenerate autotune_export/interop/jax_triton_pb2.py from autotune_export/interop/jax_triton.proto.

    python scripts/generate_proto.py            # write the generated module
    python scripts/generate_proto.py --check    # exit 1 (and say why) when it is stale
    python scripts/generate_proto.py --descriptor-set OUT.pb   # also write the FileDescriptorSet

The .proto file is the source of truth; the generated module is checked in, so installing or
using autotune-export needs no protoc. protoc is taken from, in order:

1. ``--protoc CMD`` (a command line, e.g. ``protoc`` or ``"python -m grpc_tools.protoc"``);
2. ``$PROTOC`` (the same);
3. ``grpc_tools`` importable by this interpreter;
4. otherwise ``grpcio-tools==1.71.0`` installed with this interpreter's pip into a temporary
   ``--target`` folder (removed afterwards; never into the project's environment).

The protoc version must be :data:`PROTOC_VERSION` (grpcio-tools 1.71.0 bundles libprotoc 29.0,
whose Python code requires a protobuf runtime >= 5.29.0: the floor in pyproject.toml) unless
``--any-version`` is given; ``--check`` with another version compares descriptors only.

Exit status: 0 on success (``--check``: up to date), 1 when ``--check`` finds the module stale,
2 when protoc cannot be found or fails.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTO = "autotune_export/interop/jax_triton.proto"
GENERATED = "autotune_export/interop/jax_triton_pb2.py"
#: grpcio-tools release whose bundled protoc generates the checked-in module.
GRPCIO_TOOLS = "grpcio-tools==1.71.0"
#: ``protoc --version`` of that release.
PROTOC_VERSION = "libprotoc 29.0"


class ProtocError(RuntimeError):
    """No usable protoc, or protoc rejected the .proto file (the message says which)."""


def _run(cmd: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)


def _protoc_version(cmd: list[str], env: dict | None) -> str:
    proc = _run(cmd + ["--version"], env)
    if proc.returncode != 0:
        raise ProtocError(f"{' '.join(cmd)} --version failed: {(proc.stderr or proc.stdout).strip()[:200]}")
    return proc.stdout.strip()


class Protoc:
    """A protoc command (``argv`` list) and the environment to run it in; a context manager
    that removes the temporary grpcio-tools install, if it made one."""

    def __init__(self, explicit: str | None = None, *, install: bool = True):
        self.tmp: str | None = None
        self.env: dict | None = None
        spec = explicit or os.environ.get("PROTOC")
        if spec:
            self.cmd = shlex.split(spec)
        elif _has_grpc_tools(sys.executable, None):
            self.cmd = [sys.executable, "-m", "grpc_tools.protoc"]
        elif install:
            self.tmp = tempfile.mkdtemp(prefix="autotune-protoc-")
            proc = _run([sys.executable, "-m", "pip", "install", "-q", "--target", self.tmp, GRPCIO_TOOLS])
            if proc.returncode != 0:
                self.close()
                raise ProtocError(f"pip install {GRPCIO_TOOLS} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")
            self.env = dict(os.environ, PYTHONPATH=self.tmp + os.pathsep + os.environ.get("PYTHONPATH", ""))
            self.cmd = [sys.executable, "-m", "grpc_tools.protoc"]
        else:
            raise ProtocError("no protoc: pass --protoc, set $PROTOC, or install grpcio-tools")
        self.version = _protoc_version(self.cmd, self.env)

    def __enter__(self) -> "Protoc":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def generate(self, out_dir: str, descriptor_set: str | None = None) -> str:
        """Run protoc on :data:`PROTO` (include path: the repository root) with Python output
        under ``out_dir``; return the generated module's path. Raises ProtocError."""
        args = self.cmd + ["-I", ROOT, f"--python_out={out_dir}"]
        if descriptor_set:
            args.append(f"--descriptor_set_out={descriptor_set}")
        proc = _run(args + [os.path.join(ROOT, PROTO)], self.env)
        if proc.returncode != 0:
            raise ProtocError(f"protoc failed: {(proc.stderr or proc.stdout).strip()[:1000]}")
        return os.path.join(out_dir, GENERATED)


def _has_grpc_tools(python: str, env: dict | None) -> bool:
    proc = subprocess.run([python, "-c", "import grpc_tools.protoc"], capture_output=True, env=env)
    return proc.returncode == 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the checked-in module instead of writing it")
    ap.add_argument("--protoc", default=None, help="protoc command line (default: $PROTOC, grpc_tools, or a temporary install)")
    ap.add_argument("--any-version", action="store_true", help=f"accept a protoc other than {PROTOC_VERSION}")
    ap.add_argument("--no-install", action="store_true", help="never pip-install grpcio-tools")
    ap.add_argument("--descriptor-set", default=None, help="also write protoc's FileDescriptorSet here")
    args = ap.parse_args(argv)
    try:
        with Protoc(args.protoc, install=not args.no_install) as protoc:
            exact = protoc.version == PROTOC_VERSION
            if not exact and not args.any_version and not args.check:
                print(f"error: protoc is '{protoc.version}', the checked-in code is made by '{PROTOC_VERSION}' "
                      f"({GRPCIO_TOOLS}); pass --any-version to use it anyway (and move the protobuf floor)", file=sys.stderr)
                return 2
            with tempfile.TemporaryDirectory(prefix="autotune-proto-") as out:
                fresh = protoc.generate(out, args.descriptor_set)
                with open(fresh, encoding="utf-8") as f:
                    text = f.read()
    except ProtocError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    target = os.path.join(ROOT, GENERATED)
    if args.check:
        with open(target, encoding="utf-8") as f:
            current = f.read()
        if exact:
            if current != text:
                print(f"{GENERATED} is stale: run python scripts/generate_proto.py", file=sys.stderr)
                return 1
        elif _descriptor_of(current) != _descriptor_of(text):
            print(f"{GENERATED} does not match {PROTO} (compared descriptors: protoc is '{protoc.version}')", file=sys.stderr)
            return 1
        print(f"{GENERATED} is up to date")
        return 0
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {GENERATED} ({protoc.version})")
    return 0


def _descriptor_of(module_text: str) -> bytes:
    """The serialized FileDescriptorProto embedded in generated code (the argument of
    ``AddSerializedFile``), read without importing it."""
    import ast

    for node in ast.walk(ast.parse(module_text)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "AddSerializedFile":
            return ast.literal_eval(node.args[0])
    raise ValueError("no AddSerializedFile(...) call in the generated module")


if __name__ == "__main__":
    sys.exit(main())
