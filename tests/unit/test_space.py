"""Generated config spaces (issue 24 item 4): the constraint language and the product's
expansion (autotune_export.ir.space), the reader's space (frontend), and the Python helper
autotune_export.interop.space.product as triton.autotune takes it. Nothing compiles here."""

from __future__ import annotations

import itertools

import pytest
import triton
import triton.language as tl

from autotune_export.frontend.reader import SourceFile, parse_source
from autotune_export.interop.space import ConfigSpace, SpaceError, product
from autotune_export.ir import space as space_mod
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.walk import find_groups
from autotune_export.support.diagnostics import DiagnosticError


def test_constraint_semantics_follow_python():
    cases = ["BLOCK_M * BLOCK_N <= 32768", "1 <= A < B", "A == B or not A < B", "not (A < B and B < 3)",
             "cdiv(A, 3) >= min(A, B) - 1", "A % 3 != 0 and -A < B", "A // 2 == B"]
    for text in cases:
        c = space_mod.parse_constraint(text)
        for a, b in itertools.product(range(0, 5), range(1, 5)):
            env = {"A": a, "B": b, "BLOCK_M": a * 64, "BLOCK_N": b * 128}
            py = text.replace("cdiv(A, 3)", "(-(-A // 3))")
            assert space_mod.holds(c, env) == bool(eval(py, {"min": min}, env)), (text, env)
        # canonical text reads back to the same constraint
        assert space_mod.parse_constraint(space_mod.format_constraint(c)) == c


def test_constraint_syntax_errors_have_columns():
    with pytest.raises(space_mod.SpaceError, match="compare with '=='") as err:
        space_mod.parse_constraint("A = 1")
    assert err.value.column == 3
    with pytest.raises(space_mod.SpaceError, match="unknown function 'ceil'") as err:
        space_mod.parse_constraint("ceil(A, 2) < 3")
    assert err.value.column == 1
    with pytest.raises(space_mod.SpaceError, match="compares nothing"):
        space_mod.parse_constraint("A * B")
    with pytest.raises(space_mod.SpaceError, match="combine comparisons with 'and'"):
        space_mod.parse_constraint("A < 1 && B < 2")


def test_expand_is_the_filtered_product_in_order():
    space = space_mod.space_of([("M", [64, 128, 256], False), ("G", [8], True), ("num_warps", [4, 8], False)],
                               "M * num_warps <= 1024 and num_stages == 3")
    configs = space.expand()
    want = [[("M", m), ("G", 8), ("num_warps", w)] for m, w in itertools.product([64, 128, 256], [4, 8]) if m * w <= 1024]
    assert configs == want and len(configs) == 5 and space.size() == 6
    # Triton's defaults stand for options the space does not set: num_stages is 3.
    with pytest.raises(space_mod.SpaceError, match="leaves no config of the 6"):
        space_mod.space_of([("M", [64, 128, 256], False), ("G", [8], True), ("num_warps", [4, 8], False)],
                           "num_stages != 3").expand()
    with pytest.raises(space_mod.SpaceError, match="unknown name 'BLOK'.*did you mean 'BLOCK'") as err:
        space_mod.space_of([("BLOCK", [1], False)], "1 < BLOK").expand()
    assert err.value.column == 5


def _group(text: str) -> AutotuneGroup:
    module = parse_source(SourceFile(text, "t.mlir", "."))
    return AutotuneGroup.from_op(next(iter(find_groups(module))))


_OP = """hal.executable.source private @e {{
  hal.executable.autotuning.export @mm triton("k.py", "k") signature(c: *fp16 {{output}}, M: i32, N: i32)
      configs({configs})
      workload(M, N) grid(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N))
}}
"""


