"""The jax-triton bridge: triton_call_to_mlir and convert_stablehlo (autotune_export/jax_triton.py).

The converter tests read tests/fixtures/jax/*.stablehlo.mlir, written by jax-triton 0.3.1
(scripts/make_jax_fixtures.py); no jax is needed here.
"""

import importlib.util
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

from autotune_export.cuda import triton_compat
from autotune_export.cuda.targets import iree_codegen_target, parse_target
from autotune_export.interop import jax_triton as jt
from autotune_export.interop import jax_triton_custom_call as custom_call
from autotune_export.interop import jax_triton_scalars as scalars
from autotune_export.interop import jax_triton_proto as proto
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.walk import walk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "jax")
IREE_COMPILE = shutil.which("iree-compile") or os.path.join(os.path.dirname(sys.executable), "iree-compile")


def _load_kernels():
    spec = importlib.util.spec_from_file_location("jax_fixture_kernels", os.path.join(FIXTURES, "kernels.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["jax_fixture_kernels"] = mod
    spec.loader.exec_module(mod)
    return mod


K = _load_kernels()


class Spec:
    """A jax.ShapeDtypeStruct look-alike (duck typing: .shape and .dtype)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


X = Spec((4096,), "float32")


def _group_of(text):
    from autotune_export.frontend.reader import SourceFile, find_groups, parse_source
    from autotune_export.ir.group import AutotuneGroup

    module = parse_source(SourceFile(text, "<test>", ROOT))
    (op,) = find_groups(module)
    return AutotuneGroup.from_op(op)


def _cdiv(a, b):
    return -(-a // b)


# --------------------------------------------------------------------------------------------
# triton_call_to_mlir


def test_plain_kernel_module():
    text = jt.triton_call_to_mlir(X, X, 4096, kernel=K.add_kernel, out_shape=X, grid=(16,), BLOCK=256)
    g = _group_of(text)
    assert g.triton == (os.path.join(FIXTURES, "kernels.py"), "add_kernel")
    assert [(p.name, p.type, p.output) for p in g.signature] == [
        ("x_ptr", "*fp32", False), ("y_ptr", "*fp32", False), ("n", "i32", False), ("out_ptr", "*fp32", True)]
    assert g.configs == [[("BLOCK", 256), ("num_warps", 4), ("num_stages", 3)]]
    assert g.workload == [] and g.grid == ["16"]
    assert "util.func public @main(%arg0: tensor<4096xf32>, %arg1: tensor<4096xf32>) -> tensor<4096xf32>" in text
    assert "%c4096_i32 = arith.constant 4096 : i32" in text
    assert ("flow.dispatch @add_kernel_ex::@add_kernel(%arg0, %arg1, %c4096_i32) : (tensor<4096xf32>, tensor<4096xf32>, "
            "i32) -> tensor<4096xf32>") in text


def test_options_name_and_dtypes():
    a = Spec((64, 32), "float16")
    text = jt.triton_call_to_mlir(a, a, 2048, kernel=K.add_kernel, out_shape=[Spec((64, 32), "float16")], grid=4,
                                  num_warps=8, num_stages=2, BLOCK=512, name="fwd", compute_capability=90)
    g = _group_of(text)
    assert g.signature[0].type == "*fp16"
    assert g.configs == [[("BLOCK", 512), ("num_warps", 8), ("num_stages", 2)]]
    assert "util.func public @fwd(%arg0: tensor<64x32xf16>, %arg1: tensor<64x32xf16>) -> tensor<64x32xf16>" in text
    assert "--target sm_90" in text


def test_autotuned_kernel_traced_grid():
    text = jt.triton_call_to_mlir(X, X, 4096, np.float32(0.5), kernel=K.scale_add_kernel, out_shape=X,
                                  grid=lambda m: (_cdiv(4096, m["BLOCK"]),))
    g = _group_of(text)
    assert [dict(c)["BLOCK"] for c in g.configs] == [128, 256, 512, 1024]
    assert [(dict(c)["num_warps"], dict(c)["num_stages"]) for c in g.configs] == [(4, 2), (4, 3), (8, 3), (8, 4)]
    assert g.signature[3].type == "fp32"
    assert "arith.constant 5.000000e-01 : f32" in text  # 0.5
    (expr,) = g.grid
    assert "BLOCK" in expr and "min(" not in expr  # traced, not selected
    for c in g.configs:
        assert grid_mod.evaluate(grid_mod.parse(expr), dict(c)) == 4096 // dict(c)["BLOCK"]


def test_autotuned_kernel_selected_grid():
    import math

    text = jt.triton_call_to_mlir(X, X, 4096, np.float32(0.5), kernel=K.scale_add_kernel, out_shape=X,
                                  grid=lambda m: (math.ceil(4096 / m["BLOCK"]), 2))
    g = _group_of(text)
    assert "Grid: selected" in text
    x, y = g.grid
    assert y == "2"
    for c in g.configs:
        assert grid_mod.evaluate(grid_mod.parse(x), dict(c)) == 4096 // dict(c)["BLOCK"]


def test_explicit_metaparams_filter_autotune_configs():
    text = jt.triton_call_to_mlir(X, X, 4096, np.float32(0.5), kernel=K.scale_add_kernel, out_shape=X,
                                  grid=lambda m: (_cdiv(4096, m["BLOCK"]),), BLOCK=512)
    g = _group_of(text)
    assert g.configs == [[("BLOCK", 512), ("num_warps", 8), ("num_stages", 3)]]
    assert g.grid == ["8"]
    with pytest.raises(jt.JaxTritonError, match="no config .* left after pruning"):
        jt.triton_call_to_mlir(X, X, 4096, np.float32(0.5), kernel=K.scale_add_kernel, out_shape=X, grid=1, BLOCK=7)


def test_early_config_prune_and_heuristics(monkeypatch):
    seen = {}

    def prune(configs, named_args):
        seen["n"] = named_args["n"]
        seen["x_shape"] = named_args["x_ptr"].shape
        return [c for c in configs if c.kwargs["BLOCK"] >= 512]

    monkeypatch.setattr(K.scale_add_kernel, "early_config_prune", prune)
    text = jt.triton_call_to_mlir(X, X, 4096, np.float32(0.5), kernel=K.scale_add_kernel, out_shape=X,
                                  grid=lambda m: (_cdiv(4096, m["BLOCK"]),))
    assert seen == {"n": 4096, "x_shape": (4096,)}
    assert [dict(c)["BLOCK"] for c in _group_of(text).configs] == [512, 1024]

    even = jt.triton_call_to_mlir(X, 4096, kernel=K.masked_copy_kernel, out_shape=X, grid=(32,), BLOCK=128)
    odd = jt.triton_call_to_mlir(Spec((4000,), "float32"), 4000, kernel=K.masked_copy_kernel,
                                 out_shape=Spec((4000,), "float32"), grid=(32,), BLOCK=128)
    assert _group_of(even).configs[0][:2] == [("BLOCK", 128), ("EVEN", True)]
    assert _group_of(odd).configs[0][:2] == [("BLOCK", 128), ("EVEN", False)]


def test_zeroed_outputs_tie_every_output():
    text = jt.triton_call_to_mlir(X, 4096, kernel=K.row_sum_kernel, out_shape=Spec((1,), "float32"), grid=(4,),
                                  zeroed_outputs=(0,), BLOCK=1024)
    assert "%cst = arith.constant 0.000000e+00 : f32" in text
    assert "%0 = flow.tensor.splat %cst : tensor<1xf32>" in text
    assert ("flow.dispatch @row_sum_kernel_ex::@row_sum_kernel(%arg0, %c4096_i32, %0) : (tensor<4096xf32>, i32, "
            "tensor<1xf32>) -> %0") in text
    _group_of(text)  # parses


def test_input_output_aliases_tied_clone():
    text = jt.triton_call_to_mlir(X, X, 4096, kernel=K.add_inplace_kernel, out_shape=X, grid=(8,),
                                  input_output_aliases={0: 0}, BLOCK=512)
    assert "%0 = flow.tensor.clone %arg0 : tensor<4096xf32>" in text
    assert "(%arg0, %arg1, %c4096_i32, %0) : (tensor<4096xf32>, tensor<4096xf32>, i32, tensor<4096xf32>) -> %0" in text
    # Input indices count array arguments only (jax-triton 0.3.x).
    with pytest.raises(jt.JaxTritonError, match="input 2 is not an array argument"):
        jt.triton_call_to_mlir(X, X, 4096, kernel=K.add_inplace_kernel, out_shape=X, grid=(8,),
                               input_output_aliases={2: 0}, BLOCK=512)


def test_errors():
    with pytest.raises(jt.JaxTritonError, match="4 non-constexpr parameters"):
        jt.triton_call_to_mlir(X, X, kernel=K.add_kernel, out_shape=X, grid=1, BLOCK=4)
    with pytest.raises(jt.JaxTritonError, match="'BLOK' is not a constexpr"):
        jt.triton_call_to_mlir(X, X, 4096, kernel=K.add_kernel, out_shape=X, grid=1, BLOK=4)
    with pytest.raises(jt.JaxTritonError, match="no value for constexpr parameter 'BLOCK'"):
        jt.triton_call_to_mlir(X, X, 4096, kernel=K.add_kernel, out_shape=X, grid=1)
    with pytest.raises(jt.JaxTritonError, match="JITFunction"):
        jt.triton_call_to_mlir(X, kernel=lambda: None, out_shape=X, grid=1)


def test_kernel_in_closure_is_carried(tmp_path):
    src = tmp_path / "closure_mod.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n"
        "def make():\n"
        "    @triton.jit\n"
        "    def inner(x_ptr, out_ptr, B: tl.constexpr):\n"
        "        pass\n"
        "    return inner\n"
    )
    spec = importlib.util.spec_from_file_location("closure_mod", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # Its source is carried in the module (kernel_source(...)); the path says where it was written.
    text = jt.triton_call_to_mlir(X, kernel=mod.make(), out_shape=X, grid=1, B=4, relative_to=str(tmp_path))
    assert 'triton("closure_mod.py", "inner")' in text
    assert 'kernel_source("' in text and "def inner(x_ptr, out_ptr, B: tl.constexpr):" in text
    # kernel_source= names it explicitly; relative_to= writes a relative path.
    text = jt.triton_call_to_mlir(X, kernel=mod.make(), out_shape=X, grid=1, B=4,
                                  kernel_source=(str(src), "inner"), relative_to=str(tmp_path))
    assert 'triton("closure_mod.py", "inner")' in text


def test_output_names_the_kernel_relative_to_it(tmp_path):
    """output= writes the module and its triton("...") path relative to the module's folder,
    so the two can move together; without it the path is absolute."""
    src = tmp_path / "kernels" / "k.py"
    src.parent.mkdir()
    src.write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                   "def k(x_ptr, out_ptr, B: tl.constexpr):\n    pass\n")
    spec = importlib.util.spec_from_file_location("relocatable_k", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "build" / "deep" / "k.mlir"
    text = jt.triton_call_to_mlir(X, kernel=mod.k, out_shape=X, grid=1, B=4, kernel_source=(str(src), "k"), output=out)
    assert out.read_text() == text
    assert 'triton("../../kernels/k.py", "k")' in text
    absolute = jt.triton_call_to_mlir(X, kernel=mod.k, out_shape=X, grid=1, B=4, kernel_source=(str(src), "k"))
    assert f'triton("{src}", "k")' in absolute


@pytest.mark.integration
def test_triton_call_module_compiles_with_iree(tmp_path):
    """The module goes through the whole pipeline (one variant) and iree-compile for CUDA."""
    from autotune_export.frontend.reader import SourceFile, parse_source, print_module
    from autotune_export.passes import DEFAULT_PIPELINES, PassContext, run_pipeline

    text = jt.triton_call_to_mlir(X, X, 4096, kernel=K.add_inplace_kernel, out_shape=X, grid=(8,),
                                  input_output_aliases={0: 0}, BLOCK=512)
    source = SourceFile(text, "<test>", str(tmp_path))
    module = parse_source(source)
    ctx = PassContext(source=source, remark=lambda d: None)
    run_pipeline(DEFAULT_PIPELINES["iree"], ctx, module, cache_dir=str(tmp_path / "cache"), jobs=1)
    lowered = print_module(module)
    (tmp_path / "m.mlir").write_text(lowered)
    proc = subprocess.run([IREE_COMPILE, str(tmp_path / "m.mlir"), "--iree-hal-target-device=cuda",
                           "--iree-cuda-target=sm_80", "-o", str(tmp_path / "m.vmfb")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


# --------------------------------------------------------------------------------------------
# convert_stablehlo


def _fixture(name):
    with open(os.path.join(FIXTURES, f"{name}.stablehlo.mlir")) as f:
        return f.read()


def _object_text(text, label):
    """The embedded PTX of object ``label`` (MLIR string escapes undone)."""
    m = re.search(r'path = "' + re.escape(label) + r'", data = "((?:[^"\\]|\\.)*)"', text)
    raw = re.sub(r"\\([0-9A-Fa-f]{2}|\\|\")", lambda e: chr(int(e.group(1), 16)) if len(e.group(1)) == 2 else e.group(1), m.group(1))
    return raw


def _strip_data(text):
    return re.sub(r'data = "(?:[^"\\]|\\.)*"', 'data = "..."', text)


@pytest.fixture(scope="module")
def two_kernels():
    return jt.convert_stablehlo(_fixture("two_kernels"), target="sm_80")


def test_convert_single_and_autotuned_calls(two_kernels):
    text = _strip_data(two_kernels)
    assert "stablehlo.custom_call" not in text
    # The plain call: one export, a constant for n, ptx parameters reordered.
    assert re.search(r"hal.executable.source private @add_kernel_ex0 <.*#hal.executable.object<\{path = \"add_kernel_ex0.ptx\"", text)
    assert re.search(r"flow.dispatch @add_kernel_ex0::@add_kernel\(%arg0, %arg1, %c4096_i32\) : \(tensor<4096xf32>, tensor<4096xf32>, i32\) -> tensor<4096xf32>", text)
    # The autotuned call: four variants in a condition/fallback chain, scale 0.5 as its bits.
    names = re.findall(r"hal.executable.export public @(scale_add_kernel_\w+) ordinal\((\d)\)", text)
    assert names == [("scale_add_kernel_0_128_w4_s2", "0"), ("scale_add_kernel_1_256_w4_s3", "1"),
                     ("scale_add_kernel_2_512_w8_s3", "2"), ("scale_add_kernel_3_1024_w8_s4", "3")]
    assert str(struct.unpack("<i", struct.pack("<f", 0.5))[0]) == "1056964608"
    assert re.search(r"flow.dispatch @scale_add_kernel_ex1::@scale_add_kernel_0_128_w4_s2\[%\w+\]\(%0, %arg1, %c4096_i32_0, %c1056964608_i32\)", text)
    assert "@__autotune()" in text and "__autotune.scale_add_kernel_ex1.scale_add_kernel.choice" in text
    # Workgroup sizes from .reqntid, grids per config.
    assert text.count("workgroup_size = [128 : index, 1 : index, 1 : index]") == 3
    assert text.count("workgroup_size = [256 : index, 1 : index, 1 : index]") == 2
    for grid in (32, 16, 8, 4):
        assert f"%c{grid} = arith.constant {grid} : index" in text


def test_convert_linked_ptx(two_kernels):
    ptx = _object_text(two_kernels, "scale_add_kernel_ex1.ptx")
    from autotune_export.cuda import ptx as ptx_mod

    entries = re.findall(r"\.entry (\w+)\(", ptx)
    assert entries == ["scale_add_kernel_0_128_w4_s2", "scale_add_kernel_1_256_w4_s3",
                       "scale_add_kernel_2_512_w8_s3", "scale_add_kernel_3_1024_w8_s4"]
    # IREE order: x, y, out pointers, then n (u32) and scale (f32); hidden scratch pointers gone.
    decl = re.search(r"\.entry scale_add_kernel_0_128_w4_s2\((.*?)\)", ptx, re.S).group(1)
    types = [" ".join(w for w in d.split() if w.startswith(".") and w not in (".param", ".align", ".global", ".ptr")) for d in decl.split(",")]
    assert types == [".u64", ".u64", ".u64", ".u32", ".f32"]
    # The fixture's PTX is ISA 8.8 (jax-triton's Triton 3.9); the installed Triton's ptxas
    # assembles it only from Triton 3.8 on (3.6 and 3.7 bundle CUDA 12.8: up to 8.7). Pinned to
    # 8.6, as --ptx-version 86 does, every supported release's ptxas assembles it.
    assert ".version 8.8\n" in ptx
    pinned = _object_text(jt.convert_stablehlo(_fixture("two_kernels"), target="sm_80", ptx_version=86),
                          "scale_add_kernel_ex1.ptx")
    assert ".version 8.6\n" in pinned and pinned.replace(".version 8.6\n", ".version 8.8\n") == ptx
    ptx_mod.check(pinned, "sm_80")
    if triton_compat.VERSION[:2] >= (3, 8):
        ptx_mod.check(ptx, "sm_80")


def test_convert_zeroed_and_aliased():
    text = _strip_data(jt.convert_stablehlo(_fixture("aliases_zeroed")))
    assert re.search(r"%(\w+) = flow.tensor.splat %cst : tensor<1xf32>\n\s*%c4096_i32 = arith.constant 4096 : i32\n\s*"
                     r"%\w+ = flow.dispatch @row_sum_kernel_ex0::@row_sum_kernel\(%arg0, %\1, %c4096_i32\) : "
                     r"\(tensor<4096xf32>, tensor<1xf32>, i32\) -> %\1", text)
    assert re.search(r"%(\w+) = flow.tensor.clone %arg0 : tensor<4096xf32>\n.*\n\s*%(\w+) = flow.dispatch "
                     r"@add_inplace_kernel_ex1::@add_inplace_kernel\(%arg0, %arg1, %\1, %\w+\) : "
                     r"\(tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, i32\) -> %\1", text)
    # Layouts: x read-only, zeroed output writable; in-place: x, y read-only, clone writable.
    assert ("#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, "
            "#hal.pipeline.binding<storage_buffer>]>") in text
    assert ("#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, "
            "#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>") in text
    assert "workgroup_local_memory = 16" in text  # row_sum's shared memory


def test_convert_ffi_spelling_matches(two_kernels):
    ffi = jt.convert_stablehlo(_fixture("two_kernels_ffi"), target="sm_80")
    assert _strip_data(ffi).count("flow.dispatch") == _strip_data(two_kernels).count("flow.dispatch")
    assert "scale_add_kernel_3_1024_w8_s4" in ffi


def test_convert_no_lower_keeps_group():
    text = jt.convert_stablehlo(_fixture("two_kernels"), lower=False)
    assert "hal.executable.autotuning.export @scale_add_kernel variants([@scale_add_kernel_0_128_w4_s2," in text
    assert "flow.dispatch @scale_add_kernel_ex1::@scale_add_kernel(" in text


def _custom_call_module(msg, operands="%arg0, %arg1", types="(tensor<4096xf32>, tensor<4096xf32>)", extra=""):
    blob = proto.encode_backend_config(msg)
    lit = "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else f"\\{b:02X}" for b in blob)
    return (
        "func.func public @main(%arg0: tensor<4096xf32>, %arg1: tensor<4096xf32>) -> tensor<4096xf32> {\n"
        f'  %0 = stablehlo.custom_call @triton_kernel_call({operands}) {{api_version = 2 : i32, backend_config = "{lit}"{extra}}}'
        f" : {types} -> tensor<4096xf32>\n"
        "  return %0 : tensor<4096xf32>\n}\n"
    )


def _add_call():
    text = _fixture("two_kernels")
    from iree.compiler import ir

    with ir.Context():
        module = ir.Module.parse(text)
        op = next(o for o in walk(module.operation) if o.name == "stablehlo.custom_call")
        return proto.decode_backend_config(custom_call.backend_bytes(op))


def test_convert_bakes_64bit_scalars(tmp_path):
    """A scalar IREE cannot pass (here n declared as i64) is moved into the PTX as a constant."""
    msg = _add_call()
    params = msg.kernel_call.parameters
    params[2].i64 = 4096  # was i32
    text = jt.convert_stablehlo(_custom_call_module(msg))
    ptx = _object_text(text, "add_kernel_ex0.ptx")
    assert re.search(r"mov\.b32 %r\d+, 4096;", ptx)
    assert "#hal.pipeline.layout<bindings = [" in text  # no constants left
    assert re.search(r"flow.dispatch @add_kernel_ex0::@add_kernel\(%arg0, %arg1\)", text)


def test_bake_scalar_rewrites_loads():
    ptx = ".visible .entry k(\n.param .u64 k_param_0,\n.param .f64 k_param_1\n)\n{\n" \
          "ld.param.b64 %rd1, [k_param_0];\nld.param.b64 %fd1, [k_param_1];\nret;\n}\n"
    bits = struct.unpack("<Q", struct.pack("<d", 0.1))[0]
    out = scalars.bake_scalar(ptx, "k_param_1", bits, 8)
    assert f"mov.b64 %fd1, {bits};" in out and "[k_param_1]" not in out
    with pytest.raises(jt.JaxTritonError, match="other than by ld.param"):
        scalars.bake_scalar(ptx.replace("ret;", "mov.u64 %rd2, k_param_1;\nret;"), "k_param_1", bits, 8)


def test_convert_errors():
    msg = _add_call()
    del msg.kernel_call.parameters[0]
    with pytest.raises(jt.JaxTritonError, match="2 array parameters, but the call has 2 operands and 1 results"):
        jt.convert_stablehlo(_custom_call_module(msg))
    msg = _add_call()
    msg.kernel_call.kernel.num_ctas = 2
    with pytest.raises(jt.JaxTritonError, match="no config can run under IREE.*cluster launch"):
        jt.convert_stablehlo(_custom_call_module(msg))
    # Targets are read by autotune_export.cuda.targets: sm_75 is not one the toolkit supports.
    with pytest.raises(jt.JaxTritonError, match="unsupported CUDA target 'sm_75'"):
        jt.convert_stablehlo(_custom_call_module(_add_call()), target="sm_75")
    with pytest.raises(jt.JaxTritonError, match="unknown CUDA target 'gfx90a'"):
        jt.convert_stablehlo(_custom_call_module(_add_call()), target="gfx90a")


_READ_ONLY_X = ("#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, "
                "#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>")
_ALL_WRITTEN = ("#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>, "
                "#hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>")


def test_written_pointers_come_from_ttir():
    """ReadOnly bindings follow the TTIR analysis (descriptor field 5); without TTIR, or TTIR
    the analysis cannot read, every pointer counts as written."""
    text = jt.convert_stablehlo(_custom_call_module(_add_call()))
    assert _READ_ONLY_X in text
    msg = _add_call()
    msg.kernel_call.kernel.ttir = ""
    assert _ALL_WRITTEN in jt.convert_stablehlo(_custom_call_module(msg))
    msg.kernel_call.kernel.ttir = "this is not TTIR"
    assert _ALL_WRITTEN in jt.convert_stablehlo(_custom_call_module(msg))


def test_output_operand_aliases_read_with_bindings():
    from iree.compiler import ir

    text = (
        "func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
        '  %0:2 = stablehlo.custom_call @k(%a, %b) {output_operand_aliases = ['
        "#stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 0, operand_tuple_indices = []>]}"
        " : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n"
        "  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>\n}\n"
    )
    with ir.Context():
        module = ir.Module.parse(text)
        op = next(o for o in walk(module.operation) if o.name == "stablehlo.custom_call")
        assert custom_call.aliases_of(op) == {1: 0}


def test_variant_suffix_from_config_description():
    desc = "BLOCK: 128, num_warps: 4, num_ctas: 1, num_stages: 2, maxnreg: None, ir_override: None"
    assert custom_call.config_fields(desc)["BLOCK"] == "128" and custom_call.config_fields(desc)["maxnreg"] == "None"
    assert custom_call.variant_suffix(desc, 0) == "0_128_w4_s2"
    assert custom_call.variant_suffix("BLOCK_M: 64, SCALE: -0.5, EVEN: True, num_warps: 8", 3) == "3_64xm0p5xTrue_w8"
    assert custom_call.variant_suffix("", 2) == "2"


def _iree_compile_case(name: str, target: str, fast: bool):
    # An iree-compile for CUDA of a two-kernel fixture costs 2 to 3 CPU-seconds: the fast suite
    # compiles one fixture of each form (custom_call, ffi, jax 0.11 sm_90a); the integration suite compiles every one.
    return pytest.param(name, target, marks=() if fast else pytest.mark.integration)


@pytest.mark.parametrize("name,target", [_iree_compile_case("two_kernels", "sm_80", False),
                                         _iree_compile_case("aliases_zeroed", "sm_80", True),
                                         _iree_compile_case("two_kernels_ffi", "sm_80", False),
                                         _iree_compile_case("h200_jax0.11.2/two_kernels", "sm_90", False),
                                         _iree_compile_case("h200_jax0.11.2/aliases_zeroed", "sm_90", True),
                                         _iree_compile_case("jax_triton0.4.1/two_kernels", "sm_80", False),
                                         _iree_compile_case("jax_triton0.4.1/aliases_zeroed", "sm_80", True)])
def test_converted_fixture_compiles_with_iree(name, target, tmp_path):
    out = tmp_path / "converted.mlir"
    out.write_text(jt.convert_stablehlo(_fixture(name), target=target))
    # IREE generates the tuning entries' fake data itself: for sm_90 that code is sm_89's (docs/jax-triton.md).
    codegen = iree_codegen_target(parse_target(target))
    proc = subprocess.run([IREE_COMPILE, str(out), "--iree-input-type=stablehlo", "--iree-hal-target-device=cuda",
                           f"--iree-cuda-target={codegen}", "-o", str(tmp_path / "converted.vmfb")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_sm90a_ptx_is_refused_for_sm80():
    with pytest.raises(jt.JaxTritonError, match="targets sm_90a, which does not run on sm_80"):
        jt.convert_stablehlo(_fixture("h200_jax0.11.2/two_kernels"), target="sm_80")


def test_real_0_4_fixtures_are_ffi_calls():
    """What jax-triton 0.4.1 really writes (not respelled): ffi calls, an empty backend_config
    next to mhlo.backend_config, and an aliased output without a pointer of its own."""
    text = _fixture("jax_triton0.4.1/aliases_zeroed")
    assert text.count("@triton_kernel_call_ffi(") == 3 and "@triton_kernel_call(" not in text
    converted = jt.convert_stablehlo(text, target="sm_80", lower=False)
    assert re.search(r"flow\.dispatch @add_into_kernel_ex\d::@add_into_kernel\(%arg0, %arg1, [^)]*\) : \([^)]*\) -> %arg0",
                     converted)


#: Interpreters with jax, a CUDA jaxlib plugin and jax-triton, separated by os.pathsep (.ci/run
#: sets one with jax-triton 0.4.x and one with 0.3.1).
JAX_PYTHONS = [p for p in os.environ.get("AUTOTUNE_EXPORT_JAX_PYTHON", "").split(os.pathsep) if p]


@pytest.mark.integration
@pytest.mark.skipif(not JAX_PYTHONS, reason="AUTOTUNE_EXPORT_JAX_PYTHON (interpreters with jax, a CUDA jaxlib plugin "
                    "and jax-triton) is not set; .ci/run sets it when jax-triton installs")
@pytest.mark.parametrize("python", JAX_PYTHONS or ["unset"])
def test_live_jax_export_converts_and_compiles(tmp_path, python):
    """Lower the fixture programs (jax-triton kernels, one triton.autotune with 4 configs, a
    zeroed output, an aliased one) through jax.export on this GPU-less machine with the
    installed jax-triton (0.3.x: @triton_kernel_call, 0.4.x: @triton_kernel_call_ffi), convert
    them, and compile them with iree-compile."""
    script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "make_jax_fixtures.py"
    proc = subprocess.run([python, str(script), "--out", str(tmp_path)], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = json.loads((tmp_path / "fixtures.json").read_text())
    version = manifest["packages"]["jax-triton"]
    target = "@triton_kernel_call_ffi(" if tuple(int(v) for v in version.split(".")[:2]) >= (0, 4) else "@triton_kernel_call("
    for name, calls in (("two_kernels", 2), ("aliases_zeroed", 3)):
        text = (tmp_path / f"{name}.stablehlo.mlir").read_text()
        assert text.count(target) == calls, (version, name)
        converted = jt.convert_stablehlo(text, target="sm_80")
        assert "hal.executable.export" in converted
        if name == "two_kernels":
            assert "@__autotune" in converted
        out = tmp_path / f"{name}.converted.mlir"
        out.write_text(converted)
        proc = subprocess.run([IREE_COMPILE, str(out), "--iree-input-type=stablehlo", "--iree-hal-target-device=cuda",
                               "--iree-cuda-target=sm_80", "-o", str(tmp_path / f"{name}.vmfb")], capture_output=True, text=True)
        assert proc.returncode == 0, (version, name, proc.stderr[-2000:])
