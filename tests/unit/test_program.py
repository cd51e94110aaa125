"""autotune_export.program (issue 25, first slice): IREE's own dispatches of a whole program as
run-time variant groups on llvm-cpu (docs/program.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from autotune_export.program.build import build_program
from autotune_export.program.dispatches import tiles_of
from autotune_export.program.candidates import CpuTiles, decomposes_to_1d, neighbours, valid
from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.tools import cli

#: Two matmuls of different shapes (chained) and a convolution, linalg on tensors, f32. The
#: convolution has batch 2: with batch 1 IREE folds the unit loop after dispatch creation and
#: configures 7 loops where the dispatch has 6 (that dispatch then keeps IREE's default).
PROGRAM = """
func.func @main(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>, %c: tensor<96x32xf32>, %img: tensor<2x18x18x8xf32>,
                %w: tensor<3x3x8x16xf32>) -> (tensor<64x32xf32>, tensor<2x16x16x16xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%f : tensor<64x96xf32>) -> tensor<64x96xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %m2 = linalg.matmul ins(%m, %c : tensor<64x96xf32>, tensor<96x32xf32>) outs(%f2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e3 = tensor.empty() : tensor<2x16x16x16xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  %cv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%img, %w : tensor<2x18x18x8xf32>, tensor<3x3x8x16xf32>) outs(%f3 : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  return %m2, %cv : tensor<64x32xf32>, tensor<2x16x16x16xf32>
}
"""

_DEFAULT = CpuTiles((8, 48, 0), (8, 16, 0), (0, 0, 16))


def test_tiles_read_iree_config_and_print_it_back():
    text = "#iree_cpu.lowering_config<distribution = [8, 48, 0], vector_common_parallel = [8, 16, 0], vector_reduction = [0, 0, 16]>"
    assert tiles_of(text) == _DEFAULT
    assert _DEFAULT.text() == text
    assert tiles_of("#iree_cpu.lowering_config<vector_common_parallel = [8, 16]>") is None  # no distribution level
    assert tiles_of("#iree_gpu.lowering_config<{workgroup = [64, 64, 0]}>") is None


def test_neighbours_step_one_tile_and_prune_by_divisibility():
    # matmul M=64, N=96, K=128. Pruned: distribution 8/2 = 4 (the vector tile 8 does not tile
    # it), distribution 48/2 = 24 (24 % 16 != 0), vector 8*2 = 16 (16 does not tile 8),
    # vector 16*2 = 32 (32 does not tile 48).
    got = neighbours(_DEFAULT, [64, 96, 128], {2}, limit=10)
    assert [(c.distribution, c.vector_common_parallel, c.vector_reduction) for c in got] == [
        ((16, 48, 0), (8, 16, 0), (0, 0, 16)),
        ((8, 96, 0), (8, 16, 0), (0, 0, 16)),
        ((8, 48, 0), (4, 16, 0), (0, 0, 16)),
        ((8, 48, 0), (8, 8, 0), (0, 0, 16)),
        ((8, 48, 0), (8, 16, 0), (0, 0, 32)),
        ((8, 48, 0), (8, 16, 0), (0, 0, 8)),
    ]
    assert neighbours(_DEFAULT, [64, 96, 128], {2}, limit=2) == got[:2]
    assert neighbours(_DEFAULT, [64, 96, 128], {2}, limit=0) == []


#: IREE's llvm-cpu default for the CI program's convolution (loops n, oh, ow, oc, kh, kw, ic).
_CONV = CpuTiles((1, 4, 16, 16, 0, 0, 0), (1, 1, 8, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8))
_CONV_LOOPS, _CONV_RED = [2, 16, 16, 16, 3, 3, 8], {4, 5, 6}


def test_conv_candidates_keep_the_unit_vector_tiles_of_the_1d_decomposition():
    """A convolution IREE decomposes to 1-D (ConvTileAndDecomposeExpert) keeps the vector
    tiles its default has at 1: oh tiled to 2 left the 2-D conv in scalar code, ~95x slower."""
    info = "#iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<ConvTileAndDecomposeExpert>>"
    assert decomposes_to_1d(info) and not decomposes_to_1d(info.replace("ConvTileAndDecompose", "DoubleTiling"))
    got = neighbours(_CONV, _CONV_LOOPS, _CONV_RED, limit=20, keep_unit_vector_tiles=True)
    assert [(c.distribution, c.vector_common_parallel, c.vector_reduction) for c in got] == [
        ((2, 4, 16, 16, 0, 0, 0), (1, 1, 8, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8)),
        ((1, 8, 16, 16, 0, 0, 0), (1, 1, 8, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8)),
        ((1, 2, 16, 16, 0, 0, 0), (1, 1, 8, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8)),
        ((1, 4, 8, 16, 0, 0, 0), (1, 1, 8, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8)),
        ((1, 4, 16, 16, 0, 0, 0), (1, 1, 16, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8)),
        ((1, 4, 16, 16, 0, 0, 0), (1, 1, 4, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8)),
        ((1, 4, 16, 16, 0, 0, 0), (1, 1, 8, 8, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8)),
        ((1, 4, 16, 16, 0, 0, 0), (1, 1, 8, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 4)),
    ]
    # Without the rule the oh vector tile 2 (the slow candidate) is among them.
    loose = neighbours(_CONV, _CONV_LOOPS, _CONV_RED, limit=20)
    assert ((1, 4, 16, 16, 0, 0, 0), (1, 2, 8, 16, 0, 0, 0), (0, 0, 0, 0, 1, 1, 8)) in [
        (c.distribution, c.vector_common_parallel, c.vector_reduction) for c in loose
    ]


def test_valid_refuses_tiles_that_do_not_divide_or_sit_on_the_wrong_level():
    loops, red = [64, 96, 128], {2}
    assert valid(_DEFAULT, loops, red)
    assert not valid(CpuTiles((8, 64, 0), (8, 16, 0), (0, 0, 16)), loops, red)  # 64 does not divide 96
    assert not valid(CpuTiles((8, 48, 16), (8, 16, 0), (0, 0, 16)), loops, red)  # a reduction loop distributed
    assert not valid(CpuTiles((8, 48, 0), (8, 16, 0), (0, 16, 16)), loops, red)  # a parallel loop in vector_reduction
    assert not valid(CpuTiles((8, 48, 0), (8, 32, 0), (0, 0, 16)), loops, red)  # vector 32 does not tile 48
    assert not valid(CpuTiles((8, 48), (8, 16, 0), (0, 0, 16)), loops, red)  # wrong rank


def test_unknown_backend_and_bad_cap_are_diagnostics():
    with pytest.raises(DiagnosticError, match="backend 'rocm' has no candidate generator yet"):
        build_program(PROGRAM, backend="rocm")
    with pytest.raises(DiagnosticError, match="at least 1"):
        build_program(PROGRAM, max_candidates=0)


def test_cli_refuses_unknown_backend_with_exit_1_and_no_output(tmp_path, capsys):
    """In this process (a subprocess would import the package again for one usage error): an
    exception escaping ``main`` would fail the test, as a traceback on stderr would."""
    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    out = tmp_path / "p.vmfb"
    rc = cli.main(["program", str(src), "--backend", "rocm", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert "error: program: backend 'rocm'" in err
    assert "Traceback" not in err
    assert not out.exists()


def _reference(args):
    a, b, c, img, w = args
    conv = np.zeros((2, 16, 16, 16), np.float64)
    for i in range(3):
        for j in range(3):
            conv += np.einsum("nhwc,cf->nhwf", img[:, i:i + 16, j:j + 16, :].astype(np.float64), w[i, j].astype(np.float64))
    return (a.astype(np.float64) @ b @ c), conv


@pytest.fixture(scope="module")
def built():
    return build_program(PROGRAM, max_candidates=3)


@pytest.mark.integration
def test_program_builds_generated_candidates_for_every_dispatch(built):
    assert [g.executable for g in built.groups] == ["main_dispatch_0", "main_dispatch_1", "main_dispatch_2"]
    assert [len(g.variants) for g in built.groups] == [3, 3, 3]
    assert [d.root for d in built.dispatches] == ["linalg.matmul", "linalg.matmul", "linalg.generic"]
    for group, dispatch in zip(built.groups, built.dispatches):
        assert group.default == 0
        assert group.configs[0] == [["lowering_config", dispatch.default_text]]  # variant 0: IREE's own
        assert [c[0][1] for c in group.configs[1:]] == [t.text() for t in dispatch.candidates]
        assert all(c.text() != dispatch.default_text for c in dispatch.candidates)
    assert not built.remarks


@pytest.mark.integration
def test_iree_configures_each_variant_with_its_candidate(built):
    """IREE honours the candidates (a config it dropped silently would make a variant a copy
    of the default): configuring the regrouped program gives one executable per variant,
    each root op with its candidate's lowering_config."""
    from iree.compiler.tools import compile_str

    cfg = compile_str(built.mlir, extra_args=[
        "--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host",
        "--compile-from=global-optimization", "--compile-to=executable-configurations"]).decode()
    # The program's executables (@main_dispatch_N); the entries' fills and comparisons are others.
    program = [t for t in re.split(r"^  hal\.executable private ", cfg, flags=re.M) if re.match(r"@main_dispatch_\d+ ", t)]
    configured = [c for t in program for c in re.findall(r"lowering_config = (#iree_cpu\.lowering_config<distribution[^>]*>)", t)]
    expected = [c[0][1] for g in built.groups for c in g.configs]
    assert sorted(configured) == sorted(expected)
    assert len(program) == len(expected)


