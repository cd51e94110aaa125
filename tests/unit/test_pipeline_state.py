"""The IR is the only state between passes: a pipeline cut anywhere and run as two commands
(``autotune-export in.mlir -p a | autotune-export - -p b``) prints the bytes ``-p a,b`` prints,
for every cut of the default pipeline. A variant's Triton config travels on its export
(``autotune.config``, :data:`autotune_export.contract.VARIANT_CONFIG_ATTR`) into the
reflection metadata and the fingerprints; before, it travelled on the pass context, and the
two-command form lost it (other reflection configs, other tuning-cache fingerprints)."""

from __future__ import annotations

import io
import os
import pathlib
import subprocess
import sys

import pytest
from iree.compiler import ir

from autotune_export import contract
from autotune_export.frontend.reader import SourceFile, new_context, parse_source, print_module
from autotune_export.ir.variant_config import config_attr, export_config
from autotune_export.ir.walk import executable_sources, exports_of, module_functions
from autotune_export.passes import DEFAULT_PIPELINES
from autotune_export.tools import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "unit" / "data"
PIPELINE = DEFAULT_PIPELINES["iree"]
#: RFC-form inputs (no Triton compilation): a group tuned on a given workload, one with bench
#: entries per workload and per-workload slots, the RFC's explicit form with objects.
RFC_INPUTS = [
    DATA / "cpu_group.mlir",
    ROOT / "tests" / "lit" / "passes" / "workloads.mlir",
    ROOT / "tests" / "lit" / "passes" / "initializer_and_lowering.mlir",
]
#: Configs put on cpu_group's exports, as materialize-triton-variants records them.
CONFIGS = {
    "slow": [("BLOCK", 128), ("num_warps", 4), ("num_stages", 3), ("EVEN", True), ("scale", 0.5), ("ACC", "fp32")],
    "fast": [("BLOCK", 1024), ("num_warps", 8), ("num_stages", 2), ("EVEN", False), ("scale", 0.25), ("ACC", None)],
}


