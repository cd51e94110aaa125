"""Tests of --split-input-file and --verify-diagnostics (autotune_export.tools.verify_diagnostics)."""

from __future__ import annotations

import pytest

from autotune_export.support.diagnostics import Diagnostic, Location
from autotune_export.frontend.reader import SourceFile
from autotune_export.tools.verify_diagnostics import check_expected, parse_expectations, split_input


def src(text: str) -> SourceFile:
    return SourceFile(text, "t.mlir", "/base")


# --------------------------------------------------------------------------------------------
# split_input


def chunk_lines(chunk: SourceFile) -> dict[int, str]:
    """Non-empty lines of a chunk by (1-based) line number."""
    return {i: line for i, line in enumerate(chunk.text.split("\n"), start=1) if line}


@pytest.mark.parametrize(
    "text",
    [
        "a\nb\n// -----\nc\n\nd\n// -----\ne\n",
        "a\n// -----   \nb\n",  # trailing blanks on the separator
        "a\n// -----\n\n\nb\n",  # blank lines after it
        "// -----\na\n// -----\n",  # separators first and last
        "a\n// -----\nb",  # no final newline
        "a\r\n// -----\r\nb\r\n",
    ],
)
def test_split_keeps_line_numbers(text):
    lines = text.split("\n")
    chunks = split_input(src(text))
    assert len(chunks) == text.count("// -----") + 1
    seen = {}
    for chunk in chunks:
        assert chunk.name == "t.mlir" and chunk.base_dir == "/base"
        assert "// -----" not in chunk.text
        for number, line in chunk_lines(chunk).items():
            assert lines[number - 1] == line, (number, line)
            seen[number] = line
    # every line but the separators lands in exactly one chunk
    expected = {i: l for i, l in enumerate(lines, start=1) if l and not l.startswith("// -----")}
    assert seen == expected


def test_split_contents():
    chunks = split_input(src("a\n// -----\nb\n// -----\nc\n"))
    assert [c.text for c in chunks] == ["a\n", "\n\nb\n", "\n\n\n\nc\n"]


def test_split_without_separator_is_one_chunk():
    (chunk,) = split_input(src("a\n// ---- not one\nb\n"))
    assert chunk.text == "a\n// ---- not one\nb\n"


def test_split_marker_must_be_alone_on_its_line():
    chunks = split_input(src("a // -----\n  // -----\nb\n"))
    assert len(chunks) == 1


# --------------------------------------------------------------------------------------------
# parse_expectations


def test_parse_expectations_targets():
    text = "\n".join(
        [
            "op  // expected-error {{same line}}",  # 1
            "// expected-error @+1 {{next line}}",  # 2
            "op",  # 3
            "op",  # 4
            "// expected-warning@-2 {{two above}}",  # 5
            "// expected-remark @above {{above}}",  # 6
            "// expected-note @below {{below}}  ",  # 7
            "// expected-note@+3 {{three below}}",  # 8
            "// expected-error @unknown {{nowhere}}",  # 9
        ]
    )
    got = [(e.severity, e.line, e.message) for e in parse_expectations(src(text))]
    assert got == [
        ("error", 1, "same line"),
        ("error", 3, "next line"),
        ("warning", 3, "two above"),
        ("remark", 5, "above"),
        ("note", 8, "below"),
        ("note", 11, "three below"),
        ("error", None, "nowhere"),
    ]
    first = parse_expectations(src(text))[0]
    assert first.at == Location("t.mlir", 1, 8)


def test_one_annotation_per_line_message_to_the_last_braces():
    """As in MLIR: the message runs to the ``}}`` that ends the line."""
    (e,) = parse_expectations(src("// expected-error {{a}} expected-note {{b}}"))
    assert (e.severity, e.message) == ("error", "a}} expected-note {{b")


def test_parse_expectations_message_may_contain_braces():
    (e,) = parse_expectations(src("// expected-error {{configs([{A = 1}]) is {output}}}"))
    assert e.message == "configs([{A = 1}]) is {output}"


