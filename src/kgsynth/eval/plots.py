"""The report's figures: one small function per plot, each ``Metrics -> PNG bytes`` (None when its data is absent).

Figures are drawn on a bare ``matplotlib.figure.Figure`` with the Agg canvas (no pyplot, no display,
no global backend state), in a fixed style, at a fixed dpi and without the PNG ``Software`` tag, so
the same metrics give the same bytes with the same matplotlib.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from contextlib import contextmanager

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kgsynth.eval.metrics import CurvePoint, GroupMetrics, Metrics, Slice
from kgsynth.eval.scoring import ERROR_SOURCES

DPI = 100
SIZE = (6.4, 3.8)  # inches: 640 x 380 px
ACCURACY = "#2f6db5"  # blue: accuracy, the main series everywhere
FORMAT_OK = "#f2a93b"  # amber: share of syntactically valid answers
BREAK = "#c8385a"  # crimson: break point and threshold
BASELINE_COLOURS = {"closed_book": "#9aa5b1", "main": ACCURACY, "oracle": "#2a9d74"}
ERROR_COLOURS = {
    "format": FORMAT_OK,
    "fact_extraction": "#5b8fd9",
    "rule_knowledge": "#e07b39",
    "rule_application": BREAK,
    "reasoning": "#8e5bd9",
    "combination": "#2a9d74",
    "unprobed": "#b7bec7",
}
_OTHER_COLOURS = ("#6c4f3d", "#3d8c95", "#d96f9a", "#7a8c3d")
DIFFICULTY_ORDER = ("easy", "medium", "hard")
_STYLE = {
    "font.family": "DejaVu Sans",  # ships with matplotlib: the same glyphs everywhere
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#8a939c",
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#e6e9ed",
    "grid.linewidth": 0.8,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "svg.hashsalt": "kgsynth",  # deterministic ids should a figure ever be saved as SVG
    "path.simplify": False,
}


@contextmanager
def figure(ncols: int = 1, size: tuple[float, float] = SIZE):
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=size, dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, ncols, squeeze=False)[0]
        yield fig, list(axes)


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None}, facecolor="white")
    return buf.getvalue()


def find_slice(metrics: Metrics, *names: str) -> Slice | None:
    """The first slice whose ``by`` is one of ``names`` (and has groups)."""
    by_name = {s.by: s for s in metrics.slices if s.groups}
    return next((by_name[n] for n in names if n in by_name), None)


def ordered_groups(groups: Sequence[GroupMetrics], order: Sequence[str] = DIFFICULTY_ORDER) -> list[GroupMetrics]:
    """Groups in ``order`` first (easy, medium, hard), then the rest as given."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(groups, key=lambda g: rank.get(g.group, len(rank)))


def _pct(value: float | None) -> float:
    return math.nan if value is None else 100 * value


def _errors(groups: Sequence[GroupMetrics], field: str = "accuracy") -> list[list[float]]:
    """Asymmetric error bar lengths (in percent) from each group's CI; 0 where unknown."""
    low, high = [], []
    for g in groups:
        e = getattr(g, field)
        ok = None not in (e.mean, e.low, e.high)
        low.append(_pct(e.mean - e.low) if ok else 0.0)
        high.append(_pct(e.high - e.mean) if ok else 0.0)
    return [low, high]


def _percent_axis(ax: Axes, label: str = "accuracy (%)") -> None:
    ax.set_ylim(0, 105)
    ax.set_ylabel(label)
    ax.set_axisbelow(True)


def _bars(ax: Axes, groups: Sequence[GroupMetrics], with_format: bool, colours: Sequence[str] | None = None) -> None:
    """Accuracy bars with CI error bars, and the syntactic-ok rate beside each when asked."""
    xs = range(len(groups))
    width = 0.38 if with_format else 0.6
    shift = width / 2 if with_format else 0.0
    ax.bar([x - shift for x in xs], [_pct(g.accuracy.mean) for g in groups], width, yerr=_errors(groups),
           color=colours or ACCURACY, ecolor="#333a40", capsize=3, label="accuracy")
    if with_format:
        ax.bar([x + shift for x in xs], [_pct(g.syntactic_ok.mean) for g in groups], width,
               yerr=_errors(groups, "syntactic_ok"), color=FORMAT_OK, ecolor="#333a40", capsize=3,
               label="format valid")
        ax.legend(loc="upper right", ncols=2)
    ax.set_xticks(list(xs), [f"{g.group}\nn={g.n}" for g in groups])
    _percent_axis(ax, "%")


