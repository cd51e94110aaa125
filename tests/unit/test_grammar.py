"""Tests of the extension op's grammar (dialects/autotuning.lark) and of the front end that
reads it: each clause into AutotuneGroup values, sugared <-> generic round trips, the
scanner that finds an op's extent, and error positions."""

from __future__ import annotations

import pytest

from autotune_export.frontend import reader as F
from autotune_export.frontend import scanning
from autotune_export.support.diagnostics import DiagnosticError, Location
from autotune_export.frontend.reader import SourceFile, lower_extension_syntax
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.params import Param

OP = "hal.executable.autotuning.export"


def read(text: str) -> list[AutotuneGroup]:
    """The groups of ``text`` (positions dropped)."""
    _, groups = lower_extension_syntax(SourceFile(text, "t.mlir", "."))
    out = []
    for group, _ in groups:
        group.location = None
        out.append(group)
    return out


def read_one(op_text: str) -> AutotuneGroup:
    (group,) = read(op_text)
    return group


def error_of(text: str) -> tuple[str, int, int]:
    with pytest.raises(DiagnosticError) as info:
        lower_extension_syntax(SourceFile(text, "t.mlir", "."))
    d = info.value.diagnostics[0]
    assert d.severity == "error"
    return d.message, d.location.line, d.location.col


TRITON_HEAD = f'{OP} @mm triton("k.py", "matmul_kernel") signature(a: *fp16, c: *fp16 {{output}}, M: i32, N: i32) workload(M, N)'


# --------------------------------------------------------------------------------------------
# Clauses


def test_variants_and_default():
    g = read_one(f'{OP} @mm variants([@mm_32, @"mm 64", @mm.x]) default(@"mm 64")')
    assert g == AutotuneGroup(name="mm", variants=["mm_32", "mm 64", "mm.x"], default="mm 64")


def test_triton_form_clauses():
    g = read_one(
        TRITON_HEAD
        + ' configs([{BM = 128, num_warps = 8, flag = true, off = false, scale = 0.5, mode = "fast"}, {BM = 64, num_warps = 4, flag = false, off = true, scale = -2.0, mode = "slow"}])'
        + " grid(cdiv(M, BM), (N + 1) // 2, max(N, 1))"
        + " tune_workload(tensor<64x64xf16>, tensor<4x!hal.buffer_view>, 7 : i32, -3 : index)"
    )
    assert g.triton == ("k.py", "matmul_kernel")
    assert g.signature == [Param("a", "*fp16"), Param("c", "*fp16", True), Param("M", "i32"), Param("N", "i32")]
    assert g.configs == [
        [("BM", 128), ("num_warps", 8), ("flag", True), ("off", False), ("scale", 0.5), ("mode", "fast")],
        [("BM", 64), ("num_warps", 4), ("flag", False), ("off", True), ("scale", -2.0), ("mode", "slow")],
    ]
    assert isinstance(g.configs[0][2][1], bool)
    assert g.workload == ["M", "N"]
    assert g.grid == ["cdiv(M, BM)", "(N + 1) // 2", "max(N, 1)"]  # canonical text
    assert g.tune_workload == [["tensor<64x64xf16>", "tensor<4x!hal.buffer_view>", "7 : i32", "-3 : index"]]
    assert g.variants is None and g.default is None


def test_several_tune_workloads_and_choices():
    g = read_one(f"{OP} @k variants([@a, @b]) tune_workload([tensor<8xf32>, 1 : i32], [tensor<64xf32>, 2 : i32])"
                 " choices([8, 1] = @a, [64, 2] = @b)")
    assert g.tune_workload == [["tensor<8xf32>", "1 : i32"], ["tensor<64xf32>", "2 : i32"]]
    assert g.choices == [((8, 1), "a"), ((64, 2), "b")]


def test_optional_clauses_and_empty_lists():
    g = read_one(f'{OP} @k triton("k.py", "k") signature() workload() grid(1)')
    assert g.signature == [] and g.workload == [] and g.grid == ["1"] and g.configs is None


