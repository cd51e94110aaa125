"""The GPU check scripts of examples/ on a machine without a GPU: the IREE modules are replaced
by fakes with AutotunedModule's interface, so what is tested is the scripts' bookkeeping: a
step that raises is a failed check (exit status 1), and the runtime is called as it is now."""

from __future__ import annotations

import importlib.util
import inspect
import json
import pathlib
import sys

import numpy as np
import pytest

from autotune_export.runtime.tuner import AutotunedModule, VariantTiming

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(relpath: str, name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / relpath)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class FakeGroup:
    def __init__(self, key, variants):
        self.key, self.variants = key, variants


class FakeModule:
    """What the scripts use of AutotunedModule, with the same signatures; results from ``ref``."""

    def __init__(self, ref, raise_in=None):
        self.ref, self.raise_in = ref, raise_in
        self.groups = {"ex::g": FakeGroup("ex::g", ["v0", "v1"])}
        self.functions = {"__autotune": lambda: None}

    def select(self, group, variant):
        pass

    def __call__(self, function, *args, device=None):
        if self.raise_in == "run":
            raise RuntimeError("launch failed")
        return self.ref(*args)

    def autotune(self):
        if self.raise_in == "tune":
            raise RuntimeError("tuning failed")
        return {"ex::g": [VariantTiming("v0", [1.0]), VariantTiming("v1", [0.5])]}


def test_fakes_match_the_runtime():
    for name in ("select", "__call__", "autotune"):
        assert inspect.signature(getattr(FakeModule, name)).parameters.keys() == \
            inspect.signature(getattr(AutotunedModule, name)).parameters.keys(), name


@pytest.fixture
def jax_check(monkeypatch):
    check = _load("examples/jax_triton/check_on_gpu.py", "jax_triton_check_on_gpu")

    def no_jax():
        raise ImportError("No module named 'jax_triton'")

    monkeypatch.setattr(check, "_jax_functions", no_jax)
    return check


def _fake_open(check, raise_in=None):
    programs = check._programs(np)

    def open_(path, driver):
        name = pathlib.Path(path).stem
        return FakeModule(programs[name][2], raise_in=raise_in)

    return open_


def test_jax_check_passes_when_everything_works(jax_check, monkeypatch, tmp_path):
    monkeypatch.setattr(jax_check, "_open", _fake_open(jax_check))
    out = tmp_path / "r.json"
    assert jax_check.main(["--vmfb-dir", str(tmp_path), "--json", str(out), "--allow-no-jax"]) == 0
    report = json.loads(out.read_text())
    assert report["failed"] == 0 and report["passed"] > 0 and report["errors"] == []
    assert report["tuning"]["two_kernels:ex::g"] == {"v0": 1.0, "v1": 0.5}
    assert "jax_triton" in report["notes"][0]


@pytest.mark.parametrize("raise_in", ["run", "tune"])
def test_jax_check_counts_exceptions_as_failures(jax_check, monkeypatch, tmp_path, raise_in):
    monkeypatch.setattr(jax_check, "_open", _fake_open(jax_check, raise_in))
    out = tmp_path / "r.json"
    assert jax_check.main(["--vmfb-dir", str(tmp_path), "--json", str(out), "--allow-no-jax"]) == 1
    report = json.loads(out.read_text())
    assert report["failed"] >= 3 and len(report["errors"]) >= 3
    assert all("RuntimeError" in e["error"] for e in report["errors"])


def test_jax_check_fails_without_jax_unless_allowed(jax_check, monkeypatch, tmp_path):
    monkeypatch.setattr(jax_check, "_open", _fake_open(jax_check))
    out = tmp_path / "r.json"
    assert jax_check.main(["--vmfb-dir", str(tmp_path), "--json", str(out)]) == 1
    report = json.loads(out.read_text())
    assert report["failed"] == 1 and report["errors"][0]["stage"] == "import jax/jax-triton"


def test_jax_check_module_that_does_not_load(jax_check, tmp_path):
    out = tmp_path / "r.json"
    assert jax_check.main(["--vmfb-dir", str(tmp_path / "missing"), "--json", str(out), "--allow-no-jax"]) == 1
    report = json.loads(out.read_text())
    assert report["failed"] == 3 and [e["stage"].split()[0] for e in report["errors"]] == ["load"] * 3


def test_examples_check_counts_exceptions_as_failures(monkeypatch, tmp_path, capsys):
    check = _load("examples/check_on_gpu.py", "examples_check_on_gpu")

    def open_(path, **kw):
        name = pathlib.Path(path).stem
        if name == "softmax":
            raise RuntimeError("cannot load")
        case = check.CASES[name]
        return FakeModule(case["ref"], raise_in="tune" if name == "vector_add" else None)

    monkeypatch.setattr(check, "AutotunedModule", open_)
    out = tmp_path / "r.json"
    assert check.main(["--vmfb-dir", str(tmp_path), "--json", str(out)]) == 1
    report = json.loads(out.read_text())
    errors = {e["example"]: e["stage"] for e in report["errors"]}
    assert errors == {"vector_add": "tune", "softmax": "load"}
    assert report["failed"] == 2 and report["passed"] == 12  # 3 sizes x 2 variants, matmul and vector_add
    assert "2 failed" in capsys.readouterr().out
