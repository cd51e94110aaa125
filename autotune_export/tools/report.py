"""Tuning reports: what each variant of each group measured, as Markdown, JSON and a chart.

:func:`write_report` takes the timings :meth:`autotune_export.runtime.AutotunedModule.autotune`
returns (``{"executable::group": [VariantTiming, ...]}``) and writes into a directory:

``report.md``
    per group, a table: variant, median ms, spread (20th-80th percentile, Triton's
    ``do_bench`` quantiles), min-max, samples, time relative to the best, the winner marked;
``report.json``
    the same numbers (format ``autotune-export.report/1``) plus every sample;
``report.png``
    per group, a horizontal bar chart of the medians with p20-p80 error bars, the winner
    highlighted (matplotlib, Agg: no display needed). Skipped with a warning when matplotlib
    is not installed.

The winner is the variant with the lowest median (the runtime's rule) among those not
dropped; variants without samples, and variants the runtime's cross-check dropped (``dropped=``:
their results differ from the default variant's), are listed and never win (the dropped ones
marked so, their ratio still against the best kept variant). A group answered by the tuning cache has no samples: its
timings are :class:`RecordedTiming` objects (the median and p20-p80 the cache stored when the
group was measured), reported as such ("from the tuning cache"; min-max and samples "-").
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import statistics
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from autotune_export.support.stats import quantile

__all__ = ["FORMAT", "RecordedTiming", "VariantStats", "summarize", "write_report", "render_markdown", "render_png"]

FORMAT = "autotune-export.report/1"


@dataclass
class RecordedTiming:
    """A variant's timing as the tuning cache stores it: no samples, the median and the
    (20th, 80th) percentiles in milliseconds (``spread_ms`` None when not stored)."""

    variant: str
    median_ms: float
    spread_ms: tuple[float, float] | None = None
    times_ms: list[float] = field(default_factory=list)  # none: the cache keeps no samples
    #: What tuning ranked it by (ms, the fastest sample); an entry of an older release: its median.
    recorded_estimate: float | None = None

    @property
    def estimate_ms(self) -> float:
        return self.median_ms if self.recorded_estimate is None else self.recorded_estimate


@dataclass
class VariantStats:
    """Summary of one variant's samples (milliseconds). Empty samples give None everywhere,
    except for a recorded timing (``recorded``: from the tuning cache), which has its median
    and p20/p80 but no samples, min, max or mean."""

    variant: str
    samples: list[float]
    median_ms: float | None
    p20_ms: float | None
    p80_ms: float | None
    min_ms: float | None
    max_ms: float | None
    mean_ms: float | None
    relative: float | None = None  # median / best median
    winner: bool = False
    recorded: bool = False
    dropped: bool = False  # the runtime's cross-check dropped it: it never wins

    def to_json(self, with_samples: bool = True) -> dict:
        doc = {
            k: getattr(self, k)
            for k in ("variant", "median_ms", "p20_ms", "p80_ms", "min_ms", "max_ms", "mean_ms", "relative", "winner", "dropped")
        }
        doc["count"] = len(self.samples)
        doc["source"] = "tuning cache" if self.recorded else "measured"
        if with_samples:
            doc["samples_ms"] = list(self.samples)
        return doc


def _finite_samples(times: Sequence[float]) -> list[float]:
    """The finite samples, in measurement order."""
    return [float(t) for t in times if t is not None and math.isfinite(float(t))]


def _finite(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _recorded(item: RecordedTiming) -> VariantStats:
    median = _finite(item.median_ms)
    if median is None:
        return VariantStats(item.variant, [], None, None, None, None, None, None, recorded=True)
    lo, hi = (item.spread_ms or (None, None))[:2]
    lo, hi = _finite(lo), _finite(hi)
    return VariantStats(
        item.variant, [], median, median if lo is None else lo, median if hi is None else hi, None, None, None, recorded=True
    )


def _stats(variant: str, times: Sequence[float]) -> VariantStats:
    samples = _finite_samples(times)
    xs = sorted(samples)
    if not xs:
        return VariantStats(variant, [], None, None, None, None, None, None)
    return VariantStats(
        variant, samples, statistics.median(xs), quantile(xs, 0.2), quantile(xs, 0.8), xs[0], xs[-1], statistics.fmean(xs)
    )


def summarize(timings: Mapping[str, Sequence[Any]], dropped: Mapping[str, Any] | None = None) -> dict[str, list[VariantStats]]:
    """Per group, one :class:`VariantStats` per timing (objects with ``variant`` and
    ``times_ms``, as :class:`autotune_export.runtime.VariantTiming`, or
    :class:`RecordedTiming`), in the given order, with ``relative``, ``winner`` and ``dropped``
    filled in. ``dropped``: per group key, the names of variants that cannot win."""
    out: dict[str, list[VariantStats]] = {}
    for group, items in timings.items():
        stats = [_recorded(t) if isinstance(t, RecordedTiming) else _stats(t.variant, t.times_ms) for t in items]
        out_of_it = set((dropped or {}).get(group, ()))
        for s in stats:
            s.dropped = s.variant in out_of_it
        timed = [s for s in stats if s.median_ms is not None]
        kept = [s for s in timed if not s.dropped]
        if kept:
            best = min(kept, key=lambda s: s.median_ms)
            best.winner = True
            for s in timed:
                # A 0 ms best (a clock too coarse for the kernel) makes ratios meaningless.
                s.relative = s.median_ms / best.median_ms if best.median_ms > 0 else (1.0 if s.median_ms == 0 else None)
        out[group] = stats
    return out


# --------------------------------------------------------------------------------------------
# Markdown


def _ms(x: float | None) -> str:
    if x is None:
        return "-"
    if x == 0:
        return "0"
    digits = max(0, 3 - int(math.floor(math.log10(abs(x)))))  # 4 significant digits
    return f"{x:.{min(digits, 6)}f}"


def _relative(x: float | None) -> str:
    if x is None:
        return "-"
    return "best" if x == 1.0 else f"{x:.2f}x (+{(x - 1) * 100:.1f}%)"


def _meta_value(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)):
        return "`" + json.dumps(value, sort_keys=True, default=str) + "`"
    return str(value)


def render_markdown(summary: Mapping[str, list[VariantStats]], meta: Mapping[str, Any], png: str | None = None) -> str:
    """The Markdown report of :func:`summarize`'s result."""
    lines = ["# autotune-export tuning report", ""]
    for key, value in meta.items():
        lines.append(f"- **{key}**: {_meta_value(value)}")
    if meta:
        lines.append("")
    if png:
        lines += [f"![median time per variant]({png})", ""]
    for group, stats in summary.items():
        lines.append(f"## `{group}`")
        lines.append("")
        winner = next((s for s in stats if s.winner), None)
        if winner is not None and winner.recorded:
            lines.append(
                f"Winner: `{winner.variant}`, median {_ms(winner.median_ms)} ms, from the tuning cache "
                "(the medians and p20-p80 stored when the group was measured; samples are not kept)."
            )
        elif winner is not None:
            lines.append(f"Winner: `{winner.variant}`, median {_ms(winner.median_ms)} ms over {len(winner.samples)} samples.")
        else:
            lines.append("No variant has timings.")
        lines.append("")
        lines.append("| variant | median ms | p20-p80 ms | min-max ms | samples | vs best | winner |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | :---: |")
        for s in stats:
            spread = f"{_ms(s.p20_ms)}-{_ms(s.p80_ms)}" if s.median_ms is not None else "-"
            extent = f"{_ms(s.min_ms)}-{_ms(s.max_ms)}" if s.median_ms is not None and not s.recorded else "-"
            count = "-" if s.recorded else str(len(s.samples))
            mark = "**winner**" if s.winner else "dropped: results differ from the default variant's" if s.dropped else ""
            lines.append(
                f"| `{s.variant}` | {_ms(s.median_ms)} | {spread} | {extent} | {count} | {_relative(s.relative)} | {mark} |"
            )
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# PNG