def test_clause_order_is_free_and_comments_are_ignored():
    text = f"""{OP} @mm   // the group
        grid(cdiv(M, 64))   // one dimension
        workload(M, N)
        signature(a: *fp16, // input
                  c: *fp16 {{output}}, M: i32, N: i32)
        triton("k.py",
               "matmul_kernel")"""
    g = read_one(text)
    assert g.triton == ("k.py", "matmul_kernel") and g.grid == ["cdiv(M, 64)"] and len(g.signature) == 4


def test_strings_are_mlir_string_literals():
    g = read_one(f'{OP} @"g\\22q\\"" triton("dir/a\\\\b.py", "k") signature() workload() grid(1)')
    assert g.name == 'g"q"'
    assert g.triton == ("dir/a\\b.py", "k")


# --------------------------------------------------------------------------------------------
# Round trips


ROUND_TRIP_OPS = [
    f"{OP} @mm variants([@a, @b])",
    f'{OP} @"my group" variants([@"v 0", @v1]) tune_workload(tensor<8xf32>, 3 : i32) default(@v1)',
    TRITON_HEAD + ' configs([{BM = 128, num_warps = 8, s = "x\\22y", f = 1.5e-3, b = true}]) grid(cdiv(M, BM) * cdiv(N, 32), 1) default(@mm_0)',
    f'{OP} @k triton("k.py", "k") signature(x: *bf16, n: i32) workload(n) grid(-n // 2 % 3, min(n, 4), max(n, 2))',
    # Call sites of libraries: None arguments and values, dtypes, Triton's bool names.
    f'{OP} @k triton("k.py", "k") signature(x: *u1, w: none, flag: u1, b: i1, y: *fp8e4nv {{output}}, n: i32)'
    ' configs([{OUT = tl.float16, ACC = tl.float32, F8 = tl.float8e5b16, I = tl.int64, U = tl.uint8, B = tl.int1,'
    ' D = tl.float64, BF = tl.bfloat16, SOFTCAP = none, S = "none", T = "tl.float16"}]) workload(n) grid(n)',
]


@pytest.mark.parametrize("op", ROUND_TRIP_OPS)
def test_sugar_round_trip(op):
    group = read_one(op)
    sugar = group.to_sugar("  ")
    again = read_one(sugar)
    assert again == group
    assert again.to_sugar("  ") == sugar


@pytest.mark.parametrize("op", ROUND_TRIP_OPS)
def test_generic_round_trip(op):
    from iree.compiler import ir

    group = read_one(op)
    ctx = F.new_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        group.build(ip=ir.InsertionPoint(module.body))
    # The op built with the bindings prints in generic form and parses back as the same group.
    reparsed = ir.Module.parse(str(module), ctx)
    (generic,) = F.find_groups(reparsed)
    back = AutotuneGroup.from_op(generic)
    back.location = None
    assert back == group


def test_module_round_trip_keeps_ir_and_locations():
    text = f"""hal.executable.source private @ex {{
  {OP} @mm
      variants([@a])
}}
util.func public @f(%x: i32) -> i32 {{
  util.return %x : i32
}}
"""
    module = F.parse_source(SourceFile(text, "t.mlir", "."))
    printed = F.print_module(module)
    assert f"    {OP} @mm variants([@a])\n" in printed
    assert "util.func public @f" in printed
    (op,) = F.find_groups(module)
    assert AutotuneGroup.from_op(op, "t.mlir").location == Location("t.mlir", 2, 3)
    # printing again from the printed text is a fixed point
    assert F.print_module(F.parse_source(SourceFile(printed, "u.mlir", "."))) == printed


# --------------------------------------------------------------------------------------------
# Scanning: where an op ends, and what the rewritten text looks like


def extent(text: str) -> str:
    start = text.index(OP)
    return text[start : scanning.op_extent(text, start)]