def test_parse_expectations_ignores_other_text():
    text = "// expected-errors {{x}}\n// expected-fatal {{y}}\n// expected-error x\n// expected-error {{x}} more\n"
    assert parse_expectations(src(text)) == []


# --------------------------------------------------------------------------------------------
# check_expected


def diag(severity: str, line: int, message: str, notes=(), file: str = "t.mlir") -> Diagnostic:
    return Diagnostic(severity, message, Location(file, line, 3), list(notes))


TEXT = "\n".join(
    [
        "// expected-error @+1 {{bad thing}}",  # 1
        "op",  # 2
        "// expected-note @-1 {{see here}}",  # 3
    ]
)


def test_all_matched():
    assert check_expected(src(TEXT), [diag("error", 2, "a bad thing happened", [diag("note", 2, "see here first")])]) == []


def test_substring_match_is_case_sensitive():
    problems = check_expected(src(TEXT), [diag("error", 2, "a Bad Thing", [diag("note", 2, "see here")])])
    assert [p.message for p in problems] == ["unexpected error: a Bad Thing", 'expected error "bad thing" was not produced']


def test_wrong_line():
    problems = check_expected(src(TEXT), [diag("error", 1, "bad thing", [diag("note", 2, "see here")])])
    assert [(p.message, p.location.line) for p in problems] == [
        ("unexpected error: bad thing", 1),
        ('expected error "bad thing" was not produced', 1),
    ]
    assert problems[1].location == Location("t.mlir", 1, 4)  # at the annotation


def test_wrong_severity():
    problems = check_expected(src(TEXT), [diag("warning", 2, "bad thing"), diag("error", 2, "bad thing")])
    assert [p.message for p in problems] == ["unexpected warning: bad thing", 'expected note "see here" was not produced']


def test_one_annotation_matches_one_diagnostic():
    problems = check_expected(src(TEXT), [diag("error", 2, "bad thing"), diag("error", 2, "bad thing again")])
    assert [p.message for p in problems] == ["unexpected error: bad thing again", 'expected note "see here" was not produced']


def test_two_annotations_on_one_line():
    text = "// expected-error @+2 {{first}}\n// expected-error @+1 {{second}}\nop\n"
    assert check_expected(src(text), [diag("error", 3, "second"), diag("error", 3, "first")]) == []


def test_unexpected_notes_are_tolerated_but_expected_ones_must_appear():
    text = "// expected-error @+1 {{bad}}\nop\n"
    assert check_expected(src(text), [diag("error", 2, "bad", [diag("note", 2, "extra")])]) == []
    problems = check_expected(src(TEXT), [diag("error", 2, "bad thing")])
    assert [p.message for p in problems] == ['expected note "see here" was not produced']


def test_remarks_must_be_expected():
    problems = check_expected(src("op\n"), [diag("remark", 1, "2 variants")])
    assert [p.message for p in problems] == ["unexpected remark: 2 variants"]


def test_diagnostics_elsewhere_never_match():
    text = "// expected-error {{boom}}\n"
    other_file = diag("error", 1, "boom", file="kernel.py")
    no_location = Diagnostic("error", "boom")
    problems = check_expected(src(text), [other_file, no_location])
    assert check_expected(src("// expected-error @unknown {{boom}}\n"), [other_file])[0].message == "unexpected error: boom"
    assert [(p.message, str(p.location)) for p in problems] == [
        ("unexpected error: boom", "kernel.py:1:3"),
        ("unexpected error: boom", "t.mlir:1:1"),
        ('expected error "boom" was not produced', "t.mlir:1:4"),
    ]


def test_unknown_location():
    text = "// expected-error @unknown {{unknown pass}}\n"
    assert check_expected(src(text), [Diagnostic("error", "unknown pass 'x'")]) == []
    problems = check_expected(src(text), [diag("error", 1, "unknown pass 'x'")])
    assert [p.message for p in problems] == ["unexpected error: unknown pass 'x'", 'expected error "unknown pass" was not produced']


def test_no_annotations_no_diagnostics():
    assert check_expected(src("op\n"), []) == []
