"""Kernel files that ask PyTorch about the GPU when they are imported, or allocate GPU tensors
then (issue 12, point 7): while a kernel file is imported for export, torch.cuda's device
queries answer for the --target's representative part and GPU tensors are made on the meta
device (autotune_export.cuda.stub_driver); pruning functions that use torch see the same, and a
tensor argument's dtype as a torch dtype. Skipped where torch is not installed."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("PyTorch is not installed: the torch stand-ins have nothing to answer for", allow_module_level=True)


class _Torch:
    """``torch``, imported by the first test that asks for one of its names: every
    pytest-xdist worker collects this module, and importing torch costs 2 CPU-seconds.
    Collection itself asks the module's objects for ``_mock_name`` and ``__wrapped__``
    (pytest's fixture discovery): not torch's names, answered without importing it (they
    imported torch in every worker)."""

    def __getattr__(self, name):
        if name.startswith("__") or name == "_mock_name":
            raise AttributeError(name)
        import torch

        return getattr(torch, name)


torch = _Torch()

from autotune_export.cuda import launch_model as pruning  # noqa: E402
from autotune_export.cuda import stub_driver  # noqa: E402
from autotune_export.cuda import triton_compile as tc  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNEL = ROOT / "tests" / "unit" / "data" / "torch_at_import.py"
PLAIN = ROOT / "tests" / "lit" / "Inputs" / "kernels.py"
PARTS = {80: ("NVIDIA A100-SXM4-80GB", 108, 256), 90: ("NVIDIA H100 80GB HBM3", 132, 1024)}


def test_torch_queries_at_import_answer_for_the_target():
    available, modes = torch.cuda.is_available(), torch._C._len_torch_function_stack()
    originals = {name: getattr(torch.cuda, name) for name in stub_driver.TORCH_CUDA_FUNCTIONS}
    for arch, (name, sms, block) in PARTS.items():
        k = tc.load_kernel(tc.KernelSource(str(KERNEL), "persistent_scale", import_arch=arch))
        mod = sys.modules[k.fn.__module__]
        assert mod.DEVICE == torch.device("cuda", 0)
        assert (mod.MAJOR, mod.MINOR) == divmod(arch, 10) and mod.NAME == name and mod.NUM_SMS == sms
        assert mod.SMEM == tc.max_shared_memory(arch) == mod.PROPS.shared_memory_per_block_optin
        assert mod.PROPS.multi_processor_count == stub_driver.DEVICE_PROPERTIES[arch]["multiprocessor_count"]
        assert mod.PROPS.shared_memory_per_multiprocessor == tc.max_shared_memory(arch) + 1024
        assert mod.AVAILABLE is True and mod.BF16 is True
        # GPU tensors made at import time live on the meta device: shape and dtype, no data.
        assert (mod.WORKSPACE.device.type, tuple(mod.WORKSPACE.shape), mod.WORKSPACE.dtype) == ("meta", (sms * 4,), torch.int32)
        assert (mod.LOCKS.device.type, mod.TABLE.device.type, tuple(mod.TABLE.shape)) == ("meta", "meta", (16,))
        # Values computed from the answers reach the configs.
        assert [c["kwargs"] for c in k.default_configs] == [{"BLOCK": block, "NUM_SMS": sms}, {"BLOCK": 8192, "NUM_SMS": sms}]
    # Everything is undone after the import.
    assert {name: getattr(torch.cuda, name) for name in stub_driver.TORCH_CUDA_FUNCTIONS} == originals
    assert torch.cuda.is_available() == available and torch._C._len_torch_function_stack() == modes
    assert torch.empty(2).device.type == "cpu"


def test_torch_answers_and_their_limits():
    props = stub_driver.torch_device_properties(90)
    assert (props.total_memory, props.clock_rate, props.memory_bus_width, props.warp_size) == (81559 << 20, 1980000, 5120, 32)
    assert getattr(props, "L2_cache_size", None) is None  # an AttributeError, as hasattr expects
    with pytest.raises(AttributeError, match="'L2_cache_size' is not answered while kernel files are imported .*sm_90"):
        props.L2_cache_size
    with stub_driver.answering_for(90):
        kept = torch.cuda.get_device_capability  # a library's `from torch.cuda import ...`
        assert torch.cuda.get_device_capability("cuda:0") == (9, 0)
        with stub_driver.answering_for(80):
            assert torch.cuda.get_device_capability() == (8, 0)
            assert torch.cuda.get_device_properties(0).name == "NVIDIA A100-SXM4-80GB"
        assert torch.cuda.get_device_name(torch.device("cuda")) == "NVIDIA H100 80GB HBM3"
        with pytest.raises(stub_driver.StubDriverError, match=r"device 1: .* one CUDA device, 0 \(sm_90"):
            torch.cuda.set_device(1)
        with pytest.raises(stub_driver.StubDriverError, match="device 'cpu', which is not a CUDA device"):
            torch.cuda.get_device_properties("cpu")
        assert torch.zeros(3, device=0).device.type == "meta"
        assert torch.ones(2).to(torch.device("cuda"), torch.float16).device.type == "meta"
        assert torch.ones(2).device.type == "cpu"  # tensors not made for the GPU stay where they are
    # Outside the block a kept stand-in is the real function again.
    if torch.cuda.is_available():  # pragma: no cover - a machine with a GPU
        assert kept() == torch.cuda.get_device_capability()
    else:
        with pytest.raises((AssertionError, RuntimeError)):
            kept()


def test_pruning_functions_see_torch_dtypes_and_the_target():
    assert pruning.TensorArgument("x_ptr", "*fp32").dtype is torch.float32
    assert pruning.TensorArgument("x_ptr", "*fp8e4nv").dtype is torch.float8_e4m3fn
    assert pruning.TensorArgument("m_ptr", "*u1").element_size() == 1
    import triton.language as tl

    assert pruning.TensorArgument("x_ptr", "*fp8e4b15").dtype == tl.float8e4b15  # torch has none
    k = tc.load_kernel(tc.KernelSource(str(KERNEL), "persistent_scale", import_arch=90))
    (tuner,) = [w for w in k.wrappers if isinstance(w, tc.AutotuneWrapper)]
    named = {"x_ptr": pruning.TensorArgument("x_ptr", "*fp32"), "out_ptr": pruning.TensorArgument("out_ptr", "*fp32"),
             "n": pruning.UnknownScalar("n")}
    early = tuner.prune_configs_by["early_config_prune"]
    # sm_90: a quarter of 232448 bytes holds 1024 * 4 * 3 bytes, not 8192 * 4 * 3.
    out = pruning.prune_configs(tuner.triton_configs, named, early_config_prune=early, capability=90)
    assert [c.kwargs["BLOCK"] for c in out.kept] == [1024] and [p.index for p in out.pruned] == [1]
    # A float16 tensor is not pruned by this function (it compares torch dtypes).
    named["x_ptr"] = pruning.TensorArgument("x_ptr", "*fp16")
    assert len(pruning.prune_configs(tuner.triton_configs, named, early_config_prune=early, capability=90).kept) == 2


def test_torch_is_imported_only_by_kernel_files_that_import_it(tmp_path):
    """In a fresh process (the CLI's case): a kernel file without torch leaves it unimported;
    one that imports it gets the stand-ins as soon as its `import torch` has finished."""
    script = textwrap.dedent(f'''
        import sys
        from autotune_export.cuda import stub_driver, triton_compile as tc
        tc.load_kernel(tc.KernelSource({str(PLAIN)!r}, "add_kernel", import_arch=90))
        assert "torch" not in sys.modules, "a kernel file without torch imported torch"
        k = tc.load_kernel(tc.KernelSource({str(KERNEL)!r}, "persistent_scale", import_arch=90))
        mod = sys.modules[k.fn.__module__]
        import torch
        assert (mod.NUM_SMS, mod.WORKSPACE.device.type, mod.MAJOR) == (132, "meta", 9)
        assert not any(type(f).__name__ == "_TorchImportWatch" for f in sys.meta_path)
        assert type(torch.__spec__.loader).__name__ != "_AfterExec" and torch.__loader__ is torch.__spec__.loader
        assert torch.cuda.get_device_capability.__module__ == "torch.cuda"
        assert torch._C._len_torch_function_stack() == 0
        print("ok")
    ''')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.integration
def test_torch_kernel_file_builds_a_vmfb_for_sm_90(tmp_path):
    """The CLI exports the kernel file above for sm_90 on this machine (no GPU): 132 SMs from
    torch baked into the configs, the config over the shared-memory budget of its torch-based
    pruner pruned with a remark, a .vmfb written."""
    source = tmp_path / "persistent.mlir"
    source.write_text(textwrap.dedent(f'''
        hal.executable.source private @ex {{
          hal.executable.autotuning.export @persistent
              triton("{KERNEL}", "persistent_scale")
              signature(x_ptr: *fp32, out_ptr: *fp32 {{output}}, n: i32)
              workload(len)
              grid(NUM_SMS)
        }}

        util.func public @scale(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {{
          %len = arith.constant 1048576 : index
          %n = arith.constant 1048576 : i32
          %y = flow.dispatch @ex::@persistent[%len](%x, %n) : (tensor<1048576xf32>, i32) -> tensor<1048576xf32>
          util.return %y : tensor<1048576xf32>
        }}
    '''))
    env = {k: v for k, v in os.environ.items() if k != "AUTOTUNE_EXPORT_TRACEBACK"}
    env["AUTOTUNE_EXPORT_CACHE_DIR"] = str(tmp_path / "cache")
    cli = [sys.executable, "-m", "autotune_export.tools.cli", str(source), "--target", "sm_90"]
    vmfb = tmp_path / "persistent.vmfb"
    proc = subprocess.run(cli + ["--emit", "vmfb", "-o", str(vmfb)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert ("remark: @persistent: triton.autotune config 1 {BLOCK = 8192, NUM_SMS = 132, num_warps = 8, num_stages = 3, "
            "num_ctas = 1} pruned: early_config_prune 'fits_in_shared_memory' did not keep it (prune_configs_by)") in proc.stderr
    assert ("remark: @persistent: prune_configs_by (early_config_prune 'fits_in_shared_memory') keeps 1 of 2 "
            "triton.autotune configs: the group's configs 0..0 are its configs 0") in proc.stderr
    assert vmfb.stat().st_size > 0
    mlir = tmp_path / "persistent.out.mlir"
    proc = subprocess.run(cli + ["--emit", "mlir", "-o", str(mlir)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    text = mlir.read_text()
    assert "variants([@persistent_0_1024x132_w4_s3])" in text
    assert "0 compiled, 1 from cache" in proc.stderr


def test_inductor_kernel_file_imports_under_the_stand_in():
    """A kernel file torch.compile writes calls ``triton_helpers.set_driver_to_gpu()`` when
    imported: it keeps an active driver that is an instance of the CUDA backend's driver class
    and otherwise makes a real one (libcuda). The stand-in is one (a virtual subclass), so the
    file imports without a GPU and the stand-in stays active; before, ``hasattr(driver.active,
    "_obj")`` raised StubDriverError there."""
    pytest.importorskip("torch._inductor.runtime.triton_heuristics")
    from torch._inductor.runtime import triton_helpers
    from triton.runtime.driver import driver

    with stub_driver.answering_for(90):
        triton_helpers.set_driver_to_gpu()
        assert isinstance(driver.active, stub_driver.StubDriver)
        assert driver.active.get_current_target().arch == 90
    data = ROOT / "tests" / "unit" / "data" / "inductor_generated.py"
    k = tc.load_kernel(tc.KernelSource(str(data), "triton_poi_fused_add_mul_relu_0", import_arch=90))
    assert type(k.fn).__name__ == "JITFunction"
    assert list(k.fn.arg_names) == ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel", "XBLOCK"]