@pytest.mark.integration
def test_every_variant_of_every_group_matches_numpy(built, tmp_path):
    from autotune_export.runtime import AutotunedModule

    path = tmp_path / "p.vmfb"
    path.write_bytes(built.vmfb)
    module = AutotunedModule(str(path), driver="local-task", cache=False)
    rng = np.random.default_rng(25)
    args = [rng.standard_normal(s, dtype=np.float32) for s in [(64, 128), (128, 96), (96, 32), (2, 18, 18, 8), (3, 3, 8, 16)]]
    ref_mm, ref_conv = _reference(args)
    assert sorted(module.groups) == sorted(g.key for g in built.groups)
    for key, info in module.groups.items():
        for k in range(len(info.variants)):
            module.select(key, k)
            mm, conv = module.functions["main"](*args)
            np.testing.assert_allclose(mm.to_host(), ref_mm, rtol=1e-4, atol=1e-3, err_msg=f"{key} variant {k}")
            np.testing.assert_allclose(conv.to_host(), ref_conv, rtol=1e-4, atol=1e-4, err_msg=f"{key} variant {k}")
        module.select(key, 0)


#: :data:`PROGRAM`'s convolution alone: the same dispatch (@main_dispatch_0 here, _2 there),
#: group, candidates and code, without the two matmuls' variants to compile to LLVM as well
#: (their 20 executables took two thirds of test_every_conv_variant_is_vectorized: 11 -> 4 s).
CONV_PROGRAM = """
func.func @main(%img: tensor<2x18x18x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<2x16x16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<2x16x16x16xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  %cv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%img, %w : tensor<2x18x18x8xf32>, tensor<3x3x8x16xf32>) outs(%f3 : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  return %cv : tensor<2x16x16x16xf32>
}
"""


