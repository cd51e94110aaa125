"""Tests of autotune_export.tools.inspection (``autotune-export inspect``): real Triton compilations,
ptxas and cuobjdump (all bundled with Triton; no GPU), and a .vmfb built by iree-compile."""
import json
import pathlib
import struct

import pytest

from autotune_export.tools import cli
from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.tools.inspection import (Inspection, Resources, inspect_path, parse_layout, parse_resource_usage,
                                        read_cuda_executable)

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "lit" / "Inputs" / "kernels.py"

SOURCE = """
hal.executable.source private @add_ex {
  hal.executable.autotuning.export @add
      triton("KERNELS", "add_kernel")
      signature(x_ptr: *fp32:16, y_ptr: *fp32:16, out_ptr: *fp32:16 {output}, n: i32:16)
      configs([{BLOCK = 128, num_warps = 4}, {BLOCK = 512, num_warps = 2, num_stages = 2},
               {BLOCK = 128, num_warps = 4, num_ctas = 2}])
      workload(n)
      grid(cdiv(n, BLOCK))
      tune_workload(tensor<4096xf32>, tensor<4096xf32>)
      default(@add_1_512_w2_s2)
}

util.func public @add(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n_i32 = arith.index_cast %n : index to i32
  %out = flow.dispatch @add_ex::@add[%n](%x, %y, %n_i32) : (tensor<?xf32>{%n}, tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %out : tensor<?xf32>
}
""".replace("KERNELS", str(KERNELS))

