"""Per-variant fingerprints: what decides a variant's timing, hashed, as the key of the tuning
cache (so adding a config to a group times only the new variant, and a rebuilt module with the
same code reuses its timings).

A variant's fingerprint is the SHA-256 (first 32 hex digits) of

* its ``hal.executable.export`` as printed, without its symbol name and ordinal (the layout,
  count region, workgroup size, shared memory, its own ``objects``, and the Triton config it
  was compiled from, ``autotune.config``, when it has one);
* its code: the PTX entry of the same name in the source's objects with the name masked
  (:func:`autotune_export.cuda.ptx.entry_text`), else the ``func.func`` of the same name in the
  source's inner module (hand-written variants, the CPU path), else every object's bytes and the
  whole inner module (a change anywhere in the executable then re-times every variant).

Names are masked because they carry the config's index (``matmul_3_...``): a config inserted
before others renames them without changing their code.
"""

from __future__ import annotations

import hashlib
import re

from autotune_export.cuda.ptx import entry_text
from autotune_export.ir import hal_attrs
from autotune_export.ir.walk import exports_of, isa, sym_name
from iree.compiler.dialects import builtin, func

__all__ = ["variant_fingerprints"]


def _masked(text: str, name: str) -> str:
    return re.sub(rf"@{re.escape(name)}(?![\w$.])", "@VARIANT", text)


def variant_fingerprints(source, variants: list[str], base_dir: str) -> list[str]:
    """One fingerprint per variant of ``variants`` (exports of ``hal.executable.source``
    ``source``; ``base_dir``: where object paths are read from). Objects that cannot be read
    count as empty."""
    exports = exports_of(source)
    try:
        payloads = [data for _, data, _ in hal_attrs.object_payloads(source, base_dir) if data]
    except ValueError:
        payloads = []
    texts = []
    for data in payloads:
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    inner = [op for op in source.regions[0].blocks[0].operations if isa(op, builtin.ModuleOp)] if source.regions[0].blocks else []
    funcs = {}
    for mod in inner:
        for op in mod.regions[0].blocks[0].operations:
            if isa(op, func.FuncOp):
                funcs[sym_name(op.operation)] = op.operation
    out = []
    for variant in variants:
        h = hashlib.sha256()
        export = exports.get(variant)
        if export is not None:
            h.update(re.sub(r"ordinal\(\d+\)", "ordinal(_)", _masked(str(export), variant)).encode())
        code = next((t for t in (entry_text(text, variant) for text in texts if ".entry" in text) if t is not None), None)
        if code is None and variant in funcs:
            code = _masked(str(funcs[variant]), variant)
        if code is None:
            code = "\0".join(texts) + "".join(hashlib.sha256(d).hexdigest() for d in payloads) + "".join(str(m) for m in inner)
        h.update(code.encode())
        out.append(h.hexdigest()[:32])
    return out
