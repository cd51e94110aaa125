"""``#hal.*`` attributes: the only place that writes or reads their text.

IREE's Python bindings have op classes for the ``hal`` dialect but no attribute classes or
builders (notes/iree-hal-facts.md), so pipeline layouts, executable targets and executable
objects are made by ``ir.Attribute.parse`` of text written here, and read by splitting their
printed form here. Everything that is an ordinary builtin attribute inside them (the object's
``path`` and ``data``, the target's config dictionary) is read and built with the bindings:
object data is a ``DenseElementsAttr`` (``vector<Nxi8>``) made from the bytes, never a list of
numbers in text (a 2 MiB cubin: 0.4 ms, against 0.6 s for ``dense<[...]>`` text).

Syntax is IREE 3.13's (``#hal.pipeline.layout<constants = N, bindings = [...]>``,
``#hal.executable.objects<{#target = [#object, ...]}>``).
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from iree.compiler import ir

__all__ = [
    "Layout",
    "ObjectRef",
    "ObjectsEntry",
    "pipeline_layout",
    "read_layout",
    "cuda_target",
    "target_arch",
    "target_backend",
    "executable_object",
    "executable_objects",
    "read_objects",
    "object_payloads",
    "device_type",
]

_LAYOUT = "#hal.pipeline.layout<"
_BINDING = "#hal.pipeline.binding<"
_OBJECTS = "#hal.executable.objects<{"
_OBJECT = "#hal.executable.object<"
_TARGET = "#hal.executable.target<"


# ----- small readers of printed attributes --------------------------------------------------
#: What the bracket scanner stops at: string literals (skipped whole: object data can be
#: megabytes of PTX or hex), ``->`` (not a bracket), brackets, commas and ``=``.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|->|[<>{}\[\]()]|[,=]')


def _brackets(text: str, start: int = 0):
    """``(index, depth after the character)`` for each bracket, ``,`` and ``=`` of ``text``
    from ``start``, outside string literals; ``<{[(`` open and ``>}])`` close a level (the
    ``>`` of ``->`` does not)."""
    depth = 0
    for m in _TOKENS.finditer(text, start):
        c = m.group()
        if c in "<{[(":
            depth += 1
        elif c in ">}])":
            depth -= 1
        elif len(c) > 1:  # a string literal or '->'
            continue
        yield m.start(), depth


def _close(text: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``text[start]``."""
    for i, depth in _brackets(text, start):
        if depth == 0:
            return i + 1
    raise ValueError(f"unbalanced attribute text: {text[start : start + 60]}")


def _split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets and strings, each part stripped."""
    parts, last = [], 0
    for i, depth in _brackets(text):
        if depth == 0 and text[i] == sep:
            parts.append(text[last:i].strip())
            last = i + 1
    tail = text[last:].strip()
    if tail:
        parts.append(tail)
    return parts


def _context_of(attr):
    """The attribute's context (to parse its parts in), or no change for text."""

    return attr.context if isinstance(attr, ir.Attribute) else contextlib.nullcontext()


def _body(text: str, head: str) -> str:
    """The text between ``head`` (ending in its opening bracket) and the matching close."""
    if not text.startswith(head):
        raise ValueError(f"expected {head}..., got {text[:60]}")
    end = _close(text, len(head) - 1)
    return text[len(head) : end - 1]


# ----- types --------------------------------------------------------------------------------
def device_type() -> ir.Type:
    """``!hal.device`` (no Python class for HAL types either)."""
    return ir.Type.parse("!hal.device")


