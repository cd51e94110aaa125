"""Usage errors of every command and subcommand: one line ``PROG: error: ...`` with a "did you
mean" where one fits, exit status 1 (as the command's other errors; 2 is an internal error),
nothing on standard output. One parser class (support/arguments.py) gives all of them this."""

from __future__ import annotations

import pytest

from autotune_export.interop import jax_triton
from autotune_export.tools import cli


@pytest.mark.parametrize(
    "argv, prog, words",
    [
        (["x.mlir", "--taget", "sm_90"], "autotune-export", "did you mean '--target'?"),
        (["tune"], "autotune-export tune", "required: module"),
        (["tune", "m.vmfb", "--serch", "race"], "autotune-export tune", "did you mean '--search'?"),
        # iree.runtime accepts the flag but a device made by iree.runtime.Config never reads it (tester session 4, finding 4).
        (["tune", "m.vmfb", "--iree-flag=--device_allocator=caching"], "autotune-export tune",
         "argument --iree-flag: --device_allocator=caching: a device iree.runtime makes does not read IREE's "
         "--device_allocator flag; give the allocators as device_allocators (e.g. [\"caching\"]; tune: --device-allocator caching)"),
        (["inspect"], "autotune-export inspect", "required: input"),
        (["check"], "autotune-export check", "required: input"),
        (["program", "p.mlir"], "autotune-export program", "-o/--output"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_status_1(capsys, argv, prog, words):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.strip().splitlines()[-1:]
    assert line.startswith(f"{prog}: error: ") and words in line, err


def test_the_jax_triton_bridge_reports_usage_errors_alike(capsys):
    with pytest.raises(SystemExit) as e:
        jax_triton.main(["convert"])
    assert e.value.code == 1
    assert capsys.readouterr().err.splitlines()[-1].startswith("python -m autotune_export.interop.jax_triton convert: error: ")
