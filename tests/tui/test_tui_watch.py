"""Pilot tests of the watch screen over `FakeSource` (interval=None: polls only on request).
Signals are tested in test_tui_watch_signals.py."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

import pytest
from textual.widgets import Input, Static

from fake_watch import MARKUP_COMMAND, NO_GPU_REASON, FakeSource, pids, poll, select_pid, status, table, watch_app
from gpuscope.metrics.samples import GpuProcess, ProcessRow, Verdict
from gpuscope.tui.screens.watch.screen import WatchScreen
from gpuscope.tui.model.watch import INTERVALS, ProcessView, next_user, select_rows, step_interval, unseen_gpu_pids
from gpuscope.tui.screens.watch.gpu_pane import GpuPane, pane_title
from gpuscope.tui.widgets.history_plot import HistoryPlot
from gpuscope.tui.screens.watch.dialogs import SignalModal
from loading_helpers import heavy_modules_loaded, open_screen, polled, until


async def test_first_poll_then_sort_filter_user_and_tree_keys() -> None:
    """One watch screen through its process-table keys: what the first polls fill, `a`, the
    sort keys, the filter box, `u`, then the tree (each step starts from the state it says)."""
    async with open_screen(watch_app(), WatchScreen, (120, 40), ready=polled(2)) as (app, pilot, screen):
        # The first polls fill every pane.
        assert set(pids(screen)) == set(screen.snapshot.scope.pids)  # the job's processes first
        assert len(screen.history) == 2
        assert "job 4242" in str(screen.query_one("#watch-job").border_title)
        assert "6 of 6 scope processes" in status(screen)
        assert any("asked for 2 cores" in v.text for v in screen.verdicts)
        await pilot.press("a")
        assert len(pids(screen)) == 40 and "of 40 all" in status(screen)

        # Sort keys cycle the columns and change the order (every process shown).
        rows = lambda: [s.row for s in table(screen).shown]  # noqa: E731
        cpu = [r.cpu_percent for r in rows()]
        assert cpu == sorted(cpu, reverse=True)
        await pilot.press("s")
        assert screen.view.sort == "mem"
        assert [r.rss for r in rows()] == sorted((r.rss for r in rows()), reverse=True)
        await pilot.press("f6")
        assert screen.view.sort == "gpu_mem" and rows()[0].gpu_memory == max(r.gpu_memory or 0 for r in rows())
        await pilot.press("s")
        assert pids(screen) == sorted(pids(screen))
        await pilot.press("I")
        assert pids(screen) == sorted(pids(screen), reverse=True)
        await pilot.press("s", "s")
        assert screen.view.sort == "cpu" and "CPU%" in status(screen)

        # The filter narrows rows (case-insensitively), survives a poll; Escape restores.
        await pilot.press("slash")
        box = screen.query_one("#watch-filter", Input)
        assert box.display and box.has_focus
        await pilot.press(*"SERVE")  # case-insensitive
        shown = [s.row.command for s in table(screen).shown]
        assert shown and len(shown) < 40 and all("serve" in c for c in shown)
        await pilot.press("enter")
        assert table(screen).has_focus and box.display and "filter 'SERVE'" in status(screen)
        await poll(pilot)  # the filter survives a refresh
        assert all("serve" in s.row.command for s in table(screen).shown)
        await pilot.press("escape")
        assert len(pids(screen)) == 40 and not box.display

        # `u` cycles through the users present, your own first.
        await pilot.press("u")
        assert screen.view.user == "alice"  # your own user first (by uid)
        assert {s.row.user for s in table(screen).shown} == {"alice"}
        seen = ["alice"]
        for _ in range(4):
            await pilot.press("u")
            seen.append(screen.view.user)
        assert seen == ["alice", "bob", "carol", "root", None]

        # The tree puts children under their parent (from the scope's processes).
        await pilot.press("a")
        assert "of 6 scope processes" in status(screen), "a again: the scope's processes"
        await pilot.press("t")
        shown = table(screen).shown
        order = [s.row.pid for s in shown]
        assert order[0] == 1000 and shown[0].prefix == ""  # the launcher is the scope's root
        children = [s for s in shown if s.row.ppid == 1000]
        assert children and all(s.prefix.endswith(("├─ ", "└─ ")) for s in children)
        assert all(order.index(s.row.pid) > 0 for s in children)
        await pilot.press("a")  # whole node: grandchildren are indented deeper
        deep = [s for s in table(screen).shown if s.row.ppid == 1000]
        assert deep and all(len(s.prefix) == 9 for s in deep)  # init > slurmstepd > launcher > worker


async def test_pause_stops_polling_and_resume_restarts() -> None:
    source = FakeSource()
    app = watch_app(source, interval=0.5)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(100):
            await asyncio.sleep(0.02)
            if source.polls >= 1 and not app.screen.in_flight:
                break
        await pilot.press("space")
        screen = app.screen
        assert screen.paused and "PAUSED" in status(screen)
        frozen = len(screen.history)
        polls = source.polls
        await asyncio.sleep(1.3)
        await pilot.pause()
        assert source.polls == polls and len(screen.history) == frozen
        await pilot.press("space")
        for _ in range(100):
            await asyncio.sleep(0.02)
            if len(screen.history) > frozen:
                break
        assert len(screen.history) > frozen and "live" in status(screen)


async def test_plus_minus_step_interval_within_bounds() -> None:
    app = watch_app(interval=1.0)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await pilot.press("plus")
        assert screen.interval == 2.0 and "every 2 s" in status(screen)
        await pilot.press(*["plus"] * 10)
        assert screen.interval == INTERVALS[-1] == 10.0
        await pilot.press(*["minus"] * 10)
        assert screen.interval == INTERVALS[0] == 0.5
        await pilot.press("equals_sign")
        assert screen.interval == 1.0


def test_interval_steps_and_clamping() -> None:
    assert step_interval(1.0, 1) == 2.0 and step_interval(10.0, 1) == 10.0 and step_interval(0.5, -1) == 0.5
    assert step_interval(1.5, 1) == 2.0 and step_interval(1.5, -1) == 1.0
    screen = WatchScreen(FakeSource(), interval=60)
    assert screen.interval == 10.0 and WatchScreen(FakeSource(), interval=0.01).interval == 0.5


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_sixteen_gpus_and_500_processes_render(size: tuple[int, int]) -> None:
    async with open_screen(watch_app(FakeSource(gpus=16, processes=500)), WatchScreen, size, ready=polled(3)) as (app, pilot, screen):
        await pilot.press("a")
        assert len(pids(screen)) == 500
        for key in ("t", "s", "u", "p", "z", "z", "p", "t"):
            await pilot.press(key)
        await poll(pilot)
        gpus = screen.query_one(GpuPane)
        assert len(gpus.query_one("GpuRows").gpus) == 16
        assert gpus.region.height > 0 and table(screen).region.height >= 5
        app.save_screenshot("/dev/null")  # the whole screen renders


async def test_no_gpu_shows_one_line_and_the_full_host_view() -> None:
    async with open_screen(watch_app(FakeSource(backend="none")), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        line = screen.query_one("#watch-nogpu", Static)
        assert line.display and str(line.content) == f"No GPU view: {NO_GPU_REASON}"
        assert not screen.query_one("#watch-gpu-col").display
        assert screen.query_one("#watch-cpu").region.width > 100  # the host view takes the width
        assert pids(screen)


async def test_simulated_gpus_are_labelled() -> None:
    for backend, labelled in (("simulated", True), ("nvml", False)):
        async with open_screen(watch_app(FakeSource(backend=backend)), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
            assert ("SIMULATED" in str(screen.query_one(GpuPane).border_title)) is labelled


async def test_markup_in_process_names_is_shown_literally() -> None:
    async with open_screen(watch_app(), WatchScreen, (200, 40), ready=polled()) as (app, pilot, screen):
        t = table(screen)
        text = "\n".join(t.render_line(y).text for y in range(t.size.height))
        assert "[bold]big[/] --tag [red]x" in text
        assert "red-logger [/] --level debug" in text and "\x1b" not in text
        await select_pid(pilot, screen, 1000)
        await pilot.press("k")
        modal = await until(pilot, lambda: app.screen if isinstance(app.screen, SignalModal) else None)
        assert isinstance(modal, SignalModal)
        assert str(modal.query_one("#signal-command", Static).content) == MARKUP_COMMAND


async def test_key_repaints_while_a_slow_poll_runs() -> None:
    """A key is handled while a poll is still in flight (the poll is held until the key is done);
    bench/watch_latency.py measures the latency itself."""
    source = FakeSource()
    app = watch_app(source, interval=0.5)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        for _ in range(500):
            await asyncio.sleep(0.01)
            if screen.snapshot is not None:
                break
        source.gate = gate = threading.Event()  # the next poll waits until the key has been handled
        try:
            for _ in range(500):
                await asyncio.sleep(0.01)
                if screen.in_flight:
                    break
            assert screen.in_flight
            before = screen.view.sort
            await pilot.press("s")
            assert screen.in_flight, "the poll was released before the key was handled"
            assert screen.view.sort != before and "sort MEM" in status(screen)
        finally:
            gate.set()


async def test_failed_poll_is_shown_and_polling_goes_on() -> None:
    class Flaky(FakeSource):
        def poll(self):  # type: ignore[no-untyped-def]
            if self.polls == 1:
                self.polls += 1
                raise OSError("NVML went away")
            return super().poll()

    async with open_screen(watch_app(Flaky()), WatchScreen, (120, 40), ready=polled(2)) as (app, pilot, screen):
        assert "poll failed: OSError: NVML went away" in status(screen)
        await poll(pilot)
        assert "poll failed" not in status(screen) and len(screen.history) == 2


async def test_plots_downsample_to_their_width() -> None:
    async with open_screen(watch_app(), WatchScreen, (200, 60), ready=polled(3)) as (app, pilot, screen):
        plot = screen.query_one("#watch-gpu-plot", HistoryPlot)
        assert plot.display and plot.points_drawn > 0
        for _ in range(4):
            screen.apply(screen.source.poll())  # many samples without the worker round trip
        plot.replot(screen.history)
        assert plot.points_drawn <= 3 * 2 * plot.size.width
        lines = [plot.render_line(y).text for y in range(plot.size.height)]
        assert lines[0].startswith("100┤") and lines[-2].startswith("  0┤") and lines[-1].rstrip().endswith("now")
        assert all(len(line) == plot.size.width for line in lines)
        assert any(ch != " " for line in lines[:-1] for ch in line[4:])  # the lines are drawn
        await pilot.press("p")
        assert not plot.display


def test_tree_survives_a_ppid_cycle_and_next_user_wraps() -> None:
    source = FakeSource()
    snap = source.poll()
    a = ProcessRow(1, 2, "x", 5, "S", 0.0, 1, 1, 1.0, "a")
    b = ProcessRow(2, 1, "x", 5, "S", 0.0, 1, 1, 1.0, "b")
    cyclic = dataclasses.replace(snap, processes=(a, b))
    rows = select_rows(cyclic, ProcessView(tree=True, everyone=True))
    assert sorted(r.row.pid for r in rows) == [1, 2]
    view = ProcessView(user="zed")  # a user who left counts as everyone: next is you
    assert next_user(view, snap.processes, "alice").user == "alice"


def test_ties_keep_the_order_on_screen_so_one_change_moves_one_row() -> None:
    snap = FakeSource().poll()
    busy = ProcessRow(9, 1, "x", 5, "S", 1.0, 1, 1, 1.0, "busy")
    idle = [ProcessRow(pid, 1, "x", 5, "S", 0.0, 1, 1, 1.0, f"idle{pid}") for pid in (2, 3, 4)]
    view = ProcessView(everyone=True)
    first = select_rows(dataclasses.replace(snap, processes=(busy, *idle)), view)
    assert [r.row.pid for r in first] == [9, 2, 3, 4]  # nothing on screen yet: pid order
    calm = dataclasses.replace(busy, cpu_percent=0.0)
    new = ProcessRow(1, 1, "x", 5, "S", 0.0, 1, 1, 1.0, "new")
    on_screen = {r.row.pid: i for i, r in enumerate(first)}
    again = select_rows(dataclasses.replace(snap, processes=(new, calm, *idle)), view, on_screen)
    assert [r.row.pid for r in again] == [9, 2, 3, 4, 1]  # 9 stays first; newcomers after, by pid
    assert [r.row.pid for r in select_rows(dataclasses.replace(snap, processes=(new, calm, *idle)), view)] == [1, 2, 3, 4, 9]


def test_gpu_processes_missing_from_proc_are_counted_in_the_node_view() -> None:
    snap = FakeSource(scope="node", backend="nvml").poll()
    assert unseen_gpu_pids(snap) == 0
    ghost = dataclasses.replace(snap.gpus[0], processes=snap.gpus[0].processes + (GpuProcess(4_000_123, 0, 1024),))
    snap = dataclasses.replace(snap, gpus=(ghost,) + snap.gpus[1:])
    assert unseen_gpu_pids(snap) == 1
    assert "1 GPU process not in /proc" in pane_title(snap.gpu_status, snap.gpus, 1).plain
    assert unseen_gpu_pids(dataclasses.replace(snap, scope=FakeSource().poll().scope)) == 0  # scoped lists are partial
    assert unseen_gpu_pids(dataclasses.replace(snap, gpu_status=FakeSource().poll().gpu_status)) == 0  # simulated


async def test_source_verdicts_win_over_the_screens_own() -> None:
    class Judging(FakeSource):
        def poll(self):  # type: ignore[no-untyped-def]
            return dataclasses.replace(super().poll(), verdicts=(Verdict("warning", "from the source"),))

    async with open_screen(watch_app(Judging()), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        assert [v.text for v in screen.verdicts] == ["from the source"]
        assert "from the source" in str(screen.query_one("#job-verdicts", Static).content)


async def test_gpuscope_watch_freezes_startup_objects_once_and_thaws_on_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """`gpuscope watch` (freeze_gc=True) exempts the objects alive after the first frame from
    later garbage collections (a full collection walked ~70,000 Textual objects every 40 s),
    and gives them back when the screen goes; other screens leave the collector alone."""
    import gc

    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    async with open_screen(watch_app(freeze_gc=True), WatchScreen, (120, 40), ready=polled(3)) as (app, pilot, _):
        await pilot.pause()
        assert calls == ["collect", "freeze"]
    assert calls == ["collect", "freeze", "unfreeze"]
    assert gc.isenabled()
    calls.clear()
    async with watch_app().run_test(size=(120, 40)) as pilot:
        await poll(pilot, 2)
    assert calls == []


def test_the_watch_loads_pyarrow_only_when_it_records() -> None:
    # pyarrow is ~35 MB of a watch's memory and a quarter of a second of its start: only `R`
    # (a recording) and a watch across nodes (the nodes' lines decoded) need it.
    assert heavy_modules_loaded("from gpuscope.tui.screens.watch.screen import WatchScreen\nfrom gpuscope.collectors.snapshot import SnapshotSource",
                                "WatchScreen(SnapshotSource(), interval=1.0)", "screen.snapshot is not None") == []