def difficulty_png(metrics: Metrics) -> bytes | None:
    """Accuracy (with CIs) and format-valid rate per difficulty."""
    s = find_slice(metrics, "difficulty")
    if s is None:
        return None
    with figure() as (fig, (ax,)):
        _bars(ax, ordered_groups(s.groups), with_format=True)
        ax.set_title("Accuracy by difficulty")
        return png_bytes(fig)


def rule_kind_png(metrics: Metrics) -> bytes | None:
    """Accuracy (with CIs) per rule kind (H4)."""
    s = find_slice(metrics, "rule_kind")
    if s is None:
        return None
    groups = sorted(s.groups, key=lambda g: g.group)
    with figure() as (fig, (ax,)):
        _bars(ax, groups, with_format=False)
        ax.set_title("Accuracy by rule kind")
        return png_bytes(fig)


def baselines_png(metrics: Metrics) -> bytes | None:
    """Closed book, main and oracle (facts only) on the same items."""
    if not metrics.baselines:
        return None
    groups = ordered_groups(metrics.baselines, ("closed_book", "main", "oracle"))
    colours = [BASELINE_COLOURS.get(g.group, _OTHER_COLOURS[i % 4]) for i, g in enumerate(groups)]
    with figure() as (fig, (ax,)):
        _bars(ax, groups, with_format=False, colours=colours)
        ax.set_title("Baselines: no dialogue, full dialogue, facts only")
        return png_bytes(fig)


def _curve(ax: Axes, points: Sequence[CurvePoint], colour: str = ACCURACY) -> None:
    """Accuracy vs x with its CI band; points without a mean are left out."""
    pts = [p for p in points if p.metrics.accuracy.mean is not None]
    xs = [p.x for p in pts]
    acc = [p.metrics.accuracy for p in pts]
    lows = [_pct(e.low if e.low is not None else e.mean) for e in acc]
    highs = [_pct(e.high if e.high is not None else e.mean) for e in acc]
    ax.fill_between(xs, lows, highs, color=colour, alpha=0.18, linewidth=0, label="CI")
    ax.plot(xs, [_pct(e.mean) for e in acc], "o-", color=colour, linewidth=2, markersize=5, label="accuracy")
    _percent_axis(ax)


def length_png(metrics: Metrics) -> bytes | None:
    """Accuracy vs target context tokens (log2 axis), the threshold line and the break point."""
    curve = metrics.length
    if curve is None or not any(p.metrics.accuracy.mean is not None for p in curve.points):
        return None
    with figure() as (fig, (ax,)):
        _curve(ax, curve.points)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("target context tokens")
        if curve.reference_accuracy is not None:
            threshold = curve.break_ratio * curve.reference_accuracy
            ax.axhline(_pct(threshold), color=BREAK, linestyle="--", linewidth=1,
                       label=f"threshold ({curve.break_ratio:.0%} of shortest)")
        if curve.break_point is not None:
            ax.axvline(curve.break_point, color=BREAK, linewidth=1.5, label=f"break point: {curve.break_point:,.0f}")
        ax.legend(loc="lower left")
        ax.set_title("Accuracy vs context length")
        return png_bytes(fig)


def position_png(metrics: Metrics) -> bytes | None:
    """The U-curve: accuracy by the dialogue's depth in the context, and by the fact turns' index."""
    pos = metrics.position
    panels = [
        (pts, title, xlabel) for pts, title, xlabel in (
            (pos.by_depth if pos else (), "by depth in the context", "depth: 0 start, 1 end"),
            (pos.by_turn if pos else (), "by fact-turn index", "mean fact-turn index"),
        ) if any(p.metrics.accuracy.mean is not None for p in pts)
    ]
    if not panels:
        return None
    with figure(ncols=len(panels)) as (fig, axes):
        for ax, (pts, title, xlabel) in zip(axes, panels, strict=True):
            _curve(ax, pts)
            ax.set_title(title, fontweight="normal")
            ax.set_xlabel(xlabel)
        fig.suptitle("Accuracy by position", fontweight="bold", fontsize=10)
        return png_bytes(fig)


