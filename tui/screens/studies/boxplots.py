"""Provides `BoxPlot` (one problem size, one box per environment) and `BoxPlotStack`.

The drawing itself is `gpuscope.tui.render.boxplot.draw_boxes`, shared with the text export, so the
screen and `--format text` show the same figure. The stack scrolls, and Textual only renders
the plots that are on screen. Problem sizes whose rows were all excluded (typically the
warm-up size) get one line at the end instead of an empty frame at the top.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static
from textual_plotext import PlotextPlot

from gpuscope.metrics.magma.stats import EXCLUDED_NAMES, EXCLUSIONS
from gpuscope.tui.render import plots
from gpuscope.tui.render.boxplot import draw_boxes
from gpuscope.tui.model.magma import METRIC_LABELS, problem_sizes

MIN_PLOT_HEIGHT = 10
"""Lines per plot with one or two boxes; plotext needs ~2 lines per horizontal box."""


class BoxPlot(PlotextPlot):
    """Box plot of one problem size: one box per environment."""

    DEFAULT_CSS = """
    BoxPlot {
        height: 12;
    }
    """

    def __init__(self, summary: pd.DataFrame, metric: str, title: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.summary = summary
        """The summary rows this plot draws (one per environment)."""
        self.metric = metric
        """`gflops` or `time_ms`."""
        self.plot_title = title
        self.styles.height = max(MIN_PLOT_HEIGHT, 2 * len(summary) + 6)

    def on_mount(self) -> None:
        super().on_mount()
        self.replot()

    def replot(self) -> None:
        """Redraw from `summary` and `metric` (main thread only)."""
        plots.clear(self.plt)
        draw_boxes(self.plt, self.summary, self.metric, self.plot_title)
        self.refresh()


class BoxPlotStack(VerticalScroll):
    """A vertical scroll of `BoxPlot`s, one per problem size of the current selection."""

    DEFAULT_CSS = """
    BoxPlotStack > .plots-note {
        height: auto;
        padding: 1 2;
        color: $text-muted;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.metric = "gflops"
        """Metric the plots currently show."""
        self.sizes: list[str] = []
        """Problem sizes currently plotted, in order."""
        self.empty_sizes: list[str] = []
        """Problem sizes with no rows left after exclusions (not plotted)."""

    async def show(self, summary: pd.DataFrame, metric: str, empty_text: str) -> None:
        """Replace the plots with one per problem size in `summary` that has data."""
        self.metric = metric
        self.sizes, self.empty_sizes = [], []
        widgets: list[Static | BoxPlot] = []
        why: list[str] = []
        for size in problem_sizes(summary):
            rows = summary[summary["problem_size"].astype(str) == size]
            if not (rows["count"] > 0).any():
                self.empty_sizes.append(size)
                why.append(f"{size} ({lost_to(rows)})")
                continue
            rows = rows[rows["count"] > 0].reset_index(drop=True)
            self.sizes.append(size)
            # Short: plotext drops a title wider than the plot area. Test and nodes are in the bar.
            widgets.append(BoxPlot(rows, metric, f"{size} ({METRIC_LABELS.get(metric, metric)})"))
        if not self.sizes:
            widgets.append(Static(Text(empty_text), classes="plots-note"))
        if self.empty_sizes:
            note = f"No data left after exclusions (see Findings) for: {', '.join(why)}"
            widgets.append(Static(Text(note), classes="plots-note"))
        with self.app.batch_update():
            await self.remove_children()
            await self.mount_all(widgets)
        self.scroll_home(animate=False)

    @property
    def plots(self) -> list[BoxPlot]:
        return list(self.query_children(BoxPlot))


def lost_to(rows: pd.DataFrame) -> str:
    """What an empty problem size lost its rows to, summed over its environments: '40 warm-up'."""
    lost = [(int(rows[key].fillna(0).sum()), label) for key, label in zip(EXCLUSIONS, EXCLUDED_NAMES[1:]) if key in rows]
    return ", ".join(f"{n} {label}" for n, label in lost if n) or "no rows"
