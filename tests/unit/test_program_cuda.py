"""autotune_export.program for CUDA (issue 25 items 2 and 3): IREE's own candidates generated
around its TileAndFuse default, and Triton kernels competing for the same dispatch
(docs/program.md, "CUDA and Triton candidates")."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from autotune_export.program.cuda_candidates import (
    Contraction,
    GpuLimits,
    GpuTiles,
    Mma,
    enumerate_candidates,
    problem,
    shared_bytes,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fixtures" / "program" / "matmul_cases.mlir"

MMA = Mma("NV_MMA_SYNC_F16_16x8x16_F16", 16, 8, 16)
WMMA = Mma("NV_WMMA_F16_16x16x16_F16", 16, 16, 16)
#: IREE 3.13's default for the fp16 4096^3 matmul on sm_89 (../shared/notes/iree-dispatch-tuning-facts.md).
DEFAULT = GpuTiles((128, 64, 0), (4, 4, 0), (0, 0, 2), MMA, 128, 2)
MM4096 = Contraction((4096, 4096, 4096), (), 0, 1, 2)
LIMITS = GpuLimits()


# ----- the generator (pure logic) -------------------------------------------------------------
def test_iree_default_fits_and_its_shared_memory_estimate_covers_the_measured():
    assert problem(DEFAULT, MM4096, LIMITS) is None
    # IREE reported 13568 bytes for this config (padding included); the estimate stays above.
    assert 13568 <= shared_bytes(DEFAULT, MM4096) == (128 + 64) * (32 + 8) * 2


@pytest.mark.parametrize(
    "tiles, reason",
    [
        (GpuTiles((96, 64, 0), (2, 4, 0), (0, 0, 2), MMA, 192, 2), "workgroup tile 96 does not divide loop 0"),
        (GpuTiles((128, 64, 0), (3, 4, 0), (0, 0, 2), MMA, 128, 2), "subgroup tile 3 x 16 does not divide"),
        (GpuTiles((128, 64, 0), (4, 4, 0), (0, 0, 2), MMA, 256, 2), "256 threads, the tiles imply 4 warps"),
        (GpuTiles((128, 64, 0), (4, 4, 0), (0, 0, 3), MMA, 128, 2), "reduction step 48 does not divide loop 2"),
        (GpuTiles((128, 64, 16), (4, 4, 0), (0, 0, 2), MMA, 128, 2), "reduction loop is tiled only in `reduction`"),
        (GpuTiles((256, 256, 0), (16, 8, 0), (0, 0, 2), MMA, 128, 2), "512 accumulators per thread"),
        (GpuTiles((256, 256, 0), (4, 8, 0), (0, 0, 8), MMA, 512, 2), "about 139264 bytes of shared memory"),
    ],
)
def test_problem_names_the_rule_a_config_breaks(tiles, reason):
    limits = GpuLimits(shared_memory=65536) if "shared" in reason else LIMITS
    assert reason in (problem(tiles, MM4096, limits) or "")


def test_batch_loops_must_be_tiled_by_one():
    bmm = Contraction((16, 1024, 1024, 1024), (0,), 1, 2, 3)
    ok = GpuTiles((1, 64, 64, 0), (0, 2, 4, 0), (0, 0, 0, 8), MMA, 128, 2)
    assert problem(ok, bmm, LIMITS) is None
    assert "batch loop 0" in problem(GpuTiles((2, 64, 64, 0), (0, 2, 4, 0), (0, 0, 0, 8), MMA, 128, 2), bmm, LIMITS)


def test_candidates_are_valid_distinct_capped_and_deterministic():
    got = enumerate_candidates(DEFAULT, MM4096, [MMA, WMMA], LIMITS, 6)
    assert len(got) == 6 and DEFAULT not in got and len(set(got)) == 6
    assert all(problem(t, MM4096, LIMITS) is None for t in got)
    assert got == enumerate_candidates(DEFAULT, MM4096, [MMA, WMMA], LIMITS, 6)
    # Distinct M x N workgroup tiles first, none of them the default's 128 x 64.
    tiles = [(t.workgroup[0], t.workgroup[1]) for t in got]
    assert len(set(tiles)) == 6 and (128, 64) not in tiles
    # The first: the most reuse within the cap (256x128 class), 256 threads, 32-element K steps.
    assert (got[0].workgroup, got[0].subgroup, got[0].reduction, got[0].threads) == ((128, 256, 0), (4, 8, 0), (0, 0, 2), 256)
    assert enumerate_candidates(DEFAULT, MM4096, [MMA], LIMITS, 2) == got[:2]
    assert enumerate_candidates(DEFAULT, MM4096, [MMA], LIMITS, 0) == []


def test_small_shared_memory_and_skinny_shapes_prune_and_reorder():
    small = GpuLimits(shared_memory=16384)
    got = enumerate_candidates(DEFAULT, MM4096, [MMA], small, 50)
    assert got and all(shared_bytes(t, MM4096) <= 16384 for t in got)
    # 8192 x 128 x 8192: N = 128 caps the N tile; configs that give all 132 SMs a workgroup first.
    skinny = Contraction((8192, 128, 8192), (), 0, 1, 2)
    default = GpuTiles((64, 64, 0), (2, 4, 0), (0, 0, 8), MMA, 128, 2)
    got = enumerate_candidates(default, skinny, [MMA], LIMITS, 4)
    assert all(t.workgroup[1] <= 128 for t in got)
    assert all((8192 // t.workgroup[0]) * (128 // t.workgroup[1]) >= 132 for t in got)
    assert all(t.reduction == (0, 0, 8) for t in got)  # IREE's K step kept where it fits


# ----- the IR side: reading IREE's default, building attributes ------------------------------
_CONFIG = (
    "#iree_gpu.lowering_config<{convert_acc_gemm, mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F16_16x8x16_F16>, "
    "promote_operands = [0, 1], reduction = [0, 0, 2], subgroup = [4, 4, 0], workgroup = [128, 64, 0]}>"
)
_TRANSLATION = (
    "#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [128, 1, 1] "
    "subgroup_size = 32, {gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = 2, "
    "no_reduce_shared_memory_bank_conflicts = false, use_igemm_convolution = false>}>"
)


def test_default_is_read_and_a_candidate_keeps_iree_entries():
    from iree.compiler import ir

    from autotune_export.program.cuda import IreeCudaCandidate, default_of

    with ir.Context():
        got = default_of(ir.Attribute.parse(_CONFIG), ir.Attribute.parse(_TRANSLATION))
        assert got == DEFAULT
        cand = IreeCudaCandidate(GpuTiles((128, 256, 0), (4, 8, 0), (0, 0, 4), WMMA, 512, 3), _CONFIG, _TRANSLATION)
        info = str(cand.compilation_info())
        assert "convert_acc_gemm" in info and "promote_operands = [0, 1]" in info
        assert "mma_kind = #iree_gpu.mma_layout<NV_WMMA_F16_16x16x16_F16>" in info
        assert "reduction = [0, 0, 4], subgroup = [4, 8, 0], workgroup = [128, 256, 0]" in info
        assert "workgroup_size = [512, 1, 1] subgroup_size = 32" in info
        assert "prefetch_num_stages = 3" in info
        # Not a TileAndFuse MMA config: not varied.
        assert default_of(ir.Attribute.parse("#iree_gpu.lowering_config<{workgroup = [64, 64, 0]}>"), ir.Attribute.parse(_TRANSLATION)) is None


# ----- matching dispatches for the Triton kernel ------------------------------------------------
@pytest.fixture(scope="module")
def matches():
    """Per function of the fixture, what match_matmul says of its dispatch (compiled to
    dispatch-creation by iree-compile: no code generation)."""
    from iree.compiler import ir
    from iree.compiler.tools import compile_file

    from autotune_export.program.dispatches import dispatch_ops, root_op
    from autotune_export.program.triton_candidates import match_matmul

    dc = compile_file(str(CASES), extra_args=["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_89", "--compile-to=dispatch-creation"])
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(dc.decode())
        return {host: match_matmul(op, root_op(op)) for host, _i, op in dispatch_ops(module)}


def test_plain_matmul_matches_with_row_major_strides(matches):
    m = matches["plain"]
    assert (m.a, m.b, m.batch, m.m, m.n, m.k, m.dtype) == (0, 1, 1, 64, 48, 32, "float16")
    assert (m.a_strides, m.b_strides, m.c_strides) == ((0, 32, 1), (0, 48, 1), (0, 48, 1))


def test_transposed_operands_match_through_strides(matches):
    m = matches["transposed"]  # A stored K x M, B stored N x K, bf16
    assert (m.a_shape, m.b_shape, m.m, m.n, m.k, m.dtype) == ((32, 64), (48, 32), 64, 48, 32, "bfloat16")
    assert (m.a_strides, m.b_strides, m.c_strides) == ((0, 1, 64), (0, 1, 32), (0, 48, 1))


def test_batch_matmul_matches_with_batch_strides(matches):
    m = matches["batched"]
    assert (m.batch, m.m, m.n, m.k) == (4, 64, 48, 32)
    assert (m.a_strides, m.b_strides, m.c_strides) == ((2048, 32, 1), (1536, 48, 1), (3072, 48, 1))


def test_fused_consumer_wide_types_and_accumulation_are_not_matched(matches):
    assert matches["bias"] == "the dispatch fuses linalg.generic with the matmul; the kernel computes the product alone"
    assert matches["wide"].startswith("element types f32 x f32 -> f32")
    assert matches["accumulate"] == "its accumulator is not a zero fill"
    assert matches["not_a_product"] == "its body is not out + a * b of its two inputs' and its output's elements"


def _mm(batch, m, n, k, a_strides, b_strides, c_strides):
    from autotune_export.program.triton_candidates import MatmulMatch

    a_shape = (batch, m, k) if batch > 1 else (m, k)
    b_shape = (batch, k, n) if batch > 1 else (k, n)
    c_shape = (batch, m, n) if batch > 1 else (m, n)
    return MatmulMatch(0, 1, a_shape, b_shape, c_shape, "float16", batch, m, n, k, a_strides, b_strides, c_strides)


def test_offsets_the_bundled_kernel_computes_in_32_bits_must_stay_below_2_31():
    """The bundled kernel's i32 element offsets (kernels/matmul.py), every lane of each config
    counted (rows padded to its tile, BLOCK_K lanes). 9 x 16384^2 A (tester finding 09):
    8 * 2**28 + 16383 * 16384 + 127 wraps; 8 batches end 16257 below 2**31."""
    from autotune_export.program.kernels.matmul import CONFIGS
    from autotune_export.program.triton_candidates import int32_offset_overflow

    def bmm(batch):
        return _mm(batch, 16384, 64, 16384, (2**28, 16384, 1), (16384 * 64, 64, 1), (16384 * 64, 64, 1))

    assert int32_offset_overflow(bmm(9), CONFIGS) == "its element offsets are 32-bit and A's reach 2415902847 (>= 2**31)"
    assert 8 * 2**28 + 16383 * 16384 + 127 == 2415902847
    assert int32_offset_overflow(bmm(8), CONFIGS) is None
    # A plain matmul: the rows times their stride count (K advances by pointer increments, so
    # a 65536 x 32768 A of 2**31 elements is addressable; 65537 rows pad to 65792 in the
    # 256 x 128 x 64 config, whose K lanes end at 63).
    assert int32_offset_overflow(_mm(1, 65536, 64, 32768, (0, 32768, 1), (0, 64, 1), (0, 64, 1)), CONFIGS) is None
    a_over = int32_offset_overflow(_mm(1, 65537, 64, 32768, (0, 32768, 1), (0, 64, 1), (0, 64, 1)), CONFIGS)
    assert a_over == f"its element offsets are 32-bit and A's reach {65791 * 32768 + 63} (>= 2**31)"
    # A stored K x M (transposed: row stride 1, column stride M): the BLOCK_K lanes times M count
    # (the 64 x 64 x 128 config: 2**24 + 1 rows pad to 2**24 + 64).
    at = 2**24 * 128 - 1  # (2**24 - 1) + 127 * 2**24
    assert at < 2**31 and int32_offset_overflow(_mm(1, 2**24, 64, 64, (0, 1, 2**24), (0, 64, 1), (0, 64, 1)), CONFIGS) is None
    wide = 2**24 + 1
    t_over = int32_offset_overflow(_mm(1, wide, 64, 64, (0, 1, wide), (0, 64, 1), (0, 64, 1)), CONFIGS)
    assert t_over == f"its element offsets are 32-bit and A's reach {(2**24 + 63) + 127 * wide} (>= 2**31)"
    # The output: C of 32768 x 65536 ends at exactly 2**31 - 1; 32769 rows pad to 33024 (256-row tiles).
    assert int32_offset_overflow(_mm(1, 32768, 65536, 64, (0, 64, 1), (0, 65536, 1), (0, 65536, 1)), CONFIGS) is None
    c_over = int32_offset_overflow(_mm(1, 32769, 65536, 64, (0, 64, 1), (0, 65536, 1), (0, 65536, 1)), CONFIGS)
    assert c_over == f"its element offsets are 32-bit and C's reach {33023 * 65536 + 65535} (>= 2**31)"
    # B: 9 batches of 16384 x 16384 wrap too (its rows are BLOCK_K lanes, its columns N padded).
    b9 = _mm(9, 64, 16384, 16384, (64 * 16384, 16384, 1), (2**28, 16384, 1), (64 * 16384, 16384, 1))
    assert int32_offset_overflow(b9, CONFIGS) == f"its element offsets are 32-bit and B's reach {8 * 2**28 + 127 * 16384 + 16383} (>= 2**31)"


_BIG_BMM = """
func.func @main(%a: tensor<BATCHx16384x16384xf16>, %b: tensor<BATCHx16384x64xf16>) -> tensor<BATCHx16384x64xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<BATCHx16384x64xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<BATCHx16384x64xf16>) -> tensor<BATCHx16384x64xf16>
  %r = linalg.batch_matmul ins(%a, %b : tensor<BATCHx16384x16384xf16>, tensor<BATCHx16384x64xf16>)
                           outs(%f : tensor<BATCHx16384x64xf16>) -> tensor<BATCHx16384x64xf16>
  return %r : tensor<BATCHx16384x64xf16>
}
"""


@pytest.mark.parametrize("batch", [9, 8])
def test_bundled_kernel_refuses_a_dispatch_its_32_bit_offsets_cannot_address(batch):
    """Tester finding 09: the 9 x 16384^2 f16 batch matmul got Triton variants whose
    ``z * stride_az`` wraps in i32; it stays IREE-only with the reason, 8 batches still match."""
    from iree.compiler import ir
    from iree.compiler.tools import compile_str

    from autotune_export.program.dispatches import dispatch_ops, root_op
    from autotune_export.program.triton_candidates import Launch, bundled_matmul_launch, match_matmul, triton_candidates

    text = _BIG_BMM.replace("BATCH", str(batch))
    dc = compile_str(text, extra_args=["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_89", "--compile-to=dispatch-creation"])
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(dc.decode())
        ((_host, _i, op),) = list(dispatch_ops(module))
        match = match_matmul(op, root_op(op))
        assert (match.batch, match.m, match.n, match.k, match.a_strides) == (batch, 16384, 64, 16384, (2**28, 16384, 1))
        if batch == 9:
            got, reason = triton_candidates(op, root_op(op), target="sm_90", limit=1)
            assert got == []
            assert reason == "kernel 'matmul' does not take it: its element offsets are 32-bit and A's reach 2415902847 (>= 2**31)"
        else:
            assert isinstance(bundled_matmul_launch(match), Launch)


_HUGE_BATCH = """
func.func @main(%a: tensor<70000x16x16xf16>, %b: tensor<70000x16x16xf16>) -> tensor<70000x16x16xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<70000x16x16xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<70000x16x16xf16>) -> tensor<70000x16x16xf16>
  %r = linalg.batch_matmul ins(%a, %b : tensor<70000x16x16xf16>, tensor<70000x16x16xf16>)
                           outs(%f : tensor<70000x16x16xf16>) -> tensor<70000x16x16xf16>
  return %r : tensor<70000x16x16xf16>
}
"""


def test_a_batch_over_cudas_grid_y_limit_gets_no_triton_candidate_at_build_time():
    """The bundled kernel launches the batch on grid y, whose CUDA limit is 65535 blocks: a
    70000 x 16 x 16 x 16 batch matmul would fail at launch in every config, so the kernel does
    not take it, with the reason, before anything is compiled (no Triton compile here: the
    check runs on the launch's grid, from launch_to_mlir)."""
    from iree.compiler import ir
    from iree.compiler.tools import compile_str

    from autotune_export.program.dispatches import dispatch_ops, root_op
    from autotune_export.program.triton_candidates import match_matmul, triton_candidates

    dc = compile_str(_HUGE_BATCH, extra_args=["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_89", "--compile-to=dispatch-creation"])
    said = []
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(dc.decode())
        ((_host, _i, op),) = list(dispatch_ops(module))
        match = match_matmul(op, root_op(op))
        assert (match.batch, match.m, match.n, match.k) == (70000, 16, 16, 16)
        got, reason = triton_candidates(op, root_op(op), target="sm_90", limit=2, remark=said.append)
    assert got == [] and said == []
    assert reason == (
        "kernel 'matmul' does not take it: grid y is 70000 blocks; CUDA allows at most 65535 in y "
        "(x: 2**31 - 1, y and z: 65535) in every config (it would fail at launch)"
    )


def test_cuda_grid_limits_have_one_home():
    from autotune_export.cuda.targets import MAX_GRID, grid_limit_problem

    assert MAX_GRID == (2**31 - 1, 65535, 65535)
    assert grid_limit_problem((2**31 - 1, 65535, 65535)) is None
    assert grid_limit_problem((1, 65535)) is None
    assert grid_limit_problem((2**31, 1, 1)).startswith("grid x is 2147483648 blocks; CUDA allows at most 2**31 - 1 in x")
    assert grid_limit_problem((1, 1, 65536)).startswith("grid z is 65536 blocks; CUDA allows at most 65535 in z")


def test_register_refuses_unknown_patterns_and_duplicate_names():
    from autotune_export.program.triton_candidates import register_triton_kernel, registered_kernels

    with pytest.raises(ValueError, match="unknown pattern 'conv'"):
        register_triton_kernel("mine", "conv", lambda m: None)
    with pytest.raises(ValueError, match="'matmul' is already registered"):
        registered_kernels()
        register_triton_kernel("matmul", "matmul", lambda m: None)


_INTERPRET = r"""
import json, sys
import numpy as np
import torch
from autotune_export.program.triton_candidates import MatmulMatch, Shaped, bundled_matmul_launch
from autotune_export.program.kernels.matmul import CONFIGS

for raw in json.loads(sys.argv[1]):
    match = MatmulMatch(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    launch = bundled_matmul_launch(match)
    dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}[match.dtype]
    rng = np.random.default_rng(0)
    # Entries in {-1, -0.5, 0, 0.5, 1}: every sum exact in fp16/bf16, so the result must be exact.
    a = torch.tensor(rng.integers(-2, 3, size=match.a_shape) * 0.5, dtype=dtype)
    b = torch.tensor(rng.integers(-2, 3, size=match.b_shape) * 0.5, dtype=dtype)
    c = torch.full(match.c_shape, 99.0, dtype=dtype)
    real = iter([a, b, c])
    args = [next(real) if isinstance(x, Shaped) else x for x in launch.args]
    cfg = {k: v for k, v in CONFIGS[7].items() if k not in ("num_warps", "num_stages")}
    launch.kernel.fn[launch.grid(cfg)](*args, **cfg)
    # numpy's view of the dispatch: the operands as the indexing maps read them.
    an, bn = a.float().numpy(), b.float().numpy()
    if match.a_strides[1] == 1:   # A stored K x M
        an = np.swapaxes(an, -1, -2)
    if match.b_strides[2] != 1:   # B stored N x K
        bn = np.swapaxes(bn, -1, -2)
    want = np.matmul(an, bn)
    got = c.float().numpy()
    assert got.shape == want.shape and np.array_equal(got, want), (match, float(np.abs(got - want).max()))
    print("same", match.batch, match.m, match.n, match.k, match.dtype)
"""


def test_bundled_kernel_in_triton_interpreter_matches_numpy_for_each_dispatch(matches, tmp_path):
    """The Triton branch's launch (the bundled kernel, the dispatch's shapes and strides, one of
    its configs) run by Triton's interpreter computes numpy's product of the dispatch's
    operands, for a plain, a transposed and a batched matmul. The transposed dispatch is bf16;
    it runs here as fp16 with the same shapes and strides: Triton 3.6's interpreter computes
    ``tl.dot`` of bf16 operands wrongly (2 * identity @ ones gives 2.66e8, not 2; fp16 gives 2),
    so bf16 is checked on the GPU, not here."""
    pytest.importorskip("torch")
    import dataclasses

    transposed = dataclasses.replace(matches["transposed"], dtype="float16")
    cases = [dataclasses.asdict(m) for m in (matches["plain"], transposed, matches["batched"])]
    script = tmp_path / "interpret.py"
    script.write_text(_INTERPRET)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, str(script), json.dumps(cases)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split("\n")[:3] == ["same 1 64 48 32 float16"] * 2 + ["same 4 64 48 32 float16"]


# ----- building (iree-compile, Triton compiles) -------------------------------------------------
PROGRAM = """
func.func @main(%a: tensor<256x128xf16>, %b: tensor<128x64xf16>, %c: tensor<256x64xf16>, %d: tensor<128x64xf16>)
    -> (tensor<256x64xf16>, tensor<256x64xf16>) {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x64xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<256x64xf16>) -> tensor<256x64xf16>
  %m = linalg.matmul ins(%a, %b : tensor<256x128xf16>, tensor<128x64xf16>) outs(%f : tensor<256x64xf16>) -> tensor<256x64xf16>
  %m2 = linalg.matmul ins(%a, %d : tensor<256x128xf16>, tensor<128x64xf16>) outs(%f : tensor<256x64xf16>) -> tensor<256x64xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%m2, %c : tensor<256x64xf16>, tensor<256x64xf16>) outs(%e : tensor<256x64xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %s = arith.addf %x, %y : f16
    linalg.yield %s : f16
  } -> tensor<256x64xf16>
  return %m, %r : tensor<256x64xf16>, tensor<256x64xf16>
}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from autotune_export.program import build_program

    remarks = []
    b = build_program(PROGRAM, backend="cuda", max_candidates=2, target="sm_90", remark=remarks.append, jobs=2)
    return b, [r.message for r in remarks]


@pytest.mark.integration
def test_cuda_program_has_iree_and_triton_variants_and_compiles(built):
    b, remarks = built
    assert b.vmfb[:4] == b"PK\x03\x04" and b"IREE" in b.vmfb[:128]  # IREE's .vmfb: a zip holding module.fb
    groups = {g.group: g for g in b.groups}
    plain = groups["main_dispatch_0_matmul_256x64x128_f16"]
    # IREE's default, one generated IREE candidate, two Triton configs (max_candidates=2).
    kinds = [c[0][0] for c in plain.configs]
    assert kinds == ["lowering_config", "lowering_config", "triton", "triton"]
    assert plain.configs[1][0][1].startswith("#iree_gpu.lowering_config<{mma_kind")
    assert plain.variants[2].endswith("triton_matmul_bmm_kernel_0_128x256x64x8_w8_s3_spec")
    # The fused bias add stays IREE-only, said in a remark.
    fused = next(g for k, g in groups.items() if "dispatch_1" in k)
    assert [c[0][0] for c in fused.configs] == ["lowering_config", "lowering_config"]
    assert any("no Triton candidates: the dispatch fuses linalg.generic" in r for r in remarks)
    # The toolkit's stages say what they compiled, per kernel and shape.
    assert any(r.startswith("@main_dispatch_0: Triton kernel 'matmul' (1x256x64x128): @bmm_kernel: 2 variant") for r in remarks), remarks


@pytest.mark.integration
def test_triton_branch_dispatches_the_specialized_export_with_iree_bindings(built):
    b, _ = built
    text = b.mlir
    # One hal.executable.source with the Triton objects; sm_89 for IREE's own code.
    assert len(re.findall(r"hal\.executable\.source private @triton_matmul_1x256x64x128_float16_\w+", text)) == 1
    assert 'arch = "sm_89"' in text
    # The branch: tensors A, B in binding order, then M, N, K and the strides as i32 constants.
    call = re.search(r"flow\.dispatch @triton_matmul_\w+::@bmm_kernel_0_128x256x64x8_w8_s3_spec\(([^)]*)\) : \(([^)]*)\) -> tensor<256x64xf16>", text)
    assert call, text[:2000]
    assert call.group(2) == "tensor<256x128xf16>, tensor<128x64xf16>, " + ", ".join(["i32"] * 12)
    # IREE's candidate branch: compilation_info with the candidate's block size.
    assert re.search(r"#compilation = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<\{convert_acc_gemm", text)
    assert "compilation_info = #compilation}" in text


@pytest.mark.integration
def test_a_candidate_iree_rejects_is_dropped_with_a_remark(monkeypatch):
    from autotune_export.program import build_program
    from autotune_export.program import cuda as cuda_mod

    bad = GpuTiles((128, 64, 0), (3, 4, 0), (0, 0, 2), MMA, 128, 2)  # 'op was not bufferized' in IREE 3.13

    def one_bad(default, c, mmas, limits, limit, stages=None):
        return [bad] if limit else []

    monkeypatch.setattr(cuda_mod, "enumerate_candidates", one_bad)
    remarks = []
    b = build_program(PROGRAM, backend="cuda", max_candidates=2, triton=False, remark=remarks.append, jobs=2)
    assert [len(g.variants) for g in b.groups] == [1, 1]
    rejected = [r.message for r in remarks if "iree-compile rejected candidate" in r.message]
    assert len(rejected) == 2 and "subgroup = [3, 4, 0]" in rejected[0]


def test_only_the_configs_whose_grid_cuda_refuses_are_dropped_with_a_remark():
    """A launch whose grid y depends on the config (a registered kernel's, say): the config
    over 65535 blocks is dropped before compiling, with a remark naming it; the other stays."""
    from iree.compiler import ir

    from autotune_export.frontend.reader import SourceFile, parse_source
    from autotune_export.interop.launch import launch_to_mlir
    from autotune_export.ir.group import AutotuneGroup
    from autotune_export.ir.walk import executable_sources, groups_of
    from autotune_export.program.triton_candidates import _capped, _within_grid_limits, bundled_matmul_launch

    launch = bundled_matmul_launch(_mm(4, 64, 64, 64, (4096, 64, 1), (4096, 64, 1), (4096, 64, 1)))
    kernel, where = _capped(launch.kernel, 2)  # BLOCK_M 128, then 256
    text = launch_to_mlir(
        kernel,
        lambda meta: (1, meta["BLOCK_M"] * 300),
        *launch.args,
        outputs=[launch.output],
        name="triton_launch",
        target="sm_90",
        kernel_source=where,
    )
    said = []
    with ir.Context():
        module = parse_source(SourceFile(text, "<launch>", os.getcwd()))
        _within_grid_limits(module, said)
        ((group_op,),) = [groups_of(src) for src in executable_sources(module)]
        configs = AutotuneGroup.from_op(group_op.operation).configs
    assert [dict(c)["BLOCK_M"] for c in configs] == [128]
    assert said == [
        "config 1 {BLOCK_M = 256, BLOCK_N = 128, BLOCK_K = 64, GROUP_M = 8, num_warps = 8, num_stages = 3} dropped: "
        "grid y is 76800 blocks; CUDA allows at most 65535 in y (x: 2**31 - 1, y and z: 65535) (it would fail at launch)"
    ]
