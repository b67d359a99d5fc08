"""Provides MAGMA box plots drawn with plotext from the summary's own statistics.

The boxes are drawn from the numbers in the summary table (quartiles, Tukey whiskers), not
recomputed by plotext, so the plot and the table can never disagree. The same drawing code
serves the TUI (`PlotextPlot.plt`) and text export (a private plotext figure, no colour).
No Textual import here: `gpuscope magma --format text` must start fast.
"""

from __future__ import annotations

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
    plots.set_ticks(plt, "x", low - pad, high + pad, most=5)  # labels side by side on a narrow axis
    plt.xlabel(METRICS[metric])


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