VARIANTS = ["add_0_128_w4_s3", "add_0_128_w4_s3_spec", "add_1_512_w2_s2", "add_1_512_w2_s2_spec"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def mlir(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "add.mlir"
    path.write_text(SOURCE)
    return str(path)


@pytest.fixture(scope="module")
def from_mlir(mlir, cache) -> Inspection:
    return inspect_path(mlir, target="sm_80", cache_dir=cache, jobs=1)


@pytest.fixture(scope="module")
def vmfb(mlir, cache, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "add.vmfb"
    assert cli.main([mlir, "--emit", "vmfb", "--target", "sm_80", "--cache-dir", cache, "-q", "-j", "1",
                     "-o", str(out)]) == 0
    return str(out)


@pytest.fixture(scope="module")
def from_vmfb(vmfb, cache) -> Inspection:
    return inspect_path(vmfb, cache_dir=cache)


# --------------------------------------------------------------------------------------------
# .mlir


def test_mlir_groups_variants_and_sizes(from_mlir):
    [exe] = from_mlir.executables
    assert (exe.name, exe.object_format, exe.target) == ("add_ex", "ptx", "sm_80")
    assert exe.exports == VARIANTS
    [g] = from_mlir.groups
    assert (g.executable, g.group, g.host) == ("add_ex", "add", "add")
    assert [v.name for v in g.variants] == VARIANTS
    assert [v.ordinal for v in g.variants] == [0, 1, 2, 3]
    assert [v.workgroup_size for v in g.variants] == [[128, 1, 1], [128, 1, 1], [64, 1, 1], [64, 1, 1]]
    assert all(v.shared_bytes == 0 for v in g.variants)
    assert g.layout.bindings == [["ReadOnly"], ["ReadOnly"], []] and g.layout.constants == 1


def test_mlir_configs_default_and_specialization(from_mlir):
    [g] = from_mlir.groups
    assert g.kernel == (str(KERNELS), "add_kernel")
    assert (g.default, g.frozen) == ("add_1_512_w2_s2", True)
    assert [v.default for v in g.variants] == [False, False, True, False]
    assert g.variants[0].config == [("BLOCK", 128), ("num_warps", 4)]
    assert g.variants[2].config == [("BLOCK", 512), ("num_warps", 2), ("num_stages", 2)]
    assert g.specialized == {"add_0_128_w4_s3": "add_0_128_w4_s3_spec", "add_1_512_w2_s2": "add_1_512_w2_s2_spec"}
    assert [v.specialized_of for v in g.variants] == [None, "add_0_128_w4_s3", None, "add_1_512_w2_s2"]
    assert g.guards == {"divisible_by_16": [0]} and g.guard_names == {"divisible_by_16": ["n"]}
    assert len(g.pruned) == 1 and "num_ctas = 2: IREE launches no thread-block clusters" in g.pruned[0]


def test_mlir_resources_from_the_cubin(from_mlir):
    [g] = from_mlir.groups
    for v in g.variants:
        assert isinstance(v.resources, Resources)
        assert 0 < v.resources.registers <= 255 and v.resources.spills == 0


def test_unfrozen_default_is_the_first_variant(tmp_path, cache):
    path = tmp_path / "free.mlir"
    path.write_text(SOURCE.replace("      default(@add_1_512_w2_s2)\n", ""))
    [g] = inspect_path(str(path), cache_dir=cache, jobs=1, resources=False).groups
    assert (g.default, g.frozen) == ("add_0_128_w4_s3", False)
    assert all(v.resources is None for v in g.variants)


# --------------------------------------------------------------------------------------------
# .vmfb


def test_vmfb_matches_the_mlir(from_mlir, from_vmfb):
    [m], [v] = from_mlir.groups, from_vmfb.groups
    assert from_vmfb.kind == "vmfb"
    assert [x.name for x in v.variants] == [x.name for x in m.variants]
    assert [x.ordinal for x in v.variants] == [x.ordinal for x in m.variants]
    assert [x.workgroup_size for x in v.variants] == [x.workgroup_size for x in m.variants]
    assert [x.shared_bytes for x in v.variants] == [x.shared_bytes for x in m.variants]
    assert [x.resources for x in v.variants] == [x.resources for x in m.variants]
    assert v.layout == m.layout and v.specialized == m.specialized
    # default(@v) froze the default: the reflection says so (frozen was None, "cannot tell").
    assert (v.default, v.frozen, v.host) == ("add_1_512_w2_s2", True, "add") == (m.default, m.frozen, m.host)
    assert v.choices == m.choices == []
    assert v.kernel is None  # not kept in a .vmfb; the configs are (reflection metadata)
    assert [x.config for x in v.variants if x.specialized_of is None] == \
        [x.config for x in m.variants if x.specialized_of is None]
    assert all(x.config is None for x in v.variants if x.specialized_of is not None)
    [exe] = from_vmfb.executables
    assert (exe.name, exe.object_format, exe.target, exe.exports) == ("add_ex", "ptx", "sm_80", VARIANTS)


def test_read_cuda_executable(vmfb):
    import zipfile

    with zipfile.ZipFile(vmfb) as z:
        blob = z.read("add_ex_cuda_nvptx_fb.fb")
    exe = read_cuda_executable(blob)
    assert [e.name for e in exe.exports] == VARIANTS
    assert [e.block_dims for e in exe.exports] == [[128, 1, 1], [128, 1, 1], [64, 1, 1], [64, 1, 1]]
    assert {e.constants for e in exe.exports} == {1} and exe.exports[0].binding_flags == [1, 1, 0]
    assert len(exe.images) == 1 and b".visible .entry add_1_512_w2_s2(" in exe.images[0]
    with pytest.raises(ValueError, match="CDA1"):
        read_cuda_executable(b"\0" * 64)


def test_vmfb_without_zip_directory(vmfb, tmp_path, cache):
    """A .vmfb whose bytes are not a zip archive: executables are found by their CDA1 header."""
    import zipfile

    data = pathlib.Path(vmfb).read_bytes()
    with zipfile.ZipFile(vmfb) as z:
        module = z.read("module.fb")
        blob = z.read("add_ex_cuda_nvptx_fb.fb")
    from autotune_export.tools import inspect_objects

    found = inspect_objects.vmfb_members(b"junk" + module + b"\0" * 12 + blob)
    assert [b for _, b in found] == [blob]
    assert data.startswith(b"PK")


def test_garbage_vmfb_is_a_diagnostic(tmp_path):
    bad = tmp_path / "bad.vmfb"
    bad.write_bytes(b"not a module")
    with pytest.raises(DiagnosticError, match="cannot load .* as an IREE module"):
        inspect_path(str(bad))


# --------------------------------------------------------------------------------------------
# Output and the command


def test_table_and_json(from_mlir):
    table = from_mlir.format_table()
    assert "group @add_ex::@add: 2 variants (+2 specialized)" in table
    assert "default:     @add_1_512_w2_s2 (frozen by default(@v))" in table
    assert "specialized: each variant has a fast path, taken when n (constant 0) % 16 == 0" in table
    rows = [line.split() for line in table.splitlines() if "add_1_512_w2_s2" in line and "default" not in line]
    assert rows[0][:5] == ["*", "add_1_512_w2_s2", "2", "64x1x1", "0"]
    doc = json.loads(json.dumps(from_mlir.to_json()))
    assert doc["format"] == "autotune-export.inspect/2" and doc["kind"] == "mlir"
    [g] = doc["groups"]
    # access names, not [] for a read-write binding
    assert g["layout"] == {"bindings": ["ReadOnly", "ReadOnly", "ReadWrite"], "binding_flags": [["ReadOnly"], ["ReadOnly"], []],
                           "constants": 1}
    v = g["variants"][2]
    assert (v["name"], v["workgroup_size"], v["config"], v["default"]) == \
        ("add_1_512_w2_s2", [64, 1, 1], {"BLOCK": 512, "num_warps": 2, "num_stages": 2}, True)
    assert isinstance(v["registers"], int) and v["spills"] == 0


def test_command_json_and_output_file(mlir, cache, tmp_path, capsys):
    assert cli.main(["inspect", mlir, "--json", "--cache-dir", cache, "--no-resources"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [v["name"] for v in doc["groups"][0]["variants"]] == VARIANTS
    out = tmp_path / "t.txt"
    assert cli.main(["inspect", mlir, "--cache-dir", cache, "-o", str(out)]) == 0
    assert "group @add_ex::@add" in out.read_text() and capsys.readouterr().out == ""


def test_command_errors(tmp_path, capsys):
    assert cli.main(["inspect", str(tmp_path / "missing.mlir")]) == 1
    assert "error: cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.mlir"
    bad.write_text("hal.executable.source private @x {\n  hal.executable.autotuning.export @g triton(\n}\n")
    assert cli.main(["inspect", str(bad)]) == 1
    assert "bad.mlir:2:46: error: expected a string in triton(...)" in capsys.readouterr().err


def test_a_file_named_like_the_subcommand_is_still_compiled(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inspect").write_text("util.func public @f() {\n  util.return\n}\n")
    assert cli.main(["./inspect", "-p", ""]) == 0
    assert "util.func public @f()" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# Parsers


def test_parse_resource_usage():
    text = """
Resource usage:
 Common:
  GLOBAL:0
 Function k_spec:
  REG:248 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:412 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function k:
  REG:32 STACK:4648 SHARED:16 LOCAL:8 CONSTANT[0]:412 TEXTURE:0 SURFACE:0 SAMPLER:0
"""
    usage = parse_resource_usage(text)
    assert usage["k_spec"] == Resources(248, 0, 0, 0) and usage["k_spec"].spills == 0
    assert usage["k"] == Resources(32, 8, 4648, 16) and usage["k"].spills == (4648 + 8) // 4


def test_parse_layout():
    layout = parse_layout("#hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "
                          "ReadOnly>, #hal.pipeline.binding<storage_buffer, \"ReadOnly|Indirect\">, "
                          "#hal.pipeline.binding<storage_buffer>]>")
    assert layout.constants == 2 and len(layout.bindings) == 3
    assert layout.bindings[0] == ["ReadOnly"] and layout.bindings[2] == []
    assert layout.summary().startswith("3 bindings [ReadOnly, ")
    assert parse_layout("#something.else") is None


def test_cubin_target():
    from autotune_export.tools import inspect_objects

    elf = bytearray(64)
    elf[:4], elf[4], elf[7] = b"\x7fELF", 2, 0x33
    struct.pack_into("<I", elf, 48, 0x500550)
    assert inspect_objects.cubin_target(bytes(elf)) == "sm_80"
    struct.pack_into("<I", elf, 48, 0x5A0D5A)
    assert inspect_objects.cubin_target(bytes(elf)) == "sm_90a"