def test_reader_keeps_space_and_expansion():
    g = _group(_OP.format(configs="product(BLOCK_M in [64, 128, 256], BLOCK_N in [64, 128], GROUP_M = 8, num_warps in [4, 8]) "
                                  "where BLOCK_M*BLOCK_N <= 16384 and ((num_warps == 4) or BLOCK_M >= 128)"))
    assert g.space == [("BLOCK_M", [64, 128, 256], False), ("BLOCK_N", [64, 128], False), ("GROUP_M", [8], True),
                       ("num_warps", [4, 8], False)]
    assert g.space_where == "BLOCK_M * BLOCK_N <= 16384 and (num_warps == 4 or BLOCK_M >= 128)"
    keys = ("BLOCK_M", "BLOCK_N", "GROUP_M", "num_warps")
    assert [tuple(v for _, v in c) for c in g.configs] == [
        (64, 64, 8, 4), (64, 128, 8, 4), (128, 64, 8, 4), (128, 64, 8, 8), (128, 128, 8, 4), (128, 128, 8, 8),
        (256, 64, 8, 4), (256, 64, 8, 8)]
    assert all(tuple(k for k, _ in c) == keys for c in g.configs)
    # The printed group reads back to the same group.
    again = _group("hal.executable.source private @e {\n" + g.to_sugar("  ") + "\n}\n")
    assert (again.space, again.space_where, again.configs) == (g.space, g.space_where, g.configs)


def test_reader_space_errors_are_located():
    with pytest.raises(DiagnosticError) as err:
        _group(_OP.format(configs="product(BLOCK_M in [64], BLOCK_N in [64]) where BLOCK_M < BLOCK_Q"))
    d = err.value.diagnostics[0]
    line = _OP.format(configs="product(BLOCK_M in [64], BLOCK_N in [64]) where BLOCK_M < BLOCK_Q").splitlines()[2]
    assert (d.location.line, d.location.col) == (3, line.index("BLOCK_Q") + 1) and "unknown name 'BLOCK_Q'" in d.message


def test_python_product_is_a_triton_config_list():
    configs = product(BLOCK_M=[64, 128, 256], BLOCK_N=[64, 128], GROUP_M=8, OUT=tl.float16, num_warps=[4, 8],
                      num_stages=(3, 4), where="BLOCK_M * BLOCK_N <= 16384 and num_warps * 32 <= BLOCK_M")
    assert isinstance(configs, ConfigSpace) and all(isinstance(c, triton.Config) for c in configs)
    want = [(m, n, w, s) for m, n, w, s in itertools.product([64, 128, 256], [64, 128], [4, 8], [3, 4])
            if m * n <= 16384 and w * 32 <= m]
    got = [(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages) for c in configs]
    assert got == want and configs.size == 24 and configs.excluded == 24 - len(want)
    assert all(c.kwargs["GROUP_M"] == 8 and c.kwargs["OUT"] is tl.float16 for c in configs)
    # triton.autotune takes it as a config list.
    @triton.jit
    def k(x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr, OUT: tl.constexpr):
        pass

    tuned = triton.autotune(configs=configs, key=[])(k)
    assert len(tuned.configs) == len(want)


def test_python_product_callable_where_and_errors():
    configs = product(BLOCK=[32, 64, 128], num_warps=[2, 4], where=lambda c: c["BLOCK"] >= 32 * c["num_warps"] and c["num_stages"] == 3)
    assert [(c.kwargs["BLOCK"], c.num_warps) for c in configs] == [(64, 2), (128, 2), (128, 4)]
    with pytest.raises(SpaceError, match=r"unknown name 'BLOK'.*column 1"):
        product(BLOCK=[32], where="BLOK > 1")
    with pytest.raises(SpaceError, match="leaves no config of the 2"):
        product(BLOCK=[32, 64], where="BLOCK > 64")
    with pytest.raises(SpaceError, match="num_warps must be a power of two"):
        product(BLOCK=[32], num_warps=[3])
    with pytest.raises(SpaceError, match="names nothing"):
        product()


def test_python_product_refuses_a_value_listed_twice():
    """Tester finding 12: product(BLOCK=[64, 64]) made two identical configs (the .mlir form
    refuses 'BLOCK in [64, 64]'); True and 1 are different values, as in the .mlir form."""
    with pytest.raises(SpaceError, match=r"'BLOCK' lists the value 64 twice \(positions 0 and 2\): its configs would repeat"):
        product(BLOCK=[64, 128, 64], num_warps=[4])
    assert len(product(BLOCK=[64], FLAG=[True, 1])) == 2


