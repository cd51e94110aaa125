"""autotune_export.cuda.abi and the PTX adaptations it drives (ptx.link's ``adapt``)."""

from __future__ import annotations

import os
import re

import pytest

from autotune_export.cuda import abi
from autotune_export.cuda import ptx
from autotune_export.cuda.abi import AbiError, Param
from autotune_export.cuda.ptx import LinkPart, PtxError

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "abi")


def sig(*items):
    out = []
    for item in items:
        name, typ, *flags = item.split()
        out.append(Param(name, typ, output="out" in flags, hint=16 if "h16" in flags else 0))
    return out


# --------------------------------------------------------------------------------------------
# plan


@pytest.mark.parametrize(
    "typ, slots, adapt",
    [
        ("i1", 1, "widen"), ("u1", 1, "widen"), ("i8", 1, "widen"), ("u8", 1, "widen"), ("i16", 1, "widen"), ("u16", 1, "widen"),
        ("fp16", 1, "widen"), ("bf16", 1, "widen"), ("i32", 1, ""), ("u32", 1, ""), ("fp32", 1, ""),
        ("i64", 2, "split"), ("u64", 2, "split"), ("fp64", 2, "split"),
    ],
)
def test_every_scalar_type_has_a_slot_count_and_adaptation(typ, slots, adapt):
    p = abi.plan(sig("out *fp32 out", f"s {typ}"))
    assert p.num_constants == slots
    order, drop, adapts = p.link_order(2)
    assert order == [0, 1] and drop == []
    assert adapts == ({1: adapt} if adapt else {})


def test_none_parameters_are_neither_bindings_nor_constants():
    # Triton's constexpr None (the call passes None): not a parameter of the PTX entry.
    p = abi.plan(sig("x *fp32", "w none", "o *fp32 out", "s none", "n i32"))
    assert [q.name for q in p.signature] == ["x", "o", "n"]
    assert p.order == (0, 1, 2) and p.num_bindings == 2 and p.num_constants == 1


def test_plan_orders_inputs_outputs_then_constants_with_offsets():
    p = abi.plan(sig("o *fp32 out", "n i32", "x *fp32", "big i64", "h fp16", "d fp64", "y *fp16"))
    assert p.inputs == (2, 6) and p.outputs == (0,) and p.scalars == (1, 3, 4, 5)
    assert p.order == (2, 6, 0, 1, 3, 4, 5)
    assert p.num_bindings == 3 and p.num_constants == 6
    assert p.constant_offsets() == [0, 1, 3, 4]
    assert p.read_only({6}) == [True, False, False]


def test_scratch_is_the_last_binding_and_keeps_the_hidden_pointer():
    p = abi.plan(sig("x *fp32", "o *fp32 out", "n i64"), scratch=True)
    assert p.num_bindings == 3
    # PTX: x, o, n, global_scratch, profile_scratch
    order, drop, adapt = p.link_order(5)
    assert order == [0, 1, 3, 2] and drop == [4] and adapt == {2: "split"}
    assert p.read_only(set()) == [True, False, False]
    with pytest.raises(AbiError, match="no hidden global_scratch"):
        p.link_order(3)
    # without scratch both hidden pointers are dropped
    assert abi.plan(sig("x *fp32", "o *fp32 out")).link_order(4) == ([0, 1], [2, 3], {})


@pytest.mark.parametrize(
    "items, message",
    [
        (("o *fp32 out", "d tensordesc"), "tensor descriptor"),
        (("o *fp32 out", "d fp8e5"), "has type fp8e5"),
        (("o *fp32 out", "a fp32 h16"), "hint ':16'"),
        (("x *fp32", "n i32"), "marks no pointer as {output}"),
        (("o *fp32 out", "n i32 out"), "only pointers can be {output}"),
    ],
)
def test_plan_refuses_with_a_reason(items, message):
    with pytest.raises(AbiError, match=re.escape(message)):
        abi.plan(sig(*items))


def test_check_ptx_types():
    p = abi.plan(sig("o *fp32 out", "h fp16", "b i1", "q i64", "d fp64"))
    p.check_ptx_types([".u64", ".b8[2]", ".u8", ".u64", ".f64"])
    with pytest.raises(AbiError, match=r"parameter 'q' \(i64\) is a \.u32 parameter"):
        p.check_ptx_types([".u64", ".b8[2]", ".u8", ".u32", ".f64"])


