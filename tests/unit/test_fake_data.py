"""The fake data of the benchmark and check entries (issue 21, item 12), on the CPU path (real
IREE execution on local-task): seeded, position-dependent values, so a variant that reads its
input from the wrong place disagrees with the default one and is dropped by the cross-check.

tests/unit/data/cpu_reversed.mlir: @scale (f32: @forward, y = 2 * x; @reversed, y[i] = 2 *
x[n - 1 - i]) and @bump (i32: @good_int, y = x + 1; @bad_int, reversed)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from autotune_export.runtime import AutotunedModule
from autotune_export.runtime.timing import GivenTimings
from autotune_export.runtime.tuner import results_agree

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def vmfb(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(DATA / "cpu_reversed.mlir")


def _load(vmfb, **kw) -> AutotunedModule:
    kw.setdefault("cache", None)
    return AutotunedModule(vmfb, driver="local-task", warmup_ms=1, rep_ms=3, **kw)


def _check(m, group: str, k: int) -> np.ndarray:
    return np.asarray(m.functions[m.group(group).check[k]]().to_host())


def test_fake_floats_are_seeded_and_position_dependent(vmfb):
    m = _load(vmfb)
    x = _check(m, "scale", 0) / 2  # @forward's input, read back through y = 2 * x
    assert x.shape == (4096,)
    # +-(1 + f/8) * 2^(e - 1), f in 0..7, e in {0, 1}: 32 values, every one present.
    allowed = sorted(s * (1 + f / 8) * 2.0 ** (e - 1) for s in (-1, 1) for f in range(8) for e in (0, 1))
    assert sorted(np.unique(x).tolist()) == allowed
    assert np.count_nonzero(x != x[::-1]) > 3800  # 1 in 32 equal by chance
    np.testing.assert_array_equal(_check(_load(vmfb), "scale", 0) / 2, x)  # seeded: the same in every load


def test_fake_integers_are_zero_or_one(vmfb):
    m = _load(vmfb)
    x = _check(m, "bump", 0) - 1
    assert sorted(np.unique(x).tolist()) == [0, 1]
    assert 1500 < np.count_nonzero(x) < 2600
    assert np.count_nonzero(x != x[::-1]) > 1500


@pytest.mark.parametrize(("group", "bad"), [("scale", "reversed"), ("bump", "bad_int")])
def test_a_variant_reading_backwards_is_caught(vmfb, group, bad):
    m = _load(vmfb)
    problem = results_agree([_check(m, group, 0)], [_check(m, group, 1)])
    assert problem is not None and "elements differ" in problem  # a constant fill would agree
    # Tuning that times the backwards variant as the fastest drops it and keeps the default.
    m = _load(vmfb, benchmarker=GivenTimings({"forward": 1.0, "reversed": 0.1, "good_int": 1.0, "bad_int": 0.1}))
    timings = m.tune_group(group)
    assert min(timings, key=lambda t: t.median_ms).variant == bad
    assert m.dropped[m.group(group).key] == {1}
    assert f"variant {bad} was dropped" in m.notes[m.group(group).key]
    assert m.chosen[m.group(group).key] != bad


#: Element type -> (integer type of its width, numpy dtype of the values).
FORMATS = {
    "f16": ("i16", "float16"), "bf16": ("i16", "bfloat16"), "f8E4M3FN": ("i8", "float8_e4m3fn"),
    "f8E5M2": ("i8", "float8_e5m2"), "f8E4M3FNUZ": ("i8", "float8_e4m3fnuz"), "f8E5M2FNUZ": ("i8", "float8_e5m2fnuz"),
    "i8": ("i8", "int8"), "i64": ("i64", "int64"),
}


def _copy_module() -> str:
    """One group of two variants that copy each of their inputs, one per element type of
    FORMATS, bit for bit (viewed as the integer type of its width) to an output, so the check
    entries return the fake inputs themselves."""
    n = len(FORMATS)
    bindings = ", ".join(["#hal.pipeline.binding<storage_buffer, ReadOnly>"] * n + ["#hal.pipeline.binding<storage_buffer>"] * n)
    layout = f"#hal.pipeline.layout<constants = 1, bindings = [{bindings}]>"
    exports, funcs = [], []
    for k, v in enumerate(("a", "b")):
        exports.append(f"""  hal.executable.export public @{v} ordinal({k}) layout({layout}) count(%device: !hal.device, %n: index) -> (index, index, index) {{
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }}""")
        body = []
        for j, (bits, _) in enumerate(FORMATS.values()):
            body.append(f"""      %in{j} = hal.interface.binding.subspan layout({layout}) binding({j}) alignment(64) offset(%c0) flags(ReadOnly) : memref<?x{bits}>{{%n}}
      %out{j} = hal.interface.binding.subspan layout({layout}) binding({n + j}) alignment(64) offset(%c0) : memref<?x{bits}>{{%n}}
      scf.for %i = %c0 to %n step %c1 {{
        %x = memref.load %in{j}[%i] : memref<?x{bits}>
        memref.store %x, %out{j}[%i] : memref<?x{bits}>
      }}""")
        funcs.append(f"""    func.func @{v}() {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n32 = hal.interface.constant.load layout({layout}) ordinal(0) : i32
      %n = arith.index_cast %n32 : i32 to index
{chr(10).join(body)}
      return
    }}""")
    types = ", ".join(f"tensor<2048x{e}>" for e in FORMATS)
    args = ", ".join(f"%x{j}: tensor<2048x{e}>" for j, e in enumerate(FORMATS))
    operands = ", ".join(f"%x{j}" for j in range(n))
    results = ", ".join(f"%y#{j}" for j in range(n))
    return f"""hal.executable.source private @ex {{
  hal.executable.autotuning.export @copy variants([@a, @b])
{chr(10).join(exports)}
  builtin.module {{
{chr(10).join(funcs)}
  }}
}}
util.func public @copy({args}) -> ({types}) {{
  %n = arith.constant 2048 : index
  %n32 = arith.constant 2048 : i32
  %y:{n} = flow.dispatch @ex::@copy[%n]({operands}, %n32) : ({types}, i32) -> ({types})
  util.return {results} : {types}
}}"""


@pytest.fixture(scope="module")
def copies(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(_copy_module(), "copies")


def test_fake_data_of_every_format(copies):
    """The fake values of each format, read back through a bit copy and decoded by ml_dtypes:
    floats +-(1 + f/8) * 2^(e-1) (f in 0..7, 0..3 for the 2-bit mantissa of E5M2), integers 0
    or 1; every value of the set present in 2048 elements; no two arguments alike."""
    import ml_dtypes  # noqa: F401 - registers the bfloat16 and float8 dtypes with numpy

    m = _load(copies)
    outs = [np.asarray(r.to_host()) for r in m.functions[m.group("copy").check[0]]()]
    assert len(outs) == len(FORMATS)
    codes = []
    for elem, out in zip(FORMATS, outs):
        x = out.view(np.dtype(FORMATS[elem][1]))
        assert x.shape == (2048,), elem
        if elem.startswith("i"):
            assert sorted(np.unique(x).tolist()) == [0, 1], elem
            codes.append(x.astype(np.int64))
            continue
        steps = 4 if "E5M2" in elem else 8
        allowed = sorted(s * (1 + f / steps) * 2.0 ** (e - 1) for s in (-1, 1) for f in range(steps) for e in (0, 1))
        assert sorted(np.unique(x.astype(np.float64)).tolist()) == allowed, elem
        codes.append((x.astype(np.float64) < 0).astype(np.int64))  # the sign: bit 31 of the hash, as an integer's value
    for a in range(len(codes)):  # each argument its own seed: its bit-31 pattern differs from every other's
        for b in range(a):
            assert np.count_nonzero(codes[a] != codes[b]) > 700, (list(FORMATS)[a], list(FORMATS)[b])


@pytest.fixture(scope="module")
def lock_vmfb(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(DATA / "cpu_lock.mlir")


def test_a_lock_starts_free_in_the_fake_data(lock_vmfb):
    """tests/unit/data/cpu_lock.mlir (issue 21, item 10): the lock operand the dispatch lists in
    autotune.fake_zeros is 0 in every check and benchmark run, so each variant takes it, computes
    2 * x and releases it (a lock of fake ones would be taken: NaN here, a hang on a GPU); the
    variants agree and tuning picks the faster one."""
    m = _load(lock_vmfb, benchmarker=GivenTimings({"a": 1.0, "b": 0.5}))
    info = m.group("locked")
    for check in info.check:
        lock, out = [np.asarray(r.to_host()) for r in m.functions[check]()]
        assert lock.tolist() == [0]  # released again
        assert not np.isnan(out).any() and np.count_nonzero(out) == out.size
    for bench in info.bench:
        values = [np.asarray(r.to_host()) for r in m.functions[bench](3)]
        assert [int(v[0]) for v in values[0::2]] == [0] * 8 and not any(np.isnan(v).any() for v in values[1::2])
    m.autotune()
    assert m.dropped.get(info.key, set()) == set() and m.chosen[info.key] == "b"
    x = np.linspace(-1, 1, 1024, dtype=np.float32)
    lock, out = m("locked", x, np.zeros(1, np.int32))
    np.testing.assert_array_equal(out, 2 * x)
