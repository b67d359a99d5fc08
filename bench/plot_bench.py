"""Benchmark: one redraw of a watch-screen history plot, braille (gpuscope) against plotext.

The watch screen redraws its two history plots at every refresh. This times, side by side in
alternating order, one redraw of a plot of three percent series at the size a 200x50 terminal
gives it (about 96x17 cells), from an `History` of `--seconds` samples at 1 Hz:
(a) what gpuscope draws: `History.downsample` + `tui.braille.raster` + the strips
    (`HistoryPlot._draw`), and
(b) the plotext way (textual-plotext): the same downsampled points through
    `plt.plot(marker="braille")`, `plt.build()` and `Text.from_ansi`.
Prints medians (ms per redraw), the ratio (b)/(a), and what a redraw every second costs in
% of one core. Reports only; exits 0.

    python bench/plot_bench.py [--seconds 3600] [--width 96] [--height 17] [--repeat 15]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from rich.text import Text
from textual_plotext.plot import Plot

from gpuscope.metrics.history import History
from gpuscope.tui.widgets.history_plot import AXIS_W, COLORS, HistoryPlot

SERIES = (("gpu.util_mean", "util mean"), ("gpu.util_max", "util max"), ("gpu.mem_mean", "memory"))


def history(seconds: int) -> History:
    """A training job's shape: utilisation that dips at each checkpoint, memory that climbs."""
    h = History(capacity=max(seconds, 2))
    for t in range(seconds):
        dip = 40.0 if t % 300 < 20 else 0.0
        h.append(float(t), {
            "gpu.util_mean": 80 - dip + 10 * math.sin(t / 7),
            "gpu.util_max": 95 - dip + 4 * math.sin(t / 5),
            "gpu.mem_mean": min(90.0, 30 + t / 60),
        })
    return h


def braille_redraw(plot: HistoryPlot, h: History, width: int, height: int) -> object:
    return plot._draw(h, width, height)


def plotext_redraw(h: History, width: int, height: int) -> object:
    plt = Plot()
    plt.ylim(0, 100)
    times = h.times()
    span = float(times[-1] - times[0])
    points = 2 * (width - AXIS_W)
    for (name, _), color in zip(SERIES, COLORS):
        values = h.downsample(name, points)
        n = len(values)
        xs = [-span * (1 - i / (n - 1)) for i in range(n)]
        plt.plot(xs, values, marker="braille", color=color)
    plt.xlabel("seconds ago")
    plt.plotsize(width, height)
    plt._set_size(width, height)
    return Text.from_ansi(plt.build())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3600)
    parser.add_argument("--width", type=int, default=96)
    parser.add_argument("--height", type=int, default=17)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    h = history(args.seconds)
    plot = HistoryPlot("GPU %", SERIES)
    ours, theirs = [], []
    for _ in range(args.repeat):
        for fn, out in ((lambda: braille_redraw(plot, h, args.width, args.height), ours),
                        (lambda: plotext_redraw(h, args.width, args.height), theirs)):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    a, b = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
    print(f"history plot redraw, {args.width}x{args.height} cells, {len(h)} samples, 3 series, median of {args.repeat}:")
    print(f"  gpuscope braille: {a:7.2f} ms   ({a / 10:.2f} % of a core redrawn every second)")
    print(f"  plotext:          {b:7.2f} ms   ({b / 10:.2f} % of a core redrawn every second)")
    print(f"  plotext / gpuscope: {b / a:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
