"""The watch screen's layout with plots on: at 80x24 the history plot takes the rows the process
table leaves free, at 200x60 the live plots join consecutive samples into lines, and MIG GPUs
are all shown the same way."""

from __future__ import annotations

import dataclasses

import numpy as np

from fake_watch import FakeSource, poll, watch_app
from gpuscope.metrics.history import History
from gpuscope.metrics.samples import MigSample, Snapshot
from gpuscope.tui.screens.watch.gpu_pane import GpuRows
from gpuscope.tui.screens.watch.process_table import ProcessTable
from gpuscope.tui.screens.watch.screen import PLOT_MIN
from gpuscope.tui.widgets.history_plot import AXIS_W, HistoryPlot
from loading_helpers import until

GIB = 1024**3
LEFT_DOTS = (0x01, 0x02, 0x04, 0x40)
RIGHT_DOTS = (0x08, 0x10, 0x20, 0x80)


def dot_columns(rows: list[str]) -> list[bool]:
    """Whether each dot column (two per cell) of braille text lines has any dot set."""
    width = max(len(r) for r in rows)
    out = []
    for x in range(width):
        bits = [ord(r[x]) - 0x2800 if x < len(r) and 0x2800 <= ord(r[x]) <= 0x28FF else 0 for r in rows]
        out += [any(b & d for b in bits for d in LEFT_DOTS), any(b & d for b in bits for d in RIGHT_DOTS)]
    return out


async def test_at_80x24_the_plot_takes_the_rows_the_table_leaves() -> None:
    """A job of four processes on two GPUs: the table needs five rows; the plot gets the rest
    (with the stylesheet's half-and-half split the table had blank rows and the plot three)."""
    async with watch_app(FakeSource(gpus=2)).run_test(size=(80, 24)) as pilot:
        screen = await poll(pilot, 3)
        await pilot.press("p")
        table = screen.query_one(ProcessTable)
        needed = len(table.shown) + 1  # the job's processes and the header
        assert needed == 5
        await until(pilot, lambda: table.size.height == needed)
        plot = screen.query_one("#watch-gpu-plot", HistoryPlot)
        column = screen.query_one("#watch-gpu-col")
        assert plot.display and plot.outer_size.height > PLOT_MIN
        assert plot.region.bottom <= column.region.bottom  # drawn whole, its time axis too
        assert column.region.bottom == screen.query_one("#watch-status").region.y  # no blank row between plot and table
        assert table.region.bottom == screen.screen.size.height - 1  # then the footer: nothing empty below the table
        assert "now" in plot.render_line(plot.size.height - 1).text  # the time axis, on screen


async def test_a_node_full_of_processes_leaves_the_plots_their_minimum() -> None:
    async with watch_app(FakeSource(scope="node", processes=300)).run_test(size=(80, 24)) as pilot:
        screen = await poll(pilot)
        await pilot.press("p")
        await pilot.pause()
        await pilot.pause()
        plots = list(screen.query(HistoryPlot))
        assert all(p.size.height >= PLOT_MIN and p.region.bottom <= p.parent.region.bottom for p in plots)  # type: ignore[union-attr]
        assert screen.query_one(ProcessTable).size.height >= 5


async def test_at_200x60_consecutive_samples_are_joined() -> None:
    """Five minutes of samples 2.5 s apart across a 95-column plot: 190 dot columns for 120
    samples, so many columns fall between two samples; joined, each column has its dots."""
    async with watch_app(FakeSource()).run_test(size=(200, 60)) as pilot:
        screen = await poll(pilot, 2)
        plot = screen.query_one("#watch-gpu-plot", HistoryPlot)
        assert plot.display and plot.size.width > 90
        times = 1_700_000_000.0 + np.arange(300.0) * 2.5  # a loaded node: polls 2.5 s apart
        wave = 50 + 40 * np.sin(times / 20)
        history = History.from_arrays(times, {"gpu.util_mean": wave})
        dots = 2 * (plot.size.width - AXIS_W)
        assert np.isnan(history.binned("gpu.util_mean", times[-1] - 300, times[-1], dots)).sum() > dots // 3  # sparse unjoined
        plot.replot(history)
        rows = [plot.render_line(y).text[AXIS_W:] for y in range(plot.size.height - 1)]
        filled = dot_columns(rows)
        assert filled[-1] and sum(filled) >= len(filled) - 2  # every column from the first sample to now


class TwoMigGpus(FakeSource):
    """GPUs 0 and 1 split into seven MIG instances each."""

    def poll(self) -> Snapshot:
        snap = super().poll()
        migs = tuple(MigSample(0, k, f"MIG-{k}", "1g.10gb", GIB, 10 * GIB) for k in range(7))
        gpus = tuple(dataclasses.replace(g, util_gpu=None, mig=tuple(dataclasses.replace(m, gpu_index=g.index) for m in migs))
                     if g.index in (0, 1) else g for g in snap.gpus)
        return dataclasses.replace(snap, gpus=gpus)


async def test_mig_gpus_are_all_shown_the_same_way() -> None:
    async with watch_app(TwoMigGpus(gpus=4)).run_test(size=(80, 24)) as pilot:
        screen = await poll(pilot)
        lines = screen.query_one(GpuRows).render().plain.splitlines()
        under = [[], []]  # type: list[list[str]]
        gpu = -1
        for line in lines:
            if line.lstrip().startswith(("├─", "└─")):
                under[gpu].append(line.strip())
            else:
                gpu = int(line.replace("●", " ").split()[0])
        assert len(under[0]) == len(under[1]) >= 1, lines  # as many lines under each MIG GPU
        assert under[0][-1] == under[1][-1] and "MIG instances" in under[0][-1]
        assert sum(1 for line in lines if "MIG" in line and "A100" in line) == 2
