"""autotune_export.frontend.compat: older IREE syntax rewritten into IREE 3.13's, lines kept."""

from __future__ import annotations

import pytest

from autotune_export.frontend import compat
from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.frontend.reader import SourceFile, parse_source, print_module

OLD_LAYOUT = """#hal.pipeline.layout<push_constants = 1, sets = [
  <0, bindings = [
    <0, storage_buffer, ReadOnly>,
    <1, storage_buffer>
  ]>
]>"""
NEW_LAYOUT = (
    "#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, "
    "#hal.pipeline.binding<storage_buffer>]>"
)

# The shape of IREE's samples/custom_dispatch/cuda/kernels/example.mlir before 3.0 (written
# out again here, trimmed): comments inside the dictionaries, the layout inline, the
# hal.interface.bindings attribute, the unnamed count region.
SAMPLE_2023 = """#target = #hal.executable.target<"cuda", "cuda-nvptx-fb">
module @example {
  hal.executable.source private @executable attributes {
    // Objects per target.
    objects = #hal.executable.objects<{
      #target = [
        #hal.executable.object<{
          // a path, or embedded data
          path = "kernels.ptx"
        }>
      ]
    }>
  } {
    hal.executable.export public @simple_mul ordinal(0)
        layout(#hal.pipeline.layout<push_constants = 1, sets = [
          <0, bindings = [
              <0, storage_buffer, ReadOnly>,
              <1, storage_buffer, ReadOnly>,
              <2, storage_buffer>
          ]>
        ]>) attributes {
      // The block size.
      workgroup_size = [64 : index, 1 : index, 1 : index],
      hal.interface.bindings = [
        #hal.interface.binding<0, 0>,
        #hal.interface.binding<0, 1>,
        #hal.interface.binding<0, 2>
      ]
    } {
    ^bb0(%device: !hal.device, %workload: index):
      // The workgroup count.
      %x = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%workload]
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    }
  }  // hal.executable.source
  func.func @mixed_invocation(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?xf32>
    %dim_i32 = arith.index_cast %dim : index to i32
    %0 = flow.dispatch @executable::@simple_mul[%dim](%dim_i32, %arg0, %arg1) : (i32, tensor<?xf32>{%dim}, tensor<?xf32>{%dim}) -> tensor<?xf32>{%dim}
    return %0 : tensor<?xf32>
  }
}
"""


def _parse(text: str, name: str = "in.mlir"):
    return parse_source(SourceFile(text, name, "."))


def test_current_syntax_is_returned_unchanged():
    text = f"#l = {NEW_LAYOUT}\nhal.executable.source private @e {{\n}}\n"
    assert compat.normalize(text) is text


@pytest.mark.parametrize(
    "body, expected, keys",
    [
        ("push_constants = 1, sets = [<0, bindings = [<0, storage_buffer, ReadOnly>, <1, storage_buffer>]>]", NEW_LAYOUT, [(0, 0), (0, 1)]),
        (
            "push_constants = 0, sets = [#hal.descriptor_set.layout<0, bindings = [#hal.descriptor_set.binding<0, storage_buffer>]>]",
            "#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>",
            [(0, 0)],
        ),
        (
            "sets = [<1, bindings = [<0, storage_buffer>]>, <0, bindings = [<2, uniform_buffer, \"ReadOnly|Indirect\">, <0, storage_buffer, Indirect>]>]",
            "#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, Indirect>, "
            "#hal.pipeline.binding<uniform_buffer, \"ReadOnly|Indirect\">, #hal.pipeline.binding<storage_buffer>]>",
            [(0, 0), (0, 2), (1, 0)],
        ),
        (
            "push_constants = 2, sets = [<0, bindings = [<0, storage_buffer, \"Indirect|ReadOnly\">], flags = Indirect>]",
            "#hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, \"ReadOnly|Indirect\">], flags = Indirect>",
            [(0, 0)],
        ),
        ("push_constants = 3", "#hal.pipeline.layout<constants = 3, bindings = []>", []),
        ("", "#hal.pipeline.layout<bindings = []>", []),
    ],
)
def test_normalize_layout(body, expected, keys):
    assert compat.normalize_layout(body) == (expected, keys)


