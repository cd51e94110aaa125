"""autotune_export.interop.launch.launch_to_mlir: a PyTorch-style launch ``kernel[grid](x, y, out,
n, BLOCK=1024)`` as a module. No compilation (the fast suite): what is checked is the module
text; the README's tutorial (tests/unit/test_readme_tutorial.py) compiles and runs one."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from autotune_export.frontend.reader import SourceFile, find_groups, parse_source
from autotune_export.interop.launch import LaunchError as JaxTritonError  # launch_to_mlir raises its own error type
from autotune_export.interop.launch import launch_to_mlir
from autotune_export.ir.group import AutotuneGroup

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 512}, num_warps=8)],
                 key=["n"])
@triton.jit
def split_kernel(x_ptr, lo_ptr, scale, hi_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(lo_ptr + offs, x * scale, mask=mask)
    tl.store(hi_ptr + offs, x, mask=mask)


@triton.jit
def warps_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, num_warps: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * num_warps, mask=offs < n)


@triton.jit
def bump(a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(a_ptr + offs, tl.load(a_ptr + offs) + 1)
    tl.store(b_ptr + offs, tl.load(b_ptr + offs) * 100)


SEEN = {}


def _is_f32(args):
    SEEN["heuristic"] = (args["x_ptr"].dtype, args["x_ptr"].shape, args["x_ptr"].numel(), args["x_ptr"].stride(),
                         args["x_ptr"].element_size())
    import torch  # the heuristic runs only in the test that has torch

    return args["x_ptr"].dtype == torch.float32


@triton.heuristics({"F32": _is_f32})
@triton.jit
def dtype_heuristic(x_ptr, y_ptr, n, BLOCK: tl.constexpr, F32: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if F32:
        x = x * 2
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.heuristics({"F32": lambda args: args["x_ptr"].data_ptr() % 16 == 0})
@triton.jit
def asks_data_ptr(x_ptr, y_ptr, n, BLOCK: tl.constexpr, F32: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _keep_small(configs, named_args, **kwargs):
    SEEN["pruner"], SEEN["pruner_kwargs"] = dict(named_args), dict(kwargs)
    return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 512})], key=["n"],
                 prune_configs_by={"early_config_prune": _keep_small})
@triton.jit
def pruned(x_ptr, y_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


def _zero_acc(nargs):
    nargs["acc_ptr"].zero_()


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256}, pre_hook=_zero_acc)],
                 key=["n"])
@triton.jit
def hooked_sum(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


def _keep_by_keyword(configs, named_args, **kwargs):
    SEEN["kw_pruner"], SEEN["kw_pruner_kwargs"] = dict(named_args), dict(kwargs)
    return [c for c in configs if c.kwargs["BLOCK"] <= kwargs["n"]]


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 512})], key=["n"],
                 prune_configs_by={"early_config_prune": _keep_by_keyword})
@triton.jit
def pruned_by_keyword(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"],
                 reset_to_zero=["acc_ptr"])
@triton.jit
def accumulate(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


@triton.jit
def add_into(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
'''


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("launch") / "launch_kernels.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("launch_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["launch_kernels"] = mod
    spec.loader.exec_module(mod)
    return mod


class FakeTorchTensor:
    """What launch_to_mlir reads of a torch tensor: .shape and a dtype printed torch.NAME."""

    class _Dtype:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return f"torch.{self.name}"

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), self._Dtype(dtype)


def _group(text):
    module = parse_source(SourceFile(text, "<test>", str(ROOT)))
    (op,) = find_groups(module)
    return AutotuneGroup.from_op(op)


def test_pytorch_launch_order(kernels):
    x, y, out = (np.empty(4096, np.float32) for _ in range(3))  # three buffers: one storage for a written one is refused
    grid = lambda meta: ((4096 + meta["BLOCK"] - 1) // meta["BLOCK"],)  # noqa: E731
    text = launch_to_mlir(kernels.add_kernel, grid, x, y, out, 4096, outputs=["out_ptr"], BLOCK=1024, name="add")
    group = _group(text)
    # the kernel's own parameter order, out_ptr in the middle, marked {output}
    assert [(p.name, p.type, p.output) for p in group.signature] == [
        ("x_ptr", "*fp32", False), ("y_ptr", "*fp32", False), ("out_ptr", "*fp32", True), ("n", "i32", False)]
    assert group.configs == [[("BLOCK", 1024), ("num_warps", 4), ("num_stages", 3)]]
    assert "util.func public @add(%arg0: tensor<4096xf32>, %arg1: tensor<4096xf32>) -> tensor<4096xf32>" in text
    assert "%c4096_i32 = arith.constant 4096 : i32" in text
    assert "flow.dispatch @add_kernel_ex::@add_kernel(%arg0, %arg1, %c4096_i32)" in text
    assert text.startswith("// Generated by autotune_export.interop.launch.launch_to_mlir from kernel 'add_kernel'.")
    # outputs by position mean the same
    assert launch_to_mlir(kernels.add_kernel, grid, x, y, out, 4096, outputs=[2], BLOCK=1024, name="add") == text


def test_autotuned_kernel_two_outputs_and_torch_dtypes(kernels, tmp_path):
    x, lo, hi = (FakeTorchTensor((1000,), "float16") for _ in range(3))
    out = tmp_path / "build" / "split.mlir"
    text = launch_to_mlir(kernels.split_kernel, (8,), x, lo, 0.5, hi, 1000, outputs=["hi_ptr", "lo_ptr"], output=out)
    assert out.read_text() == text
    group = _group(text)
    assert [(p.name, p.type, p.output) for p in group.signature] == [
        ("x_ptr", "*fp16", False), ("lo_ptr", "*fp16", True), ("scale", "fp32", False), ("hi_ptr", "*fp16", True),
        ("n", "i32", False)]
    assert [dict(c)["BLOCK"] for c in group.configs] == [128, 512]  # every triton.autotune config
    # results in kernel order (lo, then hi), whatever the order of `outputs`
    assert "-> (tensor<1000xf16>, tensor<1000xf16>)" in text and "util.return %0#0, %0#1" in text
    # the kernel named relative to the written module
    assert not pathlib.Path(group.triton[0]).is_absolute()
    assert (out.parent / group.triton[0]).resolve() == pathlib.Path(kernels.__file__).resolve()


@pytest.mark.parametrize("call,message", [
    (lambda k, a: launch_to_mlir(k.add_kernel, 1, a, a, a, outputs=["out_ptr"], BLOCK=64), "passes 3 positional argument"),
    (lambda k, a: launch_to_mlir(k.add_kernel, 1, a, a, a, 8, outputs=["out"], BLOCK=64), "'out' is not a non-constexpr"),
    (lambda k, a: launch_to_mlir(k.add_kernel, 1, a, a, a, 8, outputs=["n"], BLOCK=64), "'n' is int, not a tensor"),
    (lambda k, a: launch_to_mlir(k.add_kernel, 1, a, a, a, 8, outputs=[], BLOCK=64), "names no parameter"),
    (lambda k, a: launch_to_mlir(k.add_kernel, 1, a, a, a, 8, outputs=[7], BLOCK=64), "position 7 is not an argument"),
    (lambda k, a: launch_to_mlir(k.add_kernel, 1, a, a, a, 8, outputs=[2, "out_ptr"], BLOCK=64), "named twice"),
])
def test_errors(kernels, call, message):
    with pytest.raises(JaxTritonError, match=message):
        call(kernels, np.empty(8, np.float32))


def test_constexpr_named_like_an_option_takes_its_value(kernels):
    """``num_warps: tl.constexpr`` (Liger's sparsemax): Triton binds the launch's num_warps to the
    option and the parameter; the group's config holds it once, as the option."""
    x = np.empty(256, np.float32)
    text = launch_to_mlir(kernels.warps_kernel, (2,), x, x.copy(), 256, outputs=["y_ptr"], BLOCK=128, num_warps=8)
    group = _group(text)
    assert group.configs == [[("BLOCK", 128), ("num_warps", 8), ("num_stages", 3)]]


def test_in_place_and_keyword_arguments(kernels):
    """inplace=: the host takes the tensor the kernel reads and writes and returns it (the
    dispatch's result tied to its operand), and the group does not zero it."""
    x, y = np.empty(1000, np.float32), np.empty(1000, np.float32)
    text = launch_to_mlir(kernels.add_into, (8,), y_ptr=y, x_ptr=x, n=1000, inplace=["x_ptr"], BLOCK=128)
    group = _group(text)
    assert group.reset_to_zero in (None, [])
    assert "util.func public @main(%arg0: tensor<1000xf32>, %arg1: tensor<1000xf32>) -> tensor<1000xf32>" in text
    assert "-> %arg0" in text and "flow.tensor.splat" not in text
    assert launch_to_mlir(kernels.add_into, (8,), x, y, 1000, inplace=[0], BLOCK=128) == text


@pytest.mark.parametrize("n, ttype, literal", [
    (4096, "i32", "4096 : i32"),
    (2**31 - 1, "i32", "2147483647 : i32"),
    (2**31, "i64", "2147483648 : i64"),         # Triton's JIT: i64 (jax-triton: u32)
    (2**32 - 1, "i64", "4294967295 : i64"),
    (2**32, "i64", "4294967296 : i64"),
    (-(2**31) - 1, "i64", "-2147483649 : i64"),
])
def test_ints_typed_as_triton_jit_types_them(kernels, n, ttype, literal):
    """An int argument of a launch has the type Triton's JIT gives it (runtime/jit.py)."""
    x, y, out = (np.empty(64, np.float32) for _ in range(3))
    text = launch_to_mlir(kernels.add_kernel, 1, x, y, out, n, outputs=["out_ptr"], BLOCK=64)
    assert [(p.name, p.type) for p in _group(text).signature][-1] == ("n", ttype)
    assert f"arith.constant {literal}" in text


def test_call_site_that_asks_the_gpu_runs_under_answering_for_target(kernels):
    """A wrapper that sizes its grid by the SM count and allocates its output on "cuda" when it
    is called (not when imported) runs on this GPU-less machine inside answering_for_target:
    torch and Triton's driver answer for the target's part, the output is a meta tensor, and
    the launch it makes exports; the stand-ins end with the block."""
    torch = pytest.importorskip("torch")
    import triton

    from autotune_export.cuda.stub_driver import StubDriverError
    from autotune_export.interop.launch import answering_for_target

    def wrapper(x):  # as a library writes it
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        smem = triton.runtime.driver.active.utils.get_device_properties(0)["max_shared_mem"]
        out = torch.empty_like(x, device="cuda")
        return launch_to_mlir(kernels.add_kernel, (sms,), x, x.clone(), out, x.numel(), outputs=["out_ptr"], BLOCK=256,
                              target="sm_90"), out, smem

    available = torch.cuda.is_available()
    x = torch.ones(132 * 256)
    for target, sms in (("sm_90", 132), ("sm_80", 108)):
        with answering_for_target(target):
            text, out, smem = wrapper(x)
            with pytest.raises(StubDriverError, match="get_current_stream inside answering_for_target"):
                triton.runtime.driver.active.get_current_stream()
        assert out.device.type == "meta" and smem == {"sm_90": 232448, "sm_80": 166912}[target]
        assert f"grid({sms})" in text and "tensor<33792xf32>" in text
    assert torch.cuda.is_available() == available  # restored
    with pytest.raises(ValueError, match="unsupported CUDA target 'sm_61'"):
        with answering_for_target("sm_61"):
            pass


def test_host_tensor_descriptor_is_refused_by_name(kernels):
    """A triton.tools.tensor_descriptor.TensorDescriptor (a host-side TMA descriptor) is refused
    naming the parameter, not as an unknown kind of argument."""
    torch = pytest.importorskip("torch")
    from triton.tools.tensor_descriptor import TensorDescriptor

    x = torch.empty(64, 64, dtype=torch.float16, device="meta")
    desc = TensorDescriptor.from_tensor(x, [32, 32])
    with pytest.raises(JaxTritonError, match=r"parameter 'x_ptr' is a tensor descriptor \(tensordesc<float16\[32, 32\]>\): "
                                             r".*IREE's dispatch ABI .* cannot carry"):
        launch_to_mlir(kernels.add_kernel, 1, desc, x, torch.empty_like(x), 64, outputs=["out_ptr"], BLOCK=64)


def test_in_place_tensors_named_out_of_parameter_order_keep_their_buffers(kernels):
    """Issue 21.2: ``inplace=["b_ptr", "a_ptr"]`` bound a's host argument to b's parameter and the
    reverse (``bump(a=5, b=7)`` gave (8, 500)). Each in-place tensor is the dispatch operand at
    its own parameter's place, and its result is tied to it."""
    a, b = np.empty(16, np.float32), np.empty(16, np.float32)
    text = launch_to_mlir(kernels.bump, (1,), a, b, inplace=["b_ptr", "a_ptr"], BLOCK=16)
    assert "util.func public @main(%arg0: tensor<16xf32>, %arg1: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)" in text
    assert ("flow.dispatch @bump_ex::@bump(%arg0, %arg1) : (tensor<16xf32>, tensor<16xf32>) -> (%arg0, %arg1)"
            in text), text
    assert launch_to_mlir(kernels.bump, (1,), a, b, inplace=["a_ptr", "b_ptr"], BLOCK=16) == text
    # different shapes: a mix-up would give a function whose argument types do not match the kernel's order
    text = launch_to_mlir(kernels.bump, (1,), np.empty(16, np.float32), np.empty(32, np.float32),
                          inplace=["b_ptr", "a_ptr"], BLOCK=16)
    assert "(tensor<16xf32>, tensor<32xf32>) -> (%arg0, %arg1)" in text and "@main(%arg0: tensor<16xf32>, %arg1: tensor<32xf32>)" in text


def test_own_error_type_and_header(kernels):
    """launch_to_mlir raises LaunchError (not jax-triton's error) and names itself in the header."""
    from autotune_export.interop import jax_triton, launch

    assert not issubclass(launch.LaunchError, jax_triton.JaxTritonError)
    with pytest.raises(launch.LaunchError, match="names no parameter"):
        launch_to_mlir(kernels.add_kernel, 1, *(np.empty(8, np.float32) for _ in range(3)), 8, outputs=[], BLOCK=64)
    x = np.empty(8, np.float32)
    with pytest.raises(launch.LaunchError, match="no value for constexpr parameter 'BLOCK'"):
        launch_to_mlir(kernels.add_kernel, 1, x, x.copy(), x.copy(), 8, outputs=["out_ptr"])
    text = launch_to_mlir(kernels.bump, (1,), x, x.copy(), inplace=["a_ptr", "b_ptr"], BLOCK=8)
    assert text.startswith("// Generated by autotune_export.interop.launch.launch_to_mlir (in place: a_ptr, b_ptr) from "
                           "kernel 'bump'.")
    assert "jax_triton" not in text


@pytest.mark.parametrize("kw,message", [
    ({"BLOCK": 128}, r"Conflicting meta-parameters: BLOCK: given to the triton.autotune kernel 'split_kernel'"),
    ({"num_warps": 8}, r"num_warps = 8 is given to the triton.autotune kernel 'split_kernel'.*got multiple values"),
])
def test_metaparameter_an_autotuner_sets_is_triton_s_error(kernels, kw, message):
    """Triton's Autotuner raises for a launch keyword its configs also set (ValueError in
    _bench; with one config the final run's TypeError); it never narrows the configs."""
    from autotune_export.interop.launch import LaunchError

    x = np.empty(1000, np.float16)
    with pytest.raises(LaunchError, match=message):
        launch_to_mlir(kernels.split_kernel, (8,), x, x.copy(), 0.5, x.copy(), 1000, outputs=["hi_ptr", "lo_ptr"], **kw)


def test_heuristics_see_torch_dtypes_and_tensor_properties(kernels):
    """Issue 21.8: ``args["x"].dtype == torch.float32`` held False for a torch tensor (the dtype
    reached the heuristic as the string "float32"): a different kernel than Triton builds."""
    torch = pytest.importorskip("torch", reason="the heuristic compares with torch dtypes")
    for dtype, f32 in ((torch.float32, True), (torch.float16, False)):
        x = torch.empty(64, 32, dtype=dtype, device="meta")
        text = launch_to_mlir(kernels.dtype_heuristic, (4,), x, torch.empty_like(x), 2048, outputs=["y_ptr"], BLOCK=512)
        assert dict(_group(text).configs[0])["F32"] is f32
        assert kernels.SEEN["heuristic"] == (dtype, (64, 32), 2048, (32, 1), x.element_size())
    # numpy arrays stand for the torch tensors of their dtype
    text = launch_to_mlir(kernels.dtype_heuristic, (4,), *(np.empty(8, np.float32) for _ in range(2)), 8, outputs=["y_ptr"], BLOCK=8)
    assert dict(_group(text).configs[0])["F32"] is True


def test_what_a_stand_in_cannot_answer_is_named(kernels):
    from autotune_export.interop.launch import LaunchError

    x = np.empty(8, np.float32)
    with pytest.raises(LaunchError, match=r"triton.heuristics for 'F32' '<lambda>' reads argument 'x_ptr.data_ptr', "
                                          "which is not known when exporting"):
        launch_to_mlir(kernels.asks_data_ptr, (1,), x, x.copy(), 8, outputs=["y_ptr"], BLOCK=8)


def test_grid_sees_every_argument_and_pruner_positional_constexprs(kernels):
    """Issue 23.2: Triton's launcher calls grid(bound_args), every kernel argument by name; the
    autotuner's nargs hold the constexprs given by position."""
    x = np.empty(300, np.float32)
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (triton_cdiv(meta["n"], meta["BLOCK"]),)

    text = launch_to_mlir(kernels.pruned, grid, x, x.copy(), 300, 2.0, outputs=["y_ptr"])
    group = _group(text)
    assert [dict(c)["BLOCK"] for c in group.configs] == [128]  # 512 > n: pruned
    assert dict(group.configs[0])["SCALE"] == 2.0
    assert seen["n"] == 300 and seen["x_ptr"].shape == (300,) and seen["SCALE"] == 2.0
    assert kernels.SEEN["pruner"]["SCALE"] == 2.0 and kernels.SEEN["pruner"]["n"] == 300
    assert kernels.SEEN["pruner_kwargs"] == {}  # by position: in named_args, not a keyword argument
    launch_to_mlir(kernels.pruned, grid, x, x.copy(), 300, outputs=["y_ptr"], SCALE=3.0)
    assert kernels.SEEN["pruner_kwargs"] == {"SCALE": 3.0}
    assert group.grid == ["3"]


def test_pruner_gets_runtime_arguments_given_by_keyword_among_its_kwargs(kernels):
    """Triton's Autotuner.run hands early_config_prune the positional arguments as named_args
    and every keyword argument of the launch as **kwargs, a non-constexpr one too (gemlite's
    ``load_scales_as_block=...``); before, such an argument was only among the named arguments
    and the pruner's kwargs[...] raised KeyError."""
    x = np.empty(300, np.float32)
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (triton_cdiv(meta["n"], meta["BLOCK"]),)

    group = _group(launch_to_mlir(kernels.pruned_by_keyword, grid, x, x.copy(), outputs=["y_ptr"], n=300))
    assert [dict(c)["BLOCK"] for c in group.configs] == [128]  # 512 > n: pruned
    assert kernels.SEEN["kw_pruner_kwargs"] == {"n": 300}
    assert "n" not in kernels.SEEN["kw_pruner"] and kernels.SEEN["kw_pruner"]["x_ptr"].shape == (300,)
    assert seen["n"] == 300  # the grid sees every argument by name


def test_config_pre_hook_is_refused_by_name(kernels):
    """Triton's Autotuner.run calls the chosen config's pre_hook before the launch itself
    (gemlite zeroes the output of its split-K configs there): what the launch computes depends
    on it, and a module cannot run it. Before, the hook was dropped silently and such a variant
    added its partial sums to the output's old contents (wrong results on the H200)."""
    x, acc = np.empty(300, np.float32), np.zeros(1, np.float32)
    with pytest.raises(JaxTritonError, match=r"config 1 \{'BLOCK': 256\} of the triton.autotune kernel 'hooked_sum' has "
                                             r"a pre_hook \('_zero_acc'\), which Triton runs before every launch"):
        launch_to_mlir(kernels.hooked_sum, (1,), x, acc, 300, inplace=["acc_ptr"])


def triton_cdiv(a, b):
    return (a + b - 1) // b


def test_the_kernel_s_own_reset_to_zero_applies(kernels, tmp_path):
    """A launch of a kernel whose triton.autotune zeroes an atomic accumulator: the module
    leaves reset_to_zero to the kernel (no empty clause overriding it), so the build zero-fills
    the accumulator as Triton's users expect; an empty clause left it an undefined buffer."""
    import argparse

    from autotune_export.ir.walk import executable_sources, groups_of
    from autotune_export.passes.base import PassContext
    from autotune_export.tools import check

    x, acc = np.empty(1000, np.float32), np.empty(1, np.float32)
    text = launch_to_mlir(kernels.accumulate, lambda m: ((1000 + m["BLOCK"] - 1) // m["BLOCK"],), x, acc, 1000,
                          outputs=["acc_ptr"])
    assert "reset_to_zero" not in text
    source = SourceFile(text, str(tmp_path / "in.mlir"), str(tmp_path))
    module = parse_source(source)
    ctx = PassContext(source=source, remark=[].append)
    (src,) = executable_sources(module)
    (op,) = groups_of(src)
    args = argparse.Namespace(target="sm_80", seed=0, timeout=60.0, reference=None, group=None)
    (planned,), _ = check.launches_of_group(ctx, module, src, op, args)
    assert [(b.param, b.fill) for b in planned.buffers] == [("x_ptr", "data"), ("acc_ptr", "zeros")]


@pytest.mark.parametrize("value, kind, fix", [
    (np.int64(1000), "int64", "int(n)"),       # np.prod(x.shape): how numpy code gets a size
    (np.int32(1000), "int32", "int(n)"),
    (np.uint32(1000), "uint32", "int(n)"),
    (np.float32(2.5), "float32", "float(n)"),  # jax-triton types it fp32; Triton refuses it
    (np.float16(2.5), "float16", "float(n)"),
    (np.True_, "bool", "bool(n)"),
])
def test_numpy_scalar_is_refused_as_triton_refuses_it(kernels, value, kind, fix):
    """Tester finding 02: a numpy scalar became a 0-d tensor argument (``n: *i64``, ``*i1``) or,
    for np.float32, an fp32 constant, where Triton 3.6 and 3.9's launch raise ``TypeError: failed
    to specialize argument of type: int64`` (``mangle_type``): refused, naming the argument,
    Triton's reason and the fix."""
    x, y, out = (np.empty(1000, np.float32) for _ in range(3))
    with pytest.raises(JaxTritonError) as err:
        launch_to_mlir(kernels.add_kernel, 1, x, y, out, value, outputs=["out_ptr"], BLOCK=64)
    msg = str(err.value)
    assert f"argument 'n' is a numpy scalar (numpy.{kind})" in msg
    assert f"failed to specialize argument of type: {kind}" in msg and fix in msg
    with pytest.raises(JaxTritonError, match="argument 'n' is a numpy scalar"):  # given by keyword too
        launch_to_mlir(kernels.add_kernel, 1, x, y, out, outputs=["out_ptr"], BLOCK=64, n=value)


def test_numpy_float64_is_a_float_fp32_as_triton_types_it(kernels):
    """np.float64 subclasses float: Triton's JIT types it fp32 (mangle_type(np.float64(0.1)) ==
    'fp32'), rounded as the launch rounds it; jax-triton's rule would make 0.1 an fp64."""
    x, lo, hi = (np.empty(1000, np.float32) for _ in range(3))
    text = launch_to_mlir(kernels.split_kernel, 1, x, lo, np.float64(0.1), hi, 1000, outputs=["lo_ptr", "hi_ptr"])
    assert ("scale", "fp32") in [(p.name, p.type) for p in _group(text).signature]
    assert "1.000000e-01 : f32" in text
