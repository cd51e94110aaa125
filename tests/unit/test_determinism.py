"""Determinism of ``autotune-export --emit iree`` and robustness of the variant cache.

The output for an example is byte-identical across runs, across ``-j 1`` and ``-j 2``, and
from a cold or a warm cache. A cache entry that was truncated or altered (``<cache>/variants/``:
compiled variants; ``<cache>/cubin/``: ptxas checks and assembled cubins) is detected by its
checksum, rebuilt, and the output is unchanged. Two processes compiling the same kernels into
the same cold cache at once both succeed with the same output.

Every run is a separate ``autotune-export`` process with its own temporary ``--cache-dir``
(Triton's own cache lives inside it, so a cold cache is cold for Triton too).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

# Every test here compiles Triton kernels: the integration suite.
pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = {
    "vector_add": ROOT / "examples" / "vector_add" / "vector_add.mlir",
    "softmax": ROOT / "examples" / "softmax" / "softmax.mlir",
}
CONFIGS = {"vector_add": 3, "softmax": 4}


def _command(example: str, out: pathlib.Path, cache: pathlib.Path, jobs: int) -> list[str]:
    return [sys.executable, "-m", "autotune_export.tools.cli", str(EXAMPLES[example]), "--emit", "iree",
            "-j", str(jobs), "--cache-dir", str(cache), "-o", str(out)]


def _env() -> dict:
    env = dict(os.environ)
    env.pop("AUTOTUNE_EXPORT_CACHE_DIR", None)
    env.pop("AUTOTUNE_EXPORT_TRACEBACK", None)
    return env


def run(example: str, out: pathlib.Path, cache: pathlib.Path, jobs: int = 1) -> tuple[bytes, str]:
    """Run the CLI; returns the output file's bytes and stderr."""
    proc = subprocess.run(_command(example, out, cache, jobs), capture_output=True, text=True, env=_env(), timeout=900)
    assert proc.returncode == 0, proc.stderr
    return out.read_bytes(), proc.stderr


def compiled(stderr: str) -> tuple[int, int]:
    """(Triton configs compiled, from cache) from the CLI's last line."""
    m = re.search(r"\((\d+) Triton configs? compiled, (\d+) from cache\)", stderr)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.search(r"no Triton config compiled: all (\d+) from cache", stderr)
    assert m, stderr
    return 0, int(m.group(1))


_REFERENCES: dict[str, tuple[bytes, pathlib.Path]] = {}


def reference_run(example: str, tmp_path_factory) -> tuple[bytes, pathlib.Path]:
    """Output of a cold ``-j 1`` run of ``example`` and its populated cache (once per session)."""
    if example not in _REFERENCES:
        work = tmp_path_factory.mktemp(f"det-{example}")
        cache = work / "cache"
        out, err = run(example, work / "ref.mlir", cache, jobs=1)
        assert compiled(err) == (CONFIGS[example], 0)
        assert b"hal.executable.autotuning" not in out and b"hal.executable.export" in out
        _REFERENCES[example] = (out, cache)
    return _REFERENCES[example]


@pytest.fixture(scope="module", params=sorted(EXAMPLES))
def reference(request, tmp_path_factory):
    """(example, output of a cold -j 1 run, its populated cache)."""
    return (request.param, *reference_run(request.param, tmp_path_factory))


def test_warm_cache_gives_identical_output(reference, tmp_path):
    example, ref, cache = reference
    out, err = run(example, tmp_path / "warm.mlir", cache, jobs=2)
    assert compiled(err) == (0, CONFIGS[example])
    assert out == ref


def test_cold_cache_with_two_jobs_gives_identical_output(reference, tmp_path):
    example, ref, _ = reference
    out, err = run(example, tmp_path / "cold.mlir", tmp_path / "cache", jobs=2)
    assert compiled(err) == (CONFIGS[example], 0)
    assert out == ref


# --------------------------------------------------------------------------------------------
# Corrupted entries


def _variant_entries(cache: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in (cache / "variants").rglob("*.json"))


def _cubin_entries(cache: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in (cache / "cubin").rglob("*") if p.is_file() and not p.name.endswith((".lock", ".tmp")))


def _variant_ok(path: pathlib.Path) -> bool:
    doc = json.loads(path.read_text(encoding="utf-8"))
    digest = hashlib.sha256(json.dumps(doc["payload"], sort_keys=True).encode()).hexdigest()
    return doc["sha256"] == digest and path.name == doc["key"] + ".json"