# ----- pipeline layouts ---------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """A ``#hal.pipeline.layout``: ``constants`` 32-bit push constants and one entry per
    binding, its flags (``("ReadOnly",)``, ``("Indirect",)``..., ``()`` for read-write)."""

    constants: int
    bindings: tuple[tuple[str, ...], ...]

    @property
    def read_only(self) -> list[bool]:
        return ["ReadOnly" in flags for flags in self.bindings]


def pipeline_layout(read_only: Sequence[bool], constants: int) -> ir.Attribute:
    """``#hal.pipeline.layout<constants = N, bindings = [storage_buffer (ReadOnly)...]>``:
    one storage-buffer binding per entry of ``read_only``."""
    bindings = ", ".join(f"{_BINDING}storage_buffer{', ReadOnly' if ro else ''}>" for ro in read_only)
    return ir.Attribute.parse(f"{_LAYOUT}constants = {int(constants)}, bindings = [{bindings}]>")


def read_layout(attr: ir.Attribute | str) -> Layout:
    """The constants and binding flags of a pipeline layout. Raises ValueError when ``attr``
    is not one."""
    body = _body(str(attr), _LAYOUT)  # no builtin attributes inside: plain text
    constants, bindings = 0, []
    for item in _split_top(body):
        key, _, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if key == "constants":
            constants = int(value)
        elif key == "bindings":
            for b in _split_top(value.strip()[1:-1]):
                fields = _split_top(_body(b, _BINDING))
                flags = tuple(f.strip() for f in fields[1:]) if len(fields) > 1 else ()
                flags = tuple(x.strip() for f in flags for x in f.split("|") if x.strip())
                bindings.append(flags)
    return Layout(constants, tuple(bindings))


# ----- executable targets -------------------------------------------------------------------
def cuda_target(arch: str | None = None) -> ir.Attribute:
    """``#hal.executable.target<"cuda", "cuda-nvptx-fb">``, which matches every CUDA target
    (notes: an object key whose config has ``target_arch`` does not match
    ``--iree-cuda-target``), or with ``{target_arch = "sm_XY"}`` to key one object per
    architecture (split-architectures turns those into executable variants)."""
    config = f', {{target_arch = "{arch}"}}' if arch else ""
    return ir.Attribute.parse(f'{_TARGET}"cuda", "cuda-nvptx-fb"{config}>')


def _target_fields(attr: ir.Attribute | str) -> list[str]:
    return _split_top(_body(str(attr), _TARGET))


def target_backend(attr: ir.Attribute | str) -> str:
    """The backend of an executable target (``"cuda"``, ``"llvm-cpu"``)."""
    with _context_of(attr):
        return ir.StringAttr(ir.Attribute.parse(_target_fields(attr)[0])).value


def target_arch(attr: ir.Attribute | str) -> str | None:
    """The ``target_arch`` of an executable target's configuration, or None."""
    fields = _target_fields(attr)
    if len(fields) < 3:
        return None
    with _context_of(attr):
        config = ir.DictAttr(ir.Attribute.parse(fields[2]))
    return ir.StringAttr(config["target_arch"]).value if "target_arch" in config else None


# ----- executable objects -------------------------------------------------------------------
@dataclass
class ObjectRef:
    """One ``#hal.executable.object``: ``path`` (a label when ``data`` is embedded) and
    ``data``: text (``str``: PTX) when the embedded string is UTF-8, else bytes (a cubin, or a
    string with escaped bytes that are not UTF-8), or None (a file to find)."""

    path: str | None
    data: str | bytes | None


@dataclass
class ObjectsEntry:
    """One key of ``#hal.executable.objects``: its target attribute, the target's
    ``target_arch`` (None when the key has none) and the objects."""

    target: ir.Attribute
    arch: str | None
    objects: list[ObjectRef]


def _data_attr(data: str | bytes) -> ir.Attribute:
    if isinstance(data, str):
        return ir.StringAttr.get(data)
    i8 = ir.IntegerType.get_signless(8)
    return ir.DenseElementsAttr.get(np.frombuffer(bytes(data), dtype=np.int8), type=ir.VectorType.get([len(data)], i8))


def executable_object(path: str | None, data: str | bytes | None = None) -> ir.Attribute:
    """``#hal.executable.object<{path = ..., data = ...}>``: PTX as a string attribute, bytes as
    ``dense<...> : vector<Nxi8>`` (built as a DenseElementsAttr; MLIR prints large ones in
    hex)."""
    fields = ir.DictAttr.get(
        {
            k: v
            for k, v in (
                ("path", ir.StringAttr.get(path) if path is not None else None),
                ("data", _data_attr(data) if data is not None else None),
            )
            if v is not None
        }
    )
    # The dictionary's printed form is the object's parameter list.
    return ir.Attribute.parse(f"{_OBJECT}{fields}>")


