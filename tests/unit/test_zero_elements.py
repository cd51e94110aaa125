"""Zero-element tensors (issue 23 item 5): an empty optional input (``torch.empty(0)`` for a bias
the kernel never reads) and an empty result build, tune and run. Before, iree-compile failed in
a verifier on the benchmark entries: a one-element slice of an empty result ("offset 0 is
out-of-bounds: 0 >= 0") and a barrier over a zero-size fake fill ('util.optimization_barrier'
op failed to verify ... in iree-stream-refine-usage). Real IREE execution on the CPU
(local-task); the decision comes from given timings, never the wall clock."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.runtime.tuner import AutotunedModule, GivenTimings
from autotune_export.tools import cli

DATA = pathlib.Path(__file__).parent / "data"
TIMES = {"mul": 2.0, "add": 1.0}


@pytest.fixture(scope="module")
def vmfb(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(DATA / "cpu_empty_operand.mlir")


def test_bench_entry_has_no_fill_barrier_or_slice_of_an_empty_tensor(tmp_path):
    out = tmp_path / "e.mlir"
    assert cli.main([str(DATA / "cpu_empty_operand.mlir"), "--emit", "iree", "--backend", "llvm-cpu", "-o", str(out)]) == 0
    text = out.read_text()
    bench = text[text.index("util.func public @__autotune.empty_ex.twice.bench.0("):]
    bench = bench[:bench.index("\n  }\n")]
    # Only the non-empty result is kept alive: 8 unrolled one-element slices of tensor<?xf32>.
    assert bench.splitlines()[0].endswith("(%arg0: index) -> (" + ", ".join(["tensor<1xf32>"] * 8) + ") {")
    assert "tensor.empty() : tensor<0xf32>" in bench
    for line in bench.splitlines():
        if "optimization_barrier" in line or "extract_slice" in line or "linalg.generic" in line:
            assert "0xf32" not in line and "0xi32" not in line, line


def test_tunes_and_runs_with_an_empty_operand_and_result(vmfb, tmp_path):
    m = AutotunedModule(vmfb, driver="local-task", cache=tmp_path / "tuning.json", benchmarker=GivenTimings(TIMES),
                        warmup_ms=5, rep_ms=20)
    x = np.linspace(-3, 3, 257, dtype=np.float32)
    none = np.empty(0, np.float32)
    for k in range(2):
        m.select("twice", k)
        y, empty = m("twice", x, none)
        np.testing.assert_array_equal(y, 2 * x)
        assert empty.shape == (0,) and empty.dtype == np.float32
    timings = m.autotune()["empty_ex::twice"]
    assert {t.variant: t.median_ms for t in timings} == TIMES
    assert m.chosen["empty_ex::twice"] == "add"
    y, _ = m("twice", x, none)
    np.testing.assert_array_equal(y, 2 * x)


def test_empty_workload_for_a_dynamic_size_is_refused(tmp_path, capsys):
    src = (DATA / "cpu_group.mlir").read_text().replace("tune_workload(tensor<65536xf32>)", "tune_workload(tensor<0xf32>)")
    path = tmp_path / "empty_tune.mlir"
    path.write_text(src)
    out = tmp_path / "out.vmfb"
    assert cli.main([str(path), "--emit", "vmfb", "--backend", "llvm-cpu", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    line = next(i for i, l in enumerate(src.splitlines(), 1) if "hal.executable.autotuning.export @scale" in l)
    assert f"{path}:{line}:3: error: tune_workload value 0 (tensor<0xf32>) has no elements, but argument 0 of @scale " \
           "(tensor<?xf32>) has a dynamic size there (dimension 0)" in err
    assert "Traceback" not in err and not out.exists()


def test_launch_with_an_empty_optional_input_exports_it_as_is(tmp_path):
    """``kernel[grid](x, torch.empty(0), out, ...)``: the empty tensor is a tensor<0xf16> argument
    and operand, its pointer parameter a plain *fp16 (as Triton types it)."""
    import importlib.util

    import triton.language as tl

    from autotune_export.interop.launch import launch_to_mlir

    path = pathlib.Path(__file__).resolve().parents[1] / "lit" / "Inputs" / "call_site_kernels.py"
    spec = importlib.util.spec_from_file_location("call_site_kernels_zero", path)
    kernels = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernels)
    x, out = np.empty(256, np.float16), np.empty(256, np.float16)
    text = launch_to_mlir(kernels.scale_bias_kernel, (2,), x, np.empty(0, np.float16), out, 1.5, 256, True,
                          outputs=["out_ptr"], BLOCK=128, OUT_DTYPE=tl.float16, output=tmp_path / "k.mlir")
    assert "signature(x_ptr: *fp16, bias_ptr: *fp16, out_ptr: *fp16 {output}, alpha: fp32, n: i32, flag: i1)" in text
    assert "util.func public @main(%arg0: tensor<256xf16>, %arg1: tensor<0xf16>) -> tensor<256xf16>" in text
    assert ": (tensor<256xf16>, tensor<0xf16>, f32, i32, i1) -> tensor<256xf16>" in text