def _cubin_ok(path: pathlib.Path) -> bool:
    blob = path.read_bytes()
    return len(blob) >= 32 and hashlib.sha256(blob[:-32]).digest() == blob[-32:]


def _truncate(path: pathlib.Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _alter_variant(path: pathlib.Path) -> None:
    """Still valid JSON for the right key: only the compiled code changes."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["payload"]["kind"] == "compiled"
    doc["payload"]["ptx"] = doc["payload"]["ptx"].replace("ret;", "trap;", 1)
    path.write_text(json.dumps(doc, sort_keys=True), encoding="utf-8")


def _flip_byte(path: pathlib.Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def vector_add_cache(tmp_path_factory):
    """The reference output of vector_add, its warm cache (not to be modified) and a work dir."""
    ref, cache = reference_run("vector_add", tmp_path_factory)
    return ref, cache, tmp_path_factory.mktemp("det-vector-add")


@pytest.mark.parametrize("damage", ["truncate", "alter", "everything"])
def test_corrupted_cache_entries_are_rebuilt(vector_add_cache, damage):
    """truncate: one variant entry and one cubin entry cut in half; alter: a variant entry
    that is still valid JSON for its key with other PTX, and a cubin with one bit flipped;
    everything: all variant entries emptied or truncated and every cubin entry altered."""
    ref, ref_cache, work = vector_add_cache
    cache = work / f"cache-{damage}"
    shutil.copytree(ref_cache, cache)
    variants, cubins = _variant_entries(cache), _cubin_entries(cache)
    assert len(variants) == 3 and cubins, (variants, cubins)
    if damage == "truncate":
        _truncate(variants[0])
        _truncate(cubins[0])
        damaged_variants, damaged_cubins = variants[:1], cubins[:1]
    elif damage == "alter":
        _alter_variant(variants[1])
        _flip_byte(cubins[0])
        damaged_variants, damaged_cubins = variants[1:2], cubins[:1]
    else:
        variants[0].write_bytes(b"")
        for p in variants[1:]:
            _truncate(p)
        for p in cubins:
            _flip_byte(p)
        damaged_variants, damaged_cubins = variants, cubins
    assert not any(_is_json(p) and _variant_ok(p) for p in damaged_variants)
    assert not any(_cubin_ok(p) for p in damaged_cubins)

    out, err = run("vector_add", work / f"{damage}.mlir", cache, jobs=1)
    assert out == ref
    # Exactly the damaged variants were compiled again; every entry is whole again.
    assert compiled(err) == (len(damaged_variants), 3 - len(damaged_variants))
    assert all(_variant_ok(p) for p in _variant_entries(cache))
    assert all(_cubin_ok(p) for p in _cubin_entries(cache))
    if damage == "everything":
        # A run after the repair is served from the cache.
        again, err = run("vector_add", work / f"{damage}-again.mlir", cache, jobs=1)
        assert again == ref and compiled(err) == (0, 3)


def _is_json(path: pathlib.Path) -> bool:
    try:
        json.loads(path.read_text(encoding="utf-8"))
        return True
    except ValueError:
        return False


# --------------------------------------------------------------------------------------------
# Concurrency


def test_two_processes_into_one_cold_cache(vector_add_cache):
    ref, _, work = vector_add_cache
    cache = work / "shared-cold"
    outs = [work / f"concurrent-{i}.mlir" for i in range(2)]
    procs = [
        subprocess.Popen(_command("vector_add", out, cache, jobs=2), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        for out in outs
    ]
    results = [p.communicate(timeout=900) for p in procs]
    for p, (_, err) in zip(procs, results):
        assert p.returncode == 0, err
    assert [o.read_bytes() for o in outs] == [ref, ref]
    # Between them each config was compiled once or twice (a process that finds an entry the
    # other wrote while it waited on the entry's lock serves it), never lost.
    stats = [compiled(err) for _, err in results]
    assert all(c + k == 3 for c, k in stats), stats
    assert all(_variant_ok(p) for p in _variant_entries(cache)) and len(_variant_entries(cache)) == 3
    assert all(_cubin_ok(p) for p in _cubin_entries(cache))
    assert not list(cache.rglob("*.tmp"))
