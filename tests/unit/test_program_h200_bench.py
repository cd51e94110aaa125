"""benchmarks/program_h200 helpers (no GPU, no compile): an earlier run.py report's picks
become a tuning-results file that program --tuning-results reads (the runtime's format and
rule), and run.py's numpy references."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import numpy as np

from autotune_export.contract import choose_result
from autotune_export.passes.pin_variants import load_results

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "program_h200"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"program_h200_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


REPORT = {
    "reports": {
        "tuned": {
            "groups": {
                "main_dispatch_0::main_dispatch_0_matmul_f16": {
                    "host": "main",
                    "variants": ["main_dispatch_0_matmul_f16", "main_dispatch_0_matmul_f16.candidate1", "main_dispatch_0_matmul_f16.triton_k_0"],
                    "times_ms": [2.5, None, 0.7],
                    "chosen": 2,
                },
                "mm_dispatch_0::mm_dispatch_0_matmul_f16": {"host": "mm", "variants": ["a", "b"], "times_ms": [1.0, 1.2], "chosen": 0},
            }
        }
    }
}


def test_picks_of_a_report_become_results_that_program_freezes(tmp_path):
    picks = _module("picks_to_results")
    report, out = tmp_path / "report.json", tmp_path / "r.json"
    report.write_text(json.dumps(REPORT))
    out.write_text("stale")  # written anew
    assert picks.main([str(report), str(out)]) == 0
    entries = load_results(str(out))  # the reader of program --tuning-results
    chosen = choose_result(entries, "main_dispatch_0", "main_dispatch_0_matmul_f16", REPORT["reports"]["tuned"]["groups"]["main_dispatch_0::main_dispatch_0_matmul_f16"]["variants"])
    assert chosen["variant"] == "main_dispatch_0_matmul_f16.triton_k_0"
    assert chosen["median_ms"] == {"main_dispatch_0_matmul_f16": 2.5, "main_dispatch_0_matmul_f16.triton_k_0": 0.7}
    assert choose_result(entries, "mm_dispatch_0", "mm_dispatch_0_matmul_f16", ["a", "b"])["variant"] == "a"
    assert len(entries) == 2


def test_a_report_without_the_build_writes_nothing(tmp_path, capsys):
    picks = _module("picks_to_results")
    report, out = tmp_path / "report.json", tmp_path / "r.json"
    report.write_text(json.dumps(REPORT))
    assert picks.main([str(report), str(out), "--build", "frozen"]) == 1
    assert "no groups of build 'frozen'" in capsys.readouterr().err and not out.exists()


def test_run_references_matmul_and_add():
    run = _module("run")
    manifest = {
        "matrices": {"a": (3, 4), "b": (4, 2), "z": (5,)},
        "functions": {"f": {"inputs": ["a", "b"], "outputs": [["matmul", 0, 1]]}, "g": {"inputs": ["z"], "outputs": [["add", 0, 0]]}},
    }
    mats = run.inputs(manifest, np.random.default_rng(0))
    refs = run.references(manifest, mats)
    assert set(np.unique(mats["f"][0])) <= {-0.5, -0.25, 0.0, 0.25, 0.5}
    np.testing.assert_array_equal(refs["f"][0], mats["f"][0].astype(np.float32) @ mats["f"][1].astype(np.float32))
    np.testing.assert_array_equal(refs["g"][0], 2 * mats["g"][0].astype(np.float32))
