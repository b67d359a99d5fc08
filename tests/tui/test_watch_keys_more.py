"""More htop keys on the watch screen: `a` in job scope asks the source for every process of
the node; a demo's simulated GPU processes are rows, labelled and never signalled; F7/F8
renice your own process after confirming (a real child, its nice read back from /proc); F2's
setup (columns, refresh, theme) applies and is saved to $XDG_CONFIG_HOME/gpuscope/config.toml;
F1 lists the keys of the focused process table too.

F2, F7 and F8 are bound on `KeyedWatch`, the watch screen with the `Binding` lines `KEYS` that
`WatchScreen.BINDINGS` is to carry; the actions themselves are the watch screen's.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from proc_nice import nice_in_stat
from textual.binding import Binding
from textual.widgets import Button, RadioButton, Select, SelectionList

from fake_watch import OWN_UID, FakeSource, notes, pids, poll, select_pid, table
from gpuscope.collectors import signals
from gpuscope.collectors.signals import Caller
from gpuscope.collectors.simulated import SIMULATED_USER, SimulatedBackend
from gpuscope.collectors.snapshot import attach_gpu_use
from gpuscope.metrics.samples import ProcessRow, Snapshot
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model.settings import config_path, load
from gpuscope.tui.screens.help import HelpScreen
from gpuscope.tui.screens.setup import SetupScreen
from gpuscope.tui.screens.watch.dialogs import ReniceModal
from gpuscope.tui.screens.watch.screen import WatchScreen
from loading_helpers import open_screen, polled, until

KEYS = [
    Binding("f2", "setup", "Setup", show=False, tooltip="Columns, refresh period and theme, kept in ~/.config/gpuscope/config.toml"),
    Binding("f7", "renice(-1)", "Nice -", show=False, tooltip="Raise the selected process's priority (nice -1): yours only, after confirming; the kernel allows it to root only"),
    Binding("f8", "renice(1)", "Nice +", show=False, tooltip="Lower the selected process's priority (nice +1): yours only, after confirming"),
]


class KeyedWatch(WatchScreen):
    BINDINGS = KEYS


def keyed_app(source: Any = None, **kwargs: Any) -> GpuscopeApp:
    kwargs.setdefault("interval", None)
    return GpuscopeApp(first_screen=lambda: KeyedWatch(source or FakeSource(), **kwargs))


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A config folder of the test's own, and gpuscope running as a plain user."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(signals, "caller", lambda: Caller(os.getuid(), False))


def child_row(process: subprocess.Popen[bytes]) -> ProcessRow:
    stat = signals.read_stat(process.pid)
    return ProcessRow(process.pid, os.getpid(), "alice", OWN_UID, "S", 0.0, 1024, 1, stat.started if stat else 0.0, "sleep 60 (test child)")


# --- a: every process of the node -----------------------------------------------------------


class ScopedSource(FakeSource):
    """As `SnapshotSource`: the scope's processes only, every process of the node once `everyone` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.everyone = False

    def poll(self) -> Snapshot:
        snap = super().poll()
        if self.everyone:
            return snap
        return dataclasses.replace(snap, processes=tuple(p for p in snap.processes if p.pid in snap.scope.pids))


class Wrapper:
    """A source wrapped as `R` wraps one (`RecordingSource` keeps it as `.source`)."""

    def __init__(self, source: ScopedSource) -> None:
        self.source = source

    def poll(self) -> Snapshot:
        return self.source.poll()


@pytest.mark.parametrize("wrapped", [False, True])
async def test_a_in_job_scope_asks_the_source_for_every_process(wrapped: bool) -> None:
    source = ScopedSource()
    async with open_screen(keyed_app(Wrapper(source) if wrapped else source), KeyedWatch, (120, 40), ready=polled()) as (app, pilot, screen):
        job = set(pids(screen))
        assert job and job <= {1000, 1001, 1002, 1003, 1004, 1100}
        await pilot.press("a")
        assert source.everyone
        await poll(pilot)  # (the live screen polls at once; this one polls when told)
        assert {1, 900, 2000} <= set(pids(screen)) and job < set(pids(screen))
        await pilot.press("a")
        await poll(pilot)
        assert not source.everyone and set(pids(screen)) == job


# --- --demo: simulated GPU processes as rows ------------------------------------------------


def test_simulated_gpu_processes_become_rows_with_their_gpu_memory() -> None:
    backend = SimulatedBackend("a100x8-training", clock=lambda: 0.0)
    gpus = backend.sample()
    rows = {r.pid: r for r in attach_gpu_use(backend.process_rows(gpus), gpus)}
    assert set(rows) == {p.pid for g in gpus for p in g.processes}
    trainer = rows[48211]  # GPU 0's rank 0 in the scenario: 71230 MiB
    assert trainer.gpu_memory == 71230 * 1024 * 1024 and trainer.gpu_indices == (0,)
    for row in rows.values():
        assert row.user == SIMULATED_USER and row.command.startswith("[simulated] ") and row.cpu_percent is None


async def test_simulated_rows_show_labelled_and_are_never_signalled_or_reniced() -> None:
    backend = SimulatedBackend("a100x8-training", clock=lambda: 0.0)
    gpus = backend.sample()
    extra = attach_gpu_use(backend.process_rows(gpus), gpus)
    async with open_screen(keyed_app(FakeSource(scope="node", extra=extra)), KeyedWatch, (120, 40), ready=polled()) as (app, pilot, screen):
        await select_pid(pilot, screen, 48211)
        line = table(screen).render_line(1 + table(screen).cursor_row - int(table(screen).scroll_y)).text
        assert "(demo)" in line and "[simulated]" in line and "70G" in line
        for key in ("k", "f8"):
            await pilot.press(key)
            await pilot.pause()
            await until(pilot, lambda: app.screen is screen)
            assert app.screen is screen
        said = [n for n in notes(app) if "simulated process (--demo)" in n]
        assert len(said) == 2