@pytest.mark.integration
def test_every_conv_variant_is_vectorized():
    """Every variant of the convolution's group (all candidates: cap 10) compiles to vector
    FMAs on llvm-cpu; before the 1-D decomposition rule (candidates.decomposes_to_1d) the
    candidate with the oh vector tile 2 compiled to one scalar FMA in a loop (~95x slower)."""
    from iree.compiler.tools import compile_str

    assert CONV_PROGRAM.split("%e3 = ", 1)[1].split("return")[0] in PROGRAM  # PROGRAM's convolution
    got = build_program(CONV_PROGRAM, max_candidates=10)
    (conv,) = [g for g in got.groups if "_conv_" in g.group]
    flags = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
    out = compile_str(got.mlir, extra_args=[*flags, "--compile-from=global-optimization", "--compile-to=executable-targets"]).decode()
    bodies = re.split(r"\n  hal\.executable (?:private )?@", out)[1:]
    convs = [b for b in bodies if re.search(r"hal\.executable\.export public @\w+_conv_2x16x16x16x3x3x8_f32 ", b)]
    assert len(convs) == len(conv.variants)
    vector_fmas = [len(re.findall(r"llvm\.intr\.fmuladd.*vector<", b)) for b in convs]
    assert all(n > 0 for n in vector_fmas), vector_fmas
    assert len(conv.variants) == 9  # IREE's default and all eight candidates the rule leaves


#: One matmul in two functions: IREE deduplicates the two dispatches into one executable.
TWICE = """
func.func @f(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%f : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %m : tensor<64x96xf32>
}
func.func @g(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%f : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %m : tensor<64x96xf32>
}
"""


@pytest.mark.integration
def test_a_dispatch_iree_merged_with_another_gets_candidates(tmp_path):
    """@g's matmul is @f's (IREE keeps one executable, @f_dispatch_0): its configuration is
    read from the executable @g dispatches, so @g gets a group with candidates too (it had
    none: "IREE's configuration for it was not found"), and every variant of both is right."""
    from autotune_export.runtime import AutotunedModule

    remarks = []
    got = build_program(TWICE, max_candidates=3, remark=lambda d: remarks.append(d.format()))
    assert [(g.key, len(g.variants)) for g in got.groups] == [
        ("f_dispatch_0::f_dispatch_0_matmul_64x96x128_f32", 3),
        ("g_dispatch_0::g_dispatch_0_matmul_64x96x128_f32", 3),
    ]
    assert got.groups[0].configs == got.groups[1].configs and not any("not found" in r for r in remarks)
    path = tmp_path / "twice.vmfb"
    path.write_bytes(got.vmfb)
    module = AutotunedModule(str(path), driver="local-task", cache=False)
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((64, 128), dtype=np.float32), rng.standard_normal((128, 96), dtype=np.float32)
    for key, info in module.groups.items():
        for k in range(len(info.variants)):
            module.select(key, k)
            out = module.functions[info.host](a, b).to_host()
            np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-3, err_msg=f"{key} variant {k}")


@pytest.mark.integration
def test_cli_writes_the_module(tmp_path):
    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    out = tmp_path / "p.vmfb"
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "autotune_export.tools.cli", "program", str(src), "--max-candidates", "2",
                           "-o", str(out)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "variants per tunable dispatch: @main_dispatch_0 2, @main_dispatch_1 2, @main_dispatch_2 2" in proc.stderr
    from autotune_export.runtime import AutotunedModule

    module = AutotunedModule(str(out), driver="local-task", cache=False)
    assert sorted(len(g.variants) for g in module.groups.values()) == [2, 2, 2]