@pytest.mark.parametrize(
    "body, message",
    [
        ("push_constants = 1 sets = []", "expected ','"),
        ("sets = [<0, bindings = [<0 storage_buffer>]>]", "found 'storage_buffer'"),
        ("sets = [<0, bindings = [<0, storage_buffer>, <0, uniform_buffer>]>]", "set 0 binding 0 is declared twice"),
        ("sets = [<0, bindings = [<0, image>]>]", "unknown descriptor type 'image'"),
        ("sets = [<0, bindings = [<0, storage_buffer, Writable>]>]", "unknown binding flag 'Writable'"),
        ("push_constants = 1, push_constants = 2", "'push_constants' is given twice"),
    ],
)
def test_normalize_layout_errors(body, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        compat.normalize_layout(body)


def test_layout_alias_and_lines_kept():
    text = f"#layout = {OLD_LAYOUT}\n// next\n"
    out = compat.normalize(text)
    assert out.startswith(f"#layout = {NEW_LAYOUT}")
    assert out.count("\n") == text.count("\n")
    assert out.endswith("\n// next\n")


def test_executable_layout_name_of_2022():
    text = "#l = #hal.executable.layout<push_constants = 0, sets = [#hal.descriptor_set.layout<0, bindings = [#hal.descriptor_set.binding<0, storage_buffer>]>]>"
    assert compat.normalize(text) == "#l = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>"


def test_source_dictionary_becomes_properties_in_place():
    text = 'hal.executable.source private @e attributes {\n  objects = #hal.executable.objects<{}>\n} {\n}\n'
    assert compat.normalize(text) == 'hal.executable.source private @e <{\n  objects = #hal.executable.objects<{}>\n}> {\n}\n'


def test_source_discardable_attributes_stay():
    text = 'hal.executable.source private @e attributes {a = 1, objects = #hal.executable.objects<{}>, b = "x, y"} {\n}\n'
    out = compat.normalize(text)
    assert out == 'hal.executable.source private @e <{objects = #hal.executable.objects<{}>}> attributes {a = 1, b = "x, y"} {\n}\n'


def test_source_without_properties_is_untouched():
    text = "hal.executable.source private @e attributes {a = 1} {\n}\n"
    assert compat.normalize(text) == text


def test_old_count_region_and_dictionary_move():
    text = (
        "hal.executable.export public @k ordinal(0) layout(#l) attributes {\n"
        "  workgroup_size = [64 : index, 1 : index, 1 : index], tag = 1\n"
        "} {\n"
        "^bb0(%device: !hal.device, %w: index):\n"
        "  hal.return %w, %w, %w : index, index, index\n"
        "}\n"
    )
    out = compat.normalize(text)
    assert out.count("\n") == text.count("\n")
    lines = out.splitlines()
    assert lines[0].rstrip() == "hal.executable.export public @k ordinal(0) layout(#l)"
    assert lines[2] == " count(%device: !hal.device, %w: index) -> (index, index, index) {"
    assert lines[4] == "  hal.return %w, %w, %w : index, index, index"  # untouched, same line
    assert lines[5] == "} <{workgroup_size = [64 : index, 1 : index, 1 : index]}> attributes {tag = 1}"


def test_trailing_dictionary_of_3x_exports():
    text = (
        "hal.executable.export public @k ordinal(0) layout(#l) count(%d: !hal.device) -> (index, index, index) {\n"
        "  hal.return %c, %c, %c : index, index, index\n"
        "} attributes {workgroup_size = [1 : index, 1 : index, 1 : index]}\n"
    )
    assert compat.normalize(text).endswith("} <{workgroup_size = [1 : index, 1 : index, 1 : index]}>\n")


def test_export_without_region():
    text = "hal.executable.export public @k ordinal(0) layout(#l) attributes {workgroup_size = [1 : index, 1 : index, 1 : index]}\n"
    assert compat.normalize(text) == "hal.executable.export public @k ordinal(0) layout(#l) <{workgroup_size = [1 : index, 1 : index, 1 : index]}>\n"


def test_strings_and_comments_untouched():
    text = (
        '// hal.executable.export @k layout(#l) attributes {workgroup_size = [1]} { ^bb0(%d: !hal.device): }\n'
        '%s = util.buffer.constant : !util.buffer = "hal.executable.source @e attributes {objects = 1} { push_constants = 1, sets = [] }"\n'
    )
    assert compat.normalize(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "hal.executable.export",
        "hal.executable.export @k attributes {",
        "hal.executable.export @k attributes {workgroup_size = 1} {",
        "hal.executable.export @k attributes {workgroup_size = 1} { ^bb0",
        "hal.executable.export @k attributes {workgroup_size = 1} { ^bb0(%d: !hal.device) }",
        "hal.executable.export @k attributes {, workgroup_size = 1}",
        "hal.executable.export @k attributes {workgroup_size = 1 2 = 3}",
        "hal.executable.export @k <{workgroup_size = 1}> attributes {workgroup_size = 2}",
        "hal.executable.export @k count(%d: !hal.device) -> (index) attributes {x = 1}",
        "hal.executable.source @e attributes {objects = }}}",
        "hal.executable.source attributes {objects = 1} {",
        "#l = #hal.pipeline.layout<push_constants = 1, sets = [",
        "#l = #hal.pipeline.layout<push_constants = 1 >>>",
        '"unterminated attributes { ^bb0',
        "]]]}}})))attributes{{{((( ^ ^bb",
        "hal.executable.export @k layout(#l) attributes {hal.interface.bindings = 3} {\n^bb0(%d: !hal.device):\n}",
    ],
)
def test_malformed_input_never_crashes(text):
    try:
        out = compat.normalize(text)
    except DiagnosticError:
        return
    assert out.count("\n") == text.count("\n")


