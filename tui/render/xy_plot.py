"""Provides the table view's x/y plot: one column against another, downsampled to the plot's width.

No Textual here: the screen hands its `PlotextPlot.plt` to `draw_xy`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from gpuscope.metrics.safe_text import clean
from gpuscope.tui.render import plots


def downsample(xs: Sequence[float], ys: Sequence[float], limit: int) -> tuple[list[float], list[float]]:
    """At most `limit` evenly spaced points (a plot cell holds 2 braille dots across)."""
    n = len(xs)
    if n <= limit or limit <= 0:
        return list(map(float, xs)), list(map(float, ys))
    pick = np.linspace(0, n - 1, limit).round().astype(int)
    return [float(xs[i]) for i in pick], [float(ys[i]) for i in pick]


def draw_xy(plt: Any, xs: Sequence[float], ys: Sequence[float], x_label: str, y_label: str, width: int) -> str:
    """`y` against `x` on a plotext figure; returns a note when there is nothing to draw."""
    plots.clear(plt)
    plt.title(f"{clean(y_label)} against {clean(x_label)}")
    plt.xlabel(clean(x_label))
    if not len(xs):
        plt.ylabel("no row has both values")
        return f"no row has numbers in both {clean(x_label)} and {clean(y_label)}"
    x, y = downsample(xs, ys, max(20, 2 * width))
    plt.plot(x, y, marker="braille", color="cyan")
    if len(x) <= 60:  # few points: mark each, so a line between two is not read as data
        plt.scatter(x, y, marker="dot", color="yellow")
    plots.set_ticks(plt, "x", min(x), max(x))
    plots.set_ticks(plt, "y", min(y), max(y))
    return ""
