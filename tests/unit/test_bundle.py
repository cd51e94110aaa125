"""The link and build stages (cuda/bundle, cuda/link, passes/build_bundle): a bundle is frozen
plain data that survives JSON; the link stage returns its diagnostics instead of reporting them
to a pass; the one builder writes objects, exports and the group op."""

from __future__ import annotations

import dataclasses
import re

import pytest
from iree.compiler import ir

from autotune_export.cuda import link
from autotune_export.cuda.bundle import Bundle, ExportSpec, GroupSpec, ObjectSpec, link_object
from autotune_export.cuda.ptx import LinkPart
from autotune_export.cuda.triton_compile import KernelSource, PrunedVariant, VariantSpec
from autotune_export.frontend.reader import new_context, print_module
from autotune_export.ir.params import Param, TritonDtype
from autotune_export.passes.build_bundle import write_bundle
from autotune_export.support.diagnostics import Location

PTX = """//
.version 8.6
.target sm_80
.address_size 64

.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0,
	.param .u32 k_param_1
)
.reqntid 128
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<2>;
	ld.param.b64 	%rd1, [k_param_0];
	ld.param.b32 	%r1, [k_param_1];
	st.global.b32 	[%rd1], %r1;
	ret;
}
"""


def _bundle(data: str | bytes = PTX) -> Bundle:
    grid_export = ExportSpec("g_0_64_w4_s3", 0, threads=(128, 256), shared=(0, 1024), grid=("(n + BLOCK - 1) // BLOCK", "1", "1"),
                             constants=(("BLOCK", 64), ("num_warps", 4)), scratch=(256, 128),
                             config=(("BLOCK", 64), ("DT", TritonDtype("float16")), ("EPS", 0.5), ("F", None), ("num_warps", 4)))
    const_export = ExportSpec("g_1", 1, threads=(64, 64), shared=(0, 0), count=(8, 1, 1))
    group = GroupSpec("g", ("g_0_64_w4_s3", "g_1"), default="g_1", tune_workload=(("4096 : index",),), reset_to_zero=(0,))
    return Bundle("ex", (ObjectSpec("sm_80", data), ObjectSpec("sm_90a", b"\x7fELF\x00\xff")), (grid_export, const_export),
                  (True, False), 1, ("n",), group)


def test_bundle_is_frozen_and_survives_json():
    b = _bundle()
    back = Bundle.from_json(b.to_json())
    assert back == b
    assert back.objects[1].data == b"\x7fELF\x00\xff" and back.objects[1].format == "cubin"
    assert back.exports[0].config[1] == ("DT", TritonDtype("float16"))
    assert back.group.tune_workload == (("4096 : index",),) and back.group.reset_to_zero == (0,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.exports[0].ordinal = 3
    with pytest.raises(ValueError, match="bundle format"):
        Bundle.from_json(b.to_json().replace('"format": 1', '"format": 99'))
    with pytest.raises(ValueError, match="either grid expressions or a constant count"):
        ExportSpec("e", 0, threads=(32,), shared=(0,))


def test_builder_writes_objects_exports_and_group():
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        write_bundle(_bundle(), ip=ir.InsertionPoint(module.body))
        module.operation.verify()
        text = print_module(module)
    # One object per architecture, keyed by its target and labelled EXE.ARCH.FORMAT.
    assert 'path = "ex.sm_80.ptx"' in text and 'path = "ex.sm_90a.cubin"' in text
    assert text.index("hal.executable.autotuning.export @g") < text.index("hal.executable.export public @g_0_64_w4_s3")
    assert "variants([@g_0_64_w4_s3, @g_1])" in text and "default(@g_1)" in text
    first = text[text.index("@g_0_64_w4_s3 ordinal(0)"):text.index("@g_1 ordinal(1)")]
    # The grid over the workload (n) and the config's constants: (n + 64 - 1) // 64.
    assert re.search(r"count\(%arg0: !hal.device, %arg1: index\)", first)
    assert "%c64 = arith.constant 64 : index" in first and "arith.floordivsi %1, %c64 : index" in first
    assert "workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 1024>" in first
    assert "autotune.global_scratch = [256, 128]" in first
    assert re.search(r'autotune.targets = \{sm_80 = \[128, 0\], sm_90a = \[256, 1024\]\}', first)
    second = text[text.index("@g_1 ordinal(1)"):]
    assert "arith.constant 8 : index" in second and "autotune.config" not in second


def test_link_object_links_parts_in_binding_order():
    obj = link_object([LinkPart(PTX, "k_a", [1, 0], ()), LinkPart(PTX, "k_b", [0, 1], ())], check=False, ptx_version=85)
    assert obj.arch == "sm_80" and obj.format == "ptx"
    assert ".version 8.5" in obj.data
    assert ".visible .entry k_a(" in obj.data and ".visible .entry k_b(" in obj.data


def _request(**kw) -> link.LinkRequest:
    fields = dict(name="g", kernel="k", location=Location("in.mlir", 3, 5), grid_location=Location("in.mlir", 4, 7),
                  signature=(Param("x", "*fp32", output=True), Param("n", "i32")), grid=("n",), workload=("n",),
                  configs=((("BLOCK", 64),), (("BLOCK", 128),)), constexprs=({"BLOCK": 64}, {"BLOCK": 128}), tied=(),
                  archs=(("sm_80", 80),), target="sm_80", executable="ex", existing=frozenset(), next_ordinal=0,
                  kernel_path="/abs/k.py", shown_path="k.py")
    fields.update(kw)
    return link.LinkRequest(**fields)


def test_link_stage_returns_its_diagnostics():
    """No pass context: what the stage says comes back as records with locations, the error
    last (with a note per config), paths as the user names them; nothing is raised."""
    spec = VariantSpec(KernelSource("/abs/k.py", "k"), (("x", "*fp32"), ("n", "i32")), (("BLOCK", 64),))
    results = [PrunedVariant(spec, "compile error: /abs/k.py:3:4: bad"), PrunedVariant(spec, "needs 300000 bytes")]
    linked = link.link_group(_request(), results)
    assert linked.bundle is None
    [error] = linked.diagnostics
    assert (error.severity, error.message, str(error.location)) == ("error", "every config of @g was pruned for sm_80", "in.mlir:3:5")
    assert [n.message for n in error.notes] == ["config 0 {BLOCK = 64}: compile error: k.py:3:4: bad",
                                                "config 1 {BLOCK = 128}: needs 300000 bytes"]
    assert linked.error is not None and linked.error.diagnostics == [error]


def test_threads_refusal_and_refuse():
    assert link.threads_refusal(32) is None
    assert "1056 threads per block" in link.threads_refusal(33)
    spec = VariantSpec(KernelSource("/abs/k.py", "k"), (("x", "*fp32"),), ())
    pruned = PrunedVariant(spec, "r")
    assert link.refuse([pruned]) == [pruned]