def test_constant_slots_and_operand_widths():
    assert [abi.constant_slots(t) for t in ("i1", "i8", "i16", "i32", "f16", "bf16", "f32", "i64", "f64")] == [1] * 7 + [2, 2]
    assert abi.constant_slots("index") is None and abi.constant_slots("vector<2xi32>") is None
    assert abi.operand_matches(Param("q", "i64"), "i64") and abi.operand_matches(Param("q", "u64"), "i64")
    assert abi.operand_matches(Param("a", "fp32"), "f32") and not abi.operand_matches(Param("a", "fp32"), "f16")
    # The same width is not enough: a float's bits read as an integer, or the reverse (issue 21.7).
    assert not abi.operand_matches(Param("q", "i64"), "f64") and not abi.operand_matches(Param("a", "fp32"), "i32")
    assert not abi.operand_matches(Param("eps", "i32"), "f32") and not abi.operand_matches(Param("h", "fp16"), "i16")
    assert abi.operand_matches(Param("h", "bf16"), "bf16") and not abi.operand_matches(Param("n", "i32"), "i64")


# --------------------------------------------------------------------------------------------
# refusal


@pytest.mark.parametrize(
    "metadata, params, arch, reason",
    [
        ({"num_ctas": 2}, (), 90, "num_ctas = 2: IREE launches no thread-block clusters"),
        ({"launch_cooperative_grid": True}, (), 90, "cooperative launch"),
        ({"tensordesc_meta": [{"swizzle": 3}]}, (), 90, "host-side tensor descriptors"),
        ({"profile_scratch_size": 64}, (), 90, "64 bytes of profile scratch"),
        ({"tmem_size": 512}, (), 90, "tensor memory, which sm_90 does not have"),
        ({}, (ptx.PtxParam(0, "k_param_0", ".b8[128]", False),), 90, "by-value .b8[128] block"),
    ],
)
def test_refusals(metadata, params, arch, reason):
    assert reason in abi.refusal(metadata, params, arch)


def test_launchable_variants_are_not_refused():
    fp16 = ptx.PtxParam(1, "k_param_1", ".b8[2]", False)
    assert abi.refusal({"num_ctas": 1, "global_scratch_size": 256, "tmem_size": 0, "launch_pdl": True}, (fp16,), 90) is None
    assert abi.refusal({"tmem_size": 512}, (), 100) is None


# --------------------------------------------------------------------------------------------
# PTX adaptation (ptx.link with adapt), checked with ptxas

HAND_PTX = """
.version 8.6
.target sm_80
.address_size 64

.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0,
	.param .u8 k_param_1,
	.param .align 2 .b8 k_param_2[2],
	.param .u64 k_param_3,
	.param .f64 k_param_4,
	.param .u64 .ptr .global .align 1 k_param_5,
	.param .u64 .ptr .global .align 1 k_param_6
)
.reqntid 32
{
	.reg .b16 	%rs<3>;
	.reg .b64 	%rd<8>;
	ld.param.b64 	%rd1, [k_param_0];
	ld.param.b8 	%rs1, [k_param_1];
	ld.param.b16 	%rs2, [k_param_2];
	ld.param.b64 	%rd2, [k_param_3];
	ld.param.b64 	%rd3, [k_param_4];
	ld.param.b64 	%rd6, [k_param_5];
	add.s64 	%rd4, %rd2, %rd3;
	cvt.u64.u16 	%rd5, %rs1;
	add.s64 	%rd4, %rd4, %rd5;
	st.global.b64 	[%rd1], %rd4;
	st.global.b64 	[%rd6], %rd4;
	ret;
}
"""


@pytest.fixture(scope="module")
def have_ptxas():
    try:
        path = ptx.ptxas_path()
    except PtxError:
        pytest.skip("no ptxas")
    if not os.path.isfile(path):
        pytest.skip("no ptxas")


