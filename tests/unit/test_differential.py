"""benchmarks/differential.py: the generator of launches and its interpreter side.

Fast: the generator covers every family and call-site form, reproducibly; the modules it
builds parse and bind as the cases say (host arguments and results); the comparison reports a
swapped or wrong result. Integration: both sides in Triton's interpreter on families whose
export is right agree in every variant.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def diff():
    path = os.path.join(ROOT, "benchmarks", "differential.py")
    spec = importlib.util.spec_from_file_location("autotune_export_differential", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_generator_covers_every_family_and_form_reproducibly(diff):
    cases = diff.generate(len(diff.FAMILIES), seed=3)
    assert {c.form for c in cases} == {"launch", "dispatches", "workloads"}
    assert [c.name.split("-", 1)[1] for c in cases] == [
        "elementwise", "scalars", cases[2].name.split("-", 1)[1], "outputs", "none", "strided", "views", "pruned",
        "dtype-heuristic", "reset", "restore", "reduction", "dispatches", "workloads"]
    assert cases[2].family == "inplace2" and cases[2].launch_kwargs == {"inplace": ["b_ptr", "a_ptr"]}  # 2 % 3: the other order
    again = diff.generate(len(diff.FAMILIES), seed=3)
    assert [(c.kernel_source, c.host_args, [x.args for x in c.calls]) for c in cases] == \
           [(c.kernel_source, c.host_args, [x.args for x in c.calls]) for c in again]
    assert diff.generate(3, seed=4)[0].kernel_source != cases[0].kernel_source or \
           diff.generate(3, seed=4)[0].host_args != cases[0].host_args
    # Scalars of every type a Python call passes: int, an int past 32 bits, float, bool.
    scalars = [a.value for a in cases[1].calls[0].args if a.kind == "scalar"]
    assert {type(v) for v in scalars} == {int, float, bool} and any(abs(v) >= 2**31 for v in scalars if type(v) is int)


def test_views_family_passes_views_and_binds_their_storage(diff, tmp_path):
    """The strided-views family (issue 23, item 1): Triton's side gets views of the host's
    storage (a transposed input, an expanded bias, a column-major new output); the module binds
    the storage spans, the host's own arrays."""
    torch = pytest.importorskip("torch")
    case = diff.generate(4, seed=2, families=["views"])[0]  # form 0
    (m, n) = (case.calls[0].args[3].value, case.calls[0].args[4].value)
    x, bias, out = case.calls[0].args[:3]
    view, span = diff._viewed(x, torch.zeros(n, m))
    assert (view.shape, view.stride(), span.shape) == ((m, n), (1, m), (n, m))
    view, span = diff._viewed(bias, torch.zeros(n))
    assert (view.shape, view.stride(), span.shape) == ((m, n), (0, 1), (n,))
    path = diff.build_module(case, str(tmp_path / case.name))
    (launch,) = diff._module_launches(path)
    assert [(b.param, tuple(b.shape)) for b in launch.buffers] == [("x_ptr", (n, m)), ("b_ptr", (n,)), ("out_ptr", (n, m))]
    assert launch.host_args == [0, 1, None] and launch.host_results == [0]


def test_modules_bind_host_arguments_and_results_as_the_case_says(diff, tmp_path):
    pytest.importorskip("torch", reason="the launches are given as torch tensors")
    case = next(c for c in diff.generate(20, seed=1) if c.family == "outputs")
    path = diff.build_module(case, str(tmp_path / case.name))
    (launch,) = diff._module_launches(path)
    # launch_to_mlir's host function takes x, y and returns (sum, diff): bindings x, y, sum, diff.
    assert [b.param for b in launch.buffers] == ["x_ptr", "y_ptr", "sum_ptr", "diff_ptr"]
    assert launch.host_args == [0, 1, None, None]
    assert launch.host_results == [0, 1]
    assert [b.shape for b in launch.buffers] == [case.host_args[0][0][0]] * 4
    # Every variant carries the config Triton is held to.
    assert all(dict(v.entries).keys() >= {"BLOCK", "num_warps"} for v in launch.variants)

    dyn = next(c for c in diff.generate(20, seed=1) if c.form == "workloads")
    launches = diff._module_launches(diff.build_module(dyn, str(tmp_path / dyn.name)))
    assert [(l.workload_index, l.buffers[0].shape) for l in launches] == [
        (w, shapes[0][0]) for w, shapes in enumerate(dyn.host_args)]
    assert all(l.host_args == [0, 1, None] and l.host_results == [0] for l in launches)


def test_comparison_reports_a_wrong_or_swapped_result(diff):
    torch = pytest.importorskip("torch", reason="the results are torch tensors")

    case = next(c for c in diff.generate(20, seed=1) if c.family == "outputs")
    a, b = torch.arange(6, dtype=torch.float32), torch.arange(6, dtype=torch.float32) * -1
    triton_side = {("v", 0, 0): a, ("v", 0, 1): b}
    assert diff.compare(case, {("v", 0, 0): a.clone(), ("v", 0, 1): b.clone()}, triton_side, ["v"]) == []
    swapped = diff.compare(case, {("v", 0, 0): b, ("v", 0, 1): a}, triton_side, ["v"])
    assert len(swapped) == 2 and swapped[0].startswith("v, workload 0, result 0: result 0: 5 of 6 elements differ")
    missing = diff.compare(case, {("v", 0, 0): a}, triton_side, ["v"])
    assert missing == ["v, workload 0, result 1: the module gave none"]


@pytest.mark.integration
def test_interpreter_sides_agree(diff, tmp_path):
    pytest.importorskip("torch", reason="Triton's interpreter runs on torch tensors")
    families = ["elementwise", "scalars", "outputs", "none", "strided", "views", "pruned", "reset", "restore", "reduction",
                "dispatches", "workloads"]
    cases = diff.generate(len(families), seed=11, families=families)
    report = diff.run_interpret(cases, seed=11, keep=str(tmp_path), timeout=1200)
    assert report["refused"] == 0
    found = {c["case"]: c["differences"] for c in report["cases"] if c["differences"]}
    assert found == {}
    assert sum(c["variants"] for c in report["cases"]) >= 2 * len(cases)
