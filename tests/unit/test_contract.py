"""The reflection schema (autotune_export.contract.GroupReflection): one definition that the
compiler writes and the runtime and ``inspect`` read. It round-trips, reads the metadata of
earlier releases (optional fields missing) and refuses metadata without a required field; what
emit-autotune-initializer writes is exactly its fields and decodes to the groups it built."""

from __future__ import annotations

import json
import pathlib

import pytest
from iree.compiler import ir

from autotune_export import contract
from autotune_export.contract import GroupReflection, TuningWorkload, decode_reflection, encode_reflection
from autotune_export.frontend.reader import SourceFile, parse_source
from autotune_export.ir.walk import module_functions
from autotune_export.passes import PassContext, run_pipeline

DATA = pathlib.Path(__file__).parent / "data"


def _group(**changes) -> GroupReflection:
    values = dict(
        executable="ex", group="g", variants=["g_0", "g_1"], default=1, select="__autotune.ex.g.select",
        bench=["__autotune.ex.g.bench.0", "__autotune.ex.g.bench.1"], host="main", choice="__autotune.ex.g.choice",
        unroll=contract.BENCH_UNROLL, tune_args=["tensor<8xf32>", "i32"],
        configs=[[["BLOCK", 64], ["num_warps", 4]], None],
        workloads=[TuningWorkload(["tensor<8xf32>", "i32"], ["__autotune.ex.g.bench.0", "__autotune.ex.g.bench.1"],
                                  "__autotune.ex.g.workload.0"),
                   TuningWorkload(["tensor<64xf32>", "i32"], ["__autotune.ex.g.bench.w1.0", "__autotune.ex.g.bench.w1.1"])],
        slots=["__autotune.ex.g.slot.0.set"], workload_of="__autotune.ex.g.workload_of", arity=1,
        fingerprints=["a" * 32, "b" * 32], check=["__autotune.ex.g.check.0", ""],
    )
    values.update(changes)
    return GroupReflection(**values)


def test_reflection_round_trips():
    groups = [_group(), _group(group="h", variants=["h_a"], default=0, configs=[None], workloads=[])]
    text = encode_reflection(groups)
    assert decode_reflection(text) == groups
    assert encode_reflection(decode_reflection(text)) == text
    (first, _) = json.loads(text)
    assert set(first) == set(contract.GROUP_FIELDS)
    assert first["workloads"][1] == {"tune_args": ["tensor<64xf32>", "i32"],
                                     "bench": ["__autotune.ex.g.bench.w1.0", "__autotune.ex.g.bench.w1.1"], "workload": ""}
    assert decode_reflection(text)[0].key == "ex::g"


def test_metadata_of_earlier_releases_reads_with_defaults():
    """Only the required fields (the first releases' metadata), plus a field of a later release."""
    old = {"executable": "ex", "group": "g", "variants": ["a", "b"], "default": 0, "select": "s",
           "bench": ["s.0", "s.1"], "host": "main", "tune_args": ["tensor<4xf32>"], "from_the_future": 1}
    (group,) = decode_reflection(json.dumps([old]))
    assert (group.choice, group.unroll, group.configs, group.workloads, group.slots, group.arity) == ("", 1, [], [], [], 0)
    assert group.tuning_workloads() == [TuningWorkload(["tensor<4xf32>"], ["s.0", "s.1"], "")]
    assert _group(workloads=[], bench=[]).tuning_workloads() == []


@pytest.mark.parametrize("text, message", [
    ('[{"executable": "ex", "group": "g", "variants": [], "default": 0, "bench": [], "host": "m"}]', "lacks select"),
    ('{"groups": []}', "not a list"),
    ("[1]", "not an object"),
    ("not json", "not JSON"),
    ('[{"executable": "e", "group": "g", "variants": [], "default": 0, "select": "s", "bench": [], "host": "m", '
     '"workloads": [{"bench": []}]}]', "lacks tune_args"),
])
def test_malformed_metadata_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        decode_reflection(text)


def test_what_the_compiler_writes_is_what_the_runtime_reads():
    """emit-autotune-initializer's metadata of cpu_group.mlir decodes to the group it built."""
    path = DATA / "cpu_group.mlir"
    source = SourceFile(path.read_text(), str(path), str(DATA))
    module = parse_source(source)
    run_pipeline(["verify-autotuning-groups", "emit-autotune-initializer"], PassContext(source=source), module)
    auto = module_functions(module)[contract.AUTOTUNE_FUNCTION]
    text = ir.StringAttr(ir.DictAttr(auto.attributes["iree.reflection"])[contract.REFLECTION_KEY]).value
    (group,) = decode_reflection(text)
    names = contract.names_for("cpu_ex", "scale")
    assert (group.key, group.variants, group.default, group.host) == ("cpu_ex::scale", ["slow", "fast"], 0, "scale")
    assert group.tuning_workloads() == [TuningWorkload(["tensor<65536xf32>"], [f"{names['bench']}.0", f"{names['bench']}.1"],
                                                       f"{names['workload']}.0")]
    assert group.configs == [None, None] and len(group.fingerprints) == 2
    assert encode_reflection([group]) == text
