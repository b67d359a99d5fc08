"""Provides the scaling figures: speedup curves, efficiency bars and per-epoch curves, drawn with plotext.

The same functions draw on the screen (a `PlotextPlot.plt`) and in `--format text` (a
`grid_plot.GridFigure`: plain text, no plotext import), so both show the same figure. No Textual here.

Resources go on a log2 axis, as scaling studies double them: the values are log2 numbers on
a linear axis, with ticks labelled by the counts themselves (plotext's own log scale rewrites
the figure's data at every build, see kernel_plots). Speedup is log2 as well, so the ideal
line is a diagonal and a curve that bends away from it is easy to see. Weak-scaling series
plot the scaled speedup (Gustafson), whose ideal is also p / p0.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

import numpy as np
import pandas as pd

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.scaling.analysis import EFFICIENCY_THRESHOLD, KEYS, unit
from gpuscope.metrics.scaling.fit import amdahl_speedup
from gpuscope.tui.render import plots
from gpuscope.tui.render.grid_plot import GridFigure
from gpuscope.tui.model.scaling_compare import metric_label

COLORS = ("cyan", "magenta", "yellow", "green", "blue", "red")
"""One per series (and per run in the compare view); the ideal line is white, fits dim."""


def _log2(values: Any) -> list[float]:
    return [math.log2(float(v)) for v in values]


def _pow2_ticks(low: float, high: float) -> list[int]:
    """Powers of two spanning [low, high] (values, not exponents)."""
    lo, hi = math.floor(math.log2(low)), math.ceil(math.log2(high))
    step = max(1, math.ceil((hi - lo + 1) / 8))
    return [2**k for k in range(lo, hi + 1, step)]


def _lines(summary: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) per series, in the summary's order; a point run on a second topology
    (2 nodes x 4 beside 1 node x 8) is drawn apart, labelled with its topology."""
    out = []
    for (series, _kind), rows in summary.groupby(KEYS, sort=True):
        curve = rows["curve"].fillna(True).astype(bool) if "curve" in rows else pd.Series(True, index=rows.index)
        out.append((clean(series), rows[curve]))
        for topology, other in rows[~curve].groupby("topology", sort=True):
            out.append((f"{clean(series)} · {clean(topology)}", other))
    return out


def _compared(summary: pd.DataFrame) -> pd.Series:
    """Per row: whether its series has two or more configurations with a speedup. A series
    measured at one configuration only is compared with itself (speedup 1, efficiency 100 %
    by definition): it gets no ideal line and no efficiency bar."""
    measured = summary[np.isfinite(summary["speedup"].to_numpy(float))] if len(summary) else summary
    counts = measured.groupby("series")["resources"].nunique()
    return summary["series"].map(counts).fillna(0) >= 2


def _series(summary: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows with a speedup) per series, in the summary's order."""
    out = []
    for label, rows in _lines(summary):
        weak = (rows["scaling"] == "weak").all()
        rows = rows.sort_values("resources").assign(y=rows["scaled_speedup" if weak else "speedup"].astype(float))
        rows = rows[np.isfinite(rows["y"].to_numpy(float)) & (rows["y"] > 0)]
        if len(rows):
            out.append((f"{label}{' scaled' if weak else ''}", rows))
    return out


def draw_speedup(plt: Any, summary: pd.DataFrame, fits: pd.DataFrame, title: str = "Speedup") -> str:
    """Measured speedup per series, the ideal line (p / p0) and the Amdahl fit where there is
    one; returns a note of what could not be drawn (empty when all was)."""
    plots.clear(plt)
    plt.title(title)
    drawn = _series(summary)
    if not drawn:
        plt.xlabel("no configuration has a speedup")
        return "no series has a speedup to draw (see findings)"
    compared = _compared(summary)
    xs = [float(r) for _, rows in drawn for r in rows["resources"]]
    bases = {float(rows["baseline_resources"].iloc[0]) for _, rows in drawn}
    ideal_bases = [float(rows["baseline_resources"].iloc[0]) for _, rows in drawn if compared[rows.index].all()]
    x_lo, x_hi = min(xs + list(bases)), max(xs)
    ys = [float(v) for _, rows in drawn for v in rows["y"]] + ([x_hi / min(ideal_bases)] if ideal_bases else [])
    notes = []
    ideal_drawn = False
    grid = np.geomspace(x_lo, x_hi, 40) if x_hi > x_lo else np.array([x_lo])
    for i, (label, rows) in enumerate(drawn):
        color = COLORS[i % len(COLORS)]
        base = float(rows["baseline_resources"].iloc[0])
        if not compared[rows.index].all():
            notes.append(f"{label}: one configuration, nothing to scale against (no ideal line)")
        else:
            ideal = [p / base for p in (base, x_hi)]
            plt.plot(_log2([base, x_hi]), _log2(ideal), color="white", marker="braille", label=None if ideal_drawn else "ideal")
            ideal_drawn = True
        on_curve = "curve" not in rows or bool(rows["curve"].fillna(True).all())  # a second topology has no fit of its own
        fit = fits[fits["series"] == rows["series"].iloc[0]] if len(fits) and on_curve else fits.iloc[0:0]
        f = float(fit["serial_fraction"].iloc[0]) if len(fit) else math.nan
        if math.isfinite(f):
            points = grid[grid >= base]
            plt.plot(_log2(points), _log2(amdahl_speedup(points / base, f)), color=color, marker="·", label=f"Amdahl f={f:.3f}")
        elif len(fit):
            notes.append(f"{label}: no Amdahl fit ({fit['fit'].iloc[0]})")
        plt.plot(_log2(rows["resources"]), _log2(rows["y"]), color=color, marker="hd", label=label)
    y_lo, y_hi = min(ys + [1.0]), max(ys)
    x_ticks, y_ticks = _pow2_ticks(x_lo, x_hi), _pow2_ticks(min(y_lo, 1.0), y_hi)
    plt.xlim(math.log2(x_lo) - 0.2, math.log2(x_hi) + 0.2)
    plt.ylim(math.log2(y_ticks[0]) - 0.1, math.log2(y_ticks[-1]) + 0.1)
    plt.xticks(_log2(x_ticks), [str(t) for t in x_ticks])
    plt.yticks(_log2(y_ticks), [_tick(t) for t in y_ticks])
    kinds = {unit(k) for k in summary["resource_kind"]}
    plt.xlabel(f"{' / '.join(sorted(kinds))} (log2)")
    return "; ".join(notes)


