"""`GridFigure` draws the roofline and the scaling figures for `--format text` without plotext.
The same drawing functions run on a plotext figure (the screen's) and on a grid: the roofline of
the example profiles comes out character for character as plotext draws it; the scaling figures
keep plotext's frame, title, ticks and labels, their curves and bars drawn by the grid (braille,
quarter blocks, full blocks). And the print commands never import plotext."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from gpuscope.metrics.scaling import analysis as scaling
from gpuscope.tui.render import plots
from gpuscope.tui.render.grid_plot import GridFigure
from gpuscope.tui.render.kernel_plots import draw_roofline
from gpuscope.tui.render.scaling_plots import as_text, draw_efficiency, draw_speedup
from runs_table import make_runs

ROOT = Path(__file__).resolve().parents[2]
A100 = SimpleNamespace(tflops=19.5, gbs=1555.0, source_text="A100")


def both(draw, *args, width: int = 100, height: int = 20) -> tuple[list[str], list[str]]:  # noqa: ANN001
    """The lines of one drawing on a plotext figure and on a grid of the same size."""
    fig = plots.figure(width, height)
    draw(fig, *args)
    grid = GridFigure(width, height)
    draw(grid, *args)
    return plots.plain_text(fig).splitlines(), grid.build().splitlines()


def roofline_rows() -> pd.DataFrame:
    return pd.DataFrame({"intensity": [0.02, 0.5, 3.0, 40.0, 200.0, None],
                         "flop_per_s": [3e10, 4e11, 2e12, 9e12, 1.5e13, 1e12],
                         "verdict": ["memory-bound", "memory-bound", "compute-bound", "compute-bound", None, "unknown"]})


def marks(lines: list[str]) -> list[str]:
    """The lines with braille dots blanked: the roofs' dots may round to a neighbouring dot."""
    return ["".join(" " if 0x2800 <= ord(c) <= 0x28FF else c for c in line) for line in lines]


def test_roofline_is_plotexts_but_for_the_roofs_dots() -> None:
    for width, height in ((100, 24), (60, 18)):
        theirs, ours = both(draw_roofline, roofline_rows(), A100, width=width, height=height)
        assert marks(ours) == marks(theirs)
        assert [line.count("•") + line.count("x") for line in ours] == [line.count("•") + line.count("x") for line in theirs]


def test_roofline_without_peak_or_points_still_draws() -> None:
    theirs, ours = both(draw_roofline, roofline_rows(), None)
    assert ours == theirs  # points only: the same characters
    grid = GridFigure(60, 12)
    note = draw_roofline(grid, roofline_rows().iloc[5:], A100)
    assert "no row has both FLOPs and bytes" in note and "Roofline: nothing to place" in grid.build()


def frame_lines(lines: list[str]) -> list[str]:
    """What the grid keeps of plotext's layout: title, frame corners, tick marks, labels."""
    inside = [line[:min(line.index(c) for c in "│┤├" if c in line) + 1] + line[-1] for line in lines[2:-3]]
    return [lines[0], lines[1], *lines[-3:], *inside]


def test_scaling_figures_keep_plotexts_frame_and_ticks() -> None:
    runs = pd.concat([make_runs([1, 2, 4, 8], [800, 420, 230, 140], series="a"),
                      make_runs([2, 8], [500, 160], series="b")], ignore_index=True)
    summary = scaling.summarize(runs)
    for draw, args in ((draw_speedup, (summary, scaling.fits(runs, summary))), (draw_efficiency, (summary,))):
        theirs, ours = both(draw, *args)
        assert frame_lines(ours) == frame_lines(theirs), draw.__name__
        assert sum(c in "█▄" for c in "".join(ours)) if draw is draw_efficiency else any("⢕⢕ ideal" in line for line in ours)
    text = as_text(draw_speedup, summary, scaling.fits(runs, summary), width=40, height=12)
    assert all(len(line) <= 40 for line in text.splitlines())


def test_print_commands_never_import_plotext() -> None:
    code = ("import sys\n"
            "from gpuscope.tui.cli.main import main\n"
            "for argv in (['kernels', 'examples/profiles'], ['scaling', 'examples/scaling']):\n"
            "    main([*argv, '--format', 'text'])\n"
            "print('plotext' in sys.modules, file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)
    assert "Roofline" in out.stdout and "Speedup" in out.stdout, out.stderr[-2000:]
    assert out.stderr.splitlines()[-1] == "False"