def render_png(summary: Mapping[str, list[VariantStats]], path: str | os.PathLike, title: str | None = None) -> None:
    """Draw :func:`summarize`'s result to a PNG at ``path``: one panel per group, one bar per
    variant (median), p20-p80 error bars, the winner in a highlight colour. Raises ImportError
    without matplotlib."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    groups = [(g, s) for g, s in summary.items()] or [("(no groups)", [])]
    rows = sum(max(1, len(s)) for _, s in groups)
    height = min(40.0, 1.2 * len(groups) + 0.32 * rows + 0.6)
    fig = Figure(figsize=(9.0, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(groups), 1, squeeze=False, gridspec_kw={"height_ratios": [max(1, len(s)) + 1.5 for _, s in groups]})[
        :, 0
    ]
    base, best = "#8da0cb", "#e7298a"
    for ax, (group, stats) in zip(axes, groups):
        names = [s.variant for s in stats]
        ys = list(range(len(stats)))
        medians = [s.median_ms if s.median_ms is not None else 0.0 for s in stats]
        lo = [(s.median_ms - s.p20_ms) if s.median_ms is not None else 0.0 for s in stats]
        hi = [(s.p80_ms - s.median_ms) if s.median_ms is not None else 0.0 for s in stats]
        colors = [best if s.winner else base for s in stats]
        if stats:
            ax.barh(
                ys,
                medians,
                xerr=[lo, hi],
                color=colors,
                edgecolor="#333333",
                linewidth=0.5,
                error_kw={"ecolor": "#333333", "capsize": 3, "linewidth": 1},
            )
            ax.set_yticks(ys, labels=names, fontsize=8)
            ax.invert_yaxis()  # the first variant on top, as in the table
            for y, s in zip(ys, stats):
                if s.median_ms is None:
                    label = "no samples"
                else:
                    rel = "  winner" if s.winner else (f"  {s.relative:.2f}x" if s.relative is not None else "")
                    label = f"{_ms(s.median_ms)} ms{rel}"
                ax.annotate(
                    label,
                    (s.p80_ms if s.p80_ms is not None else 0.0, y),
                    xytext=(4, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=7,
                    color=best if s.winner else "#333333",
                    fontweight="bold" if s.winner else "normal",
                )
            top = max((s.p80_ms or 0.0) for s in stats)
            ax.set_xlim(0, top * 1.3 if top > 0 else 1)
        else:
            ax.text(0.5, 0.5, "no timings", ha="center", va="center", transform=ax.transAxes)
            ax.set_yticks([])
        ax.set_title(group, fontsize=10, loc="left")
        ax.set_xlabel("median time per run (ms); bars: 20th-80th percentile", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.savefig(os.fspath(path), format="png")


# --------------------------------------------------------------------------------------------


def write_report(
    directory: str | os.PathLike,
    timings: Mapping[str, Sequence[Any]],
    meta: Mapping[str, Any] | None = None,
    *,
    png: bool = True,
    with_samples: bool = True,
    dropped: Mapping[str, Any] | None = None,
) -> list[pathlib.Path]:
    """Write report.md, report.json and report.png into ``directory`` (created if missing)
    and return their paths (report.png left out, with a RuntimeWarning, when matplotlib is
    missing; ``png=False`` skips it). ``timings``: per group key, objects with ``variant``
    and ``times_ms`` (:class:`autotune_export.runtime.VariantTiming`), or
    :class:`RecordedTiming` for timings from the tuning cache. ``meta``: free-form,
    JSON-serializable facts (device, module, date...) shown at the top and stored as-is
    (values that are not JSON types are written as strings). ``dropped``: per group key, the
    variants the runtime's cross-check dropped (:func:`summarize`)."""
    meta = dict(meta or {})
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(timings, dropped)
    written: list[pathlib.Path] = []

    png_path = out / "report.png"
    drew = False
    if png:
        try:
            render_png(summary, png_path, title=str(meta.get("module") or meta.get("title") or "") or None)
            drew = True
        except ImportError as err:
            warnings.warn(
                f"autotune-export: report.png not written: {err} (pip install matplotlib)", RuntimeWarning, stacklevel=2
            )

    md_path = out / "report.md"
    md_path.write_text(render_markdown(summary, meta, png_path.name if drew else None), encoding="utf-8")
    written.append(md_path)

    json_path = out / "report.json"
    doc = {
        "format": FORMAT,
        "meta": meta,
        "groups": {
            group: {
                "winner": next((s.variant for s in stats if s.winner), None),
                "variants": [s.to_json(with_samples) for s in stats],
            }
            for group, stats in summary.items()
        },
    }
    json_path.write_text(json.dumps(doc, indent=2, default=str, allow_nan=False) + "\n", encoding="utf-8")
    written.append(json_path)
    if drew:
        written.append(png_path)
    return written
