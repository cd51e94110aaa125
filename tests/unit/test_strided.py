"""Strided tensors given to ``launch_to_mlir`` (issue 23, item 1): transposed and column-major
views, expanded (stride-0) inputs, slices at a storage offset, for inputs, written outputs and
tensors written in place. The module's argument is the view's storage span
(:func:`autotune_export.cuda.launch_model.storage_span`), the strides are passed as the launch
gave them, and heuristics see the view. No compilation here (the fast suite); the sm_90 builds
are tests/lit/call_sites/strided_sm90.mlir, the numbers (Triton's interpreter against the
module and numpy) test_strided_interpret below (integration)."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from autotune_export.cuda.launch_model import storage_span
from autotune_export.interop.launch import LaunchError, launch_to_mlir

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "strided"

KERNELS = '''
import triton
import triton.language as tl

SEEN = {}


def _record(args):
    x = args["x_ptr"]
    SEEN["x"] = (x.shape, x.stride(), x.is_contiguous(), x.numel())
    return 32


@triton.heuristics({"BN": _record})
@triton.jit
def scale2d(x_ptr, out_ptr, M, N, sxm, sxn, som, son, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, x * 2, mask=mask)


@triton.jit
def axpy_(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    y = y_ptr + rm[:, None] * sym + rn[None, :] * syn
    tl.store(y, tl.load(y, mask=mask) + tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask), mask=mask)
'''


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("strided") / "strided_kernels.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("strided_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["strided_kernels"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("shape,strides,kind,span_shape", [
    ((4, 8), (8, 1), "dense", (4, 8)),
    ((1, 8), (1, 1), "dense", (1, 8)),               # a size-1 dimension's stride does not matter
    ((0, 3), (1, 0), "dense", (0, 3)),               # zero elements
    ((8, 4), (1, 8), "permuted", (4, 8)),            # b.t() of a row-major (4, 8) b
    ((2, 3, 4), (1, 8, 2), "permuted", (3, 4, 2)),   # the storage's order: strides decreasing
    ((4, 8), (0, 1), "broadcast", (8,)),             # bias.expand(4, 8)
    ((4, 8), (1, 0), "broadcast", (4,)),
    ((4, 8), (0, 0), "broadcast", (1,)),             # one element for all
    ((4, 8), (16, 1), "gapped", (56,)),              # x[:, :8] of a (4, 16) x: 3 * 16 + 8
    ((5,), (2,), "gapped", (9,)),                    # x[::2]
    ((4, 4), (1, 1), "overlapping", (7,)),           # as_strided
])
def test_storage_span(shape, strides, kind, span_shape):
    s = storage_span(shape, strides)
    assert (s.kind, s.shape, s.span) == (kind, span_shape, int(np.prod(span_shape)))
    assert s.overlaps == (kind in ("broadcast", "overlapping"))


def test_storage_span_refuses_backwards_views():
    with pytest.raises(ValueError, match="negative stride"):
        storage_span((4,), (-1,))


def _grid(m, n):
    return lambda meta: ((m + meta["BM"] - 1) // meta["BM"], (n + meta["BN"] - 1) // meta["BN"])


def _strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def test_transposed_input_and_column_major_output_are_their_storage(kernels):
    """x = base.T (a (96, 40) view of a row-major (40, 96) buffer) and out a column-major
    (96, 40) output: the host function takes base's (40, 96) and returns out's storage, (40, 96);
    the strides go to the kernel as given; the heuristic sees the view."""
    base = np.empty((40, 96), np.float32)
    x = base.T
    out = np.empty((40, 96), np.float32).T
    text = launch_to_mlir(kernels.scale2d, _grid(96, 40), x, out, 96, 40, *_strides(x), *_strides(out),
                          outputs=["out_ptr"], BM=16, name="f")
    assert "util.func public @f(%arg0: tensor<40x96xf32>) -> tensor<40x96xf32>" in text
    # M, N, then the strides as the launch gave them: x (1, 96), out (1, 96)
    consts = re.findall(r"arith.constant (-?\d+) : i32", text)
    assert consts == ["96", "40", "1", "96", "1", "96"]
    assert ("// Strided: 'x_ptr' is a (96, 40) view, strides (1, 96) (permuted); the module's argument is its storage "
            "span from its first element, tensor<40x96xf32>") in text
    assert "// Strided: 'out_ptr' is a (96, 40) view, strides (1, 96) (permuted); the module's result is its" in text
    assert kernels.SEEN["x"] == ((96, 40), (1, 96), False, 96 * 40)


def test_torch_views_broadcast_and_offset(kernels):
    """torch views: an expanded row (stride 0) is its row; a dense view at a storage offset and
    a transposed one, as torch gives their strides."""
    torch = pytest.importorskip("torch")
    row = torch.empty(64, dtype=torch.float16)
    out = torch.empty(32, 64, dtype=torch.float16)
    x = row.expand(32, 64)
    text = launch_to_mlir(kernels.scale2d, _grid(32, 64), x, out, 32, 64, *x.stride(), *out.stride(),
                          outputs=["out_ptr"], BM=16, name="f")
    assert "util.func public @f(%arg0: tensor<64xf16>) -> tensor<32x64xf16>" in text
    assert "'x_ptr' is a (32, 64) view, strides (0, 1) (broadcast)" in text
    assert kernels.SEEN["x"] == ((32, 64), (0, 1), False, 32 * 64)
    buf = torch.empty(100, 64, dtype=torch.float16)
    x = buf[5:37]  # dense, at a storage offset: the view itself
    text = launch_to_mlir(kernels.scale2d, _grid(32, 64), x, out, 32, 64, *x.stride(), *out.stride(),
                          outputs=["out_ptr"], BM=16, name="f")
    assert "util.func public @f(%arg0: tensor<32x64xf16>) -> tensor<32x64xf16>" in text and "Strided" not in text
    x = buf[5:69].t()  # transposed, at an offset: its storage span from its first element
    out = torch.empty(64, 64, dtype=torch.float16)
    text = launch_to_mlir(kernels.scale2d, _grid(64, 64), x, out, 64, 64, *x.stride(), *out.stride(),
                          outputs=["out_ptr"], BM=16, name="f")
    assert "util.func public @f(%arg0: tensor<64x64xf16>) -> tensor<64x64xf16>" in text
    assert kernels.SEEN["x"] == ((64, 64), (1, 64), False, 64 * 64)


def test_in_place_column_major_and_gapped(kernels):
    """A column-major tensor updated in place is taken and returned as its storage; a slice of
    a wider buffer (rows 50 apart) as its 1-D span, gaps passed through."""
    x = np.empty((30, 40), np.float32)
    y = np.empty((40, 30), np.float32).T
    text = launch_to_mlir(kernels.axpy_, _grid(30, 40), x, y, 30, 40, *_strides(x), *_strides(y), inplace=["y_ptr"],
                          BM=16, BN=16, name="f")
    assert "util.func public @f(%arg0: tensor<30x40xf32>, %arg1: tensor<40x30xf32>) -> tensor<40x30xf32>" in text
    assert re.search(r"flow.dispatch @axpy__ex::@axpy_\(%arg0, .*, %arg1\) : \(.*\) -> %arg1", text)
    y = np.empty((32, 50), np.float32)[2:, 5:45]
    text = launch_to_mlir(kernels.axpy_, _grid(30, 40), x, y, 30, 40, *_strides(x), *_strides(y), inplace=["y_ptr"],
                          BM=16, BN=16, name="f")
    assert "-> tensor<1490xf32>" in text and "(gapped)" in text  # 29 * 50 + 40


@pytest.mark.parametrize("make,how,pattern", [
    (lambda: np.broadcast_to(np.empty(40, np.float32), (30, 40)), "outputs", r"a stride-0 \(broadcast, expanded\) dimension"),
    (lambda: np.lib.stride_tricks.as_strided(np.empty(80, np.float32), (30, 40), (4, 4)), "inplace",
     r"overlapping strides \(as_strided\)"),
])
def test_written_tensors_that_overlap_are_refused(kernels, make, how, pattern):
    x = np.empty((30, 40), np.float32)
    y = make()
    kw = {"outputs": ["out_ptr"]} if how == "outputs" else {"inplace": ["y_ptr"]}
    fn = kernels.scale2d if how == "outputs" else kernels.axpy_
    with pytest.raises(LaunchError, match=rf"argument '(out|y)_ptr' is written \({how}\) but its \(30, 40\) view, "
                                          rf"strides \(\d+, \d+\) has {pattern}: several indices reach the same element"):
        launch_to_mlir(fn, _grid(30, 40), x, y, 30, 40, *_strides(x), *_strides(y), BM=16, BN=16, **kw)


def test_gapped_output_and_backwards_view_are_refused(kernels):
    x = np.empty((30, 40), np.float32)
    out = np.empty((30, 64), np.float32)[:, :40]
    with pytest.raises(LaunchError, match=r"output 'out_ptr' is a \(30, 40\) view, strides \(64, 1\) that leaves gaps in "
                                          r"its storage .*name it in inplace=\[...\]"):
        launch_to_mlir(kernels.scale2d, _grid(30, 40), x, out, 30, 40, *_strides(x), *_strides(out),
                       outputs=["out_ptr"], BM=16)
    with pytest.raises(LaunchError, match=r"argument 'x_ptr' \(\(30, 40\) view, strides \(-40, 1\)\): negative stride"):
        launch_to_mlir(kernels.scale2d, _grid(30, 40), x[::-1], x, 30, 40, -40, 1, 40, 1, outputs=["out_ptr"], BM=16)


def _examples():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import build
        import launches
    finally:
        sys.path.remove(str(EXAMPLES))
    return build, launches


def test_examples_are_what_launch_to_mlir_writes(tmp_path):
    """examples/strided/*.mlir are launch_to_mlir's output for launches.py (regenerated here),
    and launches.py's host shapes are the host functions' arguments (what check_on_gpu.py passes)."""
    pytest.importorskip("torch")
    build, launches = _examples()
    for name, spec in launches.LAUNCHES.items():
        kept = (EXAMPLES / f"{name}.mlir").read_text()
        fresh = pathlib.Path(build.export(name, str(tmp_path))).read_text()
        strip = lambda t: re.sub(r'triton\("[^"]*"', 'triton("…"', t)  # noqa: E731 - the path is relative to the file
        assert strip(fresh) == strip(kept), name
        (sig,) = re.findall(rf"util.func public @{name}\(([^)]*)\)", kept)
        types = re.findall(r"tensor<([^>]*)>", sig)
        want = ["x".join(str(d) for d in shape) + "x" + {np.float16: "f16", np.float32: "f32", np.int32: "i32"}[dtype]
                for shape, dtype in spec["host"]]
        assert types == want, name


@pytest.mark.integration
def test_strided_interpret():
    """Every variant of every example, in Triton's interpreter: the module's dispatch as IREE
    binds it and Triton's own launch on the views give numpy's results (check_on_cpu.py); and
    the differential checker's strided-views family (4 cases: every form). The checker hands
    the interpreter torch tensors (Triton's interpreter launches on them), so it needs torch:
    CI's Triton 3.6 venv goes without it, and there the test is skipped and says so."""
    pytest.importorskip("torch", reason="check_on_cpu.py launches Triton's interpreter on torch tensors")
    env = {**os.environ}
    proc = subprocess.run([sys.executable, str(EXAMPLES / "check_on_cpu.py")], capture_output=True, text=True, env=env,
                          timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "passed: 0 failure(s)" in proc.stdout and proc.stdout.count("OK  ") >= 7 * 2 * 3
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "differential.py"), "--interpret", "--cases", "4",
                           "--families", "views"], capture_output=True, text=True, env=env, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "4 cases (0 refused), 8 variants, 0 differences" in proc.stdout


def test_host_function_reflection_names_the_strided_tensors(kernels):
    """The host function's iree.reflection carries each strided tensor (what inspect shows, for
    a .vmfb too): the parameter, the host argument/result, the view and its span's type."""
    from iree.compiler import ir

    from autotune_export import contract
    from autotune_export.frontend.reader import SourceFile, parse_source

    x = np.empty((30, 40), np.float32)
    y = np.empty((40, 30), np.float32).T
    text = launch_to_mlir(kernels.axpy_, _grid(30, 40), x, y, 30, 40, *_strides(x), *_strides(y), inplace=["y_ptr"],
                          BM=16, BN=16, name="f")
    module = parse_source(SourceFile(text, "<test>", str(ROOT)))
    (fn,) = [op for op in module.body.operations if op.operation.name == "util.func"]
    refl = ir.DictAttr(fn.attributes["iree.reflection"])
    (t,) = contract.decode_strided(ir.StringAttr(refl[contract.STRIDED_KEY]).value)
    assert t == contract.StridedTensor("y_ptr", 1, 0, [30, 40], [1, 30], "permuted", "tensor<40x30xf32>")
    assert t.describe() == ("y_ptr (argument 1, result 0): (30, 40) view, strides (1, 30), permuted: storage span "
                            "tensor<40x30xf32>")
    with pytest.raises(ValueError, match="not a list of strided tensors"):
        contract.decode_strided('[{"param": 1}]')
    # a dense launch carries none
    # (x.copy(): one tensor read and written in place is refused, test_aliasing.py)
    text = launch_to_mlir(kernels.axpy_, _grid(30, 40), x, x.copy(), 30, 40, 40, 1, 40, 1, inplace=["y_ptr"], BM=16, BN=16)
    assert "iree.reflection" not in text
