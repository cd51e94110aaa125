"""``autotune-export program`` as a command (tester findings 01, 03, 07 and 10 of Dec 2):
``-o -`` is standard output as in the main command, tuning results naming a variant the build
does not have are refused, iree-compile's own message reaches the user, and ``inspect`` reads
the groups of ``--emit mlir`` output (docs/program.md)."""

from __future__ import annotations

import json

import pytest

from autotune_export.contract import RESULTS_FORMAT, GroupReflection, encode_reflection
from autotune_export.program.build import build_program
from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.tools import cli
from autotune_export.tools.cli_io import read_source, write_output
from autotune_export.tools.inspect_mlir import inspect_mlir

#: One f32 matmul (IREE's dispatch main_dispatch_0, group main_dispatch_0_matmul_64x96x128_f32).
MATMUL = """
func.func @main(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%f : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %m : tensor<64x96xf32>
}
"""
GROUP = "main_dispatch_0_matmul_64x96x128_f32"


def _run(argv, capsys):
    rc = cli.main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return rc, out.out, out.err


# ----- finding 01: -o - -----------------------------------------------------------------------
def test_dash_is_standard_output_for_text():
    """write_output's ``-`` (one home for the main command and ``program``)."""
    import io
    import sys

    saved, sys.stdout = sys.stdout, io.StringIO()
    try:
        write_output("-", "module {}\n")
        got = sys.stdout.getvalue()
    finally:
        sys.stdout = saved
    assert got == "module {}\n"


