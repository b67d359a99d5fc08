"""The text box plots (`box_plot_text`, drawn cell by cell) are the figure the screen draws
with plotext (`draw_boxes`), at the height and width asked for."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.parsers.magma.read import read_tree
from gpuscope.tui.cli.main import main
from gpuscope.tui.render import plots
from gpuscope.tui.render.boxplot import box_plot_text, draw_boxes, plot_height


def plotext_text(rows: pd.DataFrame, metric: str, title: str, width: int) -> str:
    fig = plots.figure(width, plot_height(int((rows["count"] > 0).sum())))
    draw_boxes(fig, rows, metric, title)
    return plots.plain_text(fig)


def groups(summary: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    return [(f"{test} {size}: Gflop/s", rows) for (test, size), rows in summary.groupby(["test", "problem_size"], sort=False)
            if (rows["count"] > 0).any()]


def test_text_plot_is_the_screens_plotext_figure(magma_data: Path) -> None:
    chosen = groups(magma_stats.summarize(read_tree([magma_data]).rows))
    assert len(chosen) >= 3
    for width in (80, 100, 160):
        for metric in ("gflops", "time_ms"):
            for title, rows in chosen:
                assert box_plot_text(rows, metric, title, width) == plotext_text(rows, metric, title, width), (title, metric, width)


def fake_summary(n: int, name: str = "env") -> pd.DataFrame:
    values = [sorted([10.0 + k, 12.0 + k, 13.0 + k, 14.0 + k, 17.0 + k]) for k in range(n)]
    return pd.DataFrame([dict(environment=f"{name}{k}", nodes=4, count=5, gflops_whisker_lo=v[0], gflops_q1=v[1], gflops_median=v[2],
                              gflops_q3=v[3], gflops_whisker_hi=v[4]) for k, v in enumerate(values)])


def test_many_boxes_keep_three_lines_each() -> None:
    text = box_plot_text(fake_summary(9), "gflops", "nine boxes", 100)
    lines = text.splitlines()
    assert len(lines) == plot_height(9) == 32
    labelled = [i for i, line in enumerate(lines) if "┤" in line]
    assert [lines[i].split("┤")[0].strip() for i in labelled] == [f"env{k}" for k in range(9)]  # the table's order, top-down
    assert all(b - a == 3 for a, b in zip(labelled, labelled[1:]))
    assert all("█" in lines[i - 1] and "│" in lines[i] and "█" in lines[i + 1] for i in labelled)  # box above and below, median mark


def test_narrow_plot_cuts_long_names_and_title() -> None:
    title = "dgemm_vbatched 512x512x511 with a title longer than the plot is wide: Gflop/s"
    text = box_plot_text(fake_summary(2, "google/compute-engine/gpu-with-a-long-name-"), "gflops", title, 40)
    lines = text.splitlines()
    assert all(len(line) <= 40 for line in lines)
    assert lines[0].startswith("dgemm_vbatched 512x512x511") and lines[0].endswith("…")  # plotext would leave it out
    labels = [line.split("┤")[0] for line in lines if "┤" in line]
    assert labels == ["google/compute…a-long-name-0", "google/compute…a-long-name-1"]  # cut in the middle: the ends tell them apart
    assert "Gflop/s" in lines[-1] and any(ch.isdigit() for ch in lines[-2])


def test_printed_plots_are_100_columns_without_width(capsys: pytest.CaptureFixture[str], magma_data: Path) -> None:
    main(["magma", str(magma_data), "--format", "text"])
    frames = [line for line in capsys.readouterr().out.splitlines() if "┌" in line]
    assert frames and {len(line) for line in frames} == {100}
    main(["magma", str(magma_data), "--format", "text", "--width", "130"])
    frames = [line for line in capsys.readouterr().out.splitlines() if "┌" in line]
    assert {len(line) for line in frames} == {130}


def test_plotext_figures_keep_their_size_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # plotext shrinks a figure to the terminal (80x23 when output is a pipe: COLUMNS, LINES say so)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")
    fig = plots.figure(120, 30)
    plots.clear(fig)  # every drawing starts with it: plotext's clear_figure forgets the size
    fig.scatter([1, 2, 3], [3, 1, 2])
    lines = plots.plain_text(fig).splitlines()
    assert len(lines) == 30 and max(len(line) for line in lines) == 120
