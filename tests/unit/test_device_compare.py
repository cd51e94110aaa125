"""The cross-check on the device (issue 24, item 1): a group's ``compare`` entry counts the
elements that differ by numpy's ``isclose`` rule (the runtime's ``results_agree``), so the
runtime copies no result to the host unless a variant disagrees (real IREE execution on
local-task, tests/unit/data/cpu_group.mlir; decisions on given timings)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.runtime import AutotunedModule, GivenTimings
from autotune_export.runtime.checking import CHECK_TOLERANCES

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def module(cpu_vmfb):
    out = cpu_vmfb(DATA / "cpu_group.mlir")  # test_runtime.py's build
    return AutotunedModule(out, driver="local-task", cache=None, benchmarker=GivenTimings({"slow": 2.0, "fast": 1.0}),
                           profile=True)


def _perturbed(ref: np.ndarray) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    out = {"same": ref.copy(), "tiny": ref * np.float32(1 + 1e-6), "scaled": ref * np.float32(1.01)}
    few = ref.copy()
    few[rng.choice(ref.size, 5, replace=False)] += 1.0
    out["five"] = few
    specials = ref.copy()
    specials[[1, 2, 3]] = [np.nan, np.inf, -np.inf]
    out["specials"] = specials
    return out


def test_device_counts_equal_numpy_isclose(module):
    info = module.group("scale")
    assert info.compare == "__autotune.cpu_ex.scale.compare"
    ref = np.asarray(module.functions[info.check[0]]().to_host())
    rtol, atol = CHECK_TOLERANCES["float32"]
    cases = _perturbed(ref)
    specials_ref = ref.copy()
    specials_ref[[1, 2, 3]] = [np.nan, np.inf, np.inf]  # NaN = NaN, inf = inf, -inf != inf
    for name, x in list(cases.items()) + [("specials vs specials", specials_ref)]:
        r = specials_ref if name == "specials vs specials" else ref
        x = cases["specials"] if name == "specials vs specials" else x
        want = int(np.count_nonzero(~np.isclose(x.astype(np.float64), r.astype(np.float64), rtol=rtol, atol=atol,
                                                 equal_nan=True)))
        got = int(module.functions[info.compare](module.device_array(r), module.device_array(x), rtol, atol))
        assert got == want, name
    assert want == 1  # only -inf vs inf differs


def test_agreeing_variants_are_checked_without_host_copies(module, capsys):
    module.tune_group("scale")
    assert module.chosen["cpu_ex::scale"] == "fast"
    report = capsys.readouterr().err
    assert "cross-check: comparison (device)" in report
    assert "host copies" not in report and "comparison (host)" not in report
