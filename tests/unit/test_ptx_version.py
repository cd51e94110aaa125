"""One parser for the PTX ISA version (autotune_export.cuda.ptx.parse_ptx_version): both commands
that take ``--ptx-version`` (``autotune-export`` and the jax-triton converter) accept ``86`` and
``8.6`` and mean the same by them. No Triton compilation (the fast suite)."""

from __future__ import annotations

import os
import pathlib
import re

import pytest

from autotune_export.cuda.ptx import PtxVersionError, parse_ptx_version, ptx_version_text
from autotune_export.interop import jax_triton as jt
from autotune_export.tools import cli

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "jax"


@pytest.mark.parametrize("value,expected", [("86", 86), ("8.6", 86), (86, 86), ("7.8", 78), (" 9.0 ", 90), ("90", 90), (8.6, 86)])
def test_both_spellings(value, expected):
    assert parse_ptx_version(value) == expected
    assert ptx_version_text(value) == f"{expected // 10}.{expected % 10}"


@pytest.mark.parametrize("value", ["8", "8.10", "860", "x", "", "08.6", "0.9", True])
def test_refused(value):
    with pytest.raises(PtxVersionError, match="must look like 86 or 8.6"):
        parse_ptx_version(value)


def test_error_is_a_value_error():
    assert issubclass(PtxVersionError, ValueError)


@pytest.mark.parametrize("spelling", ["86", "8.6"])
def test_autotune_export_flag(spelling):
    assert cli._parser().parse_args(["in.mlir", "--ptx-version", spelling]).ptx_version == 86


def test_autotune_export_flag_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli._parser().parse_args(["in.mlir", "--ptx-version", "8"])
    assert exc.value.code == 1  # a usage error, as the command's others (2: internal error)
    assert "argument --ptx-version: PTX ISA version must look like 86 or 8.6, got '8'" in capsys.readouterr().err


def test_converter_flag_takes_both_spellings(tmp_path, capsys):
    src = FIXTURES / "two_kernels.stablehlo.mlir"
    outs = []
    for spelling in ("8.5", "85"):
        out = tmp_path / f"out_{spelling}.mlir"
        assert jt.main(["convert", str(src), "--target", "sm_80", "--ptx-version", spelling, "-o", str(out)]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    assert re.findall(r"\.version (\d\.\d)", outs[0].replace("\\0A", "\n")) == ["8.5"] * len(
        re.findall(r"\.version", outs[0]))
    with pytest.raises(SystemExit):
        jt.main(["convert", str(src), "--ptx-version", "8", "-o", os.devnull])
    assert "PTX ISA version must look like 86 or 8.6" in capsys.readouterr().err
