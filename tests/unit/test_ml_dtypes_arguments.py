"""bf16 and fp8 numpy arrays (ml_dtypes: what ``np.asarray`` of a jax or torch bf16 array holds)
as arguments of a module's host functions: iree.runtime 3.13 refuses them as numpy arrays
("can't convert np.ndarray of type ml_dtypes.bfloat16"; found by the differential checker on the
H200); AutotunedModule copies them to the device with their IREE element type. Real IREE
execution on the CPU (local-task)."""

from __future__ import annotations

import pathlib

import ml_dtypes
import numpy as np
import pytest

from autotune_export.runtime.tuner import AutotunedModule

SOURCE = """
func.func @double_bf16(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %r = arith.addf %x, %x : tensor<8xbf16>
  return %r : tensor<8xbf16>
}
func.func @fp8_to_f32(%x: tensor<8xf8E4M3FN>, %y: tensor<8xf8E5M2>) -> tensor<8xf32> {
  %a = arith.extf %x : tensor<8xf8E4M3FN> to tensor<8xf32>
  %b = arith.extf %y : tensor<8xf8E5M2> to tensor<8xf32>
  %r = arith.addf %a, %b : tensor<8xf32>
  return %r : tensor<8xf32>
}
"""


@pytest.fixture(scope="module")
def module(cpu_vmfb):
    # a group of the project's CPU test data, so that the module is one autotune-export builds
    group = (pathlib.Path(__file__).parent / "data" / "cpu_group.mlir").read_text()
    return AutotunedModule(cpu_vmfb(group + SOURCE, "m"), driver="local-task", cache=None)


def test_bf16_argument_and_result(module):
    x = np.array([1, -2, 3.5, 0.125, 1e30, -0.0, 7, 255], dtype=ml_dtypes.bfloat16)
    got = np.asarray(module("double_bf16", x))
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.astype(np.float32), (x.astype(np.float32) * 2))
    # once on the device, no copy per call
    d = module.device_array(x)
    np.testing.assert_array_equal(np.asarray(module("double_bf16", d)).astype(np.float32), x.astype(np.float32) * 2)


def test_fp8_arguments(module):
    x = np.array([1, -2, 3.5, 0.125, 448, -0.0, 7, 0.5], dtype=ml_dtypes.float8_e4m3fn)
    y = np.array([1, 2, -4, 0.25, 57344, 0, 3, 1.5], dtype=ml_dtypes.float8_e5m2)
    got = np.asarray(module("fp8_to_f32", x, y))
    np.testing.assert_array_equal(got, x.astype(np.float32) + y.astype(np.float32))