def _tick(value: float) -> str:
    return f"{value:g}" if value >= 1 else f"1/{round(1 / value)}"


def draw_efficiency(plt: Any, summary: pd.DataFrame, title: str = "Parallel efficiency (%)") -> str:
    """Efficiency bars per configuration (several series side by side) and the 75 % line;
    a series with one configuration has no bar (its 100 % is itself against itself)."""
    plots.clear(plt)
    plt.title(title)
    rows = summary[np.isfinite(summary["efficiency"].to_numpy(float))] if len(summary) else summary
    single = sorted({clean(s) for s in rows["series"][~_compared(rows)]}) if len(rows) else []
    note = f"one configuration, no efficiency: {', '.join(single)}" if single else ""
    rows = rows[_compared(rows)] if len(rows) else rows
    if rows.empty:
        plt.xlabel("no series has two configurations" if single else "no configuration has an efficiency")
        return "; ".join(filter(None, ["no efficiency to draw (see findings)", note]))
    groups = [(label, g) for label, g in _lines(rows) if len(g)]
    xs = sorted({int(r) for r in rows["resources"]})
    width = 0.8 / len(groups)
    top = max(110.0, float(rows["efficiency"].max()) * 100 + 10)
    for i, (series, g) in enumerate(groups):
        offset = (i - (len(groups) - 1) / 2) * width
        positions = [math.log2(r) + offset for r in g["resources"]] if len(xs) > 1 else [i + 1.0]
        # plotext scales a bar's width by the gap between the positions of one call: undo that
        gap = min(np.diff(positions)) if len(positions) > 1 else 1.0
        plt.bar(positions, (g["efficiency"].astype(float) * 100).tolist(), color=COLORS[i % len(COLORS)], width=width / gap,
                label=series, marker="hd")
    plt.hline(EFFICIENCY_THRESHOLD * 100, color="red")
    if len(xs) > 1:
        plt.xlim(math.log2(xs[0]) - 0.6, math.log2(xs[-1]) + 0.6)
        plt.xticks(_log2(xs), [str(x) for x in xs])
    else:
        plt.xlim(0.4, len(groups) + 0.6)
        plt.xticks([i + 1.0 for i in range(len(groups))], [f"{xs[0]}"] * len(groups))
    plt.ylim(0, top)
    plots.set_ticks(plt, "y", 0, top)
    kinds = {unit(k) for k in summary["resource_kind"]}
    plt.xlabel(f"{' / '.join(sorted(kinds))} (log2); the line across: {EFFICIENCY_THRESHOLD:.0%}")
    return note


def draw_curves(plt: Any, curves: list[tuple[str, list[int], list[float]]], metric: str) -> str:
    """Per-epoch `metric` of several runs overlaid, one colour each."""
    plots.clear(plt)
    plt.title(f"{metric_label(metric)} per epoch")
    if not curves:
        plt.xlabel("no run has this curve")
        return f"none of the runs has {metric_label(metric)} per epoch"
    for i, (label, epochs, values) in enumerate(curves):
        plt.plot(epochs, values, color=COLORS[i % len(COLORS)], marker="hd", label=clean(label))
    epochs = sorted({e for _, es, _ in curves for e in es})
    ticks = [t for t in plots.round_ticks(epochs[0], epochs[-1]) if float(t).is_integer()] or epochs[:1]
    plt.xticks(ticks, [str(int(t)) for t in ticks])
    finite = [v for _, _, values in curves for v in values if math.isfinite(v)]
    if finite:
        plots.set_ticks(plt, "y", min(finite), max(finite))
    plt.xlabel("epoch")
    return ""


def as_text(draw: Any, *args: Any, width: int = 100, height: int = 20) -> str:
    """A drawing function's figure as plain text (its note under it)."""
    fig = GridFigure(width, height)
    note = draw(fig, *args)
    return fig.build() + "".join(f"\n{line}" for line in textwrap.wrap(note, width)) + "\n"
