"""Signals from the watch screen: only to processes in the watched scope, your own unless you
are root, never PID 1 or a kernel thread, only after confirming (as root in node scope: after
typing the PID), never with --readonly, never to a pid that has become another process.
Real child processes (`sleep 60`) are the targets; each test kills its child by pid in a
`finally`. Who gpuscope runs as is fixed per test (`collectors.signals.caller`), so the tests
mean the same as a user and as root."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time

import pytest

from fake_watch import OTHER_UID, FakeSource, notes, select_pid, status, table, watch_app
from gpuscope.collectors import signals
from gpuscope.collectors.signals import Caller
from gpuscope.metrics.samples import JobScope, ProcessRow
from gpuscope.tui.screens.watch.dialogs import SignalModal, deliver, refusal
from gpuscope.tui.screens.watch.screen import WatchScreen
from loading_helpers import open_screen, polled, until

NODE = JobScope(kind="node", label="node-a01")


@pytest.fixture(autouse=True)
def as_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """gpuscope runs as the tester's uid, not root, unless a test says `as_root`."""
    monkeypatch.setattr(signals, "caller", lambda: Caller(os.getuid(), False))


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signals, "caller", lambda: Caller(0, True))


def _child_row(child: subprocess.Popen[bytes]) -> ProcessRow:
    """A real child as the table lists it: its start time as read from /proc, ours."""
    stat = signals.read_stat(child.pid)
    started = stat.started if stat else 0.0
    return ProcessRow(child.pid, os.getpid(), "alice", os.getuid(), "S", 0.0, 1024, 1, started, "sleep 60 (test child)")


async def _ended(pilot, child: subprocess.Popen[bytes]) -> int | None:  # noqa: ANN001 - textual's Pilot
    """The child's exit status once it has ended. The app keeps running meanwhile (a blocking
    wait would stop the event loop before the confirmation's message is handled); 30 s is a
    liveness bound, not a timing claim."""
    for _ in range(600):
        if child.poll() is not None:
            break
        await pilot.pause(0.05)
    return child.poll()


def _alive(child: subprocess.Popen[bytes]) -> bool:
    time.sleep(0.1)
    return child.poll() is None


