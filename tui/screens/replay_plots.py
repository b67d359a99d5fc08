"""Provides `GpuReplayPlot`: a replay's history plot of one GPU (its power and energy so far, or
its SM, tensor and DRAM activity) whose lines, legend and note follow the GPU shown (`G`) and
the cursor (tui/model/replay_energy.py says what they read).

Where the recording has nothing to draw (no power, no activity: an older recording, a GPU
before Hopper), the plot says n/a and why in place of its lines: an empty plot could be read
as 0.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from gpuscope.metrics.history import History
from gpuscope.tui.model.replay_energy import PlotText
from gpuscope.tui.widgets.history_plot import HistoryPlot

_DIM = Style(dim=True)


class GpuReplayPlot(HistoryPlot):
    """A HistoryPlot whose lines and legend are set by `show`, with a note in place of the lines."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", (), **kwargs)
        self.note = ""
        """Said in place of the lines (n/a and why); '' draws the lines."""

    def show(self, names: Sequence[str], text: PlotText) -> None:
        """Draw the History series `names` with `text`'s legends; its note instead when it has one."""
        series = tuple(zip(names, text.legends))
        redraw = [n for n, _ in series] != [n for n, _ in self.series] or text.note != self.note
        self.series, self.plot_title, self.note = series, text.title, text.note
        legend = Text().append(self.plot_title, style="bold")
        for (_, label), style in zip(self.series, self._line_styles):
            legend.append("  ━ ", style=style).append(label)
        self.border_title = legend
        if redraw:
            self._span_cache = None  # the lines drawn were another GPU's
            if self.history is not None:
                self.replot(self.history)

    def _draw(self, history: History, width: int, height: int) -> list[Strip]:
        if not self.note:
            return super()._draw(history, width, height)
        self.points_drawn = 0
        said = textwrap.wrap(self.note, max(1, width - 2))[:max(0, height)]
        top = (height - len(said)) // 2
        return [Strip([Segment(said[y - top].center(width)[:width], _DIM)]) if 0 <= y - top < len(said) else Strip.blank(width)
                for y in range(max(0, height))]