def executable_objects(entries: Sequence[tuple[ir.Attribute, Sequence[ir.Attribute]]]) -> ir.Attribute:
    """``#hal.executable.objects<{#target = [#object, ...], ...}>`` from (target, objects)."""
    items = ", ".join(f"{target} = [{', '.join(str(o) for o in objects)}]" for target, objects in entries)
    return ir.Attribute.parse(f"{_OBJECTS}{items}}}>")


def _read_object(text: str) -> ObjectRef:
    if not text.startswith(_OBJECT):
        raise ValueError(f"not a {_OBJECT[:-1]}: {text[:60]}")
    body = _body(text, _OBJECT).strip()
    if body.startswith("{, "):  # IREE 3.13 prints a data-only object as '<{, data = ...}>'
        body = "{" + body[3:]
    fields = ir.DictAttr(ir.Attribute.parse(body))
    path = ir.StringAttr(fields["path"]).value if "path" in fields else None
    data = None
    if "data" in fields:
        raw = fields["data"]
        if isinstance(raw, ir.StringAttr):
            raw_bytes = raw.value_bytes
            try:
                data = raw_bytes.decode("utf-8")
            except UnicodeDecodeError:  # an escaped byte that is not UTF-8 ("\A0"): binary data
                data = raw_bytes
        else:
            data = np.array(ir.DenseIntElementsAttr(raw)).astype(np.int8).tobytes()
    return ObjectRef(path, data)


def read_objects(attr: ir.Attribute | str) -> list[ObjectsEntry]:
    """The entries of a ``#hal.executable.objects`` attribute (a source's ``objects``), or of a
    plain object list ``[#hal.executable.object<...>, ...]`` (a variant's ``objects``, which
    gets target None). Raises ValueError when ``attr`` is neither (a key that is not an
    ``#hal.executable.target``, an entry that is not an object)."""
    text = str(attr)
    try:
        with _context_of(attr):
            if text.startswith("["):
                return [ObjectsEntry(None, None, [_read_object(o) for o in _split_top(text[1:-1])])]
            out = []
            for entry in _split_top(_body(text, _OBJECTS)):
                if not entry.startswith(_TARGET):
                    raise ValueError(f"an objects key is not a {_TARGET[:-1]}: {entry[:60]}")
                key_end = _close(entry, len(_TARGET) - 1)
                target_text = entry[:key_end]
                objects_text = entry[key_end:].strip().removeprefix("=").strip()
                if not (objects_text.startswith("[") and objects_text.endswith("]")):
                    raise ValueError(f"the objects of {target_text} are not a list: {objects_text[:60]}")
                target = ir.Attribute.parse(target_text)
                objects = [_read_object(o) for o in _split_top(objects_text[1:-1])]
                out.append(ObjectsEntry(target, target_arch(target), objects))
            return out
    except ir.MLIRError as err:
        raise ValueError(str(err).splitlines()[-1].strip() or "malformed objects attribute") from None


def object_payloads(source, base_dir: str) -> list[tuple[str, bytes | None, str | None]]:
    """``(label, bytes or None, error or None)`` for every object of a ``hal.executable.source``
    (in order, over all target keys). Raises ValueError as :func:`read_objects` does.

    Embedded ``data`` is returned as bytes (string data UTF-8 encoded); a ``path`` is read
    relative to ``base_dir``, then the current directory (as iree-compile's object search
    does). ``error`` says why an object file could not be read.
    """

    out: list[tuple[str, bytes | None, str | None]] = []
    if "objects" not in source.attributes:
        return out
    for entry in read_objects(source.attributes["objects"]):
        for ref in entry.objects:
            label = ref.path or "<object>"
            if ref.data is not None:
                out.append((label, ref.data.encode("utf-8") if isinstance(ref.data, str) else ref.data, None))
                continue
            candidates = [label] if os.path.isabs(label) else [os.path.join(base_dir, label), label]
            for cand in candidates:
                if os.path.exists(cand):
                    try:
                        with open(cand, "rb") as f:
                            out.append((label, f.read(), None))
                    except OSError as err:
                        out.append((label, None, f"cannot read object '{label}': {err.strerror}"))
                    break
            else:
                out.append(
                    (label, None, f"object file '{label}' not found (looked in {base_dir or '.'} and the current directory)")
                )
    return out