def test_normalize_is_idempotent_on_the_sample():
    once = compat.normalize(SAMPLE_2023)
    assert compat.normalize(once) == once
    assert once.count("\n") == SAMPLE_2023.count("\n")


def test_sample_of_2023_parses_and_prints_current_syntax():
    text = print_module(_parse(SAMPLE_2023))
    assert "push_constants" not in text and "hal.interface" not in text and "^bb0" not in text
    assert "#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>" in text
    assert "count(%arg0: !hal.device, %arg1: index) -> (index, index, index)" in text
    assert "workgroup_size = [64 : index, 1 : index, 1 : index]" in text
    # and reads back to the same text
    assert print_module(_parse(text)) == text


def test_reordering_interface_bindings_is_an_error_at_its_line():
    text = SAMPLE_2023.replace("#hal.interface.binding<0, 0>,\n", "#hal.interface.binding<0, 2>,\n", 1).replace(
        "#hal.interface.binding<0, 2>\n", "#hal.interface.binding<0, 0>\n", 1
    )
    with pytest.raises(DiagnosticError) as info:
        _parse(text, "sample.mlir")
    (diag,) = info.value.diagnostics
    assert str(diag.location) == "sample.mlir:24:7"
    assert "hal.interface.bindings maps dispatch operands to bindings out of order" in diag.message


def test_interface_bindings_with_a_current_layout():
    text = (
        "hal.executable.export @k layout(#l) attributes {hal.interface.bindings = "
        "[#hal.interface.binding<0, 0>, #hal.interface.binding<0, 1>]}\n"
    )
    assert compat.normalize(text) == "hal.executable.export @k layout(#l) \n"
    with pytest.raises(DiagnosticError, match="out of order"):
        compat.normalize(text.replace("<0, 1>", "<1, 0>"))


def test_iree_errors_keep_their_lines_in_old_syntax():
    bad = SAMPLE_2023.replace("%c1 = arith.constant 1 : index\n      hal.return", "%c1 = arith.constant 1 : index\n      hal.return %nope,", 1)
    with pytest.raises(DiagnosticError) as info:
        _parse(bad, "sample.mlir")
    loc = info.value.diagnostics[0].location
    line = bad.splitlines()[loc.line - 1]
    assert "%nope" in line and loc.col == line.index("%nope") + 1


def test_layout_errors_name_the_file_and_position():
    text = "\n\n#l = #hal.pipeline.layout<push_constants = 1, sets = [<0, bindings = [<0, storage_buffer, Bad>]>]>\n"
    with pytest.raises(DiagnosticError) as info:
        compat.normalize(text, "x.mlir")
    diag = info.value.diagnostics[0]
    assert str(diag.location) == f"x.mlir:3:{text.splitlines()[2].index('Bad') + 1}"
    assert diag.message.startswith("malformed pre-3.0 layout #hal.pipeline.layout<push_constants = N, sets = [...]>: unknown binding flag 'Bad'")
