"""Provides MAGMA box plots from the summary's own statistics: drawn with plotext on the screen,
and straight into a character grid for text export.

The boxes are drawn from the numbers in the summary table (quartiles, Tukey whiskers), not
recomputed, so the plot and the table can never disagree. The screen draws on its
`PlotextPlot.plt` (`draw_boxes`); text export (`boxplots_text`) lays the same figure out cell by
cell with plotext's own placement rules (`grid_plot.cell`, `grid_plot.tick_start`), without building a plotext
figure per plot: a box is five numbers, and plotext's general drawing costs ~50 ms a plot.
tests/tui/test_boxplot_text.py checks that the two give the same characters.
No Textual import here: `gpuscope magma --format text` must start fast.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from gpuscope.metrics.magma.stats import METRICS
from gpuscope.metrics.safe_text import clean
from gpuscope.tui.render import plots
from gpuscope.tui.render.grid_plot import cell, centred, fits, put, tick_start

QUINTUPLE = ("whisker_hi", "q3", "median", "q1", "whisker_lo")
"""A box's numbers in plotext's quintuple order, each a summary column `<metric>_<name>`."""
MIN_CANVAS = 10
"""Columns of value axis a text plot keeps: longer environment names are cut in the middle to
leave them."""


def plot_height(n_boxes: int) -> int:
    """Lines for a plot of `n_boxes` horizontal boxes: three per box (with fewer, plotext's
    boxes touch their neighbours' labels), plus title, frame, axis ticks and label."""
    return max(10, 3 * n_boxes + 5)


def boxes(rows: pd.DataFrame, metric: str) -> tuple[list[str], list[list[float]]]:
    """Labels and quintuples (whisker hi, q3, median, q1, whisker lo) of the rows with data,
    top-down in the table's order."""
    return _boxes(*_columns(rows, metric))


def _columns(rows: pd.DataFrame, metric: str) -> tuple[list[Any], ...]:
    """What a box plot draws of `rows`, as lists: environments, nodes, counts, quintuples."""
    quintuples = rows[[f"{metric}_{name}" for name in QUINTUPLE]].to_numpy(dtype=float).tolist()
    return rows["environment"].tolist(), rows["nodes"].tolist(), rows["count"].tolist(), quintuples


def _boxes(environments: list[Any], nodes: list[Any], counts: list[int], quintuples: list[list[float]]) -> tuple[list[str], list[list[float]]]:
    kept = [i for i, count in enumerate(counts) if count > 0]
    labels = [clean(str(environments[i])) for i in kept]
    if len({nodes[i] for i in kept if not pd.isna(nodes[i])}) > 1:  # boxes of several cluster sizes: each says its own
        labels = [f"{label} ({nodes[i]})" for label, i in zip(labels, kept)]
    return labels, [quintuples[i] for i in kept]


def value_axis(stats: list[list[float]]) -> tuple[float, float]:
    """The value axis' limits: the whiskers' span padded so boxes at either end are not drawn
    on the frame."""
    low = min(s[4] for s in stats)
    high = max(s[0] for s in stats)
    pad = (high - low) * 0.05 or abs(high) * 0.05 or 1.0
    return low - pad, high + pad


def draw_boxes(plt: Any, rows: pd.DataFrame, metric: str, title: str) -> None:
    """One horizontal box per row of `rows` (summary rows of one problem size), on a plotext figure."""
    plt.clear_data()
    plt.title(clean(title))
    labels, stats = boxes(rows, metric)
    if not labels:
        plt.xlabel("no data left after exclusions")
        return
    # plotext puts the first box at the bottom: reversed, the plot reads top-down as the table does.
    plt.box(labels[::-1], stats[::-1], quintuples=True, orientation="horizontal", width=0.5)
    low, high = value_axis(stats)
    plt.xlim(low, high)
    plots.set_ticks(plt, "x", low, high, most=5)  # labels side by side on a narrow axis
    plt.xlabel(METRICS[metric])


def _cut(label: str, width: int) -> str:
    """`label` in `width` cells, its middle left out: the ends (the cluster, the node count) tell
    environments apart."""
    if len(label) <= width:
        return label
    tail = (width - 1) // 2
    return label[:width - 1 - tail] + "…" + label[len(label) - tail:]


def box_plot_text(rows: pd.DataFrame, metric: str, title: str, width: int) -> str:
    """One plot of `rows` (summary rows of one problem size, some with data) as plain text, the
    figure `draw_boxes` draws on a `width`-column plotext figure of `plot_height` lines."""
    return _plot_text(*boxes(rows, metric), metric, title, width)


def _plot_text(labels: list[str], stats: list[list[float]], metric: str, title: str, width: int) -> str:
    n = len(labels)
    height = plot_height(n)
    label_width = min(max(len(label) for label in labels), max(width - 2 - MIN_CANVAS, 1))
    labels = [_cut(label, label_width) for label in labels]
    cols, canvas_rows = width - label_width - 2, height - 5
    left, bottom = label_width + 1, height - 3  # first canvas column, bottom frame line
    low, high = value_axis(stats)
    grid = [[" "] * width for _ in range(height)]

    def col(value: float) -> int:
        return left + cell(value, low, high, cols)

    def row(y: float) -> int:  # plotext's y of box k is n - k, its rows counted from the bottom
        return 2 + canvas_rows - 1 - cell(y, 0.75, n + 0.25, canvas_rows)

    centred(grid[0], left + cols // 2, clean(title))
    grid[1][label_width:] = "┌" + "─" * cols + "┐"
    for line in grid[2:bottom]:
        line[label_width], line[-1] = "│", "│"
    grid[bottom][label_width:] = "└" + "─" * cols + "┘"
    for k, label in enumerate(labels):
        put(grid[row(n - k)], 0, label.rjust(label_width) + "┤")
    ticks = grid[height - 2]
    for value in plots.round_ticks(low, high, most=5):
        text, at = plots.tick_label(value), col(value)
        start = tick_start(ticks, text, at)
        if fits(ticks, start, text):
            put(ticks, start, text)
            grid[bottom][at] = "┬"
    centred(grid[height - 1], left + cols // 2, METRICS[metric])
    for k in reversed(range(n)):  # bottom first, as plotext draws them
        hi, q3, median, q1, lo = stats[k]
        if not all(math.isfinite(v) for v in stats[k]):
            continue
        middle = grid[row(n - k)]
        middle[col(q3):col(hi) + 1] = "─" * (col(hi) - col(q3) + 1)
        middle[col(lo):col(q1) + 1] = "─" * (col(q1) - col(lo) + 1)
        for line in grid[row(n - k + 0.25):row(n - k - 0.25) + 1]:
            line[col(q1):col(q3) + 1] = "█" * (col(q3) - col(q1) + 1)
            line[col(median)] = "│"
    return "\n".join("".join(line).rstrip() for line in grid)


def boxplots_text(summary: pd.DataFrame, metric: str, width: int = 100) -> str:
    """Every (test, nodes selection, problem size) of `summary` as a plain-text box plot.
    The summary is read once into lists: a pandas selection per plot costs more than the plot."""
    width = max(width, MIN_CANVAS + 4)  # a label column, the frame and the smallest canvas: a narrower --width still prints
    columns = _columns(summary, metric)
    groups: dict[tuple[Any, Any], list[int]] = {}
    for i, key in enumerate(zip(summary["test"].tolist(), summary["problem_size"].tolist())):
        if not any(pd.isna(part) for part in key):  # as groupby: no group for a missing key
            groups.setdefault(key, []).append(i)
    blocks = []
    for (test, size), at in groups.items():
        title = f"{test} {size}: {METRICS[metric]}"
        labels, stats = _boxes(*([column[i] for i in at] for column in columns))
        if not labels:
            blocks.append(f"{title}: no data left after exclusions (see findings)\n")
            continue
        blocks.append(_plot_text(labels, stats, metric, title, width) + "\n")
    return "\n".join(blocks)
