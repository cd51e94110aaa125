"""Tests of autotune_export.tools.report with fake timings (no GPU, no module)."""
import json
import math
import struct
import warnings

import pytest

from autotune_export.tools import report
from autotune_export.tools.report import summarize, write_report
from autotune_export.runtime.tuner import VariantTiming

TIMINGS = {
    "mm_ex::mm": [
        VariantTiming("mm_0_128x256_w8_s3", [2.0, 2.2, 1.8, 2.1, 1.9]),   # median 2.0
        VariantTiming("mm_1_64x64_w4_s4", [1.0, 1.1, 0.9, 1.2, 0.8]),      # median 1.0: the winner
        VariantTiming("mm_2_32x32_w2_s2", [3.0, 3.0, 3.0]),                # median 3.0
        VariantTiming("mm_3_failed", []),                                  # no samples
    ],
    "add_ex::add": [VariantTiming("add_0", [0.5, 0.6]), VariantTiming("add_1", [0.25])],
}
META = {"module": "out/mm.vmfb", "device": {"name": "NVIDIA H200", "driver": "cuda 13.0"}, "warmup_ms": 25}


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "nested" / "dir"
    return out, write_report(out, TIMINGS, META)


def test_writes_three_files(written):
    out, paths = written
    assert [p.name for p in paths] == ["report.md", "report.json", "report.png"]
    assert all(p.parent == out and p.stat().st_size > 0 for p in paths)


def test_png_is_a_png_of_sensible_size(written):
    _, paths = written
    width, height = png_size(paths[2])
    assert 600 <= width <= 2000 and 300 <= height <= 3000
    assert paths[2].stat().st_size > 10_000  # something is drawn


def test_markdown_rows(written):
    _, paths = written
    md = paths[0].read_text()
    assert md.startswith("# autotune-export tuning report")
    assert "- **module**: out/mm.vmfb" in md
    assert '- **device**: `{"driver": "cuda 13.0", "name": "NVIDIA H200"}`' in md
    assert "![median time per variant](report.png)" in md
    assert "## `mm_ex::mm`" in md and "Winner: `mm_1_64x64_w4_s4`, median 1.000 ms over 5 samples." in md
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in md.splitlines() if line.startswith("| `")}
    assert rows["`mm_1_64x64_w4_s4`"] == ["1.000", "0.8800-1.120", "0.8000-1.200", "5", "best", "**winner**"]
    assert rows["`mm_0_128x256_w8_s3`"] == ["2.000", "1.880-2.120", "1.800-2.200", "5", "2.00x (+100.0%)", ""]
    assert rows["`mm_2_32x32_w2_s2`"][4] == "3.00x (+200.0%)"
    assert rows["`mm_3_failed`"] == ["-", "-", "-", "0", "-", ""]
    assert rows["`add_1`"][-1] == "**winner**" and rows["`add_0`"][4] == "2.20x (+120.0%)"
    assert md.count("**winner**") == 2


def test_json_values(written):
    _, paths = written
    doc = json.loads(paths[1].read_text())
    assert doc["format"] == "autotune-export.report/1" and doc["meta"] == META
    mm = doc["groups"]["mm_ex::mm"]
    assert mm["winner"] == "mm_1_64x64_w4_s4"
    v0, v1, v2, v3 = mm["variants"]
    assert v1["winner"] and not v0["winner"] and not v3["winner"]
    assert v0["median_ms"] == pytest.approx(2.0) and v0["relative"] == pytest.approx(2.0)
    # Linear-interpolation quantiles of [1.8, 1.9, 2.0, 2.1, 2.2]: p20 = 1.88, p80 = 2.12.
    assert v0["p20_ms"] == pytest.approx(1.88) and v0["p80_ms"] == pytest.approx(2.12)
    assert (v0["min_ms"], v0["max_ms"], v0["count"]) == (1.8, 2.2, 5) and v0["mean_ms"] == pytest.approx(2.0)
    assert v0["samples_ms"] == [2.0, 2.2, 1.8, 2.1, 1.9]  # measurement order
    assert v2["p20_ms"] == v2["p80_ms"] == 3.0
    assert v3 == {"variant": "mm_3_failed", "median_ms": None, "p20_ms": None, "p80_ms": None, "min_ms": None,
                  "max_ms": None, "mean_ms": None, "relative": None, "winner": False, "dropped": False, "count": 0, "samples_ms": [],
                  "source": "measured"}
    assert doc["groups"]["add_ex::add"]["winner"] == "add_1"


def test_without_png_and_without_matplotlib(tmp_path, monkeypatch):
    assert [p.name for p in write_report(tmp_path / "a", TIMINGS, {}, png=False)] == ["report.md", "report.json"]
    assert "![" not in (tmp_path / "a" / "report.md").read_text()

    def no_matplotlib(*args, **kwargs):
        raise ImportError("No module named 'matplotlib'")

    monkeypatch.setattr(report, "render_png", no_matplotlib)
    with pytest.warns(RuntimeWarning, match="report.png not written"):
        paths = write_report(tmp_path / "b", TIMINGS, {})
    assert [p.name for p in paths] == ["report.md", "report.json"]