@pytest.mark.integration
def test_a_candidate_iree_rejects_drops_its_group_candidates_with_a_warning(monkeypatch):
    """IREE refuses a vector_reduction tile on a parallel loop; the groups whose candidates
    hold it lose them one at a time (a warning each), the others keep theirs."""
    import autotune_export.program.build as build

    generate = build.neighbours

    def with_a_bad_one(default, loops, reductions, limit, **kw):
        out = generate(default, loops, reductions, limit, **kw)
        if len(loops) == 3:  # the matmuls: a tile IREE's verifier rejects
            out[-1] = CpuTiles(default.distribution, default.vector_common_parallel, (0, 16, 16))
        return out

    monkeypatch.setattr(build, "neighbours", with_a_bad_one)
    got = build.build_program(PROGRAM, max_candidates=3)
    assert [len(g.variants) for g in got.groups] == [1, 1, 3]
    assert [d.severity for d in got.remarks] == ["warning", "warning"]
    assert "@main_dispatch_0" in got.remarks[0].message and "expected only reduction dims" in got.remarks[0].message
    assert "@main_dispatch_1" in got.remarks[1].message


@pytest.mark.integration
def test_groups_have_benchmark_check_and_compare_entries(built, tmp_path):
    """Per group, one benchmark and one check entry per variant and a device-side compare; every
    variant's check entry (the variant on the module's own seeded fake data) agrees with
    variant 0's (IREE's default) exactly: the fake values make f32 accumulation exact in any
    order, so tile variants agree bit for bit."""
    from autotune_export.runtime import AutotunedModule

    path = tmp_path / "p.vmfb"
    path.write_bytes(built.vmfb)
    module = AutotunedModule(str(path), driver="local-task", cache=False)
    for group in built.groups:
        n = len(group.variants)
        assert len(group.bench) == n and len(group.check) == n and group.compare
        assert group.unroll == 8 and len(set(group.fingerprints)) == n
        ref = module.functions[group.check[0]]().to_host()
        assert np.abs(ref).max() > 0 and len(np.unique(ref)) > 10  # seeded, position-dependent data: not constant
        for k in range(1, n):
            out = module.functions[group.check[k]]().to_host()
            np.testing.assert_array_equal(out, ref, err_msg=f"{group.key} variant {k}")
        for k in range(n):
            outs = module.functions[group.bench[k]](2)
            assert len(outs) == 8  # one one-element slice per unrolled run


@pytest.mark.integration
def test_autotune_tunes_every_program_group(built, tmp_path):
    """AutotunedModule.autotune() (the Triton groups' runtime: race search, cross-check against
    the default, tuning cache) tunes every group of the program and keeps the program's results."""
    from autotune_export.runtime import AutotunedModule

    path = tmp_path / "p.vmfb"
    path.write_bytes(built.vmfb)
    module = AutotunedModule(str(path), driver="local-task", cache=str(tmp_path / "cache"))
    timings = module.autotune()
    assert sorted(timings) == sorted(g.key for g in built.groups)
    for group in built.groups:
        assert module.sources[group.key] == "tuned"
        assert module.chosen[group.key] in group.variants
        assert len(timings[group.key]) == len(group.variants)
    assert not module.notes
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(s, dtype=np.float32) for s in [(64, 128), (128, 96), (96, 32), (2, 18, 18, 8), (3, 3, 8, 16)]]
    mm, conv = module.functions["main"](*args)
    ref_mm, ref_conv = _reference(args)
    np.testing.assert_allclose(mm.to_host(), ref_mm, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(conv.to_host(), ref_conv, rtol=1e-4, atol=1e-4)
    again = AutotunedModule(str(path), driver="local-task", cache=str(tmp_path / "cache"))
    again.autotune()
    assert {k: again.sources[k] for k in again.groups} == {g.key: "cache" for g in built.groups}
    assert again.chosen == module.chosen


@pytest.mark.integration
def test_a_wrong_variant_fails_the_cross_check(monkeypatch, tmp_path):
    """A variant that computes something else (its accumulator starts at 1, not 0) is caught by
    the group's check and compare entries, and the runtime drops it."""
    import autotune_export.program.build as build
    from autotune_export.runtime import AutotunedModule
    from iree.compiler import ir
    from iree.compiler.dialects import arith

    def off_by_one(dispatch):
        clone = dispatch.clone()
        fill = next(op for op in build.walk(clone.operation) if op.name == "linalg.fill")
        with ir.InsertionPoint(fill):
            one = arith.ConstantOp(ir.F32Type.get(), ir.FloatAttr.get(ir.F32Type.get(), 1.0)).result
        fill.operands[0] = one
        return clone

    variants = build.TunableDispatch.variants
    monkeypatch.setattr(build.TunableDispatch, "variants",
                        lambda self: variants(self) + ([build.Variant(f"{self.export}.wrong", [], off_by_one)]
                                                       if self.index == 0 else []))
    got = build.build_program(PROGRAM, max_candidates=1)
    group = got.groups[0]
    assert group.variants[-1].endswith(".wrong") and len(group.variants) == 2
    path = tmp_path / "p.vmfb"
    path.write_bytes(got.vmfb)
    module = AutotunedModule(str(path), driver="local-task", cache=False)
    ref, out = module.functions[group.check[0]](), module.functions[group.check[1]]()
    np.testing.assert_allclose(out.to_host(), ref.to_host() + 1.0)
    assert int(module.functions[group.compare](ref, out, 1e-5, 1e-5)) == 64 * 96  # every element differs, on the device
    assert not module._checks_out(module.group(group.key), 1)
    assert 1 in module.dropped[group.key] and "wrong" in module.notes[group.key]


def _random_inputs(seed: int):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s, dtype=np.float32) for s in [(64, 128), (128, 96), (96, 32), (2, 18, 18, 8), (3, 3, 8, 16)]]


