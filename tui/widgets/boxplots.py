"""Provides `BoxPlot` (one problem size, one box per environment) and `BoxPlotStack`.

The drawing itself is `gpuscope.tui.boxplot.draw_boxes`, shared with the text export, so the
screen and `--print` show the same figure. Each plot is a fixed ~12 lines; the stack scrolls,
and Textual only renders the plots that are on screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.widgets import Static
from textual_plotext import PlotextPlot

from gpuscope.tui.magma_model import METRIC_LABELS, problem_sizes

if TYPE_CHECKING:
    import pandas as pd

try:
    from gpuscope.tui.boxplot import draw_boxes
except ImportError:  # pragma: no cover - TEMPORARY stand-in until tui/boxplot.py lands

    def draw_boxes(plt: Any, summary_for_one_size: pd.DataFrame, metric: str, title: str) -> None:
        """Stand-in with the real signature: plotext boxes from precomputed quintuples."""
        cols = [f"{metric}_{k}" for k in ("whisker_lo", "q1", "median", "q3", "whisker_hi")]
        summary_for_one_size = summary_for_one_size.dropna(subset=cols)
        labels = [str(e) for e in summary_for_one_size["environment"]]
        data = [[float(v) for v in row] for row in summary_for_one_size[cols].itertuples(index=False)]
        plt.box(labels, data, quintuples=True, width=0.3)
        plt.title(title)
        plt.ylabel(METRIC_LABELS.get(metric, metric))


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
        self.plot_title = title

    def on_mount(self) -> None:
        super().on_mount()
        self.replot()

    def replot(self) -> None:
        """Redraw from `summary` and `metric` (main thread only)."""
        self.plt.clear_figure()
        draw_boxes(self.plt, self.summary, self.metric, self.plot_title)
        self.refresh()


class BoxPlotStack(VerticalScroll):
    """A vertical scroll of `BoxPlot`s, one per problem size of the current selection."""

    DEFAULT_CSS = """
    BoxPlotStack > .empty-plots {
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

    async def show(self, summary: pd.DataFrame, metric: str, caption: str, empty_text: str) -> None:
        """Replace the plots with one per problem size in `summary`."""
        self.metric = metric
        self.sizes = problem_sizes(summary)
        plots: list[Any] = []
        for size in self.sizes:
            rows = summary[summary["problem_size"].astype(str) == size].reset_index(drop=True)
            title = f"{size} · {caption} · {METRIC_LABELS.get(metric, metric)}"
            plots.append(BoxPlot(rows, metric, title))
        if not plots:
            plots.append(Static(empty_text, markup=False, classes="empty-plots"))
        with self.app.batch_update():
            await self.remove_children()
            await self.mount_all(plots)
        self.scroll_home(animate=False)

    @property
    def plots(self) -> list[BoxPlot]:
        return list(self.query_children(BoxPlot))