@pytest.mark.parametrize("extra", [[], ["--emit", "vmfb"]])
def test_program_refuses_a_vmfb_on_standard_output_before_building(tmp_path, monkeypatch, capsys, extra):
    """The default --emit vmfb with ``-o -``: refused as the main command refuses it, before the
    build, and no file named ``-``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.mlir").write_text(MATMUL)
    rc, out, err = _run(["program", "m.mlir", *extra, "-o", "-"], capsys)
    assert (rc, out) == (1, "")
    assert "error: --emit vmfb needs -o FILE.vmfb" in err
    assert not (tmp_path / "-").exists()


@pytest.mark.integration
def test_program_writes_mlir_to_standard_output_and_inspect_reads_its_groups(tmp_path, monkeypatch, capsys):
    """Finding 01 (``--emit mlir -o -`` wrote a file named ``-``) and 10 (inspect of that text
    said "0 groups"): the regrouped program on stdout, and inspect of it lists the group the
    build reports, with its variants and default, as inspect of the .vmfb does."""
    from autotune_export.tools.inspect_vmfb import inspect_vmfb

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.mlir").write_text(MATMUL)
    rc, out, err = _run(["program", "m.mlir", "--max-candidates", "2", "--emit", "mlir", "-o", "-"], capsys)
    assert rc == 0, err
    assert not (tmp_path / "-").exists()
    assert "autotune-export: wrote standard output: variants per tunable dispatch: @main_dispatch_0 2" in err
    assert "autotune.groups" in out and out.lstrip().startswith(("#", "module"))
    (tmp_path / "p.mlir").write_text(out)
    got = inspect_mlir(read_source(str(tmp_path / "p.mlir")))
    rc, _, err = _run(["program", "m.mlir", "--max-candidates", "2", "-o", "p.vmfb"], capsys)
    assert rc == 0, err
    want = inspect_vmfb(str(tmp_path / "p.vmfb"), resources=False)
    assert [(g.executable, g.group, g.default, g.host) for g in got.groups] == [("main_dispatch_0", GROUP, GROUP, "main")]
    assert [[v.name for v in g.variants] for g in got.groups] == [[GROUP, GROUP + ".candidate1"]]
    assert [(g.group, [(v.name, v.config) for v in g.variants]) for g in got.groups] == [
        (g.group, [(v.name, v.config) for v in g.variants]) for g in want.groups
    ]


# ----- finding 10: inspect of a program's MLIR --------------------------------------------------
def test_inspect_reads_groups_from_the_autotune_reflection_of_mlir(tmp_path, capsys):
    """A module whose groups are only in ``@__autotune``'s reflection (as ``program --emit mlir``
    writes it: no group ops) is inspected from that metadata, frozen choices included."""
    from iree.compiler import ir

    meta = GroupReflection(
        "ex",
        "g",
        ["g", "g.candidate1"],
        1,
        "__autotune.ex.g.select",
        [],
        "main",
        configs=[[["lowering_config", "A"]], [["lowering_config", "B"]]],
        frozen_choices=[{"workload": [4], "variant": 0}],
        default_frozen=True,
    )
    with ir.Context():
        value = str(ir.StringAttr.get(encode_reflection([meta])))
    path = tmp_path / "p.mlir"
    path.write_text(
        "util.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  util.return %a : tensor<4xf32>\n}\n"
        f"util.func public @__autotune() attributes {{iree.reflection = {{autotune.groups = {value}}}}} {{\n  util.return\n}}\n"
    )
    got = inspect_mlir(read_source(str(path)))
    assert got.notes == []
    (g,) = got.groups
    assert (g.executable, g.group, g.default, g.frozen, g.host) == ("ex", "g", "g.candidate1", True, "main")
    assert [(v.name, v.default, v.config) for v in g.variants] == [
        ("g", False, [("lowering_config", "A")]),
        ("g.candidate1", True, [("lowering_config", "B")]),
    ]
    assert g.choices == [((4,), "g")]
    rc, out, err = _run(["inspect", str(path)], capsys)
    assert rc == 0, err
    assert out.splitlines()[0] == f"{path} (mlir): 1 group, 0 executables"


# ----- finding 03: tuning results of another build ----------------------------------------------
def test_tuning_results_naming_a_variant_the_build_lacks_are_refused(tmp_path, capsys):
    """candidate2 of a --max-candidates 2 build (which has the default and candidate1): refused
    with the entry's variant and the group's, as pin-variants refuses it, no output."""
    entry = {"executable": "main_dispatch_0", "group": GROUP, "variant": GROUP + ".candidate2", "workload": "w"}
    want = (
        f"tuning results pick @{GROUP}.candidate2 for @{GROUP}, which is not one of its variants "
        f"(it has @{GROUP}, @{GROUP}.candidate1; were the results made for another build of this module?)"
    )
    with pytest.raises(DiagnosticError) as err:
        build_program(MATMUL, max_candidates=2, tuning_results=[entry])
    assert err.value.diagnostics[0].message == want
    src, res, out = tmp_path / "m.mlir", tmp_path / "r.json", tmp_path / "m.vmfb"
    src.write_text(MATMUL)
    res.write_text(json.dumps({"format": RESULTS_FORMAT, "results": [entry]}))
    rc, _, stderr = _run(["program", str(src), "--max-candidates", "2", "--tuning-results", str(res), "-o", str(out)], capsys)
    assert rc == 1 and f"error: {want}" in stderr
    assert not out.exists()


# ----- finding 07: iree-compile's own message ---------------------------------------------------
def test_a_bad_iree_compile_arg_shows_iree_compile_own_message(tmp_path, capsys):
    """Before: "iree-compile failed: Error invoking IREE compiler tool iree-compile"."""
    src, out = tmp_path / "m.mlir", tmp_path / "m.vmfb"
    src.write_text(MATMUL)
    rc, _, err = _run(["program", str(src), "--iree-compile-arg=--bogus-flag", "-o", str(out)], capsys)
    assert rc == 1
    assert "error: iree-compile failed: exit code 1, iree-compile: Unknown command line argument '--bogus-flag'." in err
    assert "Error invoking" not in err
    assert not out.exists()


def test_an_iree_error_in_the_input_is_located_there(tmp_path, capsys):
    """An error iree-compile reports in the user's program keeps its line and column there."""
    src, out = tmp_path / "m.mlir", tmp_path / "m.vmfb"
    src.write_text(MATMUL.replace("tensor<64x96xf32> {", "tensor<64x96xf32> {\n  %bad = arith.addi %z, %z : f32", 1))
    rc, _, err = _run(["program", str(src), "-o", str(out)], capsys)
    assert rc == 1
    assert f"{src}:3:10: error: iree-compile failed: 'arith.addi' op operand #0 must be signless" in err, err
    assert not out.exists()


@pytest.mark.parametrize("first", ["global", "function"])
def test_a_program_that_already_is_an_autotune_export_build_is_refused_at_its_first_autotune_symbol(tmp_path, capsys, first):
    """``program`` on its own ``--emit mlir`` output (it has ``@__autotune`` and
    ``@__autotune.*`` globals) was an internal error (exit 2, MLIR's "redefinition of symbol")
    after a remark per entry dispatch (tester session 4, finding 5): now an error at the first
    such symbol, exit 1, no remark and no output file. The symbols are written here as the
    build writes them (only IREE's input phase runs)."""
    glob = "util.global private mutable @__autotune.main_dispatch_0.g.choice = 0 : i32\n"
    func = "util.func public @__autotune() {\n  util.return\n}\n"
    src, out = tmp_path / "regrouped.mlir", tmp_path / "o.vmfb"
    src.write_text(MATMUL + (glob + func if first == "global" else func + glob))
    line = len(MATMUL.splitlines()) + 1
    name = "__autotune.main_dispatch_0.g.choice" if first == "global" else "__autotune"
    rc, stdout, err = _run(["program", str(src), "-o", str(out)], capsys)
    assert (rc, stdout) == (1, "")
    assert err == (
        f"{src}:{line}:1: error: the program is already an autotune-export build (it has @{name}); "
        "build from the original program\n"
    )
    assert not out.exists()