def _assert_program_results(outputs, args):
    mm, conv = (o.to_host() if hasattr(o, "to_host") else o for o in outputs)
    ref_mm, ref_conv = _reference(args)
    np.testing.assert_allclose(mm, ref_mm, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(conv, ref_conv, rtol=1e-4, atol=1e-4)


#: Absolute timing noise (ms) allowed on top of the 1.3x margin when a pick is timed again
#: against IREE's default on llvm-cpu (local-task's per-call jitter on a loaded 2-core machine).
NOISE_FLOOR_MS = 0.02


@pytest.mark.integration
def test_done_when_cpu_tune_freeze_and_write_back(built, tmp_path):
    """Issue 25's CPU "Done when": the program (two matmuls of different shapes, a convolution)
    built with generated candidates is tuned by AutotunedModule.autotune(); per dispatch the pick
    is no slower than IREE's default beyond noise (timed again here, interleaved, best of
    rounds, a 1.3x margin plus NOISE_FLOOR_MS for a loaded machine); ``autotune-export program --tuning-results``
    on the runtime's own results file builds the frozen module (no groups left, the picks'
    dispatches alone), which computes the program's results; ``--write-back`` writes the
    input with the IREE-codegen winners as compilation_info, and a plain iree-compile of it
    computes the same results with executables carrying those configs."""
    from autotune_export.runtime import AutotunedModule
    from iree.compiler.tools import compile_file

    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    path = tmp_path / "p.vmfb"
    path.write_bytes(built.vmfb)
    results = tmp_path / "tuning.json"
    module = AutotunedModule(str(path), driver="local-task", cache=str(results))
    module.autotune()
    assert not module.notes
    picks = {g.key: g.variants.index(module.chosen[g.key]) for g in built.groups}
    for group in built.groups:
        k = picks[group.key]
        if k == 0:
            continue
        best = {0: float("inf"), k: float("inf")}
        for _ in range(5):
            for v in (0, k):
                best[v] = min(best[v], module.bench(group.key, v, warmup_ms=5, rep_ms=30).median_ms)
        # Noise: a relative margin, plus an absolute floor for dispatches of a few microseconds,
        # where local-task's per-call jitter under load (tens of microseconds seen) dominates a
        # ratio (a 0.0152 ms default and a 0.0205 ms pick of equal kernels failed 1.3x once).
        assert best[k] <= 1.3 * best[0] + NOISE_FLOOR_MS, (
            f"{group.key}: pick {k} {best[k]:.4f} ms vs IREE's default {best[0]:.4f} ms")

    frozen = tmp_path / "frozen.vmfb"
    written = tmp_path / "written_back.mlir"
    proc = subprocess.run([sys.executable, "-m", "autotune_export.tools.cli", "program", str(src), "--max-candidates", "3",
                           "--tuning-results", str(results), "--write-back", str(written), "-o", str(frozen)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "frozen choices: " + ", ".join(f"{key} = {picks[key]}" for key in sorted(picks)) in proc.stderr
    fixed = AutotunedModule(str(frozen), driver="local-task", cache=False)
    assert fixed.groups == {}  # every choice fixed: the dispatches are the picks themselves
    args = _random_inputs(11)
    _assert_program_results(fixed.functions["main"](*args), args)

    text = written.read_text()
    winners = {g.configs[picks[g.key]][0][1] for g in built.groups if picks[g.key] != 0}
    assert text.count("compilation_info = ") == len(winners)
    assert "autotune." not in text  # no marker of ours is left in the written-back program
    plain = tmp_path / "plain.vmfb"
    flags = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
    compile_file(str(written), output_file=str(plain), extra_args=flags)
    cfg = compile_file(str(written), extra_args=flags + ["--compile-to=executable-configurations"]).decode()
    configured = set(re.findall(r"lowering_config = (#iree_cpu\.lowering_config<distribution[^>]*>)", cfg))
    assert winners <= configured
    import iree.runtime as rt

    plain_module = rt.load_vm_flatbuffer_file(str(plain), driver="local-task")
    _assert_program_results(plain_module.main(*args), args)


def test_frozen_choices_are_checked_before_building():
    with pytest.raises(DiagnosticError, match="does not have"):
        build_program(PROGRAM, choices={"nope::nope": 1})


STABLEHLO = os.path.join(os.path.dirname(__file__), "..", "fixtures", "program", "two_matmuls_conv.stablehlo.mlir")


@pytest.mark.integration
def test_stablehlo_input_as_jax_export_writes_it(tmp_path):
    """A StableHLO program in jax.export's form (``mlir_module()``: module attributes, argument
    and result names, name/callsite locations; an f32 and an f16 dot_general with f32 results,
    a convolution) goes through IREE's StableHLO input conversion: three groups, every variant
    matches numpy."""
    from autotune_export.runtime import AutotunedModule

    got = build_program(open(STABLEHLO).read(), max_candidates=2, source_name=STABLEHLO)
    assert [len(g.variants) for g in got.groups] == [2, 2, 2]
    assert [d.root for d in got.dispatches] == ["linalg.matmul", "linalg.matmul", "linalg.generic"]
    path = tmp_path / "s.vmfb"
    path.write_bytes(got.vmfb)
    module = AutotunedModule(str(path), driver="local-task", cache=False)
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((64, 128), dtype=np.float32), rng.standard_normal((128, 96), dtype=np.float32)
    x, y = rng.standard_normal((32, 64)).astype(np.float16), rng.standard_normal((64, 48)).astype(np.float16)
    img, w = rng.standard_normal((2, 18, 18, 8), dtype=np.float32), rng.standard_normal((3, 3, 8, 16), dtype=np.float32)
    _, ref_conv = _reference([a, b, np.zeros((96, 32), np.float32), img, w])
    refs = [a.astype(np.float64) @ b, x.astype(np.float64) @ y.astype(np.float64), ref_conv]
    for key, info in module.groups.items():
        for k in range(len(info.variants)):
            module.select(key, k)
            outs = module.functions["main"](a, b, x, y, img, w)
            for out, ref in zip(outs, refs):
                np.testing.assert_allclose(out.to_host(), ref, rtol=1e-3, atol=1e-3, err_msg=f"{key} variant {k}")
        module.select(key, 0)
    module.autotune()
    assert not module.notes and all(module.sources[k] == "tuned" for k in module.groups)


@pytest.mark.integration
def test_write_back_of_explicit_choices_reproduces_them_with_plain_iree_compile(built, tmp_path):
    """choices= fixes two groups (a matmul and the convolution, on candidates), the third stays
    a group; write_back puts exactly those two configs on the input's root ops (the
    convolution's on linalg.conv_2d_nhwc_hwcf, which IREE generalizes later), and plain
    iree-compile gives their executables those configs and the program's results."""
    from autotune_export.program.build import write_back
    from autotune_export.runtime import AutotunedModule
    from iree.compiler.tools import compile_str

    mm, conv = "main_dispatch_0::main_dispatch_0_matmul_64x96x128_f32", "main_dispatch_2::main_dispatch_2_conv_2x16x16x16x3x3x8_f32"
    got = build_program(PROGRAM, max_candidates=3, choices={mm: 2, conv: "main_dispatch_2_conv_2x16x16x16x3x3x8_f32.candidate1"})
    assert got.frozen == {mm: 2, conv: 1}
    assert [g.key for g in got.groups] == ["main_dispatch_1::main_dispatch_1_matmul_64x32x96_f32"]
    # The tuning cache's per-variant keys do not depend on the rest of the module.
    assert got.groups[0].fingerprints == built.groups[1].fingerprints
    by_key = {d.key: d for d in got.dispatches}
    wanted = [by_key[mm].candidates[1].text(), by_key[conv].candidates[0].text()]
    text = write_back(got)
    assert re.search(r"linalg\.matmul \{compilation_info = #compilation\}", text)
    assert re.search(r"linalg\.conv_2d_nhwc_hwcf \{compilation_info = #compilation1,", text)
    assert [line.split(" = ", 1)[1] for line in text.splitlines() if line.startswith("#config")] == wanted
    flags = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
    cfg = compile_str(text, extra_args=flags + ["--compile-to=executable-configurations"]).decode()
    configured = re.findall(r"lowering_config = (#iree_cpu\.lowering_config<distribution[^>]*>)", cfg)
    assert configured[0] == wanted[0] and configured[2] == wanted[1]
    import iree.runtime as rt

    plain = rt.load_vm_flatbuffer(compile_str(text, extra_args=flags), driver="local-task")
    args = _random_inputs(5)
    _assert_program_results(plain.main(*args), args)
    path = tmp_path / "f.vmfb"
    path.write_bytes(got.vmfb)
    frozen = AutotunedModule(str(path), driver="local-task", cache=False)
    _assert_program_results(frozen.functions["main"](*args), args)


@pytest.mark.integration
def test_inspect_lists_program_groups_variants_and_configs(built, tmp_path):
    path = tmp_path / "p.vmfb"
    path.write_bytes(built.vmfb)
    proc = subprocess.run([sys.executable, "-m", "autotune_export.tools.cli", "inspect", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"{path.name} (vmfb): 3 groups" in proc.stdout
    for group in built.groups:
        assert f"group @{group.executable}::@{group.group}: 3 variants" in proc.stdout
        for k, (variant, config) in enumerate(zip(group.variants, group.configs)):
            line = next(ln for ln in proc.stdout.splitlines() if ln[5:].startswith(variant + " "))
            assert line.startswith("  *  " if k == 0 else "     ")  # the current choice: IREE's default
            assert line.endswith(f"lowering_config={config[0][1]}")


#: IREE's input-phase program of a private @mm that IREE inlines into @f1 and @f2 (two groups,
#: one input op: site 0), as build_program keeps it (positions of the user's input kept).
_INLINED_INPUT = """
module {
  util.func private @mm(%arg0: tensor<64x128xf32>, %arg1: tensor<128x96xf32>) -> tensor<64x96xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<64x96xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x96xf32>) -> tensor<64x96xf32>
    %2 = linalg.matmul {autotune.site = 0 : i64} ins(%arg0, %arg1 : tensor<64x128xf32>, tensor<128x96xf32>) outs(%1 : tensor<64x96xf32>) -> tensor<64x96xf32> loc("<stdin>":5:9)
    util.return %2 : tensor<64x96xf32>
  }
}
"""


def _inlined_build(frozen):
    """A ProgramBuild (no compile) whose two groups @f1_dispatch_0 / @f2_dispatch_0 share input op 0."""
    from autotune_export.program.build import ProgramBuild
    from autotune_export.program.dispatches import TunableDispatch

    cands = [CpuTiles((16, 48, 0), (8, 16, 0), (0, 0, 16)), CpuTiles((8, 96, 0), (8, 16, 0), (0, 0, 16))]
    dispatches = []
    for host in ("f1", "f2"):
        exe = f"{host}_dispatch_0"
        d = TunableDispatch(
            host, 0, exe, f"{exe}_matmul_64x96x128_f32", "linalg.matmul", [64, 96, 128], {2}, _DEFAULT,
            _DEFAULT.text(), "#iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>", list(cands),
        )
        d.site = 0
        dispatches.append(d)
    keys = [d.key for d in dispatches]
    return ProgramBuild(b"", [], dispatches, [], "", _INLINED_INPUT, dict(zip(keys, frozen)), "inl.mlir")


def test_write_back_warns_when_one_op_roots_groups_frozen_to_different_winners():
    """Finding 12 (tester, Dec 2 trial 3): f1 -> candidate1, f2 -> candidate2 on one input op:
    a warning at the op names both groups and winners; the op carries the first group's (f1's)."""
    from autotune_export.program.build import write_back

    said = []
    text = write_back(_inlined_build([1, 2]), said.append)
    assert [d.severity for d in said] == ["warning"]
    w = said[0]
    assert str(w.location) == "inl.mlir:5:9"
    assert "f1_dispatch_0_matmul_64x96x128_f32.candidate1" in w.message and "@f1_dispatch_0" in w.message
    assert "f2_dispatch_0_matmul_64x96x128_f32.candidate2" in w.message and "@f2_dispatch_0" in w.message
    assert "carries f1_dispatch_0_matmul_64x96x128_f32.candidate1" in w.message
    assert text.count("compilation_info =") == 1
    assert "distribution = [16, 48, 0]" in text and "distribution = [8, 96, 0]" not in text
    # IREE's default for f1, candidate2 for f2: the op keeps f1's default (nothing written), with the warning.
    said = []
    text = write_back(_inlined_build([0, 2]), said.append)
    assert len(said) == 1 and "carries f1_dispatch_0_matmul_64x96x128_f32 of" in said[0].message
    assert "compilation_info" not in text
    # The same winner for both: no warning, written once.
    said = []
    text = write_back(_inlined_build([2, 2]), said.append)
    assert said == [] and text.count("compilation_info =") == 1 and "distribution = [8, 96, 0]" in text


#: An elementwise add and a 63x97x129 matmul (no candidate tile divides its sizes): both keep
#: IREE's default, each with a remark at its op (tester, Dec 2 trial 3, findings 8-9).
_DEFAULT_ONLY = """#id = affine_map<(d0) -> (d0)>
func.func @add(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @odd(%a: tensor<63x129xf32>, %b: tensor<129x97xf32>) -> tensor<63x97xf32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<63x97xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<63x97xf32>) -> tensor<63x97xf32>
  %r0 = linalg.matmul ins(%a, %b : tensor<63x129xf32>, tensor<129x97xf32>) outs(%f0 : tensor<63x97xf32>) -> tensor<63x97xf32>
  return %r0 : tensor<63x97xf32>
}
"""


@pytest.mark.integration
def test_dispatches_left_at_iree_default_get_a_located_remark_saying_why():
    said = []
    built = build_program(_DEFAULT_ONLY, source_name="m.mlir", remark=said.append)
    assert built.groups == [] or all(len(g.variants) == 1 for g in built.groups)
    by_exe = {re.match(r"@(\w+)", d.message).group(1): d for d in said}
    add, odd = by_exe["add_dispatch_0"], by_exe["odd_dispatch_0"]
    assert str(add.location) == "m.mlir:4:8" and "no contraction or convolution (it has linalg.generic)" in add.message
    assert str(odd.location) == "m.mlir:15:9" and "no candidate" in odd.message and "63x97x129" in odd.message
    assert "keeps IREE's default" in add.message and "keeps IREE's default" in odd.message


def test_cli_names_write_back_when_its_path_is_a_directory(tmp_path, capsys):
    """Tester, Dec 2 trial 3, finding 9: `--write-back adir` was reported as `-o adir is a directory`."""
    src, out, adir = tmp_path / "p.mlir", tmp_path / "p.vmfb", tmp_path / "adir"
    src.write_text(PROGRAM)
    adir.mkdir()
    (tmp_path / "r.json").write_text("[]")
    rc = cli.main(["program", str(src), "--tuning-results", str(tmp_path / "r.json"), "--write-back", str(adir), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert f"error: --write-back {adir} is a directory; give a file name (e.g. {adir}/out.mlir)" in err
    assert not out.exists()


@pytest.mark.parametrize("arg", ["--iree-opt-data-tiling", "--iree-global-opt-data-tiling=true", "--iree-dispatch-creation-data-tiling"])
def test_data_tiling_is_refused_before_any_phase(arg, monkeypatch):
    """Tester, Dec 2 trial 3, finding 10: with --iree-opt-data-tiling the build failed after two
    phases on 'flow.tensor.encode' with kilobytes of IR in one line; now refused up front (no
    iree-compile runs: compile_bytes fails the test if called). `=false` is no data tiling."""
    from autotune_export.program import build as build_mod

    def no_compile(*a, **k):
        raise AssertionError("iree-compile ran")

    monkeypatch.setattr(build_mod, "compile_input", no_compile)
    with pytest.raises(DiagnosticError) as err:
        build_program(PROGRAM, iree_args=[arg])
    assert f"--iree-compile-arg={arg}: data tiling is not supported by the program build" in str(err.value)
    with pytest.raises(AssertionError, match="iree-compile ran"):
        build_program(PROGRAM, iree_args=["--iree-opt-data-tiling=false"])


def test_iree_compile_messages_in_ours_are_one_capped_line():
    """The op MLIR prints after 'failed to legalize operation ...:' is cut (first line, 300 characters)."""
    from autotune_export.program.phases import MESSAGE_CAP, IreeFailure

    dump = "%0 = flow.tensor.encode " + "x" * 5000
    report = f"Diagnostics:\n<stdin>:1:1: error: failed to legalize operation 'flow.tensor.encode': {dump}\n<stdin>:1:1: note: see op"
    got = str(IreeFailure(RuntimeError(report), "module {}"))
    assert got.startswith("failed to legalize operation 'flow.tensor.encode': %0 = flow.tensor.encode xxx")
    assert "\n" not in got and len(got) < MESSAGE_CAP + 40 and got.endswith(" more characters)")


_TWIN_MATMULS = """
util.func public @cse(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>) -> (tensor<64x96xf32>, tensor<64x96xf32>) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x96xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r0 = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%f0 : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r1 = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%f0 : tensor<64x96xf32>) -> tensor<64x96xf32>
  util.return %r0, %r1 : tensor<64x96xf32>, tensor<64x96xf32>
}
"""


def test_site_markers_do_not_keep_identical_ops_apart():
    """Tester, Dec 2 trial 3, finding 11: two identical matmuls (one dispatch in plain IREE, by its
    CSE) got two site numbers, so the program build ran the matmul twice; now one op, one site."""
    from autotune_export.program.dispatches import tag_sites

    text = tag_sites(_TWIN_MATMULS)
    assert text.count("linalg.matmul") == 1 and text.count("autotune.site = 0") == 1 and "autotune.site = 1" not in text
    assert re.search(r"util.return (%\w+), \1 :", text)


@pytest.mark.integration
def test_identical_matmuls_are_one_group_as_in_plain_iree():
    said = []
    built = build_program(_TWIN_MATMULS, source_name="cse.mlir", remark=said.append)
    assert [d.executable for d in built.dispatches] == ["cse_dispatch_0"]
    assert not any("not found" in d.message for d in said)
