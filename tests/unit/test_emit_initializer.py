"""emit-autotune-initializer builds its IR with the bindings (autotune_export.ir.functions):
the builders make verifiable ops, the pass is idempotent, deterministic, keeps no state
between runs, and its reflection metadata follows the compiler/runtime contract."""

from __future__ import annotations

import json
import pathlib

from iree.compiler import ir

from autotune_export import contract
from autotune_export.frontend.reader import SourceFile, parse_source, print_module
from autotune_export.ir import functions as fn
from autotune_export.ir.walk import walk, module_functions
from autotune_export.passes import PassContext
from autotune_export.passes.emit_autotune_initializer import EmitAutotuneInitializer

DATA = pathlib.Path(__file__).parent / "data"


def _emit(path: pathlib.Path, pass_=None):
    source = SourceFile(path.read_text(), str(path), str(path.parent))
    module = parse_source(source)
    (pass_ or EmitAutotuneInitializer()).apply(PassContext(source=source), module)
    assert module.operation.verify()
    return module, print_module(module, str(path))


def test_builders_make_valid_ops():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.F32Type.get()
        t = ir.RankedTensorType.get([4], f32)
        index = ir.IndexType.get()
        with ir.InsertionPoint(module.body):
            fn.global_("g", t)
            fn.global_("c", ir.IntegerType.get_signless(32), mutable=True,
                       initial_value=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 3))
            fn.util_func("id", [t], [t], lambda args: args, visibility="private")

            def body(args):
                x = fn.load_global("g", t)
                a, b = fn.barrier([x, x])
                (r,) = fn.call("id", [a], [t])
                last = fn.counted_loop(fn.index_constant(0), args[0], fn.index_constant(1), [r],
                                       lambda i, carried: fn.call("id", carried, [t]))
                return [last[0], b]

            fn.util_func("f", [index], [t, t], body, attributes={"iree.reflection": fn.reflection({"k": "v"})})
        assert module.operation.verify()
        text = str(module)
    assert "util.global private mutable @c = 3 : i32" in text
    assert "util.optimization_barrier" in text and "scf.for" in text
    assert 'iree.reflection = {k = "v"}' in text
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse(text)
        inputs, results = fn.function_type(module_functions(m)["f"])
        assert [str(x) for x in inputs] == ["index"] and len(results) == 2


def test_pass_is_deterministic_idempotent_and_stateless():
    pass_ = EmitAutotuneInitializer()
    _, first = _emit(DATA / "cpu_group.mlir", pass_)
    _, again = _emit(DATA / "cpu_group.mlir", pass_)  # same instance: nothing carried over
    assert first == again
    module, text = _emit(DATA / "cpu_group.mlir")
    source = SourceFile((DATA / "cpu_group.mlir").read_text(), "cpu_group.mlir", str(DATA))
    EmitAutotuneInitializer().apply(PassContext(source=source), module)  # second run: no-op
    assert print_module(module, str(DATA / "cpu_group.mlir")) == text == first


def test_reflection_follows_the_contract():
    module, _ = _emit(DATA / "cpu_group.mlir")
    auto = module_functions(module)[contract.AUTOTUNE_FUNCTION]
    meta = ir.DictAttr(auto.attributes["iree.reflection"])
    (group,) = json.loads(ir.StringAttr(meta[contract.REFLECTION_KEY]).value)
    assert set(group) == set(contract.GROUP_FIELDS)
    names = contract.names_for("cpu_ex", "scale")
    assert group["choice"] == names["choice"] and group["select"] == names["select"]
    assert group["bench"] == [f"{names['bench']}.0", f"{names['bench']}.1"]
    assert group["unroll"] == contract.BENCH_UNROLL
    assert group["tune_args"] == ["tensor<65536xf32>"]
    functions = module_functions(module)
    for symbol in [*group["bench"], group["select"], contract.FLUSH_L2_FUNCTION]:
        assert symbol in functions
    # Benchmarks dispatch the group themselves: no copy of the host, no call of user code.
    assert not any(name.startswith(f"{names['prefix']}.host") for name in functions)
    for bench in group["bench"]:
        ops = [op.name for op in walk(functions[bench])]
        assert "util.call" not in ops and "func.call" not in ops and "util.global.store" not in ops
        assert ops.count("flow.dispatch") == contract.BENCH_UNROLL  # all inside the loop
