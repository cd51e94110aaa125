"""Issue 14 (refuse at build time what cannot run): the checks that are easier to pin in Python
than in lit (the lit cases are in tests/lit/errors/): object architectures, tensor element
types at dispatches, the runtime's errors, a group built without benchmark entries."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.cuda import ptx
from autotune_export.cuda.targets import CudaTarget
from autotune_export.passes.materialize_triton_variants import POINTER_ELEMENT_TYPES, threads_refusal
from autotune_export.runtime import device, tuner

DATA = pathlib.Path(__file__).parent / "data"


def _cubin_header(osabi: int, flags: int) -> bytes:
    head = bytearray(64)
    head[0:4] = b"\x7fELF"
    head[4], head[5], head[6], head[7] = 2, 1, 1, osabi
    head[48:52] = flags.to_bytes(4, "little")
    return bytes(head)


@pytest.mark.parametrize(
    "data, expected",
    [
        (".version 8.6\n.target sm_80\n.address_size 64\n", CudaTarget(80)),
        (".version 8.6\n// .target sm_90\n.target sm_90a, debug\n", CudaTarget(90, "a")),
        (b".version 8.6\n.target sm_52\n", CudaTarget(52)),
        (_cubin_header(0x33, 0x5A0D5A), CudaTarget(90, "a")),  # ptxas 12.9, sm_90a
        (_cubin_header(0x33, 0x500550), CudaTarget(80)),
        (_cubin_header(0x41, 0x600640A), CudaTarget(100, "a")),  # ptxas-blackwell, sm_100a
        (_cubin_header(0x41, 0x6006402), CudaTarget(100)),
        (b"\x7fELF\x01", None),  # truncated
        (_cubin_header(0x03, 0x50), None),  # a Linux ELF, not a cubin
        (b"\xff\xfe not text", None),
        (".version 8.6\n", None),
    ],
)
def test_object_architecture(data, expected):
    assert ptx.object_architecture(data) == expected


def test_object_architecture_of_real_cubins():
    for arch in ("sm_80", "sm_90a"):
        cubin = ptx.assemble(f".version 8.6\n.target {arch}\n.address_size 64\n.visible .entry k()\n{{\nret;\n}}\n", arch)
        assert ptx.object_architecture(cubin).name == arch


def test_pointer_element_types_cover_triton_pointees():
    # Triton's bool pointers are bytes in memory: both MLIR spellings fit.
    assert POINTER_ELEMENT_TYPES["i1"] == ("i1", "i8")
    assert POINTER_ELEMENT_TYPES["fp8e4nv"] == ("f8E4M3FN",)
    assert POINTER_ELEMENT_TYPES["u32"] == ("i32",)


@pytest.mark.parametrize("warps, refused", [(4, False), (32, False), (33, True), (64, True)])
def test_threads_refusal(warps, refused):
    assert (threads_refusal(warps) is not None) == refused


def test_runtime_names_the_driver_and_what_is_missing(tmp_path, monkeypatch):
    class FakeRuntime:
        class Config:
            def __init__(self, driver):
                raise RuntimeError("Could not create device. Exception for last tried follows.")

        @staticmethod
        def get_driver(name):
            raise RuntimeError("Error creating driver: ... CUDA driver library 'libcuda.so'/'nvcuda.dll' not available")

    with pytest.raises(RuntimeError) as err:
        device.make_config(FakeRuntime, "cuda")
    text = str(err.value)
    assert "IREE driver 'cuda'" in text and "libcuda.so" in text and "Could not create device." in text
    assert "follows" not in text


def test_runtime_names_an_unknown_driver():
    import iree.runtime as rt

    with pytest.raises(RuntimeError, match="IREE driver 'no-such-driver': iree.runtime has no such driver"):
        device.make_config(rt, "no-such-driver")


@pytest.fixture(scope="module")
def untunable_vmfb(cpu_vmfb) -> pathlib.Path:
    """cpu_group.mlir without its tune_workload: the host takes tensor<?xf32>, so the group is
    built without benchmark and check entries (a warning), as the RFC's own example is."""
    text = (DATA / "cpu_group.mlir").read_text().replace(" tune_workload(tensor<65536xf32>)", "")
    assert "tune_workload" not in text
    return cpu_vmfb(text, "untunable")


