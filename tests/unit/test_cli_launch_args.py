"""What the CLI's Triton form hands the functions around a launch (issue 23 item 2): the
heuristics and pruners of a ``triton("file.py", "kernel")`` group see each tensor as the tensor
the dispatch binds (IREE's binding rule), ``.shape``, ``.numel()``, ``.stride()`` (dense, as
IREE's buffers are), ``.dtype`` and ``.element_size()``, through the one model of Triton's
launch (:class:`autotune_export.cuda.launch_model.TensorArgument`); what is not known (a dynamic
shape, ``.data_ptr()``) is a located error naming it. Planned as materialize-triton-variants
plans (``plan_group``): no Triton compile."""

from __future__ import annotations

import pytest

from autotune_export.frontend.reader import SourceFile, parse_source
from autotune_export.ir.walk import executable_sources, groups_of
from autotune_export.passes.base import PassContext
from autotune_export.passes.materialize_triton_variants import MaterializeTritonVariants
from autotune_export.support.diagnostics import DiagnosticError

KERNELS = '''
import triton
import triton.language as tl

SEEN = []


def _block(args):
    x = args["x_ptr"]
    SEEN.append((x.shape, x.numel(), x.stride(), x.stride(1), x.dim(), x.element_size(), str(x.dtype), len(x),
                 x.is_contiguous(), args["out_ptr"].shape))
    return 64 if x.numel() < 1000 else 128


@triton.heuristics({"BLOCK": _block, "ROW": lambda args: args["x_ptr"].stride(0),
                    "COLS": lambda args: args["x_ptr"].shape[1]})
@triton.jit
def rows(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ROW: tl.constexpr, COLS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * ROW + COLS, mask=offs < n)


@triton.heuristics({"BLOCK": lambda args: 128 if args["x_ptr"].data_ptr() % 16 == 0 else 64})
@triton.jit
def asks_pointer(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def fits(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= named_args["x_ptr"].shape[0]]


@triton.autotune([triton.Config({"BLOCK": b}) for b in (128, 256, 512, 1024)], key=["n"],
                 prune_configs_by={"early_config_prune": fits})
@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
'''


@pytest.fixture
def kernel_dir(tmp_path):
    (tmp_path / "cli_args_kernels.py").write_text(KERNELS)
    return tmp_path


def _plan(kernel_dir, text: str):
    source = SourceFile(text, "t.mlir", str(kernel_dir))
    module = parse_source(source)
    remarks = []
    ctx = PassContext(source=source, remark=remarks.append)
    (src,) = executable_sources(module)
    (op,) = groups_of(src)
    item = MaterializeTritonVariants(target="sm_90").plan_group(ctx, module, src, op)
    return item, [d.message for d in remarks]


def _module(kernel: str, signature: str, host: str, configs: str = "", grid: str = "cdiv(n, BLOCK)") -> str:
    return (f"hal.executable.source private @ex {{\n  hal.executable.autotuning.export @g\n"
            f'      triton("cli_args_kernels.py", "{kernel}")\n      signature({signature})\n'
            f"{configs}      workload(n)\n      grid({grid})\n}}\n{host}")


ROWS_HOST = """
util.func public @f(%x: tensor<8x32xf16>) -> tensor<8x32xf16> {
  %n = arith.constant 256 : index
  %ni = arith.constant 256 : i32
  %y = flow.dispatch @ex::@g[%n](%x, %ni) : (tensor<8x32xf16>, i32) -> tensor<8x32xf16>
  util.return %y : tensor<8x32xf16>
}
"""


def test_heuristics_see_the_bound_tensors(kernel_dir):
    item, _ = _plan(kernel_dir, _module("rows", "x_ptr: *fp16, out_ptr: *fp16 {output}, n: i32", ROWS_HOST,
                                        "      configs([{num_warps = 4}])\n", "cdiv(n, 64)"))
    assert item.constexprs == [{"BLOCK": 64, "ROW": 32, "COLS": 32}]
    import sys

    seen = [m for m in sys.modules.values() if getattr(m, "__file__", "") == str(kernel_dir / "cli_args_kernels.py")]
    (x_seen,) = {tuple(map(str, s)) for s in seen[0].SEEN}
    dtype = x_seen[6]
    assert x_seen[:6] == ("(8, 32)", "256", "(32, 1)", "1", "2", "2") and dtype in ("torch.float16", "fp16")
    assert x_seen[7:] == ("8", "True", "(8, 32)")