def kv_png(metrics: Metrics) -> bytes | None:
    """The key-value probe: accuracy by the queried pair's position, one line with CI error
    bars per key count (each drawn a little aside, so the bars do not hide each other)."""
    curves = [c for c in metrics.kv.curves if c.keys is not None] if metrics.kv else []
    curves = [c for c in curves if any(p.metrics.accuracy.mean is not None for p in c.points)]
    if not curves:
        return None
    positions = sorted({p.x for c in curves for p in c.points})
    step = min((b - a for a, b in zip(positions, positions[1:], strict=False)), default=1.0)
    with figure() as (fig, (ax,)):
        for i, (colour, curve) in enumerate(zip(_shades(len(curves)), curves, strict=True)):
            points = [p for p in curve.points if p.metrics.accuracy.mean is not None]
            aside = step * 0.12 * (i - (len(curves) - 1) / 2) / max(len(curves) - 1, 1)
            ax.errorbar([p.x + aside for p in points], [_pct(p.metrics.accuracy.mean) for p in points],
                        yerr=_errors([p.metrics for p in points]), fmt="o-", color=colour, ecolor=colour, capsize=3,
                        linewidth=2, markersize=5, label=f"{curve.keys:,} keys")
        ax.set_xticks(positions)
        ax.set_xlabel("position of the queried pair: 0 first, 1 last")
        _percent_axis(ax)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.set_title("Key-value retrieval by position")
        return png_bytes(fig)


def _shades(n: int) -> list[str]:
    """``n`` blues from light to dark (more keys, darker); the accuracy blue for one."""
    if n == 1:
        return [ACCURACY]
    blues = matplotlib.colormaps["Blues"]
    return [matplotlib.colors.to_hex(blues(0.45 + 0.55 * i / (n - 1))) for i in range(n)]


def _source_order(sources: set[str]) -> list[str]:
    return [s for s in ERROR_SOURCES if s in sources] + sorted(sources - set(ERROR_SOURCES))


def error_sources_png(metrics: Metrics) -> bytes | None:
    """Wrong answers by error source, stacked, per difficulty."""
    by_diff = {d: c for d, c in metrics.error_sources.by_difficulty.items() if sum(c.values())}
    if not by_diff:
        return None
    diffs = [d for d in DIFFICULTY_ORDER if d in by_diff] + sorted(set(by_diff) - set(DIFFICULTY_ORDER))
    sources = _source_order({s for c in by_diff.values() for s in c})
    with figure() as (fig, (ax,)):
        bottom = [0] * len(diffs)
        for i, source in enumerate(sources):
            counts = [by_diff[d].get(source, 0) for d in diffs]
            ax.bar(diffs, counts, 0.6, bottom=bottom, label=source.replace("_", " "),
                   color=ERROR_COLOURS.get(source, _OTHER_COLOURS[i % 4]))
            bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
        ax.set_ylabel("wrong answers")
        ax.set_axisbelow(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.set_title("Error sources by difficulty")
        return png_bytes(fig)


PlotFn = Callable[[Metrics], "bytes | None"]
PLOTS: dict[str, tuple[str, PlotFn]] = {
    "difficulty": ("Accuracy and format-valid rate by difficulty", difficulty_png),
    "baselines": ("Closed-book, main and oracle baselines", baselines_png),
    "length": ("Length sweep with its break point", length_png),
    "position": ("Position in the context: the U-curve", position_png),
    "kv": ("Key-value retrieval: the queried pair's position, per key count", kv_png),
    "error_sources": ("Where the wrong answers come from", error_sources_png),
    "rule_kind": ("Accuracy by rule kind", rule_kind_png),
}


def render_plots(metrics: Metrics) -> dict[str, bytes]:
    """Every plot whose data is present, by name, in the report's order."""
    made = {name: fn(metrics) for name, (_, fn) in PLOTS.items()}
    return {name: png for name, png in made.items() if png is not None}
