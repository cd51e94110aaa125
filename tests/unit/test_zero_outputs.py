"""reset_to_zero / restore_value without compiling anything: the clauses' generic attributes, the
Triton form's dispatch rewrite (autotune_export/passes/zero_outputs.py) checked against the
binding plan materialize-triton-variants builds from it (each {output} pointer must still be
bound to the buffer of its own result), and the jax-triton bridge's clauses."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from iree.compiler import ir

from autotune_export.cuda import abi
from autotune_export.frontend.reader import SourceFile, find_groups, new_context, parse_source, print_module
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.walk import dispatch_sites
from autotune_export.passes import PassContext, run_pipeline
from autotune_export.passes import zero_outputs
from autotune_export.ir.binding import DispatchOperands
from autotune_export.ir.binding import in_place as in_place_outputs
from autotune_export.passes.triton_dispatch_checks import tied_outputs as _tied_outputs

HERE = os.path.dirname(os.path.abspath(__file__))


def _ctx() -> PassContext:
    return PassContext(source=SourceFile("", "<test>", HERE), remark=lambda d: None)


def test_clauses_as_generic_attributes():
    """Names are string attributes, indices i64 ones; [] stays (it overrides the kernel's)."""
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        rfc = AutotuneGroup("g", variants=["a"], reset_to_zero=[0, 2], restore_value=[]).build(ip=ir.InsertionPoint(module.body))
        tri = AutotuneGroup("h", triton=("k.py", "k"), reset_to_zero=["c_ptr"]).build(ip=ir.InsertionPoint(module.body))
        assert str(rfc.attributes["reset_to_zero"]) == "[0, 2]"
        assert str(rfc.attributes["restore_value"]) == "[]"
        assert str(tri.attributes["reset_to_zero"]) == '["c_ptr"]'
        back = AutotuneGroup.from_op(rfc)
        assert (back.reset_to_zero, back.restore_value) == ([0, 2], [])
        assert AutotuneGroup.from_op(tri).reset_to_zero == ["c_ptr"]
        assert AutotuneGroup.from_op(tri).restore_value is None


# ----- the Triton form: rewrite, then IREE's binding rule against abi.plan ---------------------
SIGNATURE = "a_ptr: *fp32 {output}, x_ptr: *fp32, b_ptr: *fp32 {output}, y_ptr: *fp32, c_ptr: *fp32 {output}, n: i32"
OUTPUT_TYPES = {"a_ptr": "tensor<1xf32>", "b_ptr": "tensor<?xf32>", "c_ptr": "tensor<2xf32>"}


def _module(zeroed: list[str], in_place: list[str]) -> str:
    """A group over sums(a, x, b, y, c, n) whose dispatch returns a, b, c (in that order),
    passing the outputs ``in_place`` as operands at their places in the signature (IREE binds
    the tensor operands in order)."""
    ops, types, results = [], [], []
    for name in ("a_ptr", "x_ptr", "b_ptr", "y_ptr", "c_ptr"):
        if name in ("x_ptr", "y_ptr"):
            ops.append(f"%{name[0]}")
            types.append("tensor<4xf32>")
            continue
        t = OUTPUT_TYPES[name]
        dims = "{%m}" if "?" in t else ""
        if name in in_place:
            ops.append(f"%{name[0]}")
            types.append(t + dims)
            results.append(f"%{name[0]}{dims}")
        else:
            results.append(t + dims)
    args = ", ".join(f"%{n[0]}: {OUTPUT_TYPES[n]}" for n in ("a_ptr", "b_ptr", "c_ptr") if n in in_place)
    rets = ", ".join(OUTPUT_TYPES[n] for n in ("a_ptr", "b_ptr", "c_ptr"))
    clause = f"reset_to_zero({', '.join(zeroed)})" if zeroed else ""
    return f"""
hal.executable.source private @ex {{
  hal.executable.autotuning.export @s triton("k.py", "sums") signature({SIGNATURE})
      configs([{{BLOCK = 128}}]) workload(n) grid(n) {clause}
}}
util.func public @host(%x: tensor<4xf32>, %y: tensor<4xf32>, %m: index{', ' if args else ''}{args}) -> ({rets}) {{
  %n = arith.constant 4 : index
  %n32 = arith.constant 4 : i32
  %r:3 = flow.dispatch @ex::@s[%n]({', '.join(ops + ['%n32'])}) : ({', '.join(types + ['i32'])}) -> ({', '.join(results)})
  util.return %r#0, %r#1, %r#2 : {rets}
}}
"""


def _bindings(d) -> tuple[list, list[int]]:
    """IREE's bindings of dispatch ``d``: the values (tensor operands, then untied results) and
    per result its binding."""
    parts = DispatchOperands.of(d)
    tensors = [i for i, a in enumerate(parts.arguments) if isinstance(a.type, ir.RankedTensorType)]
    values = [parts.arguments[i] for i in tensors]
    of_result = []
    for j, t in enumerate(parts.tied):
        if t >= 0:
            of_result.append(tensors.index(t))
        else:
            of_result.append(len(values))
            values.append(d.results[j])
    return values, of_result


@pytest.mark.parametrize("zeroed,in_place", [
    (["a_ptr"], []),                    # the first output
    (["c_ptr"], []),                    # the last
    (["b_ptr"], []),                    # between the others
    (["a_ptr", "c_ptr"], []),           # several, around one that is not zeroed
    (["a_ptr", "b_ptr", "c_ptr"], []),  # all
    (["c_ptr"], ["a_ptr"]),             # one already in place, another zeroed
    (["a_ptr"], ["a_ptr"]),             # the in-place output itself zeroed
    (["b_ptr"], ["a_ptr", "b_ptr"]),
])
def test_triton_rewrite_keeps_every_pointer_at_its_result(zeroed, in_place):
    ctx = _ctx()
    module = parse_source(SourceFile(_module(zeroed, in_place), "<test>", HERE))
    with module.context, ir.Location.unknown():
        (op,) = find_groups(module)
        group = AutotuneGroup.from_op(op)
        tied = _tied_outputs(ctx, group, dispatch_sites(module))
        assert set(in_place_outputs(group.signature, tied)) == set(in_place)
        assert zero_outputs.zero_fill_triton(ctx, module, "ex", group, tied)
        (d,) = dispatch_sites(module)
        module.operation.verify()
        tied = _tied_outputs(ctx, group, [d])
        assert set(in_place_outputs(group.signature, tied)) == {"a_ptr", "b_ptr", "c_ptr"}  # every output in place now
        pointers = [p.name for p in abi.plan(group.signature, tied=tied).binding_params()]
        assert pointers == ["a_ptr", "x_ptr", "b_ptr", "y_ptr", "c_ptr"]  # the signature's order
        values, of_result = _bindings(d)
        # Result j is still output j: the kernel writes each output into its own result.
        assert [pointers[b] for b in of_result] == ["a_ptr", "b_ptr", "c_ptr"]
        args = list(module.body.operations)[1].regions[0].blocks[0].arguments
        for p, v in zip(pointers, values):
            owner = v.owner if not isinstance(v, ir.BlockArgument) else None
            if p in zeroed and p not in in_place:
                assert zero_outputs.is_zeroed(v), p
            elif p in in_place or p in ("x_ptr", "y_ptr"):  # zeroed in place: only in the benchmarks
                assert isinstance(v, ir.BlockArgument), p  # the host's own tensor
            else:
                assert owner.operation.name == "flow.tensor.alloca", p
        # The two inputs are the host's x and y, at their bindings.
        assert [values[1], values[3]] == [args[0], args[1]]
        # Dynamic sizes follow the operands: b's is %m.
        assert str(values[2].type) == "tensor<?xf32>"
        text = print_module(module)
        assert text.count("autotune.zeroed") == len(set(zeroed) - set(in_place))
        # An in-place operand named in reset_to_zero keeps the caller's tensor (Triton zeroes it
        # only while benchmarking); the dispatch lists it for the benchmark entries' zeros.
        kept = sorted(values.index(args[3 + in_place.index(p)]) for p in set(zeroed) & set(in_place))
        assert ([int(v) for v in ir.DenseI64ArrayAttr(d.attributes["autotune.fake_zeros"])]
                if "autotune.fake_zeros" in d.attributes else []) == kept
        # Run again: nothing changes.
        assert not zero_outputs.zero_fill_triton(ctx, module, "ex", group, tied)
        assert print_module(module) == text


def test_triton_form_is_left_to_materialize():
    """The pass rewrites only the variants([...]) form; materialize-triton-variants calls
    zero_fill_triton for the triton(...) form, after resolving the kernel's autotuner."""
    module = parse_source(SourceFile(_module(["a_ptr"], []), "<test>", HERE))
    before = print_module(module)
    run_pipeline("zero-fill-outputs", _ctx(), module)
    assert print_module(module) == before


# ----- jax-triton: zeroed_outputs is reset_to_zero ------------------------------------------------
def _jax_kernels():
    sys.path.insert(0, os.path.join(HERE, "data"))
    try:
        import zero_kernels  # noqa: WPS433
    finally:
        sys.path.remove(os.path.join(HERE, "data"))
    return zero_kernels


class _Spec:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def test_jax_zeroed_outputs_become_reset_to_zero():
    from autotune_export.interop import jax_triton as jt

    K = _jax_kernels()
    x, one = _Spec((256,), "float32"), _Spec((1,), "float32")
    text = jt.triton_call_to_mlir(x, 256, kernel=K.two_sums, out_shape=[one, one, x], grid=(2,),
                                  zeroed_outputs=(0, 2), BLOCK=128)
    module = parse_source(SourceFile(text, "<test>", HERE))
    (op,) = find_groups(module)
    assert AutotuneGroup.from_op(op).reset_to_zero == ["s_ptr", "copy_ptr"]
    # A callable of the metaparameters; its union over the configs.
    text = jt.triton_call_to_mlir(x, 256, kernel=K.two_sums, out_shape=[one, one, x], grid=(2,),
                                  zeroed_outputs=lambda meta: (1,) if meta["BLOCK"] == 128 else (), BLOCK=128)
    module = parse_source(SourceFile(text, "<test>", HERE))  # kept: the op lives in it
    (op,) = find_groups(module)
    assert AutotuneGroup.from_op(op).reset_to_zero == ["t_ptr"]
    # No zeroed_outputs and a kernel without triton.autotune: no clause.
    text = jt.triton_call_to_mlir(x, 256, kernel=K.two_sums, out_shape=[one, one, x], grid=(2,), BLOCK=128)
    module = parse_source(SourceFile(text, "<test>", HERE))  # kept: the op lives in it
    (op,) = find_groups(module)
    assert AutotuneGroup.from_op(op).reset_to_zero is None


def test_jax_ignores_the_autotuners_own_clauses():
    """jax-triton zeroes only zeroed_outputs and restores only aliased buffers: the bridge
    writes reset_to_zero() / restore_value(...) so the kernel's triton.autotune values do not
    apply (its restore_value of an output passed as a fresh buffer would be refused)."""
    from autotune_export.interop import jax_triton as jt

    K = _jax_kernels()
    x, one = _Spec((256,), "float32"), _Spec((1,), "float32")
    text = jt.triton_call_to_mlir(x, 256, kernel=K.tuned_sums, out_shape=[one, one, x], grid=(2,))
    module = parse_source(SourceFile(text, "<test>", HERE))  # kept: the op lives in it
    (op,) = find_groups(module)
    group = AutotuneGroup.from_op(op)
    assert (group.reset_to_zero, group.restore_value) == ([], [])
    text = jt.triton_call_to_mlir(x, 256, x, kernel=K.tuned_sums_inplace, out_shape=[one, one, x], grid=(2,),
                                  input_output_aliases={1: 2}, zeroed_outputs=(1,))
    module = parse_source(SourceFile(text, "<test>", HERE))  # kept: the op lives in it
    (op,) = find_groups(module)
    group = AutotuneGroup.from_op(op)
    assert (group.reset_to_zero, group.restore_value) == (["t_ptr"], ["copy_ptr"])


def test_jax_zero_fills_stay_distinct():
    """jax-triton's text passes one zero splat per zeroed output; two of one type are merged
    by IREE's CSE into one value tied to two results (both outputs in one buffer). The pass
    gives each its own fill behind its own barrier and drops the splats."""
    from autotune_export.interop import jax_triton as jt

    K = _jax_kernels()
    x, one = _Spec((256,), "float32"), _Spec((1,), "float32")
    text = jt.triton_call_to_mlir(x, 256, kernel=K.two_sums, out_shape=[one, one, x], grid=(2,),
                                  zeroed_outputs=(0, 1), BLOCK=128)
    assert text.count("flow.tensor.splat %cst") == 2
    module = parse_source(SourceFile(text, "<test>", HERE))
    (op,) = find_groups(module)
    group = AutotuneGroup.from_op(op)
    ctx = _ctx()
    with module.context, ir.Location.unknown():
        tied = _tied_outputs(ctx, group, dispatch_sites(module))
        assert set(in_place_outputs(group.signature, tied)) == {"s_ptr", "t_ptr", "copy_ptr"}
        assert zero_outputs.zero_fill_triton(ctx, module, f"{group.name}_ex", group, tied)
    out = print_module(module)
    assert out.count("autotune.zeroed") == 2
    assert out.count("util.optimization_barrier") == 2
    assert "flow.tensor.splat %cst" not in out  # jax-triton's splats (and their constant) are gone
    assert "arith.constant 0.000000e+00" not in out