def test_constraint_takes_true_and_false_as_1_and_0():
    """Tester finding 12: 'FLAG == true' was 'unknown name true', though docs/syntax.md says
    true/false count as 1/0."""
    g = _group(_OP.format(configs="product(BLOCK_M in [64, 128], BLOCK_N = 32, FLAG in [true, false]) "
                                  "where FLAG == true and BLOCK_M > false"))
    assert [dict(c) for c in g.configs] == [{"BLOCK_M": 64, "BLOCK_N": 32, "FLAG": True},
                                            {"BLOCK_M": 128, "BLOCK_N": 32, "FLAG": True}]
    assert g.space_where == "FLAG == true and BLOCK_M > false"
    assert [c.kwargs for c in product(BLOCK=[64], FLAG=[True, False], where="not FLAG == false")] == [{"BLOCK": 64, "FLAG": True}]


# --------------------------------------------------------------------------------------------
# Pruning at build time (materialize-triton-variants), on given metadata: nothing compiles.

from autotune_export.passes.materialize_triton_variants import keep_at_most, resources_refusal  # noqa: E402


def test_resources_refusal_registers_and_spills():
    assert resources_refusal({"n_regs": 128, "n_spills": 0, "num_warps": 8}) is None  # 128 * 256 = 32768
    reason = resources_refusal({"n_regs": 255, "n_spills": 0, "num_warps": 16})  # 255 * 512 = 130560
    assert reason == "needs 255 registers per thread x 512 threads = 130560 registers per block; a block gets at most 65536"
    assert resources_refusal({"n_regs": 32, "n_spills": 1656, "num_warps": 4}) is None  # spills kept by default
    assert resources_refusal({"n_regs": 32, "n_spills": 1656, "num_warps": 4}, max_spills=1656) is None
    assert resources_refusal({"n_regs": 32, "n_spills": 1656, "num_warps": 4}, max_spills=0).startswith(
        "spills 1656 registers (n_spills: local memory bytes per thread / 4), more than --max-spills 0")
    # Figures cuobjdump could not read prune nothing.
    assert resources_refusal({"n_regs": None, "n_spills": None, "num_warps": 32}, max_spills=0) is None


def test_keep_at_most_fewest_spills_then_spread():
    assert keep_at_most([0, 0, 0], 5) == [0, 1, 2]
    # 10 equals: spread over the order (every part of the space stays represented).
    assert keep_at_most([0] * 10, 4) == [0, 2, 5, 7]
    assert keep_at_most([0] * 10, 1) == [0]
    # The fewest spills first; the level the cap cuts through is spread.
    assert keep_at_most([5, 0, 9, 0, 5, 5, None], 4) == [0, 1, 3, 6]
    assert keep_at_most([5, 0, 9, 0, 5, 5, 0], 5) == [0, 1, 3, 4, 6]


# --------------------------------------------------------------------------------------------
# The benchmark's 64-config space (benchmarks/configs/matmul_space64.mlir and .py).

import pathlib  # noqa: E402
import runpy  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPACE64 = ROOT / "benchmarks" / "configs" / "matmul_space64.mlir"


def _space64_group() -> AutotuneGroup:
    return _group(SPACE64.read_text())


def test_benchmark_space_mlir_and_python_agree():
    g = _space64_group()
    assert len(g.configs) == 64
    configs = runpy.run_path(str(SPACE64.with_suffix(".py")))["CONFIGS"]
    as_python = [sorted({**c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages}.items()) for c in configs]
    assert as_python == [sorted(cfg) for cfg in g.configs]


