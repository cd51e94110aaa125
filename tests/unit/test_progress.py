"""Tests of autotune_export.support.progress and of -q/-v: bars only on terminals, details only with -v."""
import io
import pathlib

import pytest

from autotune_export.tools import cli
from autotune_export.support import progress
from autotune_export.support.progress import NORMAL, QUIET, VERBOSE, Progress, bars_enabled, echo, note, track, verbosity

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "lit" / "Inputs" / "kernels.py"


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv("AUTOTUNE_EXPORT_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")


def test_bars_only_on_terminals():
    assert bars_enabled(Terminal()) and not bars_enabled(io.StringIO())
    with verbosity(QUIET):
        assert not bars_enabled(Terminal())
    with verbosity(VERBOSE):
        assert bars_enabled(Terminal())


def test_environment_overrides(monkeypatch):
    monkeypatch.setenv("AUTOTUNE_EXPORT_PROGRESS", "0")
    assert not bars_enabled(Terminal())
    monkeypatch.setenv("AUTOTUNE_EXPORT_PROGRESS", "1")
    assert bars_enabled(io.StringIO())
    with verbosity(QUIET):  # -q wins over the environment
        assert not bars_enabled(io.StringIO())
    monkeypatch.delenv("AUTOTUNE_EXPORT_PROGRESS")
    monkeypatch.setenv("TERM", "dumb")
    assert not bars_enabled(Terminal())


def test_verbosity_nests_and_clamps():
    assert progress.get_verbosity() == NORMAL
    with verbosity(5):
        assert progress.get_verbosity() == VERBOSE
        with verbosity(-3):
            assert progress.get_verbosity() == QUIET
        assert progress.get_verbosity() == VERBOSE
    assert progress.get_verbosity() == NORMAL


def test_disabled_bar_prints_only_details_and_logs():
    out = io.StringIO()
    with Progress(3, "compiling", stream=out) as bar:
        assert not bar.drawing
        bar.advance(detail="first")
        bar.log("always")
    assert out.getvalue() == "always\n" and bar.done == 1
    out = io.StringIO()
    with verbosity(VERBOSE), Progress(3, "compiling", stream=out) as bar:
        bar.advance(detail="first")
        bar.advance(2)
    assert out.getvalue() == "first\n" and bar.done == 3


def test_rich_bar_on_a_terminal():
    out = Terminal()
    with verbosity(VERBOSE), Progress(3, "tuning @mm", stream=out) as bar:
        assert bar.drawing and type(bar._backend).__name__ == "_RichBackend"
        for k in range(3):
            bar.advance(detail=f"variant {k}: 1.0 ms")
    text = out.getvalue()
    assert all(f"variant {k}: 1.0 ms" in text for k in range(3)) and bar.done == 3
    assert "tuning @mm" in text  # the bar was drawn (and erased: rich's transient bar)


def test_zero_items_draw_nothing():
    out = Terminal()
    with Progress(0, "nothing", stream=out) as bar:
        assert not bar.drawing
    assert out.getvalue() == ""


def test_track():
    out = io.StringIO()
    assert list(track(range(4), "x", stream=out)) == [0, 1, 2, 3]
    assert list(track((i for i in "ab"), "x", stream=out)) == ["a", "b"]  # no len(): counted first
    assert out.getvalue() == ""


def test_echo_and_note(capsys):
    echo("normal")
    note("detail")
    with verbosity(QUIET):
        echo("hidden")
    with verbosity(VERBOSE):
        note("shown")
    assert capsys.readouterr().err == "normal\nshown\n"


def test_echo_goes_through_the_active_bar(monkeypatch):
    out = Terminal()
    monkeypatch.setattr("sys.stderr", out)
    with Progress(2, "work") as bar:
        assert bar.drawing
        echo("a remark")
        bar.advance()
    text = out.getvalue()
    assert "a remark" in text and "work" in text


# --------------------------------------------------------------------------------------------
# The command's -q / -v


SOURCE = f"""
hal.executable.source private @add_ex {{
  hal.executable.autotuning.export @add
      triton("{KERNELS}", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {{output}}, n: i32)
      configs([{{BLOCK = 64, num_warps = 1}}, {{BLOCK = 64, num_warps = 1, num_ctas = 2}}])
      workload(n)
      grid(cdiv(n, BLOCK))
}}
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "small.mlir"
    path.write_text(SOURCE)
    return str(path), str(tmp_path_factory.mktemp("cache"))


def run(capsys, *argv):
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.integration
def test_verbose_prints_one_line_per_variant(small, capsys, tmp_path):
    path, cache = small
    status, out, err = run(capsys, path, "-p", "materialize-triton-variants", "--cache-dir", cache, "-j", "1", "-v",
                           "-o", str(tmp_path / "a.mlir"))
    assert status == 0
    assert "autotune-export: compiled: add_kernel[BLOCK=64] w1 s3 sm_80: 0 B shared" in err
    assert "remark: @add: 1 variant for sm_80" in err and "autotune-export: wrote" in err
    status, out, err = run(capsys, path, "-p", "materialize-triton-variants", "--cache-dir", cache, "-v")
    assert "autotune-export: from cache: add_kernel[BLOCK=64] w1 s3 sm_80: 0 B shared" in err


@pytest.mark.integration
def test_default_prints_remarks_and_no_bar(small, capsys, tmp_path):
    path, cache = small
    status, out, err = run(capsys, path, "-p", "materialize-triton-variants", "--cache-dir", cache,
                           "-o", str(tmp_path / "a.mlir"))
    assert status == 0 and "\r" not in err  # stderr is not a terminal here: no bar
    assert "remark: @add: config 1 {BLOCK = 64, num_warps = 1, num_ctas = 2} pruned" in err
    assert "from cache:" not in err and "autotune-export: wrote" in err


@pytest.mark.integration
def test_quiet_prints_nothing_but_errors(small, capsys, tmp_path):
    path, cache = small
    status, out, err = run(capsys, path, "-p", "materialize-triton-variants", "--cache-dir", cache, "-q",
                           "-o", str(tmp_path / "a.mlir"))
    assert status == 0 and err == ""
    bad = tmp_path / "bad.mlir"
    bad.write_text("util.func public @f( {\n")
    status, out, err = run(capsys, str(bad), "-q")
    assert status == 1 and "error:" in err


def test_quiet_and_verbose_exclude_each_other(small, capsys):
    with pytest.raises(SystemExit):
        cli.main([small[0], "-q", "-v"])
    assert "not allowed with argument" in capsys.readouterr().err