def test_edge_cases(tmp_path):
    # no groups; one group without timings; a 0 ms best; non-finite samples are dropped
    paths = write_report(tmp_path / "empty", {}, {"note": object()})
    assert png_size(paths[2])[0] > 0
    assert "note" in json.loads(paths[1].read_text())["meta"]
    summary = summarize({"g": [VariantTiming("a", [0.0, 0.0]), VariantTiming("b", [1.0, float("nan"), math.inf])],
                         "h": []})
    a, b = summary["g"]
    assert a.winner and a.relative == 1.0 and b.relative is None and b.samples == [1.0]
    assert summary["h"] == []
    paths = write_report(tmp_path / "edge", {"g": [VariantTiming("a", [0.0]), VariantTiming("b", [1.0])], "h": []}, {})
    json.loads(paths[1].read_text())  # strict JSON: no NaN or Infinity
    assert "No variant has timings." in paths[0].read_text()


def test_png_does_not_touch_pyplot_state(tmp_path):
    import sys

    had_pyplot = "matplotlib.pyplot" in sys.modules
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. no "FigureCanvasAgg is non-interactive" warnings
        write_report(tmp_path, TIMINGS, META)
    assert ("matplotlib.pyplot" in sys.modules) == had_pyplot


# --------------------------------------------------------------------------------------------
# Quantiles: one helper (autotune_export.support.stats, statistics.quantiles) for the report
# and the runtime, equal to numpy's default linear interpolation


SAMPLE_LISTS = [[1.8, 1.9, 2.0, 2.1, 2.2], [3.0, 1.0], [0.25], [5.0, 1.0, 4.0, 2.0, 3.0, 7.5, 0.5],
                [0.001 * k * k for k in range(1, 38)], [2.0] * 4 + [9.0]]


@pytest.mark.parametrize("xs", SAMPLE_LISTS)
@pytest.mark.parametrize("q", [0.0, 0.2, 0.25, 0.5, 0.8, 1.0])
def test_quantile_matches_numpy(xs, q):
    np = pytest.importorskip("numpy")
    from autotune_export.support.stats import quantile

    expected = float(np.quantile(xs, q))  # method="linear"
    assert quantile(xs, q) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert VariantTiming("v", xs).quantile(q) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("xs", SAMPLE_LISTS)
def test_report_and_runtime_spread_agree(xs):
    np = pytest.importorskip("numpy")
    [stats] = summarize({"g": [VariantTiming("v", xs)]})["g"]
    assert (stats.p20_ms, stats.p80_ms) == VariantTiming("v", xs).spread_ms
    assert stats.p20_ms == pytest.approx(float(np.quantile(xs, 0.2)), rel=1e-12)


def test_quantile_edges():
    from autotune_export.support.stats import quantile

    assert quantile([4.0], 0.2) == quantile([4.0], 0.8) == 4.0  # one sample
    assert VariantTiming("v", []).quantile(0.5) == math.inf
    with pytest.raises(ValueError):
        quantile([], 0.5)
    with pytest.raises(ValueError):
        quantile([1.0, 2.0], 1.5)


def test_recorded_timings_from_the_tuning_cache(tmp_path):
    """Timings the tuning cache stored (median and p20-p80, no samples) are reported as such."""
    from autotune_export.tools.report import RecordedTiming

    timings = {"cpu_ex::scale": [RecordedTiming("slow", 2.5, (2.4, 2.7)), RecordedTiming("fast", 0.5, (0.45, 0.6)),
                                 RecordedTiming("broken", float("inf"))]}
    paths = write_report(tmp_path, timings, {"module": "m.vmfb"})
    md = paths[0].read_text()
    assert "Winner: `fast`, median 0.5000 ms, from the tuning cache" in md
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in md.splitlines() if line.startswith("| `")}
    assert rows["`fast`"] == ["0.5000", "0.4500-0.6000", "-", "-", "best", "**winner**"]
    assert rows["`slow`"] == ["2.500", "2.400-2.700", "-", "-", "5.00x (+400.0%)", ""]
    assert rows["`broken`"] == ["-", "-", "-", "-", "-", ""]
    doc = json.loads(paths[1].read_text())
    fast = doc["groups"]["cpu_ex::scale"]["variants"][1]
    assert fast["source"] == "tuning cache" and fast["count"] == 0 and fast["samples_ms"] == []
    assert (fast["median_ms"], fast["p20_ms"], fast["p80_ms"], fast["min_ms"]) == (0.5, 0.45, 0.6, None)
    assert paths[2].stat().st_size > 10_000