def test_link_widens_splits_and_aligns(have_ptxas):
    part = LinkPart(HAND_PTX, "k0", [0, 5, 1, 2, 3, 4], [6], {1: "widen", 2: "widen", 3: "split", 4: "split", 5: "align:128"})
    out = ptx.link([part])
    entry = ptx.parse_entry(out)
    assert [p.ptx_type for p in entry.params] == [".u64", ".u64"] + [".u32"] * 6
    assert "ld.param.b8 \t%rs1, [k0_param_2];" in out and "ld.param.b16 \t%rs2, [k0_param_3];" in out
    assert ("{ .reg .b32 %abi_lo, %abi_hi; ld.param.b32 %abi_lo, [k0_param_4]; ld.param.b32 %abi_hi, [k0_param_5]; "
            "mov.b64 %rd2, {%abi_lo, %abi_hi}; }") in out
    assert "mov.b64 %rd3, {%abi_lo, %abi_hi}; }" in out and "[k0_param_6]" in out and "[k0_param_7]" in out
    assert "ld.param.b64 %rd6, [k0_param_1]; add.s64 %rd6, %rd6, 127; and.b64 %rd6, %rd6, -128;" in out
    for arch in ("sm_80", "sm_90a"):
        ptx.check(out, arch)


def test_link_renames_when_new_names_collide_with_old_ones(have_ptxas):
    # Entry keeps its name, parameters move: k_param_3 (split) lands on positions 2 and 3.
    out = ptx.link([LinkPart(HAND_PTX, "k", [0, 5, 3, 1, 2, 4], [6], {3: "split", 1: "widen", 2: "widen", 4: "split"})])
    assert "ld.param.b32 %abi_lo, [k_param_2]; ld.param.b32 %abi_hi, [k_param_3]; mov.b64 %rd2," in out
    assert "ld.param.b8 \t%rs1, [k_param_4];" in out
    ptx.check(out, "sm_80")


@pytest.mark.parametrize(
    "adapt, message",
    [
        ({0: "split"}, "cannot split parameter k_param_0"),
        ({3: "widen"}, "cannot widen parameter k_param_3"),
        ({1: "split"}, "cannot split parameter k_param_1"),
        ({1: "align:3"}, "power of two"),
        ({1: "shrink"}, "unknown parameter adaptation"),
        ({6: "widen"}, "not in param_order"),
    ],
)
def test_link_rejects_bad_adaptations(adapt, message):
    with pytest.raises(PtxError, match=re.escape(message)):
        ptx.link([LinkPart(HAND_PTX, "k0", [0, 1, 2, 3, 4, 5], [6], adapt)])


def test_split_refuses_a_parameter_used_other_than_by_a_load():
    text = HAND_PTX.replace("add.s64 \t%rd4, %rd2, %rd3;", "mov.b64 \t%rd7, k_param_3;\n\tadd.s64 \t%rd4, %rd2, %rd3;")
    with pytest.raises(PtxError, match="k_param_3 is used other than by a 64-bit ld.param; cannot split"):
        ptx.link([LinkPart(text, "k0", [0, 1, 2, 3, 4, 5], [6], {3: "split"})])


# --------------------------------------------------------------------------------------------
# Real Triton PTX: every scalar type, and global scratch on sm_90


def _compile(fn_name: str, signature: dict, constexprs: dict, arch: int, attrs=None):
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from autotune_export.cuda.triton_compile import KernelSource, load_kernel

    kernel = load_kernel(KernelSource(os.path.join(EXAMPLES, "kernels.py"), fn_name))
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    k = triton.compile(ASTSource(kernel.fn, signature, constexprs, attrs or {}), target=GPUTarget("cuda", arch, 32),
                       options={"ptx_version": 86})
    return k.asm["ptx"], k.metadata