def test_dynamic_shape_is_a_located_error_naming_it(kernel_dir):
    host = """
util.func public @f(%x: tensor<?x32xf16>, %m: index) -> tensor<?x32xf16> {
  %n = arith.constant 256 : index
  %ni = arith.constant 256 : i32
  %y = flow.dispatch @ex::@g[%n](%x, %ni) : (tensor<?x32xf16>{%m}, i32) -> tensor<?x32xf16>{%m}
  util.return %y : tensor<?x32xf16>
}
"""
    with pytest.raises(DiagnosticError) as info:
        _plan(kernel_dir, _module("rows", "x_ptr: *fp16, out_ptr: *fp16 {output}, n: i32", host,
                                  "      configs([{num_warps = 4}])\n", "cdiv(n, 64)"))
    assert str(info.value).startswith(
        "t.mlir:5:7: error: triton.heuristics for 'BLOCK' needs run-time argument 'x_ptr.shape' (a tensor's .shape, "
        ".numel() and .stride() are known where every dispatch binds it a tensor of the same static shape); give "
        "'BLOCK' in every config")


def test_what_no_tensor_answers_is_named(kernel_dir):
    with pytest.raises(DiagnosticError) as info:
        _plan(kernel_dir, _module("asks_pointer", "x_ptr: *fp16, out_ptr: *fp16 {output}, n: i32", ROWS_HOST,
                                  "      configs([{num_warps = 4}])\n", "cdiv(n, 64)"))
    assert "triton.heuristics for 'BLOCK' needs run-time argument 'x_ptr.data_ptr'" in str(info.value)
    assert str(info.value).startswith("t.mlir:5:7: error: ")


def test_pruners_see_each_dispatch_tensor(kernel_dir):
    """Each dispatch's own tensor: one of 256 elements keeps BLOCK 128 and 256, one of 512
    keeps 512 too; the group compiles what some dispatch keeps, and the first dispatch may run
    only its own two (issue 21.5: main kept only what every dispatch keeps)."""
    host = """
util.func public @f(%x: tensor<256xf32>, %z: tensor<512xf32>) -> (tensor<256xf32>, tensor<512xf32>) {
  %n = arith.constant 256 : index
  %ni = arith.constant 256 : i32
  %y = flow.dispatch @ex::@g[%n](%x, %ni) : (tensor<256xf32>, i32) -> tensor<256xf32>
  %w = flow.dispatch @ex::@g[%n](%z, %ni) : (tensor<512xf32>, i32) -> tensor<512xf32>
  util.return %y, %w : tensor<256xf32>, tensor<512xf32>
}
"""
    item, remarks = _plan(kernel_dir, _module("scale", "x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32", host))
    assert [dict(c)["BLOCK"] for c in item.configs] == [128, 256, 512]
    assert item.allowed == ((0, (0, 1)),)
    assert any("config 2 {BLOCK = 512" in r and "pruned for dispatch 0" in r for r in remarks), remarks
    assert not any("pruned for dispatch 1" in r and "BLOCK = 512" in r for r in remarks), remarks


def test_pruners_see_a_dynamic_shape_on_the_tuning_workload(kernel_dir):
    """A tensor of dynamic shape: its dimension operand evaluated on tune_workload(...), as a
    scalar's value is (the remark says the pruning saw the workload)."""
    host = """
util.func public @f(%x: tensor<?xf32>, %ni: i32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %len = tensor.dim %x, %c0 : tensor<?xf32>
  %y = flow.dispatch @ex::@g[%len](%x, %ni) : (tensor<?xf32>{%len}, i32) -> tensor<?xf32>{%len}
  util.return %y : tensor<?xf32>
}
"""
    text = _module("scale", "x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32", host).replace(
        "      workload(n)\n", "      workload(n)\n      tune_workload(tensor<256xf32>, 256 : i32)\n")
    item, remarks = _plan(kernel_dir, text)
    assert [dict(c)["BLOCK"] for c in item.configs] == [128, 256]
    with pytest.raises(DiagnosticError, match="reads argument 'x_ptr.shape', which is not known when exporting"):
        _plan(kernel_dir, text.replace("      tune_workload(tensor<256xf32>, 256 : i32)\n", ""))