def _main(args: list[str], capsys, monkeypatch, stdin: str | None = None, cwd: pathlib.Path | None = None) -> str:
    """``autotune-export ARGS`` in this process (stdin ``stdin``, working directory ``cwd``):
    its stdout; fails the test on a non-zero exit."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    if cwd is not None:
        monkeypatch.chdir(cwd)
    capsys.readouterr()
    rc = cli.main([*args, "-q"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def _with_configs(tmp_path: pathlib.Path) -> pathlib.Path:
    """cpu_group.mlir with :data:`CONFIGS` recorded on its exports."""
    source = SourceFile((DATA / "cpu_group.mlir").read_text(), "cpu_group.mlir", str(DATA))
    with new_context():
        module = parse_source(source)
        with module.context:
            for name, export in exports_of(executable_sources(module)[0]).items():
                export.attributes[contract.VARIANT_CONFIG_ATTR] = config_attr(CONFIGS[name])
        text = print_module(module, source.name)
    path = tmp_path / "configured.mlir"
    path.write_text(text)
    return path


def _check_cuts(path: pathlib.Path, capsys, monkeypatch) -> str:
    full = _main([str(path), "-p", ",".join(PIPELINE)], capsys, monkeypatch)
    for cut in range(1, len(PIPELINE)):
        first = _main([str(path), "-p", ",".join(PIPELINE[:cut])], capsys, monkeypatch)
        second = _main(["-", "-p", ",".join(PIPELINE[cut:])], capsys, monkeypatch, stdin=first, cwd=path.parent)
        assert second == full, f"{path.name}: -p {','.join(PIPELINE[:cut])} | -p {','.join(PIPELINE[cut:])} differs"
    return full


@pytest.mark.parametrize("path", RFC_INPUTS, ids=lambda p: p.name)
def test_split_pipeline_prints_the_same_bytes(path, capsys, monkeypatch):
    _check_cuts(path, capsys, monkeypatch)


def test_configs_travel_on_the_exports(tmp_path, capsys, monkeypatch):
    """The configs recorded on the exports reach the reflection metadata (and the fingerprints)
    whether the pipeline runs as one command or is cut anywhere."""
    path = _with_configs(tmp_path)
    text = _check_cuts(path, capsys, monkeypatch)
    with new_context():
        module = parse_source(SourceFile(text, "out.mlir", str(tmp_path)))
        meta = ir.DictAttr(module_functions(module)[contract.AUTOTUNE_FUNCTION].attributes["iree.reflection"])
        (group,) = contract.decode_reflection(ir.StringAttr(meta[contract.REFLECTION_KEY]).value)
    assert group.variants == ["slow", "fast"]
    assert group.configs == [contract.config_json(CONFIGS["slow"]), contract.config_json(CONFIGS["fast"])]
    # Without configs the fingerprints differ: the config is part of what they hash.
    plain = _main([str(DATA / "cpu_group.mlir"), "-p", ",".join(PIPELINE)], capsys, monkeypatch)
    with new_context():
        module = parse_source(SourceFile(plain, "plain.mlir", str(DATA)))
        meta = ir.DictAttr(module_functions(module)[contract.AUTOTUNE_FUNCTION].attributes["iree.reflection"])
        (bare,) = contract.decode_reflection(ir.StringAttr(meta[contract.REFLECTION_KEY]).value)
    assert bare.configs == [None, None]
    assert len(set(bare.fingerprints + group.fingerprints)) == 4


def test_config_attribute_round_trips_through_text():
    """config_attr -> printed IR -> parsed IR -> export_config gives the JSON of the config
    (ints, bools, floats, strings, None; a Triton dtype as its text)."""

    class Dtype:
        def __str__(self):
            return "fp16"

    config = [("BLOCK_M", 128), ("num_warps", 4), ("EVEN_K", True), ("eps", 1e-5), ("ACC", Dtype()), ("pad", None),
              ("big", -(1 << 40))]
    with new_context() as ctx:
        module = ir.Module.create(ir.Location.unknown(ctx))
        module.operation.attributes[contract.VARIANT_CONFIG_ATTR] = config_attr(config)
        again = ir.Module.parse(str(module), ctx)
        assert export_config(again.operation) == [["BLOCK_M", 128], ["num_warps", 4], ["EVEN_K", True], ["eps", 1e-5],
                                                  ["ACC", "fp16"], ["pad", None], ["big", -(1 << 40)]]
        assert export_config(module.operation) == contract.config_json(config) == export_config(again.operation)


@pytest.fixture
def cli_server(tmp_path):
    """The command ``python -S -E cli_server.py SOCKET autotune-export``: each call a process of
    its own, forked from a server (tests/lit/cli_server.py, as the lit suites run the command)
    that has imported the package and Triton and run no command; a fresh interpreter's start
    and imports cost 0.6-1 CPU-s per command."""
    server = ROOT / "tests" / "lit" / "cli_server.py"
    sock = tmp_path / "cli.sock"
    argv0 = pathlib.Path(sys.executable).parent / "autotune-export"
    proc = subprocess.Popen([sys.executable, str(server), "serve", str(sock), f"autotune-export=autotune_export.tools.cli:main={argv0}",
                             "+autotune_export.cuda.triton_compile", "+autotune_export.cuda.workers:warm_up"],
                            stdin=subprocess.DEVNULL)
    yield [sys.executable, "-S", "-E", str(server), str(sock), "autotune-export"]
    proc.terminate()
    proc.wait(timeout=60)


@pytest.mark.integration
def test_split_pipeline_of_the_triton_form(cli_server):
    """The Triton form (vector_add: three configs compiled) as two processes joined by a pipe,
    cut after every pass of the default pipeline, prints what one command prints; its
    reflection carries the configs either way."""
    example = ROOT / "examples" / "vector_add"
    env = dict(os.environ)

    def run(args, stdin=None):
        proc = subprocess.run([*cli_server, *args, "-q"], cwd=example, input=stdin, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    full = run(["vector_add.mlir", "-p", ",".join(PIPELINE)])
    assert "autotune.config = [[\"BLOCK_SIZE\", 1024], [\"num_warps\", 4]]" in full
    assert "\\22configs\\22:[[[\\22BLOCK_SIZE\\22,256],[\\22num_warps\\22,2]]" in full
    for cut in range(1, len(PIPELINE)):
        first = run(["vector_add.mlir", "-p", ",".join(PIPELINE[:cut])])
        assert run(["-", "-p", ",".join(PIPELINE[cut:])], stdin=first) == full, f"cut after {PIPELINE[cut - 1]}"


def test_malformed_config_attribute_is_a_diagnostic(tmp_path, capsys):
    """A hand-written autotune.config of another shape: an error at its export, exit 1, no output."""
    text = (DATA / "cpu_group.mlir").read_text().replace(
        "hal.executable.export public @slow ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {\n"
        "    %c1 = arith.constant 1 : index\n    hal.return %c1, %c1, %c1 : index, index, index\n  }",
        "hal.executable.export public @slow ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {\n"
        "    %c1 = arith.constant 1 : index\n    hal.return %c1, %c1, %c1 : index, index, index\n  } attributes {autotune.config = 5}")
    assert "autotune.config = 5" in text
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    capsys.readouterr()
    assert cli.main([str(path), "-p", "emit-autotune-initializer"]) == 1
    out, err = capsys.readouterr()
    line = 1 + text[: text.index("hal.executable.export public @slow")].count("\n")
    assert out == ""
    assert err.startswith(f"{path}:{line}:3: error: autotune.config is not an array of [key, value] arrays: 5"), err