# --- F7 / F8: renice ------------------------------------------------------------------------


async def test_f8_then_f7_renice_your_own_process_after_confirming(child: subprocess.Popen[bytes]) -> None:
    async with open_screen(keyed_app(FakeSource(scope="node", extra=(child_row(child),))), KeyedWatch, (120, 40), ready=polled()) as (app, pilot, screen):
        await select_pid(pilot, screen, child.pid)
        await pilot.press("f8")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ReniceModal))
        assert isinstance(app.screen, ReniceModal) and app.screen.row.pid == child.pid
        assert nice_in_stat(child.pid) == 0  # nothing before confirming
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and nice_in_stat(child.pid) == 0
        await pilot.press("f8")
        await pilot.pause()
        await pilot.press("enter")
        assert await until(pilot, lambda: nice_in_stat(child.pid) == 1)
        assert any("nice 0 → 1" in n for n in notes(app))
        await pilot.press("f7")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ReniceModal))
        assert isinstance(app.screen, ReniceModal) and "nice 1 → 0" in str(app.screen.query_one("#renice-change").render())
        assert app.screen.query("#renice-note")  # a plain user is told the kernel will likely refuse
        await pilot.press("enter")
        if os.geteuid() == 0:  # the kernel lets root raise a priority
            assert await until(pilot, lambda: nice_in_stat(child.pid) == 0)
        else:
            assert await until(pilot, lambda: any("needs root or CAP_SYS_NICE" in n for n in notes(app)))
            assert nice_in_stat(child.pid) == 1


async def test_renice_is_refused_for_other_users_and_with_readonly(child: subprocess.Popen[bytes]) -> None:
    async with open_screen(keyed_app(FakeSource(scope="node")), KeyedWatch, (120, 40), ready=polled()) as (app, pilot, screen):
        await select_pid(pilot, screen, 2000)  # bob's
        await pilot.press("f8")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and any("not your process" in n for n in notes(app))
    async with open_screen(keyed_app(FakeSource(scope="node", extra=(child_row(child),)), readonly=True), KeyedWatch, (120, 40),
                           ready=polled()) as (app, pilot, screen):
        await select_pid(pilot, screen, child.pid)
        await pilot.press("f8")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and any("Renice is off" in n and "--readonly" in n for n in notes(app))
    assert nice_in_stat(child.pid) == 0


# --- F2: setup ------------------------------------------------------------------------------


async def test_f2_setup_applies_and_saves_columns_refresh_and_theme() -> None:
    async with open_screen(keyed_app(), KeyedWatch, (120, 40), ready=polled()) as (app, pilot, screen):
        assert "SM%" in table(screen).render_line(0).text
        await pilot.press("f2")  # Escape: nothing changes, nothing is written
        await pilot.pause()
        app.screen.query_one(SelectionList).deselect("user")
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and not table(screen).hidden and not config_path().exists()
        await pilot.press("f2")
        await pilot.pause()
        setup = app.screen
        assert isinstance(setup, SetupScreen)
        setup.query_one(SelectionList).deselect("sm_percent")
        setup.query_one(SelectionList).deselect("state")
        list(setup.query(RadioButton))[2].value = True  # every 2 s
        setup.query_one(Select).value = "textual-light"
        setup.query_one("#setup-save", Button).press()
        await until(pilot, lambda: app.screen is screen)
        await pilot.pause()
        header = table(screen).render_line(0).text
        assert "SM%" not in header and "GPU MEM" in header and "COMMAND" in header
        assert screen.interval == 2.0 and app.theme == "textual-light"
        saved, problem = load()
        assert problem is None and saved.hidden_columns == {"sm_percent", "state"}
        assert saved.interval == 2.0 and saved.theme == "textual-light"
        assert 'hidden_columns = ["sm_percent", "state"]' in config_path().read_text()
    # the next watch starts with them
    async with open_screen(keyed_app(), KeyedWatch, (120, 40), ready=polled()) as (app, pilot, screen):
        assert table(screen).hidden == {"sm_percent", "state"} and "SM%" not in table(screen).render_line(0).text


async def test_a_broken_config_says_so_and_starts_with_the_defaults() -> None:
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b'theme = "textual-light"\n[watch]\nhidden_columns = ["sm_percent"\n\x1b[31m')
    async with open_screen(keyed_app(), KeyedWatch, (120, 40), ready=polled()) as (app, pilot, screen):
        assert not table(screen).hidden and "SM%" in table(screen).render_line(0).text
        said = await until(pilot, lambda: [n for n in notes(app) if "not valid TOML" in n])
        assert said and str(path) in said[0] and "\x1b" not in said[0]


# --- F1: every key --------------------------------------------------------------------------


async def test_f1_lists_the_new_keys_and_the_process_tables_own() -> None:
    async with open_screen(keyed_app(), KeyedWatch, (120, 40), ready=polled()) as (app, pilot, screen):
        await pilot.press("f1")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert isinstance(app.screen, HelpScreen)
        listed = {description: key for key, description, _ in app.screen.keys}
        assert listed["Setup"] == "f2" and listed["Nice -"] == "f7" and listed["Nice +"] == "f8"
        for description in ("Up", "Down", "Page up", "Page down", "First", "Last", "Kill", "All"):
            assert description in listed, description
