"""``autotune-export check``: every variant of a triton(...) group run in Triton's interpreter.

The fast tests check what is launched (the binding of the kernel's parameters, the grid per
config, the fills, the workloads) without running anything; the integration tests run Triton's
interpreter in a child process (importing torch there takes seconds) and check the verdicts:
a correct group passes, a config-dependent bug and binding mistakes fail, named and located.
"""

from __future__ import annotations

import argparse

import pytest

from autotune_export.frontend.reader import SourceFile, parse_source
from autotune_export.ir.walk import executable_sources, groups_of
from autotune_export.passes.base import PassContext
from autotune_export.tools import check, cli

KERNELS = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})],
                 key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def tail_bug_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    # With BLOCK = 256 the loads drop the tail past the last whole block (a wrong mask).
    mask = offs < n if BLOCK != 256 else offs < (n // BLOCK) * BLOCK
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x + y, mask=offs < n)


@triton.jit
def bump_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + y, mask=mask)  # x is updated in place
    tl.store(out_ptr + offs, y, mask=mask)


@triton.heuristics({"HAS_BIAS": lambda args: args["b_ptr"] is not None})
@triton.jit
def bias_kernel(x_ptr, b_ptr, out_ptr, n, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if HAS_BIAS:
        x += tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def accumulate_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(acc_ptr + offs, mask=mask)  # reads the output before writing it
    tl.store(acc_ptr + offs, acc + tl.load(x_ptr + offs, mask=mask), mask=mask)
'''

HOST = """
util.func public @f(%x: tensor<1000xf32>, %y: tensor<1000xf32>) -> tensor<1000xf32> {{
  %n = arith.constant 1000 : i32
  %c = arith.constant 1000 : index
  %r = flow.dispatch @ex::@g[%c](%x, %y, %n) : (tensor<1000xf32>, tensor<1000xf32>, i32) -> {result}
  util.return %r : tensor<1000xf32>
}}
"""


def _group(kernel: str, signature: str, extra: str = "") -> str:
    return (f'hal.executable.source private @ex {{\n  hal.executable.autotuning.export @g\n      triton("k.py", "{kernel}")\n'
            f"      signature({signature})\n{extra}      workload(n)\n      grid(cdiv(n, BLOCK))\n}}\n")


ADD = _group("add_kernel", "x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32") + HOST.format(result="tensor<1000xf32>")
TAIL_BUG = (_group("tail_bug_kernel", "x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32",
                   "      configs([{BLOCK = 64}, {BLOCK = 128}, {BLOCK = 256}])\n") + HOST.format(result="tensor<1000xf32>"))
BUMP_UNMARKED = (_group("bump_kernel", "x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32",
                        "      configs([{BLOCK = 64}, {BLOCK = 128}])\n") + HOST.format(result="tensor<1000xf32>"))
# The same kernel with x written in place: x_ptr is an {output} whose operand the result is tied to.
BUMP_IN_PLACE = (_group("bump_kernel", "x_ptr: *fp32 {output}, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32",
                        "      configs([{BLOCK = 64}, {BLOCK = 128}])\n") + """
util.func public @f(%x: tensor<1000xf32>, %y: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>) {
  %n = arith.constant 1000 : i32
  %c = arith.constant 1000 : index
  %r:2 = flow.dispatch @ex::@g[%c](%x, %y, %n) : (tensor<1000xf32>, tensor<1000xf32>, i32) -> (%x, tensor<1000xf32>)
  util.return %r#0, %r#1 : tensor<1000xf32>, tensor<1000xf32>
}
""")
ACCUMULATE_FRESH = (_group("accumulate_kernel", "x_ptr: *fp32, acc_ptr: *fp32 {output}, n: i32",
                           "      configs([{BLOCK = 64}, {BLOCK = 128}])\n{zero}") + """
util.func public @f(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %n = arith.constant 1000 : i32
  %c = arith.constant 1000 : index
  %r = flow.dispatch @ex::@g[%c](%x, %n) : (tensor<1000xf32>, i32) -> tensor<1000xf32>
  util.return %r : tensor<1000xf32>
}
""")
DYNAMIC = _group("add_kernel", "x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {output}, n: i32",
                 "      tune_workload([tensor<100xf32>, tensor<100xf32>], [tensor<300xf32>, tensor<300xf32>])\n") + """
util.func public @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %n = arith.index_cast %d : index to i32
  %r = flow.dispatch @ex::@g[%d](%x, %y, %n) : (tensor<?xf32>{%d}, tensor<?xf32>{%d}, i32) -> tensor<?xf32>{%d}
  util.return %r : tensor<?xf32>
}
"""


def _args(**kw):
    base = dict(target="sm_80", seed=0, timeout=60.0, reference=None, group=None)
    base.update(kw)
    return argparse.Namespace(**base)


def _launches(tmp_path, text: str, **kw):
    (tmp_path / "k.py").write_text(KERNELS)
    source = SourceFile(text, str(tmp_path / "in.mlir"), str(tmp_path))
    module = parse_source(source)
    remarks = []
    ctx = PassContext(source=source, remark=remarks.append)
    launches, skipped = [], []
    for src in executable_sources(module):
        for op in groups_of(src):
            got, why = check.launches_of_group(ctx, module, src, op, _args(**kw))
            launches += got
            skipped += why
    return launches, skipped


# --------------------------------------------------------------------------------------------
# What is launched (fast: nothing runs)


def test_binding_and_grid_per_config(tmp_path):
    (launch,), _ = _launches(tmp_path, ADD)
    assert launch.params == [("buffer", 0), ("buffer", 1), ("buffer", 2), ("scalar", 1000)]
    assert [(b.param, b.role, b.fill, b.shape, b.dtype) for b in launch.buffers] == [
        ("x_ptr", "input", "data", (1000,), "float32"),
        ("y_ptr", "input", "data", (1000,), "float32"),
        ("out_ptr", "output", "undefined", (1000,), "float32"),
    ]
    assert launch.results == [2]
    # The triton.autotune configs, with cdiv(n, BLOCK) evaluated per config.
    assert [(v.constexprs, v.grid) for v in launch.variants] == [
        ({"BLOCK": 64}, (16, 1, 1)), ({"BLOCK": 128}, (8, 1, 1)), ({"BLOCK": 256}, (4, 1, 1))]
    assert launch.default == 0 and launch.kernel == "add_kernel"


def test_none_argument_is_passed_as_none(tmp_path):
    text = (_group("bias_kernel", "x_ptr: *fp32, b_ptr: none, out_ptr: *fp32 {output}, n: i32",
                   "      configs([{BLOCK = 64}])\n").replace("%x, %y, %n", "%x, %n")
            + HOST.format(result="tensor<1000xf32>").replace("(%x, %y, %n) : (tensor<1000xf32>, tensor<1000xf32>, i32)",
                                                         "(%x, %n) : (tensor<1000xf32>, i32)"))
    (launch,), _ = _launches(tmp_path, text)
    # None positionally, as the call passes it (a constexpr None in Triton); the heuristic saw None.
    assert launch.params == [("buffer", 0), ("none",), ("buffer", 1), ("scalar", 1000)]
    assert launch.variants[0].constexprs == {"HAS_BIAS": False, "BLOCK": 64}


def test_in_place_output_is_bound_at_its_operand(tmp_path):
    (launch,), _ = _launches(tmp_path, BUMP_IN_PLACE)
    assert [(b.param, b.role) for b in launch.buffers] == [("x_ptr", "inplace"), ("y_ptr", "input"), ("out_ptr", "output")]
    # Result 0 is tied to %x (binding 0), result 1 is the untied one (binding 2).
    assert launch.results == [0, 2]


def test_reset_to_zero_output_starts_at_zero(tmp_path):
    (launch,), _ = _launches(tmp_path, ACCUMULATE_FRESH.replace("{zero}", "      reset_to_zero(acc_ptr)\n"))
    # zero_fill_triton ties the output to a zero fill: it is an operand now, zeroed.
    assert [(b.param, b.role, b.fill) for b in launch.buffers] == [("x_ptr", "input", "data"), ("acc_ptr", "inplace", "zeros")]
    (launch,), _ = _launches(tmp_path, ACCUMULATE_FRESH.replace("{zero}", ""))
    assert [(b.param, b.role, b.fill) for b in launch.buffers] == [("x_ptr", "input", "data"), ("acc_ptr", "output", "undefined")]


def test_every_tune_workload_is_a_launch(tmp_path):
    launches, _ = _launches(tmp_path, DYNAMIC)
    assert [[b.shape for b in launch.buffers] for launch in launches] == [
        [(100,)] * 3, [(300,)] * 3]
    assert [launch.params[3] for launch in launches] == [("scalar", 100), ("scalar", 300)]
    assert [[v.grid[0] for v in launch.variants] for launch in launches] == [[2, 1, 1], [5, 3, 2]]


def test_each_dispatch_runs_only_what_its_pruning_keeps(tmp_path):
    """Issue 21.5: the group compiles what some dispatch's prune_configs_by keeps (up_to_n keeps
    the blocks that fit in n; the kernel does not mask), and each dispatch is checked on its own
    configs only: BLOCK 512 and 1024 never run at the n = 256 dispatch (they would read past its
    buffers, as on the GPU), but do at the n = 65536 one (main: both ran 128 and 256 only)."""
    import pathlib

    (tmp_path / "p.py").write_text((pathlib.Path(__file__).parents[1] / "lit/Inputs/pruned_kernels.py").read_text())
    text = (
        _group("scale_unmasked", "x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32").replace("k.py", "p.py")
        + """
util.func public @big(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %c = arith.constant 65536 : index
  %n = arith.constant 65536 : i32
  %r = flow.dispatch @ex::@g[%c](%x, %n) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %r : tensor<65536xf32>
}
util.func public @small(%x: tensor<256xf32>) -> tensor<256xf32> {
  %c = arith.constant 256 : index
  %n = arith.constant 256 : i32
  %r = flow.dispatch @ex::@g[%c](%x, %n) : (tensor<256xf32>, i32) -> tensor<256xf32>
  util.return %r : tensor<256xf32>
}
"""
    )
    big, small = _launches(tmp_path, text)[0]
    assert [v.constexprs["BLOCK"] for v in big.variants] == [128, 256, 512, 1024]
    assert [v.constexprs["BLOCK"] for v in small.variants] == [128, 256]
    assert big.default == small.default == 0


def test_unknown_sizes_are_reported_not_guessed(tmp_path):
    text = DYNAMIC.replace("      tune_workload([tensor<100xf32>, tensor<100xf32>], [tensor<300xf32>, tensor<300xf32>])\n", "")
    launches, skipped = _launches(tmp_path, text)
    assert launches == []
    assert len(skipped) == 1 and "not checked on the host's static types: the size of tensor operand 0" in skipped[0].message


def test_check_is_a_subcommand():
    assert cli.SUBCOMMANDS["check"][0] == "autotune_export.tools.check"


# --------------------------------------------------------------------------------------------
# Verdicts (Triton's interpreter in a child process)


def _run(tmp_path, capsys, text: str, *extra: str) -> tuple[int, str, str]:
    pytest.importorskip("torch", reason="Triton's interpreter runs on torch tensors")
    (tmp_path / "k.py").write_text(KERNELS)
    (tmp_path / "in.mlir").write_text(text)
    rc = cli.main(["check", str(tmp_path / "in.mlir"), "--timeout", "120", *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.integration
def test_correct_group_passes_against_a_reference(tmp_path, capsys):
    (tmp_path / "ref.py").write_text("def add(x, y, out, n):\n    out[:] = x + y\n")
    rc, out, err = _run(tmp_path, capsys, ADD, "--reference", f"{tmp_path / 'ref.py'}:add")
    assert rc == 0, out + err
    assert "every variant agrees" in out
    assert [line.split()[-1] for line in out.splitlines() if line.startswith("  g_")] == ["default", "PASS", "PASS", "PASS"]
    assert "reference" in out and not err.strip()
    # Run from its source, as kernel files are (support/files.run_source): no __pycache__
    # written next to the user's file, no stale .pyc ever trusted.
    assert not (tmp_path / "__pycache__").exists()


@pytest.mark.integration
def test_config_dependent_bug_names_the_variant(tmp_path, capsys):
    rc, out, err = _run(tmp_path, capsys, TAIL_BUG)
    assert rc == 1
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1, err
    # Located at the dispatch (line 13 of the input), naming config 2 and the first wrong element.
    assert errors[0].startswith(f"{tmp_path / 'in.mlir'}:13:")
    assert "variant g_2_256_w4_s3 (config 2 {BLOCK = 256}) differs from the default variant g_0_64_w4_s3" in errors[0]
    assert "first at flat index 768" in errors[0]  # 1000 // 256 * 256: the first element the bad mask drops


@pytest.mark.integration
def test_binding_mistakes_are_caught(tmp_path, capsys):
    # The kernel updates x in place, but the signature does not mark it and no result is tied to it.
    rc, out, err = _run(tmp_path, capsys, BUMP_UNMARKED)
    assert rc == 1
    assert "g_0_64_w4_s3, g_1_128_w4_s3 write through 'x_ptr', which the dispatch passes as an operand no result is tied to" in err
    # Marked and tied, the same kernel passes.
    rc, out, err = _run(tmp_path, capsys, BUMP_IN_PLACE)
    assert rc == 0, err
    # An output the kernel reads before writing, given a fresh buffer (no reset_to_zero): the
    # result depends on undefined contents.
    rc, out, err = _run(tmp_path, capsys, ACCUMULATE_FRESH.replace("{zero}", ""))
    assert rc == 1
    assert "the results of g_0_64_w4_s3 depend on the contents of buffers of undefined contents ('acc_ptr')" in err
    rc, out, err = _run(tmp_path, capsys, ACCUMULATE_FRESH.replace("{zero}", "      reset_to_zero(acc_ptr)\n"))
    assert rc == 0, err


@pytest.mark.integration
def test_reference_that_disagrees_fails(tmp_path, capsys):
    # A reference that swaps the roles of x and out (as a wrong in-place order would).
    (tmp_path / "ref.py").write_text("def add(x, y, out, n):\n    out[:] = x - y\n")
    rc, out, err = _run(tmp_path, capsys, ADD, "--reference", f"{tmp_path / 'ref.py'}:add", "--group", "g")
    assert rc == 1
    assert "the reference differs from the default variant g_0_64_w4_s3" in err


# --------------------------------------------------------------------------------------------
# A variant that never finishes (tester finding 06: reported as "InterpreterError: _Timeout()")


def test_time_limit_survives_the_interpreter_wrapping_the_signal():
    """Triton's interpreter re-raises whatever a kernel raises as ``InterpreterError(repr(e))``
    (triton/runtime/interpreter.py), the time limit's own exception included: the limit is still
    reported as the limit."""
    from triton.runtime.errors import InterpreterError

    from autotune_export.tools import check_run

    def interpreted_spin():
        try:
            while True:
                pass
        except Exception as e:  # what the interpreter does around a kernel's programs
            raise InterpreterError(repr(e)) from e

    with pytest.raises(check_run._Timeout):
        check_run._limited(0.05, interpreted_spin)
    def interpreted_error():
        raise InterpreterError("ZeroDivisionError()")

    with pytest.raises(InterpreterError, match="ZeroDivisionError"):  # the kernel's own error stays its own
        check_run._limited(5.0, interpreted_error)


def test_a_variant_past_the_limit_is_reported_as_docs_check_md_words_it(tmp_path):
    from autotune_export.tools.check_compare import CheckReport, compare

    (launch,), _ = _launches(tmp_path, ADD)
    late = "did not finish within 15 s in the interpreter (programs run one after another there: ...)"
    runs = [{"label": v.name, "salt": 1, "buffers": None, "error": late if k == 1 else "ValueError: x"}
            for k, v in enumerate(launch.variants)]
    runs.append({"label": launch.variants[launch.default].name, "salt": 2, "buffers": None, "error": "ValueError: x"})
    report = CheckReport()
    compare(launch, {"initial": [], "runs": runs}, report)
    messages = [d.message for d in report.errors]
    assert any(m.endswith(f"{launch.variants[1].name} did not finish within 15 s in the interpreter "
                          "(programs run one after another there: ...)") for m in messages), messages
    assert any(f"{launch.variants[0].name} failed: ValueError: x" in m for m in messages), messages


# --------------------------------------------------------------------------------------------
# --reference checked before anything runs (tester finding 11: found after every variant ran)


@pytest.mark.parametrize("spec, message", [
    ("{tmp}/nothere.py:add", "--reference {tmp}/nothere.py:add: no such file {tmp}/nothere.py"),
    ("{tmp}/ref.py:add", "--reference {tmp}/ref.py:add: {tmp}/ref.py defines no 'add' (its functions: sub)"),
    ("no_such_module_here:add", "--reference no_such_module_here:add: no module named no_such_module_here"),
    ("{tmp}/ref.py", "expected MODULE:FUNCTION"),
])
def test_reference_is_checked_before_anything_runs(tmp_path, capsys, spec, message):
    (tmp_path / "ref.py").write_text("def sub(x, y, out, n):\n    out[:] = x - y\n")
    (tmp_path / "in.mlir").write_text("this is not even read")  # nothing is parsed, compiled or run first
    rc = cli.main(["check", str(tmp_path / "in.mlir"), "--reference", spec.format(tmp=tmp_path)])
    assert rc == 1
    err = capsys.readouterr().err
    assert message.format(tmp=tmp_path) in err and "Traceback" not in err


def test_reference_that_exists_passes_the_check(tmp_path):
    from autotune_export.tools.check_run import check_reference

    (tmp_path / "ref.py").write_text("import numpy as np\nif True:\n    def add(x, y, out, n):\n        out[:] = x + y\n"
                                     "alias = add\n")
    for name in ("add", "alias", "np"):
        check_reference(f"{tmp_path / 'ref.py'}:{name}")
    (tmp_path / "star.py").write_text("from os.path import *\n")
    check_reference(f"{tmp_path / 'star.py'}:join")  # import *: taken at its word
    check_reference("json:dumps")