@pytest.mark.integration
@pytest.mark.slow  # 128 Triton compiles: sh scripts/test.sh slow (CI runs it)
def test_space64_builds_for_sm_90(tmp_path):
    """64 configs of examples/matmul's kernel from a generated space: every one compiles for
    sm_90 (none is pruned: each fits its shared memory) and the module holds 64 variants (+64
    specialized) under one group, with their configs in the space's order. The module is
    checked as materialized (``--emit mlir``); test_space_builds_a_vmfb builds a .vmfb of it
    (benchmarks/build_gpu_inputs.py builds the whole space's). The 128 Triton compiles took 13
    minutes cold on the 2-core development machine at load average 20 (a rebuild compiles
    nothing: the variant cache)."""
    from autotune_export.tools import cli
    from autotune_export.tools.inspection import inspect_path

    out = tmp_path / "space64.mlir"
    assert cli.main([str(SPACE64), "--emit", "mlir", "--target", "sm_90", "-q", "-o", str(out)]) == 0
    [g] = inspect_path(str(out), resources=False).groups
    base = [v for v in g.variants if v.specialized_of is None]
    assert len(base) == 64 and len(g.specialized) == 64 and not g.pruned
    want = _space64_group().configs
    assert [dict(v.config) for v in base] == [dict(c) for c in want]


@pytest.mark.integration
@pytest.mark.slow  # 128 Triton compiles: sh scripts/test.sh slow (CI runs it)
def test_space_builds_a_vmfb(tmp_path):
    """The space builds into a .vmfb whose group holds the variants in the space's order: 16 of
    the 64 configs (``--max-variants 16``: spread over the space; 32 exports with the
    specializations), so the test stays short; the variants come from the cache that
    test_space64_builds_for_sm_90 fills. iree-compile's time is linear in a group's exports
    (docs/limits.md, "Build time of large groups"; tests/unit/test_lowering_scale.py checks
    the host code that made it quadratic): the whole 128-export module took 46 CPU-seconds
    (339 s of wall time at load average 20 on the 2-core development machine; over an hour
    before), this one's 32 exports about a quarter of that. Run alone (cold cache: all 128
    Triton compiles of the space, then the pruning to 16) it took 24 minutes at load average
    15-22 there; after test_space64_builds_for_sm_90 in one session, only its iree-compile."""
    from autotune_export.tools import cli
    from autotune_export.tools.inspection import inspect_path

    out = tmp_path / "space16.vmfb"
    assert cli.main([str(SPACE64), "--emit", "vmfb", "--target", "sm_90", "--max-variants", "16", "-q", "-o", str(out)]) == 0
    [g] = inspect_path(str(out), resources=False).groups
    base = [v for v in g.variants if v.specialized_of is None]
    want = [dict(c) for c in _space64_group().configs]
    got = [dict(v.config) for v in base]
    assert len(base) == 16 and len(g.specialized) == 16
    # In the space's order, spread over it (every BLOCK_M of the space stays represented).
    positions = [want.index(c) for c in got]
    assert positions == sorted(positions) and {c["BLOCK_M"] for c in got} == {64, 128, 256}


_SPACE_KERNEL = '''
import triton
import triton.language as tl
from autotune_export.interop.space import product


@triton.autotune(configs=product(BLOCK=[64, 128, 256, 512], num_warps=[2, 4, 8], where="BLOCK >= 32 * num_warps"),
                 key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
'''


def test_launch_to_mlir_writes_a_product_space(tmp_path):
    """A kernel tuned over product(...) exports through launch_to_mlir with every config of the
    space, in its order (nothing compiles)."""
    import importlib.util
    import sys

    import numpy as np

    from autotune_export.interop.launch import launch_to_mlir

    path = tmp_path / "space_kernels.py"
    path.write_text(_SPACE_KERNEL)
    spec = importlib.util.spec_from_file_location("space_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["space_kernels"] = mod
    spec.loader.exec_module(mod)
    x, y = np.empty(4096, np.float32), np.empty(4096, np.float32)
    text = launch_to_mlir(mod.scale_kernel, lambda meta: (4096 // meta["BLOCK"],), x, y, 4096, outputs=["y_ptr"],
                          output=tmp_path / "scale.mlir")
    g = _group(text.replace('"space_kernels.py"', f'"{path}"'))
    got = [(dict(c)["BLOCK"], dict(c)["num_warps"]) for c in g.configs]
    assert got == [(b, w) for b in (64, 128, 256, 512) for w in (2, 4, 8) if b >= 32 * w] and len(got) == 9
