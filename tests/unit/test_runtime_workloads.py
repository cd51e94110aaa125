"""Choices per workload, the per-variant tuning cache and the cross-check of variants (issue
13, points 4-6), on the CPU path (real IREE execution on local-task).

tests/unit/data/cpu_workloads.mlir: one group of y = 2 * x with three variants whose speed
depends on n (@per_elem fastest for n = 1024, @fixed for n = 262144) and @wrong (3 * x, the
fastest, and wrong), tuned on two workloads. The fast suite decides on given timings with the
same ranking (:data:`TIMES`); the integration test times them for real. Three tests that build a
further .vmfb (frozen from a results file, or with three workloads; 3 CPU-seconds each) are
integration tests too; the fast suite runs a frozen module in test_runtime.py."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

from autotune_export.runtime import AutotunedModule
from autotune_export.runtime.tuner import GivenTimings, TuningCache, results_agree
from autotune_export.tools import cli
from conftest import SERIAL_IREE_COMPILE

DATA = pathlib.Path(__file__).parent / "data"
GROUP = "wl_ex::scale"
SMALL, LARGE = 1024, 262144
#: ms per run by (variant, n): @per_elem fastest for n = 1024, @fixed for n = 262144, @wrong
#: fastest everywhere (and wrong).
TIMES = {("per_elem", SMALL): 1.0, ("fixed", SMALL): 3.0, ("wrong", SMALL): 0.5,
         ("per_elem", LARGE): 90.0, ("fixed", LARGE): 30.0, ("wrong", LARGE): 10.0,
         ("per_elem", 524288): 180.0, ("fixed", 524288): 40.0, ("wrong", 524288): 20.0}


def given(group: str, variant: str, workload: str) -> float:
    """:data:`TIMES` of a tuning workload (``tensor<1024xf32>``) or a live one (its n first);
    another n is timed as n = 1024 up to 65536, as n = 262144 above."""
    n = int(re.search(r"\d+", workload).group())
    return TIMES.get((variant, n)) or TIMES[(variant, SMALL if n <= 65536 else LARGE)]


def _build(tmp, text: str, name: str) -> pathlib.Path:
    src, out = tmp / f"{name}.mlir", tmp / f"{name}.vmfb"
    src.write_text(text)
    assert cli.main([str(src), "--emit", "vmfb", "--backend", "llvm-cpu", "-o", str(out), *SERIAL_IREE_COMPILE]) == 0
    return out


@pytest.fixture(scope="module")
def vmfb(cpu_vmfb) -> pathlib.Path:
    return cpu_vmfb(DATA / "cpu_workloads.mlir")


def _load(vmfb, **kw) -> AutotunedModule:
    kw.setdefault("cache", None)
    if not kw.pop("wall_clock", False):
        kw.setdefault("benchmarker", GivenTimings(given))
    return AutotunedModule(vmfb, driver="local-task", warmup_ms=2, rep_ms=10, **kw)


def _x(n: int) -> np.ndarray:
    return np.linspace(-2, 2, n, dtype=np.float32)


@pytest.mark.integration  # times the variants with the wall clock
def test_two_workloads_pick_two_variants_on_the_wall_clock(vmfb):
    m = _load(vmfb, wall_clock=True)
    m.autotune()
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}


def test_two_workloads_pick_two_variants(vmfb):
    m = _load(vmfb)
    m.autotune()
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    assert m.chosen[GROUP] == "per_elem"  # the first workload's winner is the fallback
    for n in (SMALL, LARGE, 5000):
        np.testing.assert_array_equal(m("run", _x(n)), 2 * _x(n))


def test_dispatch_selects_by_workload_and_falls_back(vmfb):
    """Filling a slot with the (wrong) variant 2 for n = 1024 changes exactly the calls of that
    workload: the dispatch site compares its workload with the table."""
    m = _load(vmfb)
    info = m.group("scale")
    assert m._set_slot(info, [SMALL], 2)
    np.testing.assert_array_equal(m("run", _x(SMALL)), 3 * _x(SMALL))
    np.testing.assert_array_equal(m("run", _x(777)), 2 * _x(777))  # other workloads: the group's choice
    m.select("scale", "wrong")
    np.testing.assert_array_equal(m("run", _x(777)), 3 * _x(777))
    assert m._set_slot(info, [SMALL], 0)
    np.testing.assert_array_equal(m("run", _x(SMALL)), 2 * _x(SMALL))


def test_wrong_variant_is_dropped_before_it_wins(vmfb):
    m = _load(vmfb)
    timings = {t.variant: t.median_ms for t in m.tune_group("scale")}
    assert timings["wrong"] < timings["per_elem"]  # it is the fastest...
    assert m.dropped[GROUP] == {2}  # ...and never chosen
    assert "variant wrong was dropped" in m.notes[GROUP] and "differ from the default variant per_elem" in m.notes[GROUP]
    assert "wrong" not in m.per_workload[GROUP].values()


def test_results_agree_tolerances():
    a = np.array([1.0, 2.0, np.nan], np.float32)
    assert results_agree([a], [a + 1e-6]) is None
    assert "1 of 3 elements differ" in results_agree([a], [np.array([1.0, 2.1, np.nan], np.float32)])
    assert results_agree([np.array([1, 2])], [np.array([1, 3])]) == "result 0: 1 of 2 elements differ"
    h = np.array([1.0, 100.0], np.float16)
    assert results_agree([h], [h * np.float16(1.005)]) is None  # within f16 precision
    assert "shape" in results_agree([a], [a[:2]])


def test_timings_are_cached_per_variant_and_workload(vmfb, tmp_path, monkeypatch):
    """A module with one more variant (same code for the others) times only the new one."""
    text = (DATA / "cpu_workloads.mlir").read_text()
    two = _build(tmp_path, text.replace("variants([@per_elem, @fixed, @wrong])", "variants([@per_elem, @fixed])"), "two")
    cache = tmp_path / "tuning.json"
    first = _load(two, cache=cache)
    first.autotune()
    rows = TuningCache(cache).timings()
    assert {(r["workload"], r["ruler"]) for r in rows} == {("tensor<1024xf32>", "bench"), ("tensor<262144xf32>", "bench")}
    assert len(rows) == 4  # 2 variants x 2 workloads

    three = _load(vmfb, cache=cache)
    three.autotune()
    timed = [(variant, workload) for kind, _, variant, workload in three.benchmarker.log]
    assert timed == [("wrong", "tensor<1024xf32>"), ("wrong", "tensor<262144xf32>")]  # once per workload
    assert three.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    assert len(TuningCache(cache).timings()) == 6


def test_round_robin_tunes_each_workload_and_a_second_process_reads_the_cache(vmfb, tmp_path, monkeypatch):
    cache = tmp_path / "tuning.json"
    m = _load(vmfb, cache=cache, strategy="round-robin", min_rounds=5, max_rounds=10)
    for _ in range(40):
        for n in (SMALL, LARGE):
            np.testing.assert_array_equal(m("run", _x(n)), 2 * _x(n))  # every live call right: @wrong never runs
        if len(m.per_workload.get(GROUP, {})) == 2:
            break
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    assert m.dropped[GROUP] == {2}
    live = [r for r in TuningCache(cache).timings() if r["ruler"] == "live"]
    assert len(live) == 4  # per_elem and fixed, per workload

    again = _load(vmfb, cache=cache, strategy="round-robin", min_rounds=5, max_rounds=10)
    for n in (SMALL, LARGE):
        np.testing.assert_array_equal(again("run", _x(n)), 2 * _x(n))
    assert again.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    assert again.benchmarker.log == []  # no rotation: both workloads locked from the cache's live timings
    assert again.chosen[GROUP] == "per_elem"  # one workload each: the tie goes to the lower index
    data = json.loads(cache.read_text())
    assert {tuple(e["workload_values"]) for e in data["results"] if e["strategy"] == "round-robin"} == {(SMALL,), (LARGE,)}


def test_tuning_results_freeze_the_table(vmfb, tmp_path):
    """The cache written by tuning, given to --tuning-results, freezes both choices into the IR;
    strategy="fixed" with the same file fills the run-time table the same way."""
    cache = tmp_path / "tuning.json"
    _load(vmfb, cache=cache).autotune()
    out = tmp_path / "pinned.mlir"
    assert cli.main([str(DATA / "cpu_workloads.mlir"), "--tuning-results", str(cache), "-p", "pin-variants", "-o", str(out)]) == 0
    text = out.read_text()
    assert "choices([1024] = @per_elem, [262144] = @fixed)" in text
    fixed = _load(vmfb, strategy="fixed", results=cache)
    assert fixed.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}


def _results(path: pathlib.Path, entries: list[dict]) -> pathlib.Path:
    path.write_text(json.dumps({"format": "autotune-export.tuning-results/1", "results": [
        {"executable": "wl_ex", "group": "scale", **e} for e in entries]}))
    return path


def _frozen(tmp_path: pathlib.Path, results: pathlib.Path, source: pathlib.Path = DATA / "cpu_workloads.mlir") -> pathlib.Path:
    """The module frozen from ``results`` (--tuning-results), built for the CPU."""
    out = tmp_path / "frozen.vmfb"
    assert cli.main([str(source), "--tuning-results", str(results), "--emit", "vmfb", "--backend", "llvm-cpu",
                     "-o", str(out), *SERIAL_IREE_COMPILE]) == 0
    return out


@pytest.mark.integration  # builds a .vmfb of its own (an llvm-cpu iree-compile: 3 CPU-seconds)
def test_full_slots_are_reused_in_turn_and_fixed_chooses_what_the_frozen_module_does(vmfb, tmp_path):
    """Ten per-workload results for a module of 8 slots. The slots are reused in turn (the 9th
    workload takes slot 0, the 10th slot 1: main reused slot 0 for both), and a workload that
    lost its slot gets it back on its call, so strategy="fixed" runs, for every workload, the
    variant the module frozen from the same file runs (main: n = 101 and 109 lost theirs and
    ran the group's choice, @wrong, where the frozen module ran @fixed). @wrong (3 * x) makes
    the variant that ran visible in the results."""
    ns = list(range(101, 111))
    pinned = {n: "fixed" if n in (101, 105, 109, 110) else "wrong" for n in ns}
    pinned[110] = "wrong"  # the last entry: main's rule for the group's choice; 6 of 10: the new one's
    results = _results(tmp_path / "ten.json", [{"variant": pinned[n], "workload": f"tensor<{n}xf32>",
                                                 "workload_values": [n]} for n in ns])
    fixed = _load(vmfb, strategy="fixed", results=results)
    assert fixed.chosen[GROUP] == "wrong"
    assert sorted(fixed._slot_of[GROUP].items(), key=lambda kv: kv[1]) == [
        ((109,), 0), ((110,), 1), ((103,), 2), ((104,), 3), ((105,), 4), ((106,), 5), ((107,), 6), ((108,), 7)]
    frozen = AutotunedModule(_frozen(tmp_path, results), driver="local-task", cache=None, strategy="fixed")
    for n in ns + [50, 101, 102, 101]:  # every workload, an untuned one, then again those that lost their slots
        x = _x(n)
        want = 2 * x if pinned.get(n) == "fixed" else 3 * x
        np.testing.assert_array_equal(frozen("run", x), want, err_msg=f"frozen, n={n}")
        np.testing.assert_array_equal(fixed("run", x), want, err_msg=f"fixed, n={n}")


def _three_workloads(tmp_path: pathlib.Path) -> pathlib.Path:
    src = tmp_path / "three.mlir"
    src.write_text((DATA / "cpu_workloads.mlir").read_text().replace(
        "tune_workload([tensor<1024xf32>], [tensor<262144xf32>])",
        "tune_workload([tensor<1024xf32>], [tensor<262144xf32>], [tensor<524288xf32>])"))
    return src


@pytest.mark.integration  # builds a .vmfb of its own (an llvm-cpu iree-compile: 3 CPU-seconds)
def test_one_rule_for_the_groups_own_choice(tmp_path):
    """The variant of a workload no decision covers: the tuning process, strategy="fixed" and
    the frozen module choose it by one rule (contract.choose_result: the variant most
    workloads chose, ties to the lower index). Three workloads, @per_elem wins n = 1024 and
    @fixed the other two: every one of them says @fixed (main: the tuning process kept the
    first workload's @per_elem, the frozen module the last entry's)."""
    src = _three_workloads(tmp_path)
    three = _build(tmp_path, src.read_text(), "three_vmfb")
    cache = tmp_path / "tuning.json"
    tuned = _load(three, cache=cache)
    tuned.autotune()
    assert tuned.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed", (524288,): "fixed"}
    assert tuned.chosen[GROUP] == "fixed"
    assert _load(three, strategy="fixed", results=cache).chosen[GROUP] == "fixed"
    out = tmp_path / "pinned.mlir"
    assert cli.main([str(src), "--tuning-results", str(cache), "-o", str(out)]) == 0
    assert "default(@fixed)" in out.read_text()


def test_one_rule_for_live_workloads_whatever_their_order(vmfb, tmp_path):
    """Round-robin locks n = 262144 (@fixed) first, then n = 1024 (@per_elem): the group's
    choice is the rule's (a tie: the lower index, @per_elem), as strategy="fixed" and the
    frozen module read the same file (main: the first locked workload's @fixed, and the
    frozen module the last entry's)."""
    cache = tmp_path / "tuning.json"
    m = _load(vmfb, cache=cache, strategy="round-robin", min_rounds=3, max_rounds=5)
    for n in (LARGE, SMALL):
        for _ in range(20):
            m("run", _x(n))
            if (n,) in m.per_workload.get(GROUP, {}):
                break
    assert m.per_workload[GROUP] == {(LARGE,): "fixed", (SMALL,): "per_elem"}
    assert m.chosen[GROUP] == "per_elem"
    assert _load(vmfb, strategy="fixed", results=cache).chosen[GROUP] == "per_elem"
    out = tmp_path / "pinned.mlir"
    assert cli.main([str(DATA / "cpu_workloads.mlir"), "--tuning-results", str(cache), "-o", str(out)]) == 0
    assert "default(@per_elem)" in out.read_text()


def test_two_shapes_with_equal_workload_values_are_one_live_workload(tmp_path):
    """A host that flattens a 2-D argument: shapes (4, 256) and (16, 64) have the same workload
    value (n = 1024), so the module gives them one choice. Round-robin treats them as one
    workload: once (4, 256) has locked, calls of (16, 64) are not timed again (main timed them
    as rotating variants while the slot of n = 1024 ran the locked one: each timing labelled
    with a variant that did not run)."""
    text = (DATA / "cpu_workloads.mlir").read_text()
    host = text[text.index("util.func public @run("):]
    flat = """util.func public @run(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.dim %x, %c0 : tensor<?x?xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?xf32>
  %n = arith.muli %a, %b : index
  %flat = flow.tensor.reshape %x : tensor<?x?xf32>{%a, %b} -> tensor<?xf32>{%n}
  %n32 = arith.index_cast %n : index to i32
  %y = flow.dispatch @wl_ex::@scale[%n](%flat, %n32) : (tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
  util.return %y : tensor<?xf32>
}
"""
    text = text.replace(host, flat).replace("tune_workload([tensor<1024xf32>], [tensor<262144xf32>])",
                                            "tune_workload(tensor<32x32xf32>)")
    m = _load(_build(tmp_path, text, "flat"), strategy="round-robin", min_rounds=3, max_rounds=5)
    a, b = _x(1024).reshape(4, 256), _x(1024).reshape(16, 64)[::-1].copy()
    for _ in range(10):
        np.testing.assert_array_equal(m("run", a), 2 * a.ravel())
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem"}
    timed = len(m.benchmarker.log)
    assert {w for _, _, _, w in m.benchmarker.log} == {"[1024]"}
    for _ in range(10):
        np.testing.assert_array_equal(m("run", b), 2 * b.ravel())
    assert m.benchmarker.log[timed:] == []  # the same workload: locked, nothing timed under a wrong label
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem"}


def test_results_file_integers_past_int64(vmfb, tmp_path):
    """Workload values past 2^63 in a tuning-results file: a located diagnostic from
    --tuning-results and a ValueError naming the file from strategy="fixed" (main: internal
    errors)."""
    results = tmp_path / "big.json"
    results.write_text('{"format": "autotune-export.tuning-results/1", "results": [\n'
                       ' {"executable": "wl_ex", "group": "scale", "variant": "fixed",\n'
                       '  "workload_values": [18446744073709551616]}]}\n')
    with pytest.raises(ValueError, match=r"big.json: result 0 \(wl_ex::scale\): workload value 18446744073709551616 does "
                                         r"not fit in a 64-bit signed integer"):
        _load(vmfb, strategy="fixed", results=results)
    assert cli.main([str(DATA / "cpu_workloads.mlir"), "--tuning-results", str(results), "-o", str(tmp_path / "o.mlir")]) == 1
    assert not (tmp_path / "o.mlir").exists()


def test_load_goes_on_when_the_tuning_cache_cannot_be_written(vmfb, tmp_path):
    """strategy="load" with a cache file that cannot be written (its folder is a file): a
    RuntimeWarning, and the module is tuned all the same (main: the OSError ended the load)."""
    (tmp_path / "plain").write_text("a file, not a folder")
    with pytest.warns(RuntimeWarning, match="cannot write the tuning cache .*plain/tuning.json"):
        m = _load(vmfb, strategy="load", cache=tmp_path / "plain" / "tuning.json")
    assert m.per_workload[GROUP] == {(SMALL,): "per_elem", (LARGE,): "fixed"}
    np.testing.assert_array_equal(m("run", _x(SMALL)), 2 * _x(SMALL))


def test_tune_shows_every_workload_and_marks_the_dropped_variant(vmfb, tmp_path, capsys, monkeypatch):
    """`autotune-export tune`: rows for both tuning workloads, each with its winner, and @wrong
    (the fastest, dropped by the cross-check) marked dropped, its ratio against the best kept
    variant (main: only workload 0, and @wrong shown as the best, 1.000). -v says what it tunes;
    the note about the dropped variant goes to stderr."""
    from autotune_export.tools import tune

    monkeypatch.setattr(tune, "AutotunedModule", lambda *a, **k: AutotunedModule(*a, benchmarker=GivenTimings(given), **k))
    report = tmp_path / "report"
    assert cli.main(["tune", str(vmfb), "--device", "local-task", "--no-cache", "-v", "--report", str(report)]) == 0
    out, err = capsys.readouterr()
    table = [line.split() for line in out.splitlines()]
    assert table[0][:5] == ["group", "workload", "variant", "fastest", "ms"]  # then median, p20-p80, x best
    rows = {(r[1], r[2]): r for r in table[1:]}
    assert set(rows) == {(f"tensor<{n}xf32>", v) for n in (SMALL, LARGE) for v in ("per_elem", "fixed", "wrong")}
    assert rows[("tensor<1024xf32>", "per_elem")][6:] == ["1.000", "<-", "winner"]
    assert rows[("tensor<262144xf32>", "fixed")][6:] == ["1.000", "<-", "winner"]
    assert rows[("tensor<1024xf32>", "wrong")][6:8] == ["0.500", "dropped:"]
    assert rows[("tensor<262144xf32>", "per_elem")][6:] == ["3.000"]
    assert "tuning wl_ex::scale: 3 variants, 2 tuning workloads" in err
    assert "tensor<262144xf32>: @fixed (tuned)" in err and "note: wl_ex::scale: variant wrong was dropped" in err
    doc = json.loads((report / "report.json").read_text())
    small = doc["groups"][f"{GROUP} [tensor<1024xf32>]"]
    assert small["winner"] == "per_elem"
    assert [v["dropped"] for v in small["variants"]] == [False, False, True]
    assert doc["groups"][f"{GROUP} [tensor<262144xf32>]"]["winner"] == "fixed"
    assert cli.main(["tune", str(vmfb), "--device", "local-task", "--no-cache", "--json", "-q"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    rows = json.loads(out)["variants"]
    assert {(r["workload"], r["variant"]) for r in rows if r["winner"]} == {("tensor<1024xf32>", "per_elem"),
                                                                             ("tensor<262144xf32>", "fixed")}
    assert [r["workload_values"] for r in rows if r["winner"]] == [[SMALL], [LARGE]]
    assert {r["variant"] for r in rows if r["dropped"]} == {"wrong"}


def test_inspect_shows_the_frozen_choices(vmfb, tmp_path, capsys):
    """The choices --tuning-results froze are shown by inspect (main showed only the default)."""
    cache = tmp_path / "tuning.json"
    _load(vmfb, cache=cache).autotune()
    assert cli.main(["inspect", str(DATA / "cpu_workloads.mlir"), "--tuning-results", str(cache), "--no-resources"]) == 0
    out = capsys.readouterr().out
    assert "  choices:     [1024] = @per_elem, [262144] = @fixed (frozen per workload; any other workload: the default)" in out
    assert "  default:     @per_elem (frozen by default(@v))" in out
    assert cli.main(["inspect", str(DATA / "cpu_workloads.mlir"), "--tuning-results", str(cache), "--no-resources", "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["groups"]
    assert group["choices"] == [{"workload": [SMALL], "variant": "per_elem"}, {"workload": [LARGE], "variant": "fixed"}]


@pytest.mark.integration  # builds a .vmfb of its own (an llvm-cpu iree-compile: 3 CPU-seconds)
def test_inspect_shows_the_frozen_choices_of_a_vmfb(vmfb, tmp_path, capsys):
    """A .vmfb frozen from a results file carries its choices(...) in the reflection metadata
    (frozen_choices, default_frozen), and inspect shows them as for the .mlir (main showed no
    choices and "default" without saying whether it was frozen); the unfrozen module says it
    has none."""
    results = _results(tmp_path / "r.json", [
        {"variant": "fixed", "workload": "tensor<262144xf32>", "workload_values": [LARGE]},
        {"variant": "per_elem", "workload": "tensor<1024xf32>", "workload_values": [SMALL]},
        {"variant": "fixed", "workload": "tensor<5000xf32>", "workload_values": [5000]}])
    frozen = _frozen(tmp_path, results)
    assert cli.main(["inspect", str(frozen), "--no-resources"]) == 0
    out = capsys.readouterr().out
    assert ("  choices:     [262144] = @fixed, [1024] = @per_elem, [5000] = @fixed (frozen per workload; "
            "any other workload: the default)") in out
    assert "  default:     @fixed (frozen by default(@v))" in out
    assert cli.main(["inspect", str(frozen), "--no-resources", "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["groups"]
    assert group["choices"] == [{"workload": [LARGE], "variant": "fixed"}, {"workload": [SMALL], "variant": "per_elem"},
                                {"workload": [5000], "variant": "fixed"}]
    assert group["frozen"] is True
    assert cli.main(["inspect", str(vmfb), "--no-resources", "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["groups"]
    assert group["choices"] == [] and group["frozen"] is False


def test_a_rotating_workload_does_not_cost_a_decided_one_its_choice(vmfb, tmp_path):
    """Eight decided workloads fill the 8 slots; a ninth rotates under round-robin and takes
    slot 0 in turn. The workload that held it (n = 101, pinned to @wrong, 3 * x, which makes
    the variant visible) gets it back on its next call, so it keeps its choice while the ninth
    is still being timed (before, it ran the group's choice until the ninth locked)."""
    ns = list(range(101, 109))
    pinned = {n: "wrong" if n in (101, 102, 103) else "fixed" for n in ns}
    results = _results(tmp_path / "eight.json", [{"variant": pinned[n], "workload": f"tensor<{n}xf32>",
                                                  "workload_values": [n]} for n in ns])
    m = _load(vmfb, strategy="round-robin", min_rounds=3, max_rounds=5)
    m.apply_results(results)
    assert m.chosen[GROUP] == "fixed"  # 5 of 8
    x9 = _x(2048)
    np.testing.assert_array_equal(m("run", x9), 2 * x9)  # the ninth: its first trial takes slot 0
    assert (2048,) in m._slot_of[GROUP] and (101,) not in m._slot_of[GROUP]
    np.testing.assert_array_equal(m("run", _x(101)), 3 * _x(101))  # still its pinned @wrong
    np.testing.assert_array_equal(m("run", x9), 2 * x9)
    assert (2048,) not in m.per_workload[GROUP]  # still rotating