@pytest.mark.parametrize(("keys", "expected"), [((), -signal.SIGTERM), (("2",), -signal.SIGKILL), (("3",), -signal.SIGINT)])
async def test_signal_own_process_only_after_confirming(keys: tuple[str, ...], expected: int) -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        async with open_screen(watch_app(FakeSource(scope="node", extra=(_child_row(child),))), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
            await select_pid(pilot, screen, child.pid)
            await pilot.press("k")
            modal = await until(pilot, lambda: app.screen if isinstance(app.screen, SignalModal) else None)
            assert isinstance(modal, SignalModal) and modal.row.pid == child.pid and not modal.typed, notes(app)
            assert _alive(child)  # nothing sent before confirming
            await pilot.press(*keys, "enter")
            assert await _ended(pilot, child) == expected
            assert any(f"to PID {child.pid}" in n for n in notes(app))
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()


async def test_cancelled_signal_sends_nothing() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        async with open_screen(watch_app(FakeSource(scope="node", extra=(_child_row(child),))), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
            await select_pid(pilot, screen, child.pid)
            await pilot.press("k")
            await pilot.pause()  # the dialog is pushed after the key's handler returns (failed once in CI without this)
            await until(pilot, lambda: isinstance(app.screen, SignalModal))
            assert isinstance(app.screen, SignalModal), notes(app)
            await pilot.press("escape")
            await pilot.pause()
            await until(pilot, lambda: app.screen is screen)
            assert app.screen is screen
            assert _alive(child)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()


async def test_signal_refused_for_another_users_process() -> None:
    async with open_screen(watch_app(FakeSource(scope="node")), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        bob = next(s.row for s in table(screen).shown if s.row.uid == OTHER_UID)
        await select_pid(pilot, screen, bob.pid)
        await pilot.press("k")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen  # no dialog
        assert any("not your process" in n for n in notes(app))


@pytest.mark.usefixtures("as_root")
async def test_root_never_signals_pid_1_or_a_kernel_thread() -> None:
    kworker = ProcessRow(77, 2, "root", 0, "I", 0.0, 0, 1, 5.0, "kworker/u64:2-events")
    async with open_screen(watch_app(FakeSource(scope="node", extra=(kworker,))), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        await pilot.press("K")  # kernel threads are hidden until asked for
        for pid, reason in ((1, "PID 1"), (77, "kernel thread")):
            await select_pid(pilot, screen, pid)
            await pilot.press("k")
            await pilot.pause()
            await until(pilot, lambda: app.screen is screen)
            assert app.screen is screen  # no dialog
            assert any(reason in n for n in notes(app)), notes(app)


@pytest.mark.usefixtures("as_root")
async def test_root_never_signals_outside_the_watched_job() -> None:
    async with open_screen(watch_app(FakeSource(scope="job")), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
        await pilot.press("a")  # every process on the node is listed...
        bob = next(s.row for s in table(screen).shown if s.row.uid == OTHER_UID)
        await select_pid(pilot, screen, bob.pid)
        await pilot.press("k")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen  # ...but only the job's may be signalled
        assert any("outside the watched job 4242" in n for n in notes(app)), notes(app)


@pytest.mark.usefixtures("as_root")
async def test_root_in_node_scope_must_type_the_pid() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        async with open_screen(watch_app(FakeSource(scope="node", extra=(_child_row(child),))), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
            await select_pid(pilot, screen, child.pid)
            await pilot.press("k")
            modal = await until(pilot, lambda: app.screen if isinstance(app.screen, SignalModal) else None)
            assert isinstance(modal, SignalModal) and modal.typed
            await pilot.press("enter")  # Enter alone: nothing typed, nothing sent
            await pilot.pause()
            await until(pilot, lambda: app.screen is modal)
            assert app.screen is modal and _alive(child)
            await pilot.press(*str(child.pid + 1), "enter")  # the wrong pid
            await pilot.pause()
            await until(pilot, lambda: app.screen is modal)
            assert app.screen is modal and _alive(child)
            await pilot.press(*["backspace"] * 12, *str(child.pid), "enter")
            assert await _ended(pilot, child) == -signal.SIGTERM
            assert app.screen is screen
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()


async def test_readonly_disables_signals_and_says_why() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        async with open_screen(watch_app(FakeSource(scope="node", extra=(_child_row(child),)), readonly=True), WatchScreen, (120, 40), ready=polled()) as (app, pilot, screen):
            await select_pid(pilot, screen, child.pid)
            binding = screen.active_bindings["k"]
            assert binding.binding.action != "signal" or not binding.enabled  # k answers why, sends nothing
            await pilot.press("k")
            await pilot.pause()
            await until(pilot, lambda: app.screen is screen)
            assert app.screen is screen
            assert any("--readonly" in n for n in notes(app))
            assert "read-only" in status(screen)
            assert _alive(child)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()


def test_never_signals_process_groups_or_gpuscope_itself() -> None:
    mine = dict(ppid=1000, user="me", uid=os.getuid(), state="S", cpu_percent=0.0, rss=1, threads=1, started=1.0, command="x")
    for pid in (0, -1):
        text, severity = deliver(ProcessRow(pid, **mine), signal.SIGTERM, NODE)  # type: ignore[arg-type]
        assert severity == "warning" and "cannot be signalled" in text
    assert "gpuscope itself" in (refusal(ProcessRow(os.getpid(), **mine), NODE) or "")  # type: ignore[arg-type]
    assert "not your process" in (refusal(ProcessRow(os.getpid() + 1, **{**mine, "uid": OTHER_UID}), NODE) or "")  # type: ignore[arg-type]


def test_a_reused_or_made_up_pid_is_not_signalled() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        row = _child_row(child)
        text, _ = deliver(dataclasses.replace(row, started=row.started - 3600.0), signal.SIGTERM, NODE, listed=True)
        assert "now another process" in text  # an hour-old process cannot be this fresh pid
        assert _alive(child)
        text, _ = deliver(row, signal.SIGTERM, NODE, listed=True)
        assert text.startswith("Sent TERM") and child.wait(timeout=5) == -signal.SIGTERM
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
