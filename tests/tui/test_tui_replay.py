"""Pilot tests of the replay screen (the cursor's logic is tested in test_replay_model.py):
open, step, jump, play, events, refused signals, a cut recording, and the browser opening a
recording this way; the power, energy and activity plots of one GPU."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Input, Static

from energy_readings import NO_GPM
from fake_watch import FakeSource, status

from gpuscope.collectors.recorder import Recorder
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model.replay import open_replay
from gpuscope.tui.screens.replay import ReplayScreen
from gpuscope.tui.screens.replay_plots import GpuReplayPlot
from gpuscope.tui.widgets.history_plot import HistoryPlot
from loading_helpers import open_screen

DATA = Path(__file__).parent.parent / "data" / "recordings"


def footer_text(screen) -> str:
    """The words the footer shows for the screen's enabled bindings."""
    return " ".join(b.binding.description for b in screen.active_bindings.values() if b.binding.show and b.enabled)


def title(plot) -> str:
    """A plot's border title (its legend) as plain text."""
    return Text.from_markup(plot.border_title).plain


def recording(path: Path, n: int = 120) -> Path:
    source = FakeSource(gpus=2, processes=10)
    with Recorder(path, batch_samples=30) as rec:
        for i in range(n):
            s = source.poll()
            if 40 <= i < 110:  # GPU 1 idle for 70 s: one event at sample 41 (#41)
                s = dataclasses.replace(s, gpus=tuple(dataclasses.replace(g, util_gpu=0.0) if g.index == 1 else g for g in s.gpus))
            rec.add(s)
    return path


async def opened(pilot) -> ReplayScreen:
    screen = pilot.app.screen
    deadline = time.monotonic() + 60  # a hang guard: a busy machine reads the recording slowly
    while time.monotonic() < deadline:
        if isinstance(screen, ReplayScreen) and screen.cursor is not None:
            return screen
        await pilot.pause(0.05)
        screen = pilot.app.screen
    raise AssertionError("the replay did not open")


async def test_keys_move_the_cursor(tmp_path: Path) -> None:
    path = recording(tmp_path / "job.gsrec")
    replay = open_replay(path)
    async with open_screen(GpuscopeApp(first_screen=lambda: ReplayScreen(path, replay)), ReplayScreen, (120, 50), ready=lambda app, pilot: opened(pilot)) as (app, pilot, screen):
        assert "replay · job.gsrec ·" in screen.sub_title and "(sample 1 of 120) · 1x" in screen.sub_title
        assert "REPLAY" in status(screen) and "recorded, not live" in status(screen)
        plot = screen.query_one("#watch-gpu-plot", HistoryPlot)
        assert plot.span is not None and plot.cursor == replay.times[0] and len(plot.history) == 120  # the whole recording
        await pilot.press("full_stop", "full_stop", "greater_than_sign")
        assert screen.cursor.index == 62 and screen.snapshot == replay.snapshot(62)
        await pilot.press("comma", "home")
        assert screen.cursor.index == 0
        await pilot.press("end")
        assert screen.cursor.index == 119 and "sample 120 of 120" in screen.sub_title
        await pilot.press("n")  # none later
        assert screen.cursor.index == 119
        await pilot.press("N")
        assert screen.cursor.index == 40 and any("GPU 1 went idle" in n.message for n in app._notifications)
        await pilot.press("g")
        box = screen.query_one("#replay-goto", Input)
        assert box.display and box.has_focus
        await pilot.press(*"+10s", "enter")
        assert screen.cursor.index == 50 and not box.display
        await pilot.press("g", *"soon", "enter")
        assert box.display and any("type a clock time" in n.message for n in app._notifications)
        await pilot.press("escape")
        assert not box.display and screen.cursor.index == 50
        await pilot.press("k")
        assert any("No signals in a replay" in n.message for n in app._notifications)
        assert "Play" in footer_text(screen)
        await pilot.press("space")  # at the first speed: still playing when the footer is read, however slow the machine
        await pilot.pause()
        assert screen.cursor.playing and "Pause" in footer_text(screen) and "Play" not in footer_text(screen)
        await pilot.press("plus", "plus", "plus")
        assert "600x" in screen.sub_title
        for _ in range(600):  # a liveness bound: 70 samples at 600x take about 0.1 s
            if not screen.cursor.playing:
                break
            await pilot.pause(0.05)
        assert screen.cursor.index == 119 and not screen.cursor.playing  # played to the end and stopped
        await pilot.press("q")


