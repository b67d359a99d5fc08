"""Provides MAGMA box plots drawn with plotext from the summary's own statistics.

The boxes are drawn from the numbers in the summary table (quartiles, Tukey whiskers), not
recomputed by plotext, so the plot and the table can never disagree. The same drawing code
serves the TUI (`PlotextPlot.plt`) and text export (a private plotext figure, no colour).
No Textual import here: `gpuscope magma --format text` must start fast.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from gpuscope.metrics.magma.stats import METRICS
from gpuscope.metrics.safe_text import clean
from gpuscope.tui.render import plots

PLOT_HEIGHT = 14


def plot_height(n_boxes: int) -> int:
    """Lines for a plot of `n_boxes` horizontal boxes: three per box (with fewer, plotext's
    boxes touch their neighbours' labels), plus title, frame, axis ticks and label."""
    return max(10, 3 * n_boxes + 5)


def box_label(row: pd.Series, with_nodes: bool) -> str:
    label = clean(row["environment"])
    return f"{label} ({row['nodes']})" if with_nodes else label


def draw_boxes(plt: Any, rows: pd.DataFrame, metric: str, title: str) -> None:
    """One horizontal box per row of `rows` (summary rows of one problem size)."""
    plt.clear_data()
    plt.title(clean(title))
    rows = rows[rows["count"] > 0]
    if rows.empty:
        plt.xlabel("no data left after exclusions")
        return
    with_nodes = rows["nodes"].nunique() > 1
    labels = [box_label(r, with_nodes) for _, r in rows.iterrows()]
    stats = [
        [r[f"{metric}_whisker_hi"], r[f"{metric}_q3"], r[f"{metric}_median"], r[f"{metric}_q1"], r[f"{metric}_whisker_lo"]]
        for _, r in rows.iterrows()
    ]
    # plotext puts the first box at the bottom: reversed, the plot reads top-down as the table does.
    plt.box(labels[::-1], stats[::-1], quintuples=True, orientation="horizontal", width=0.5)
    # Pad the value axis so boxes at either end are not drawn on the frame.
    low = min(s[4] for s in stats)
    high = max(s[0] for s in stats)
    pad = (high - low) * 0.05 or abs(high) * 0.05 or 1.0
    plt.xlim(low - pad, high + pad)
    ticks = nice_ticks(low - pad, high + pad)
    plt.xticks(ticks, [tick_label(t) for t in ticks])
    plt.xlabel(METRICS[metric])


def nice_ticks(low: float, high: float, most: int = 5) -> list[float]:
    """Tick values inside [low, high] on a round step (1, 2, 2.5 or 5 x 10^k), at most `most`
    of them and at least three where the range allows: 75, 80, 85, ... rather than 72.6, 79.7."""
    span = high - low
    if not (math.isfinite(span) and span > 0):
        return [low] if math.isfinite(low) else []
    exponent = math.floor(math.log10(span / most))
    for power in (exponent, exponent + 1, exponent + 2):
        for mantissa in (1, 2, 2.5, 5):
            step = mantissa * 10.0**power
            first = math.ceil(low / step - 1e-9)
            last = math.floor(high / step + 1e-9)
            if last - first + 1 <= most:
                return [round(k * step, 12) for k in range(first, last + 1)]
    return [low, high]  # pragma: no cover - the loop always finds a step


def tick_label(value: float) -> str:
    """A tick value without float noise: 77.5, 80, 0.0125, 1.2e+04 only when very large."""
    text = f"{value:.6g}"
    return text[:-2] if text.endswith(".0") else text


def boxplots_text(summary: pd.DataFrame, metric: str, width: int = 100) -> str:
    """Every (test, nodes selection, problem size) of `summary` as a plain-text box plot."""
    blocks = []
    for (test, size), rows in summary.groupby(["test", "problem_size"], sort=False):
        title = f"{test} {size}: {METRICS[metric]}"
        n_boxes = int((rows["count"] > 0).sum())
        if n_boxes == 0:
            blocks.append(f"{title}: no data left after exclusions (see findings)\n")
            continue
        fig = plots.figure(width, plot_height(n_boxes))
        draw_boxes(fig, rows, metric, title)
        blocks.append(plots.plain_text(fig) + "\n")
    return "\n".join(blocks)
