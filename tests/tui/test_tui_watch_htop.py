"""On the watch screen: everything that matters at 80x24 (GPU rows or "+N more", MIG
rows, NVML-only processes, kernel threads hidden), htop's keys (F3/F4/F5/F10, header click,
sort arrow, folding), exports that agree with the screen, the screenshot key, fixed columns."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from textual.widgets import Input

from fake_watch import GIB, ROOT_UID, FakeSource, pids, select_pid, table, watch_app
from gpuscope.metrics.history import History
from gpuscope.metrics.samples import GpuProcess, ProcessRow
from gpuscope.metrics.snapshot_tables import PROCESS_COLUMNS, process_table
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.screens.watch.gpu_pane import GpuRows
from gpuscope.tui.widgets.history_plot import HistoryPlot
from gpuscope.tui.widgets.keys_footer import KeysFooter
from gpuscope.tui.screens.watch.screen import WatchScreen
from loading_helpers import open_screen, polled, until


def gpu_lines(screen) -> list[str]:  # type: ignore[no-untyped-def]
    rows = screen.query_one(GpuRows)
    lines = rows.render().plain.splitlines()
    assert len(lines) <= rows.content_region.height, "GPU lines cut off below the pane"
    assert rows.region.bottom <= screen.size.height
    return lines


@pytest.mark.parametrize("gpus", [8, 16])
async def test_every_gpu_is_on_screen_at_80x24_or_counted(gpus: int) -> None:
    async with open_screen(watch_app(FakeSource(gpus=gpus)), WatchScreen, (80, 24), ready=polled(2)) as (app, pilot, screen):
        lines = gpu_lines(screen)
        shown = {int(m.group(1)) for line in lines if (m := re.match(r"^.\s?(\d+) ", line))}
        more = [int(m.group(1)) for line in lines if (m := re.search(r"\+(\d+) more", line))]
        assert shown | set(range(len(shown), len(shown) + sum(more))) == set(range(gpus)), lines
        if gpus == 8:
            assert shown == set(range(8))  # eight fit on one line each
        # name, utilisation, memory, temperature and power on each GPU line
        assert all(("A100" in line and "%" in line and "/80G" in line and "°" in line and "W" in line)
                   for line in lines if re.match(r"^.\s?\d+ ", line)), lines


async def test_mig_instances_are_rows_and_na_utilisation_says_why() -> None:
    async with open_screen(watch_app(FakeSource(gpus=2, mig=True)), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        text = "\n".join(gpu_lines(screen))
        assert "3g.40gb" in text and "1g.10gb" in text
        assert "MIG" in text.splitlines()[0]  # utilisation n/a on a MIG parent: says MIG


async def test_gpu_process_missing_from_proc_is_a_row() -> None:
    ghost = GpuProcess(777777, 2, 3 * GIB, 41.0)
    async with open_screen(watch_app(FakeSource(backend="nvml", scope="node", gpu_only=[ghost])), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        assert 777777 in pids(screen)
        row = next(s.row for s in table(screen).shown if s.row.pid == 777777)
        assert row.gpu_memory == 3 * GIB and row.gpu_sm_percent == 41.0 and row.gpu_indices == (2,)
        assert "/proc" in row.command
        line = table(screen).render_line(1 + pids(screen).index(777777)).text if pids(screen).index(777777) < 30 else ""
        assert not line or "3.0G" in line


def kernel_rows() -> list[ProcessRow]:
    return [ProcessRow(2, 0, "root", ROOT_UID, "S", 0.0, 0, 1, 1.0, "[kthreadd]"),
            ProcessRow(15, 2, "root", ROOT_UID, "I", 0.0, 0, 1, 2.0, "[rcu_preempt]")]


async def test_kernel_threads_are_hidden_in_the_node_view_until_K() -> None:
    async with open_screen(watch_app(FakeSource(scope="node", extra=kernel_rows())), WatchScreen, (80, 24), ready=polled()) as (app, pilot, screen):
        assert 2 not in pids(screen) and 15 not in pids(screen)
        await pilot.press("K")
        assert 2 in pids(screen) and 15 in pids(screen)


async def test_htop_function_keys() -> None:
    async with open_screen(watch_app(), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        await pilot.press("a", "f5")
        assert screen.view.tree
        await pilot.press("f5", "f4")
        box = screen.query_one("#watch-filter", Input)
        assert box.display and box.has_focus
        await pilot.press("escape", "f3", *"serve")  # search: the cursor jumps, nothing is hidden
        assert len(pids(screen)) == 40 and "serve" in table(screen).selected.command
        await pilot.press("enter", "f10")
        await pilot.pause()
        assert app.return_code == 0


async def test_clicking_a_header_sorts_and_the_arrow_shows_the_direction() -> None:
    async with open_screen(watch_app(), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        await pilot.press("a")
        procs = table(screen)
        header = procs.render_line(0).text
        x = header.index("MEM ") + 1
        await pilot.click(procs, offset=(x, 0))
        assert screen.view.sort == "mem" and not screen.view.reverse
        assert "MEM▼" in procs.render_line(0).text
        await pilot.click(procs, offset=(x, 0))
        assert screen.view.sort == "mem" and screen.view.reverse
        assert "MEM▲" in procs.render_line(0).text
        rss = [s.row.rss for s in procs.shown]
        assert rss == sorted(rss)
        x = procs.render_line(0).text.index("PID")
        await pilot.click(procs, offset=(x + 1, 0))
        assert screen.view.sort == "pid" and "PID▲" in procs.render_line(0).text  # pids: smallest first


async def test_fold_and_unfold_a_tree_branch() -> None:
    async with open_screen(watch_app(), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        await pilot.press("t")
        await select_pid(pilot, screen, 1000)
        before = pids(screen)
        await pilot.press("left")
        assert 1001 not in pids(screen) and 1000 in pids(screen)
        assert table(screen).selected.pid == 1000
        await pilot.press("right")
        assert pids(screen) == before


async def test_readonly_hides_the_signal_key_and_k_says_why() -> None:
    async with open_screen(watch_app(readonly=True), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        footer_keys = await until(pilot, lambda: [k.description for k in screen.query_one(KeysFooter).shown_keys()])
        assert "Signal" not in footer_keys and "Pause" in footer_keys
        await pilot.press("k")
        assert any("read-only" in n.message.lower() or "readonly" in n.message for n in app._notifications)


async def test_e_exports_the_process_table_as_shown(tmp_path: Path) -> None:
    async with open_screen(watch_app(), WatchScreen, (120, 40), ready=polled(2)) as (app, pilot, screen):
        await pilot.press("a", "s")  # all processes, sorted by MEM
        await pilot.press("e")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal)
        target = tmp_path / "procs.csv"
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        rows = list(csv.reader(target.open()))
        header = rows[0]
        procs = table(screen)
        screen_titles = [title for _, title, _, _ in procs.columns()]
        keys = {c.key: c.title for c in PROCESS_COLUMNS}
        assert [keys[k] for k in header] == [c.title for c in PROCESS_COLUMNS]
        assert set(screen_titles) <= set(keys.values())
        assert [int(r[0]) for r in rows[1:]] == pids(screen)  # the rows and order on screen
        cpu = header.index("cpu_percent")
        assert all(len(r[cpu].partition(".")[2]) <= 1 for r in rows[1:])  # CSV floats: one decimal


def test_export_columns_are_the_screen_columns_and_time_is_cpu_time() -> None:
    snap = FakeSource().poll()
    model = process_table(snap)
    assert [c.key for c in model.columns] == [c.key for c in PROCESS_COLUMNS]
    assert [c.title for c in model.columns] == [c.title for c in PROCESS_COLUMNS]
    by_pid = {p.pid: p for p in snap.processes}
    for record in model.records():
        assert record["cpu_time_s"] == pytest.approx(by_pid[record["pid"]].cpu_time)
        assert isinstance(record["mem_bytes"], int) and record["mem_bytes"] == by_pid[record["pid"]].rss


async def test_screenshot_key_writes_an_svg_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    async with open_screen(watch_app(), WatchScreen, (80, 24), ready=polled()) as (app, pilot, _):
        await pilot.press("ctrl+s")
        for _ in range(10):
            await pilot.pause(0.05)
            if list(tmp_path.glob("*.svg")):
                break
        svgs = list(tmp_path.glob("*.svg"))
        assert svgs and "<svg" in svgs[0].read_text()


@pytest.mark.parametrize("width", [80, 200])
async def test_columns_line_up_whatever_the_pid_length(width: int) -> None:
    extra = [ProcessRow(pid, 1, "root", ROOT_UID, "S", 1.5, 5 * 1024**2, 1, 1.0, f"proc{pid}", cpu_time=12.0)
             for pid in (7, 42, 333, 4194304)]
    async with open_screen(watch_app(FakeSource(scope="node", extra=extra, processes=10)), WatchScreen, (width, 40), ready=polled()) as (app, pilot, screen):
        await pilot.press("s", "s", "s")  # by PID
        procs = table(screen)
        lines = [procs.render_line(y).text for y in range(1, len(procs.shown) + 1)]
        ends = {line.index(" 1.5 ") for line in lines if " 1.5 " in line}
        assert len(ends) == 1, lines
        header = procs.render_line(0).text
        assert header.index("CPU%") + 4 == next(iter(ends)) + 4  # header right-aligned over its numbers


async def test_history_plots_keep_a_fixed_time_window_that_w_switches() -> None:
    history = History()
    for t in range(900):  # 15 minutes at 1 Hz: busy for 10, idle for the last 5
        history.append(float(t), {"gpu.util_mean": 100.0 if t < 600 else 0.0})
    async with open_screen(watch_app(), WatchScreen, (120, 60), ready=polled()) as (app, pilot, screen):
        plot = screen.query_one("#watch-gpu-plot", HistoryPlot)
        plot.replot(history)
        last = plot.size.height - 1
        assert "-5m" in plot.render_line(last).text
        assert set(plot.render_line(0).text[4:]) <= {" ", "\u2800"}  # the last 5 minutes were idle
        await pilot.press("w")
        plot.replot(history)
        assert "-15m" in plot.render_line(last).text
        assert set(plot.render_line(0).text[4:]) - {" ", "\u2800"}  # the busy 10 minutes are back


async def test_screenshot_places_every_process_column_at_its_own_x() -> None:
    """An SVG screenshot stretches each segment's text to its cells: one segment per row let a
    `…` (cut command) or `▼` of another width shift PID/CPU%/MEM/TIME+ of that row."""
    extra = [ProcessRow(pid, 1, "root", ROOT_UID, "S", 99.5, 5 * 1024**2, 1, 1.0, f"[kworker/{pid}:0H-events_highpri_long_name]", cpu_time=12.0)
             for pid in (7, 42, 333)]
    async with open_screen(watch_app(FakeSource(scope="node", extra=extra, processes=10)), WatchScreen, (80, 24), ready=polled()) as (app, pilot, _):
        svg = app.export_screenshot()
        cells = re.findall(r'<text[^>]* x="([0-9.]+)"[^>]*>((?:&#160;)*)99\.5(?:&#160;|<)', svg)
        assert len(cells) >= 3 and len({x for x, _ in cells}) == 1, cells