def test_jobs_follow_the_one_rule_for_compiling_processes():
    """`program --jobs` and build_program(jobs=) use cuda/workers.check_jobs, as -j does: 0 was
    silently one process."""
    from autotune_export.program.build import build_program
    from autotune_export.support.diagnostics import DiagnosticError

    with pytest.raises(DiagnosticError, match="at least 1 process compiles"):
        build_program("func.func @f() { return }", backend="llvm-cpu", jobs=0)


# ----- tester, Dec 2 trial 3, findings 4 and 5: targets and counts refused up front ----------
@pytest.mark.parametrize(
    "target, words",
    [
        ("sm_75", "unsupported CUDA target 'sm_75': supported are sm_80"),
        ("bogus", "unknown CUDA target 'bogus'"),
        ("sm_90,sm_80", "unknown CUDA target 'sm_90,sm_80'"),
    ],
)
def test_program_refuses_a_cuda_target_it_cannot_build_for_as_an_error(tmp_path, monkeypatch, capsys, target, words):
    """Was an internal error (TargetError, exit 2) after the first phases; now one line, exit 1,
    before any iree-compile phase, no output file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.mlir").write_text(MATMUL)
    rc, out, err = _run(["program", "m.mlir", "--backend", "cuda", "--target", target, "--emit", "mlir", "-o", "x.mlir"], capsys)
    assert rc == 1 and out == ""
    assert f"error: program: --target: {words}" in err and "(program builds for one target)" in err
    assert not (tmp_path / "x.mlir").exists()


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--max-triton-configs", "-1"], "argument --max-triton-configs: expected a whole number >= 0, not -1"),
        (["--max-candidates", "0"], "argument --max-candidates: expected a whole number >= 1, not 0"),
        (["--target", "sm_90"], "error: program: --target applies only to --backend cuda, not llvm-cpu"),
        (["--no-triton", "--object-format", "cubin"], "--no-triton, --object-format apply only to --backend cuda"),
    ],
)
def test_program_refuses_counts_out_of_range_and_cuda_flags_on_another_backend(tmp_path, monkeypatch, capsys, flags, words):
    """``--max-triton-configs -1`` built 11 of 12 configs (a Python slice) and ``0`` fell back to
    --max-candidates; cuda-only flags were taken without a word with llvm-cpu."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.mlir").write_text(MATMUL)
    try:
        rc = cli.main(["program", "m.mlir", *flags, "-o", "x.vmfb"])
    except SystemExit as stop:  # argparse's usage errors (support/arguments.py: exit status 1)
        rc = stop.code
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err
    assert words in err and not (tmp_path / "x.vmfb").exists()


def test_inspect_shows_each_groups_reference_computation_or_why_it_has_none(tmp_path, capsys):
    """The reflection's ``reference`` and ``reference_note`` (as regroup writes them) on a
    ``reference:`` line of the table and in --json; a group whose module says nothing of a
    reference (Triton groups, earlier releases) has no such line."""
    from iree.compiler import ir

    f16 = GroupReflection(
        "ex",
        "h",
        ["h", "h.candidate1"],
        0,
        "__autotune.ex.h.select",
        [],
        "main",
        reference="__autotune.ex.h.reference",
        reference_note="IREE's default with its linalg.matmul accumulating in f32, rounded to f16 "
        "(variants: no less accurate than the default against it)",
    )
    f32 = GroupReflection(
        "ex2",
        "g",
        ["g", "g.candidate1"],
        0,
        "__autotune.ex2.g.select",
        [],
        "main",
        reference_note="the default: linalg.matmul accumulates in f32, as precisely as the candidates, is its own "
        "reference (variants are compared with it)",
    )
    old = GroupReflection("ex3", "k", ["k"], 0, "__autotune.ex3.k.select", [], "main")
    with ir.Context():
        value = str(ir.StringAttr.get(encode_reflection([f16, f32, old])))
    path = tmp_path / "p.mlir"
    path.write_text(
        "util.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  util.return %a : tensor<4xf32>\n}\n"
        f"util.func public @__autotune() attributes {{iree.reflection = {{autotune.groups = {value}}}}} {{\n  util.return\n}}\n"
    )
    rc, out, err = _run(["inspect", str(path)], capsys)
    assert rc == 0, err
    lines = [ln for ln in out.splitlines() if ln.startswith("  reference:")]
    assert lines == [
        "  reference:   @__autotune.ex.h.reference: IREE's default with its linalg.matmul accumulating in f32, rounded "
        "to f16 (variants: no less accurate than the default against it)",
        "  reference:   the default: linalg.matmul accumulates in f32, as precisely as the candidates, is its own "
        "reference (variants are compared with it)",
    ]
    rc, out, err = _run(["inspect", str(path), "--json"], capsys)
    got = [(g["reference"], g["reference_note"]) for g in json.loads(out)["groups"]]
    assert got == [
        (f16.reference, f16.reference_note),
        (None, f32.reference_note),
        (None, None),
    ]
