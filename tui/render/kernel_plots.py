"""Provides the kernels figures: time-share bars and the roofline, for the screen and for text.

The same code draws on the screen (a `PlotextPlot.plt`, a rich `Text`) and in `--format text`
(a `grid_plot.GridFigure`, plain text without plotext; the bars as a string), so both show the same figure.
No Textual here, and rich only for the screen: the print path must start fast.

Roofline: log-log, arithmetic intensity (FLOP/byte) against achieved FLOP/s, one point per
row that has both (PyProf leaves FLOPs at 0 for kernels it cannot model: those cannot be
placed). The memory roof is peak B/s × intensity up to the ridge point, the compute roof peak
FLOP/s after it.
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any

import pandas as pd

from gpuscope.metrics.kernels.names import short_name
from gpuscope.metrics.safe_text import clean
from gpuscope.tui.render import plots
from gpuscope.tui.render.grid_plot import GridFigure

if TYPE_CHECKING:
    from rich.text import Text

BAR_ROWS = 10
BLOCKS = " ▏▎▍▌▋▊▉█"
SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"))
MARKS = {"memory-bound": ("x", "cyan"), "compute-bound": ("•", "magenta"), "unknown": ("•", "yellow")}


def _bar_rows(frame: pd.DataFrame, width: int, rows: int) -> list[tuple[str, str, str]]:
    """(name, bar, share) of the `rows` longest entries of a ranking frame: bars of their time
    share scaled to the longest (shares are often a few %), names plain text cut to fit."""
    top = frame.sort_values("total_ns", ascending=False, kind="stable").head(rows)
    shares = [float(v) if pd.notna(v) else 0.0 for v in top["share_pct"]]
    name_width = max(8, min(40, width // 2 - 2))
    bar_width = max(4, width - name_width - 9)
    biggest = max(shares, default=0.0) or 1.0
    out = []
    for name, share in zip(top["kernel"], shares):
        shown = short_name(clean(name), name_width)  # templates folded: the function name stays
        eighths = round(share / biggest * bar_width * 8)
        bar = "█" * (eighths // 8) + (BLOCKS[eighths % 8] if eighths % 8 else "")
        out.append((f"{shown:<{name_width}} ", f"{bar:<{bar_width}}", f" {share:5.1f}%\n"))
    return out


def share_bars(frame: pd.DataFrame, width: int, rows: int = BAR_ROWS, label: str = "kernel") -> Text:
    """The time-share bars as a rich `Text` (the bars bold), for the screen."""
    from rich.text import Text  # the screen's: `--format text` takes `share_bars_text`

    text = Text(no_wrap=True, overflow="crop")
    bars = _bar_rows(frame, width, rows)
    if not bars:
        return text.append(f"No {label} to show.", style="italic")
    for name, bar, share in bars:
        text.append(name)
        text.append(bar, style="bold")
        text.append(share)
    text.rstrip()
    return text


def share_bars_text(frame: pd.DataFrame, width: int, rows: int = BAR_ROWS, label: str = "kernel") -> str:
    """`share_bars` as plain text."""
    bars = _bar_rows(frame, width, rows)
    return "".join("".join(parts) for parts in bars).rstrip() if bars else f"No {label} to show."


def si(value: float) -> str:
    """1.5e12 -> '1.5T': tick labels short enough for a narrow axis."""
    for scale, prefix in SI:
        if abs(value) >= scale:
            return f"{value / scale:g}{prefix}"
    return f"{value:.1g}"


def _decades(low: float, high: float, most: int = 7) -> list[int]:
    """Exponents of the powers of ten from below `low` to above `high`, every `step` decades so
    at most about `most` ticks; the last one is never below `high` (a roof above the frame would
    not be drawn)."""
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
    step = max(1, math.ceil((hi - lo + 1) / most))
    return list(range(lo, hi + step, step))


def roofline_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows that can be placed: positive intensity and positive achieved FLOP/s."""
    if frame.empty:
        return frame
    x = pd.to_numeric(frame["intensity"], errors="coerce")
    y = pd.to_numeric(frame["flop_per_s"], errors="coerce")
    return frame[(x > 0).fillna(False) & (y > 0).fillna(False)]