@pytest.mark.parametrize(
    "text, expected",
    [
        (f"{OP} @g variants([@a])\n  hal.executable.export @a", f"{OP} @g variants([@a])"),
        # a comment after the op, even one that looks like a clause, is not part of it
        (f"{OP} @g variants([@a])  // default(@a)\n}}", f"{OP} @g variants([@a])"),
        # comments between clauses are
        (f"{OP} @g // c1\n  variants([@a]) // c2 )\n  default(@a)\n}}", f"{OP} @g // c1\n  variants([@a]) // c2 )\n  default(@a)"),
        # ')' inside strings does not close a clause
        (f'{OP} @g triton("a)b.py", "k") workload(n)\n}}', f'{OP} @g triton("a)b.py", "k") workload(n)'),
        # '//' inside grid(...) is floor division, not a comment
        (f"{OP} @g grid(n // 2, (m // 4)) default(@a)\nfoo", f"{OP} @g grid(n // 2, (m // 4)) default(@a)"),
        # '//' in strings is not a comment
        (f'{OP} @g triton("//x.py", "k") default(@a)\n}}', f'{OP} @g triton("//x.py", "k") default(@a)'),
        # a clause keyword without parentheses is part of the op (so the parser reports it)
        (f"{OP} @g variants([@a]) default\n}}", f"{OP} @g variants([@a]) default"),
        # ... but an identifier that only starts like one, or an op name, is not
        (f"{OP} @g variants([@a]) defaults\n}}", f"{OP} @g variants([@a])"),
        (f"{OP} @g variants([@a])\n  util.func", f"{OP} @g variants([@a])"),
        # an unclosed clause stops at the '}' that closes the enclosing region
        (f"{OP} @g variants([@a, @b]\n}}\nfoo(1)", f"{OP} @g variants([@a, @b]\n"),
        # no symbol: the op is its name alone
        (f"{OP} variants([@a])", OP),
    ],
)
def test_op_extent(text, expected):
    assert extent(text) == expected


def test_occurrences_skip_comments_and_strings():
    text = f'// {OP} @x\n"{OP} @y"\n{OP}s @z\nfoo.{OP}\n  {OP} @g variants([@a])\n'
    starts = list(scanning.occurrences(text))
    assert starts == [text.index(f"  {OP} @g") + 2]


def test_rewrite_keeps_lines():
    text = f"""hal.executable.source private @ex {{
  {OP} @mm
      variants([@a,
                @b])  // trailing
  // a comment
}}
"""
    lowered, groups = lower_extension_syntax(SourceFile(text, "t.mlir", "."))
    assert lowered.count("\n") == text.count("\n")
    lines = lowered.split("\n")
    # A placeholder op at the sugared op's position; parse_source gives it the group's attributes.
    assert lines[1] == '  "autotune.export"() {autotune.pending = 0 : i64} : () -> () loc("-":2:3)'
    assert groups[0][0].variants == ["a", "b"]
    assert lines[2] == "" and lines[3] == "  // trailing"
    assert lines[4:] == text.split("\n")[4:]
    assert groups[0][1]["variants"] == Location("t.mlir", 3, 7)


def test_column_map():
    text = f"  {OP} @g variants([@a]), @b\n"
    source = SourceFile(text, "t.mlir", ".")
    lowered, _, colmap = F._lower(source)
    comma_new = lowered.index(", @b") + 1
    comma_old = text.index(", @b") + 1
    assert colmap.column(1, comma_new) == comma_old
    assert colmap.column(1, 3) == 3  # the op itself
    assert colmap.column(1, 20) == 3  # inside the generic op: the op's start
    assert colmap.column(2, 5) == 5  # other lines are unchanged
    # a multi-line op: what follows its last line keeps its column
    text = f"  {OP} @g\n    variants([@a]) x\n"
    lowered, _, colmap = F._lower(SourceFile(text, "t.mlir", "."))
    assert lowered.split("\n")[1] == " x"
    assert colmap.column(2, 2) == text.split("\n")[1].index("x") + 1


# --------------------------------------------------------------------------------------------
# Errors: message and exact position


