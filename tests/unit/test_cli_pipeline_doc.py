"""docs/architecture.md's pipeline example runs as written: an option a -p spec gives one pass
(``target=sm_90``) reaches every pass of the pipeline that takes it (verify-autotuning-groups
checks the objects for sm_90, not the command's default sm_80), unless the command's flag
sets it."""

from __future__ import annotations

import pathlib
import re

import pytest

from autotune_export.tools import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A group of one variant whose PTX object is for PTX_TARGET (runs there and on later architectures).
MODULE = """
#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "ex.ptx", data = ".version 8.6\\0A.target PTX_TARGET\\0A.address_size 64\\0A.visible .entry k_a(.param .u64 a)\\0A{\\0Aret;\\0A}\\0A"}>]}>}> {
  hal.executable.autotuning.export @k variants([@k_a])
  hal.executable.export public @k_a ordinal(0) layout(#layout) count(%device: !hal.device) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  } <{workgroup_size = [32 : index, 1 : index, 1 : index]}>
}
"""


def documented_pipeline() -> str:
    """The ``-p`` spec of docs/architecture.md's example command."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    m = re.search(r"`autotune-export in\.mlir -p '([^']+)'`", doc)
    assert m, "docs/architecture.md no longer shows `autotune-export in.mlir -p '...'`"
    return m.group(1)


def run(tmp_path, ptx_target: str, *flags: str) -> int:
    src = tmp_path / "in.mlir"
    src.write_text(MODULE.replace("PTX_TARGET", ptx_target), encoding="utf-8")
    return cli.main([str(src), "-p", documented_pipeline(), "-o", str(tmp_path / "out.mlir"), *flags])


def test_documented_pipeline_sets_its_passes_target(tmp_path, capsys):
    spec = documented_pipeline()
    assert "target=sm_90" in spec and "verify-autotuning-groups" in spec
    # sm_90 PTX runs on sm_90: the documented command succeeds (it failed when the second pass
    # verified for the command's default target, sm_80).
    assert run(tmp_path, "sm_90") == 0, capsys.readouterr().err
    assert "hal.executable.autotuning.export @k variants([@k_a])" in (tmp_path / "out.mlir").read_text()


def test_documented_pipeline_verifies_for_the_spec_target(tmp_path, capsys):
    # sm_100 PTX does not run on sm_90: verify-autotuning-groups names the spec's target.
    assert run(tmp_path, "sm_100") == 1
    err = capsys.readouterr().err
    assert "cannot run on sm_90 (--target sm_90)" in err
    assert not (tmp_path / "out.mlir").exists()


def test_flag_still_sets_the_other_passes(tmp_path, capsys):
    # --target given: the spec's value holds for its own pass, the flag for the others.
    assert run(tmp_path, "sm_90", "--target", "sm_80") == 1
    assert "cannot run on sm_80 (--target sm_80)" in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["materialize-triton-variants{target=sm_90},verify-autotuning-groups{target=sm_80}"])
def test_different_values_without_the_flag_are_refused(tmp_path, capsys, spec):
    src = tmp_path / "in.mlir"
    src.write_text(MODULE.replace("PTX_TARGET", "sm_80"), encoding="utf-8")
    assert cli.main([str(src), "-p", spec]) == 1
    assert ("error: the pipeline gives option 'target' different values (sm_90 for materialize-triton-variants, "
            "sm_80 for verify-autotuning-groups); give --target") in capsys.readouterr().err
