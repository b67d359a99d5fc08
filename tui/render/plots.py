"""Provides the one wrapper over plotext: a private figure for text, its plain text, and the reset
every drawing starts with.

The drawing functions (box plots, the roofline, the scaling figures, a table's x/y plot) take a
plotext figure and draw on it: the screen hands them its `PlotextPlot.plt`, `--format text`
a private figure from `figure()`, so both show the same drawing. plotext's figure class is not
part of its public API (`plotext._figure`), and plotext 6 removed the module-level one: this
module is the only place that names it, so a plotext upgrade is one file to look at. No
Textual here: the print path must start fast.
"""

from __future__ import annotations

import re
from typing import Any

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def figure(width: int, height: int) -> Any:
    """A private plotext figure of `width` x `height` characters: no global state is shared."""
    from plotext._figure import _figure_class  # plotext's figure: imported only to draw text

    fig = _figure_class()
    fig.plotsize(width, height)
    return fig


def clear(plt: Any) -> None:
    """Forget a figure's data and its settings (title, limits, ticks): a drawing starts afresh."""
    plt.clear_data()
    plt.clear_figure()


def plain_text(fig: Any) -> str:
    """The figure built as text, without colour (plotext always colours its output)."""
    return strip_colour(fig.build())


def strip_colour(text: str) -> str:
    """`text` without ANSI colour codes and trailing blanks: exported text must be plain."""
    return "\n".join(line.rstrip() for line in ANSI.sub("", text).splitlines())
