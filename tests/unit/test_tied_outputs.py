"""Which {output} pointers a dispatch writes in place (materialize-triton-variants'
_tied_outputs): result j is the j-th output, so a tied result names its output even when the
operand order alone would fit another one."""

from __future__ import annotations

import pytest

from autotune_export.frontend import SourceFile, new_context, parse_source
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.walk import dispatch_sites, executable_sources, groups_of
from autotune_export.passes.base import PassContext
from autotune_export.passes.triton_dispatch_checks import tied_outputs as _tied_outputs

HEAD = '''
hal.executable.source private @ex {
  hal.executable.autotuning.export @k triton("k.py", "k")
      signature(x_ptr: *fp32, acc_ptr: *fp32 {output}, hist_ptr: *fp32 {output}, n: i32)
      configs([{BLOCK = 128}]) workload(n) grid(cdiv(n, BLOCK))
}
'''


def _tied(host: str) -> frozenset:
    text = HEAD + host
    with new_context():
        module = parse_source(SourceFile(text, "t.mlir", "."))
        (source,) = executable_sources(module)
        (op,) = groups_of(source)
        group = AutotuneGroup.from_op(op, "t.mlir")
        order = _tied_outputs(PassContext(source=SourceFile(text, "t.mlir", ".")), group, dispatch_sites(module))
        return {n for n in order if n != "x_ptr"}


@pytest.mark.parametrize("results, tied", [
    # hist (result 1) in place: operand order [x, hist] would also fit acc; the result says hist.
    ("-> (tensor<8xf32>, %h)", {"hist_ptr"}),
    # acc (result 0) in place.
    ("-> (%h, tensor<8xf32>)", {"acc_ptr"}),
])
def test_result_index_names_the_output(results, tied):
    host = f'''
util.func public @host(%x: tensor<8xf32>, %h: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {{
  %n = arith.constant 8 : index
  %n32 = arith.constant 8 : i32
  %r:2 = flow.dispatch @ex::@k[%n](%x, %h, %n32) : (tensor<8xf32>, tensor<8xf32>, i32) {results}
  util.return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}}
'''
    assert _tied(host) == tied


def test_both_in_place():
    host = '''
util.func public @host(%x: tensor<8xf32>, %a: tensor<8xf32>, %h: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %n = arith.constant 8 : index
  %n32 = arith.constant 8 : i32
  %r:2 = flow.dispatch @ex::@k[%n](%x, %a, %h, %n32) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, i32) -> (%a, %h)
  util.return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}
'''
    assert _tied(host) == {"acc_ptr", "hist_ptr"}