SCALARS_SIG = {
    "ints_ptr": "*i64", "floats_ptr": "*fp64", "vec_ptr": "*i32", "out_ptr": "*i64", "flag": "i1", "small": "i8",
    "mid": "i16", "n": "i32", "un": "u32", "big": "i64", "ubig": "u64", "half": "fp16", "bhalf": "bf16",
    "single": "fp32", "double": "fp64", "BLOCK": "constexpr",
}


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.integration
def test_triton_scalars_kernel_links_and_assembles(arch, have_ptxas, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    text, md = _compile("scalars_kernel", SCALARS_SIG, {"BLOCK": 128}, arch)
    signature = [Param(n, t, output=n in ("ints_ptr", "floats_ptr", "out_ptr")) for n, t in SCALARS_SIG.items() if t != "constexpr"]
    plan = abi.plan(signature)
    entry = ptx.parse_entry(text)
    plan.check_ptx_types([p.ptx_type for p in entry.params[: len(signature)]])
    assert abi.refusal(dict(md._asdict()), entry.params, arch) is None
    order, drop, adapt = plan.link_order(len(entry.params))
    linked = ptx.link([LinkPart(text, "scalars_v0", order, drop, adapt)])
    params = ptx.parse_entry(linked).params
    assert len(params) == plan.num_bindings + plan.num_constants == 4 + 14
    assert all(p.ptx_type in (".u32", ".f32") for p in params[4:])
    assert linked.count("mov.b64 %rd") == 3  # big, ubig, double reassembled
    ptx.check(linked, ptx.parse_entry(text).target)


@pytest.mark.integration
def test_triton_tma_kernel_needs_scratch_on_sm90_only(have_ptxas, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "M": "i32", "N": "i32", "BM": "constexpr", "BN": "constexpr"}
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    text80, md80 = _compile("tma_scale_kernel", signature, {"BM": 32, "BN": 32}, 80, attrs)
    assert md80.global_scratch_size == 0
    text90, md90 = _compile("tma_scale_kernel", signature, {"BM": 32, "BN": 32}, 90, attrs)
    assert md90.global_scratch_size > 0 and md90.global_scratch_align > 1
    sig_params = [Param("x_ptr", "*fp32"), Param("out_ptr", "*fp32", output=True), Param("M", "i32"), Param("N", "i32")]
    plan = abi.plan(sig_params, scratch=True)
    order, drop, adapt = plan.link_order(len(ptx.parse_entry(text90).params))
    adapt[4] = f"align:{md90.global_scratch_align}"
    linked = ptx.link([LinkPart(text90, "tma_v0", order, drop, adapt)])
    assert "and.b64 %rd" in linked and f", -{md90.global_scratch_align};" in linked
    ptx.check(linked, "sm_90a")
    # the sm_80 object of the same group keeps the (unused) hidden pointer as its third binding
    order80, drop80, _ = plan.link_order(len(ptx.parse_entry(text80).params))
    ptx.check(ptx.link([LinkPart(text80, "tma_v0", order80, drop80)]), "sm_80")
    # dropping a used scratch pointer is still an error
    with pytest.raises(PtxError, match="global scratch"):
        ptx.link([LinkPart(text90, "tma_v0", [0, 1, 2, 3], [4, 5])])


# --------------------------------------------------------------------------------------------
# Several targets: how lowering reads the objects


def test_object_entries_and_compute_capability_ranges():
    from iree.compiler import ir

    from autotune_export.ir import hal_attrs
    from autotune_export.passes.split_architectures import compute_capability_range

    text = ('#hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_80"}> = '
            '[#hal.executable.object<{path = "a.ptx", data = "x, y = {z} ]>"}>], '
            '#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_90a"}> = '
            '[#hal.executable.object<{path = "b.cubin", data = dense<[1, 2]> : vector<2xi8>}>]}>')
    with ir.Context():
        entries = hal_attrs.read_objects(ir.Attribute.parse(text))
        assert [str(e.target) for e in entries] == ['#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_80"}>',
                                                    '#hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_90a"}>']
    assert [e.arch for e in entries] == ["sm_80", "sm_90a"]
    assert [(o.path, o.data) for e in entries for o in e.objects] == [("a.ptx", "x, y = {z} ]>"), ("b.cubin", b"\x01\x02")]
    # String data with an escaped byte that is not UTF-8 (found by the fuzzer): bytes, not a crash.
    with ir.Context():
        (entry,) = hal_attrs.read_objects(ir.Attribute.parse('[#hal.executable.object<{path = "c", data = "ab\\A0"}>]'))
    assert entry.objects[0].data == b"ab\xa0"
    assert compute_capability_range("sm_80", False) == (80, None)  # PTX: any later architecture
    assert compute_capability_range("sm_90a", True) == (90, 90)  # arch-specific
    assert compute_capability_range("sm_90a", False) == (90, 90)
    assert compute_capability_range("sm_80", True) == (80, 89)  # a cubin: later minors of its major
    assert compute_capability_range("sm_86", True) == (86, 89)
    assert compute_capability_range(None, False) is None  # a key without target_arch
    assert compute_capability_range("gfx942", False) is None