def _log(values: Any) -> list[float]:
    return [math.log10(float(v)) for v in values]


def draw_roofline(plt: Any, frame: pd.DataFrame, peak: Any) -> str:
    """Draw on `plt` (a plotext figure or a `GridFigure`); return a one-line note of what could not be drawn.

    Coordinates are log10 values on linear axes, labelled with the powers of ten: plotext's own
    log scale rewrites the figure's data in place at every build, so a second render (a resize,
    a theme change) would take the log of a log and fail."""
    plots.clear(plt)
    points = roofline_points(frame)
    skipped = len(frame) - len(points)
    notes = [f"{skipped} row(s) without FLOPs or bytes not drawn"] if skipped else []
    complete = peak is not None and peak.tflops and peak.gbs
    if not complete:
        several = peak is not None and "each profile against its own GPU's peak" in getattr(peak, "source_text", "")
        notes.insert(0, "no roofs: the profiles ran on GPUs with different peaks (each is measured against its own; see Runs)" if several
                     else "no roofs: the peak is incomplete (give --gpu or --peak-tflops and --peak-gbs)")
    if points.empty:
        plt.title("Roofline: nothing to place")
        return "; ".join(["no row has both FLOPs and bytes"] + notes)
    xs, ys = [float(v) for v in points["intensity"]], [float(v) for v in points["flop_per_s"]]
    x_lo, x_hi, y_lo, y_hi = min(xs), max(xs), min(ys), max(ys)
    if complete:
        peak_fs, peak_bs = float(peak.tflops) * 1e12, float(peak.gbs) * 1e9
        ridge = peak_fs / peak_bs
        x_lo, x_hi, y_hi = min(x_lo, ridge), max(x_hi, ridge), max(y_hi, peak_fs)
    x_ticks, y_ticks = _decades(x_lo / 2, x_hi * 2), _decades(y_lo / 2, y_hi * 2)
    plt.xlim(x_ticks[0], x_ticks[-1])
    plt.ylim(y_ticks[0], y_ticks[-1])
    if complete:
        # In log-log both roofs are straight lines: two points each. The memory roof enters at
        # the left edge or, when that is below the frame, at the bottom edge.
        start = max(10.0 ** x_ticks[0], 10.0 ** y_ticks[0] / peak_bs)
        if start < ridge:
            plt.plot(_log([start, ridge]), _log([start * peak_bs, peak_fs]), color="green", marker="braille")
        plt.plot(_log([ridge, 10.0 ** x_ticks[-1]]), _log([peak_fs, peak_fs]), color="green", marker="braille", label="roofs")
    for verdict, (marker, color) in MARKS.items():
        chosen = points[points["verdict"].astype("string").fillna("unknown") == verdict]
        if len(chosen):
            plt.scatter(_log(chosen["intensity"]), _log(chosen["flop_per_s"]), marker=marker, color=color, label=verdict)
    plt.xticks(x_ticks, [si(10.0 ** k) for k in x_ticks])
    plt.yticks(y_ticks, [si(10.0 ** k) for k in y_ticks])
    plt.xlabel("FLOP/byte")
    plt.title("Roofline: FLOP/s against intensity")
    return "; ".join(notes)


def roofline_text(frame: pd.DataFrame, peak: Any, width: int = 100, height: int = 24) -> str:
    """The roofline as plain text, for `--format text` and exports."""
    fig = GridFigure(width, height)
    note = draw_roofline(fig, frame, peak)
    if roofline_points(frame).empty:  # an empty frame says less than the note
        return "\n".join(textwrap.wrap(f"Roofline: {note}", width)) + "\n"
    return fig.build() + "".join("\n" + line for line in textwrap.wrap(note, width)) + "\n"