@pytest.mark.integration  # an llvm-cpu iree-compile: seconds
def test_group_without_benchmarks_is_skipped_with_a_note(untunable_vmfb, tmp_path):
    m = tuner.AutotunedModule(untunable_vmfb, driver="local-task", cache=tmp_path / "t.json")
    (info,) = m.groups.values()
    assert info.bench == [] and info.tune_args == []
    assert m.autotune() == {info.key: []}
    assert m.chosen[info.key] == "slow" and m.sources[info.key] == "default"
    assert "no benchmark entries" in m.notes[info.key]
    with pytest.raises(ValueError, match="no benchmark entries"):
        m.bench(info.key, 0)


@pytest.mark.integration
def test_group_without_benchmarks_tunes_on_live_calls(untunable_vmfb, tmp_path):
    """Only when the user lets unchecked variants run on live data (allow_unchecked=True):
    tests/unit/test_unchecked_round_robin.py has the default, which leaves the group alone."""
    m = tuner.AutotunedModule(untunable_vmfb, driver="local-task", cache=None, strategy="round-robin", min_rounds=2, max_rounds=4,
                              allow_unchecked=True)
    x = np.linspace(-3, 3, 1 << 16, dtype=np.float32)
    for _ in range(12):
        np.testing.assert_array_equal(np.asarray(m("scale", x)), 2 * x)
    assert m.sources["cpu_ex::scale"] == "round-robin"


def test_compat_drops_in_order_dispatch_bindings_and_device_targets():
    from autotune_export.frontend import compat

    text = (
        '#d = #hal.device.target<"cuda", {executable_targets = [], legacy_sync}>\n'
        "module @m attributes {hal.device.targets = [#d], keep.me} {\n"
        "  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %c4 = arith.constant 4 : index\n"
        "    %0 = flow.dispatch @ex::@k[%c4](%x) {\n"
        "      hal.interface.bindings = [#hal.interface.binding<0, 0>, #hal.interface.binding<1, 0>], keep\n"
        "    } : (tensor<4xf32>) -> tensor<4xf32>\n"
        "    %1 = flow.dispatch @ex::@k[%c4](%0) {hal.interface.bindings = [#hal.interface.binding<0, 0>]} : (tensor<4xf32>) -> tensor<4xf32>\n"
        "    return %1 : tensor<4xf32>\n"
        "  }\n"
        "}\n"
    )
    new = compat.normalize(text, "t.mlir")
    assert new.count("\n") == text.count("\n")  # every line where it was
    assert "hal.device.targets" not in new and "hal.interface.binding" not in new
    assert "attributes {keep.me}" in new and "{keep}" in new
    assert "(%0) : (tensor<4xf32>)" in new
    assert compat.normalize(new, "t.mlir") == new


@pytest.mark.parametrize("kw, message", [
    # Tester findings 05/12: accepted, then a limit of 0 dropped every variant (default included)
    # with a note blaming the group's limit; a negative or NaN budget was taken as given.
    ({"variant_timeout_s": 0}, "variant_timeout_s = 0: expected a finite number of seconds > 0"),
    ({"variant_timeout_s": -1}, "variant_timeout_s = -1: expected a finite number of seconds > 0"),
    ({"variant_timeout_s": float("inf")}, "variant_timeout_s = inf: expected a finite number of seconds > 0"),
    ({"budget_ms": -5}, "budget_ms = -5: expected a finite number of milliseconds > 0, or None: the default budget"),
    ({"budget_ms": float("nan")}, "budget_ms = nan: expected a finite number of milliseconds > 0"),
    ({"budget_ms": 0.0}, "budget_ms = 0.0: expected a finite number of milliseconds > 0"),
])
def test_time_limits_and_budgets_are_checked_before_anything_loads(tmp_path, kw, message):
    """The check runs first: the module named here does not exist, and the error is the value's."""
    with pytest.raises(ValueError) as err:
        tuner.AutotunedModule(tmp_path / "absent.vmfb", driver="local-task", cache=None, **kw)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("flag, value, unit", [
    ("--variant-timeout", "0", "seconds"), ("--variant-timeout", "-1", "seconds"),
    ("--budget", "-5", "milliseconds"), ("--budget", "nan", "milliseconds"),
])
def test_tune_command_refuses_non_positive_limits(tmp_path, capsys, flag, value, unit):
    from autotune_export.tools import tune

    with pytest.raises(SystemExit) as exit_:
        tune.main([str(tmp_path / "absent.vmfb"), "--device", "local-task", f"{flag}={value}"])
    assert exit_.value.code != 0
    err = capsys.readouterr().err
    assert f"argument {flag}: expected a finite number of {unit} > 0, got '{value}'" in err
