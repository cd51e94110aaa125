"""autotune_export.ir.binding: IREE's dispatch binding rule (tensor operands in operand order,
then untied results; a tied result at its operand's binding; scalars as 32-bit push
constants, 64-bit ones split), checked on dispatches parsed by IREE's own parser."""

from __future__ import annotations

import pytest
from iree.compiler import ir

from autotune_export.frontend import SourceFile, new_context, parse_source
from autotune_export.ir import binding
from autotune_export.ir.params import Param
from autotune_export.ir.walk import dispatch_sites

SIG = [Param("x", "*fp32"), Param("a", "*fp32", output=True), Param("b", "*fp32", output=True), Param("n", "i64"),
       Param("eps", "fp32")]


def _dispatch(args: str, types: str, results: str, host_args: str = "%x: tensor<8xf32>, %a: tensor<8xf32>"):
    text = f'''
hal.executable.source private @ex {{
}}
util.func public @host({host_args}, %n: i64, %eps: f32) -> (tensor<8xf32>, tensor<8xf32>) {{
  %w = arith.constant 8 : index
  %r:2 = flow.dispatch @ex::@k[%w]({args}) : ({types}) -> {results}
  util.return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}}
'''
    module = parse_source(SourceFile(text, "t.mlir", "."))
    return module, dispatch_sites(module)[0]


def test_bindings_operands_then_untied_results():
    with new_context():
        _, d = _dispatch("%x, %n, %a, %eps", "tensor<8xf32>, i64, tensor<8xf32>, f32", "(tensor<8xf32>, %a)")
        parts = binding.DispatchOperands.of(d)
        got = [(b.operand, b.result, b.undefined) for b in parts.bindings()]
        # %x (argument 0, read only), %a (argument 2, result 1 written in place), result 0 (fresh).
        assert got == [(0, None, False), (2, 1, False), (None, 0, True)]
        assert parts.tied == [-1, 2] and parts.tensor_positions() == [0, 2]
        assert [str(s.type) for s in parts.scalars()] == ["i64", "f32"] and parts.num_constants() == 3
        # Result 1 through binding 1 (its operand's), result 0 through binding 2 (after the operands).
        assert binding.result_bindings(parts.tied, parts.tensor_positions()) == [2, 1]


def test_result_bindings_refuses_a_tie_to_a_scalar():
    assert binding.result_bindings([1], [0, 2]) is None
    assert binding.result_bindings([-1, -1, 0], [0]) == [1, 2, 0]


def test_pointer_order_and_result_pointers():
    assert [p.name for p in binding.pointer_order(SIG, {"b"})[0]] == ["x", "b"]
    assert [p.name for p in binding.pointer_order(SIG, {"b"})[1]] == ["a"]
    # An ordered tuple of every operand-bound pointer keeps its order.
    assert [p.name for p in binding.pointer_order(SIG, ("b", "x"))[0]] == ["b", "x"]
    with new_context():
        _, d = _dispatch("%x, %a, %n, %eps", "tensor<8xf32>, tensor<8xf32>, i64, f32", "(tensor<8xf32>, %a)")
        # result 1 is b (the second output), written in place in %a's buffer; a is result 0.
        assert binding.tied_outputs(SIG, d) == ("x", "b")
        assert binding.result_outputs(SIG, ("x", "b"), d) == ["a", "b"]


@pytest.mark.parametrize("args, results, order, plan_order", [
    # The in-place output's operand before the input's (issue 21.4: this built the layout as if
    # nothing were in place): a binds at operand 0, x at operand 1, b at the untied result.
    ("%a, %x", "(%a, tensor<8xf32>)", ("a", "x"), [1, 0, 2]),
    # Its operand after the input's, the signature order.
    ("%x, %a", "(%a, tensor<8xf32>)", ("x", "a"), [0, 1, 2]),
    # The second output in place, its operand first.
    ("%a, %x", "(tensor<8xf32>, %a)", ("b", "x"), [2, 0, 1]),
])
def test_in_place_output_binds_at_its_operand(args, results, order, plan_order):
    from autotune_export.cuda import abi

    with new_context():
        _, d = _dispatch(args + ", %n, %eps", "tensor<8xf32>, tensor<8xf32>, i64, f32", results)
        tied = binding.tied_outputs(SIG, d)
        assert tied == order
        plan = abi.plan(SIG, tied=tied)
        # The kernel's pointers in binding order (signature indices): what IREE hands it.
        assert list(plan.inputs + plan.outputs) == plan_order
        assert [p.name for p in binding.result_pointers(SIG, tied, d)] == ["a", "b"]


@pytest.mark.parametrize("mlir_type, slots", [("i1", 1), ("i8", 1), ("i16", 1), ("i32", 1), ("f16", 1), ("bf16", 1),
                                              ("f32", 1), ("i64", 2), ("f64", 2), ("index", None), ("i128", None)])
def test_constant_slots(mlir_type, slots):
    assert binding.constant_slots(mlir_type) == slots


def test_to_constants_builds_the_split():
    with new_context() as ctx, ir.Location.unknown(ctx):
        module = ir.Module.create()
        i64 = ir.IntegerType.get_signless(64)
        from iree.compiler.dialects import arith
        with ir.InsertionPoint(module.body):
            v = arith.ConstantOp(i64, (7 << 32) | 5).result
            lo_hi = binding.to_constants(v)
            f = arith.ConstantOp(ir.F32Type.get(), 1.5).result
            (bits,) = binding.to_constants(f)
            assert binding.to_constants(arith.ConstantOp(ir.IndexType.get(), 1).result) is None
        text = str(module)
        assert [str(x.type) for x in lo_hi] == ["i32", "i32"] and str(bits.type) == "i32"
        assert "arith.trunci" in text and "arith.shrui" in text and "arith.bitcast" in text