def position(text: str, anchor: str, after: bool = False) -> tuple[int, int]:
    """(line, col) of the first ``anchor`` in ``text`` (of its end with ``after``)."""
    offset = text.index(anchor) + (len(anchor) if after else 0)
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


@pytest.mark.parametrize(
    "text, message, anchor, after",
    [
        # at the offending token
        (f"{OP} @g variants(@a)", "expected '[' in variants(...), found '@a'", "@a", False),
        (f"{OP} @g variants([@a] @b)", "expected ')' in variants(...), found '@b'", "@b", False),
        (f"{OP} @g variants([@a])\n   // note\n   bogus(1)", "unknown clause 'bogus'", "bogus", False),
        (f'{OP} @g triton("k.py", "k") signature(a: *fp16 {{in}})', "unknown parameter flag 'in'", "in}", False),
        (f'{OP} @g triton("k.py", "k") configs([{{A = 1}}, {{A: 2}}])', "expected '=' in configs(...), found ':'", ": 2", False),
        (f"{OP} @g variants([@a]) tune_workload(tensor<?xf32>)", "need a static shape", "tensor", False),
        (f"{OP} @g variants([@a]) variants([@b])", "duplicate clause 'variants'", "variants([@b", False),
        (f'{OP} @g triton("a\\qb.py", "k")', "unknown escape '\\q' in string literal", "\\q", False),
        # call-site values and types
        (f'{OP} @g triton("k.py", "k") configs([{{A = 1, D = tl.float17}}])', "unknown Triton dtype 'tl.float17' in configs(...)", "tl.float17", False),
        (f'{OP} @g triton("k.py", "k") configs([{{A = None}}])', "expected a value (integer, number, true, false, string, none or a Triton dtype", "None", False),
        (f'{OP} @g triton("k.py", "k") signature(w: none:16)', "'w: none:16': a none parameter takes no specialization hint", "none:16", False),
        (f'{OP} @g triton("k.py", "k") signature(w: *none)', "unknown Triton type '*none' for parameter 'w'", "*none", False),
        (f'{OP} @g triton("k.py", "k") signature(w: none {{output}})', "'w' is marked {output} but is not a pointer", "{output}", False),
        (f'{OP} @g triton("k.py", "k") signature(x: *fp16 {{output}}, w: none) workload(w) grid(1)', "workload value 'w' is none (the call passes None", "w) grid", False),
        (f'{OP} @g triton("k.py", "k") signature(x: *fp16 {{output}}, w: none, n: i32) workload(n) grid(n + w)', "grid uses 'w', which is none", "w)", False),
        # inside a grid expression spanning lines: at the character
        (f'{OP} @g triton("k.py", "k") signature(n: i32) workload(n) grid(n,\n    cdiv(n, ))', "unexpected ')' in grid expression", "))", False),
        (f'{OP} @g triton("k.py", "k") signature(n: i32) workload(n) grid(n,\n    n // 0)', "division by zero in grid expression ('// 0')", "// 0", False),
        # a missing token is reported where it belongs: after the previous one
        (f"{OP} variants([@a])", "expected the group's symbol (@name)", OP, True),
        (f"{OP} @g variants([@a]\n}}", "expected ')' in variants(...), found '}'", "[@a]", True),
        (f"{OP} @g variants([@a]) default", "expected '(' after 'default'", "default", True),
        (f'{OP} @g triton("k.py", "k"  // comment\n   // comment\n   signature(a: i32)', "expected ')' in triton(...), found 'signature'", '"k"', True),
    ],
)
def test_error_positions(text, message, anchor, after):
    msg, line, col = error_of(text)
    assert message in msg
    assert (line, col) == position(text, anchor, after)


def test_error_positions_are_absolute_in_the_file():
    text = f"\n\nhal.executable.source private @e {{\n    {OP} @g variants([@a] @b)\n}}\n"
    msg, line, col = error_of(text)
    assert "found '@b'" in msg and (line, col) == position(text, "@b")