async def test_cut_recording_is_said_and_browser_opens_a_recording(tmp_path: Path) -> None:
    path = recording(tmp_path / "job.gsrec", n=90)
    data = path.read_bytes()
    (tmp_path / "cut.gsrec").write_bytes(data[: len(data) * 3 // 4])
    from gpuscope.tui.screens.browse.open import view_screen
    from gpuscope.parsers import registry

    rec = registry.recognise(tmp_path / "cut.gsrec")
    assert rec.kind == "recording" and rec.screen == "replay"
    screen = view_screen(rec, tmp_path / "cut.gsrec")  # what the browser's Enter pushes
    assert isinstance(screen, ReplayScreen)
    app = GpuscopeApp(first_screen=lambda: screen)
    async with app.run_test(size=(80, 24)) as pilot:
        replay_screen = await opened(pilot)  # read in a worker: the browser stays responsive
        assert 30 <= replay_screen.cursor.last + 1 < 90
        assert any(n.title == "Recording cut short" for n in app._notifications)
        assert "REPLAY" in status(replay_screen)


async def test_o_shows_the_next_node_of_a_multi_node_recording_at_the_same_time(tmp_path: Path) -> None:
    """A recording of two nodes (as `record --job` over srun writes one): the first node shows,
    the notification says there are two, `o` reads the other (in a worker) and keeps the time."""
    path = tmp_path / "two.gsrec"
    source = FakeSource(gpus=1, processes=4)
    with Recorder(path, batch_samples=20) as rec:
        for _ in range(60):
            s = source.poll()
            for node in ("cn01", "cn02"):
                rec.add(dataclasses.replace(s, host=dataclasses.replace(s.host, hostname=node)))
    async with open_screen(GpuscopeApp(first_screen=lambda: ReplayScreen(path)), ReplayScreen, (120, 40), ready=lambda app, pilot: opened(pilot)) as (app, pilot, screen):
        assert screen.replay.node == "cn01" and screen.cursor.last == 59 and "node cn01 (1 of 2)" in screen.sub_title
        assert any("holds 2 nodes" in n.message for n in app._notifications)
        await pilot.press("greater_than_sign")
        at = screen.cursor.time
        first = screen.replay
        await pilot.press("o")
        for _ in range(100):
            if screen.replay is not first and screen.cursor is not None:
                break
            await pilot.pause(0.05)
        assert screen.replay.node == "cn02" and screen.cursor.time == at and "node cn02 (2 of 2)" in screen.sub_title
        assert screen.snapshot.host.hostname == "cn02"


async def test_power_energy_and_activity_plots_follow_the_cursor_and_the_gpu() -> None:
    """Under the watch's plots: GPU 0's power and energy so far, and its SM, tensor and DRAM
    activity, their values at the cursor in the legends; `G` shows GPU 1, which has no GPM:
    n/a and why in place of its lines, nothing drawn (never 0)."""
    path = DATA / "v4.gsrec"
    async with open_screen(GpuscopeApp(first_screen=lambda: ReplayScreen(path)), ReplayScreen, (120, 50), ready=lambda app, pilot: opened(pilot)) as (app, pilot, screen):
        power = screen.query_one("#replay-power-plot", GpuReplayPlot)
        activity = screen.query_one("#replay-activity-plot", GpuReplayPlot)
        await pilot.pause()
        assert power.display and activity.display and power.size.height >= 6
        assert title(power).startswith("GPU 0 power") and "of 400 W limit" in title(power)
        assert "energy 0 J of " in title(power) and power.points_drawn > 0  # from the first counter reading
        assert [n for n, _ in activity.series] == ["gpu0.sm_active", "gpu0.tensor_active", "gpu0.dram_bw"]
        assert "SM active n/a" in title(activity)  # the first sample: GPM measures between two polls
        await pilot.press("end")
        expected = screen.snapshot.gpus[0]
        assert f"SM active {expected.sm_active_pct:.0f} %" in title(activity) and activity.note == ""
        assert f"{expected.power_w:.0f} W of 400 W limit" in title(power)
        await pilot.press("G")
        assert screen.plot_gpu == 1 and title(power).startswith("GPU 1 power")
        assert activity.note == f"activity n/a: {NO_GPM}" and activity.points_drawn == 0
        assert "activity n/a" in " ".join(activity.render_line(y).text.strip() for y in range(activity.size.height))
        await pilot.press("G")
        assert screen.plot_gpu == 0


async def test_an_older_recording_says_its_activity_is_not_there() -> None:
    """A version 3 recording had no energy counter nor GPM: energy is integrated power (said),
    activity n/a with why."""
    path = DATA / "v3.gsrec"
    async with open_screen(GpuscopeApp(first_screen=lambda: ReplayScreen(path)), ReplayScreen, (120, 50), ready=lambda app, pilot: opened(pilot)) as (app, pilot, screen):
        await pilot.pause()
        power = screen.query_one("#replay-power-plot", GpuReplayPlot)
        activity = screen.query_one("#replay-activity-plot", GpuReplayPlot)
        assert "energy (integrated power)" in title(power) and power.points_drawn > 0
        assert activity.note.startswith("activity n/a: not in this recording (version 3") and activity.points_drawn == 0


def job_use(screen) -> str:
    """The job panel's use lines (with its energy line) as plain text."""
    return str(screen.query_one("#job-use", Static).render())


async def test_the_job_panel_says_the_energy_so_far_at_the_cursor() -> None:
    """A version 4 recording: the job panel says its GPUs' energy from the first sample to the
    cursor (their counters'), as the watch says it live, and it grows as the cursor moves on."""
    path = DATA / "v4.gsrec"
    async with open_screen(GpuscopeApp(first_screen=lambda: ReplayScreen(path)), ReplayScreen, (120, 50), ready=lambda app, pilot: opened(pilot)) as (app, pilot, screen):
        await pilot.press("full_stop", "full_stop")
        early = screen.history.energy.figure(0)
        assert early is not None and early.source == "energy counter" and early.joules > 0
        line = next(x for x in job_use(screen).splitlines() if x.startswith("Energy "))
        assert line.startswith("Energy GPUs 0-1: ") and " so far, " in line and "W mean (energy counters over " in line
        await pilot.press("end")
        late = screen.history.energy.figure(0)
        assert late.joules > early.joules and late.joules == pytest.approx(screen.replay.series["gpu0.energy_j"][-1])  # the plotted line's end
        later = next(x for x in job_use(screen).splitlines() if x.startswith("Energy "))
        assert later != line and " so far, " in later


async def test_an_older_recording_says_its_energy_is_integrated_power() -> None:
    """A version 3 recording had no energy counter: the job panel's energy is integrated power, said."""
    path = DATA / "v3.gsrec"
    async with open_screen(GpuscopeApp(first_screen=lambda: ReplayScreen(path)), ReplayScreen, (120, 50), ready=lambda app, pilot: opened(pilot)) as (app, pilot, screen):
        await pilot.press("end")
        line = next(x for x in job_use(screen).splitlines() if x.startswith("Energy "))
        assert " so far, " in line and "integrated power over " in line and "no energy counter" in line
        figure = screen.history.energy.figure(0)
        assert figure.source == "integrated power" and "version 3" in figure.notes[0]
