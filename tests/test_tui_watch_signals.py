"""Signals from the watch screen: only to your own processes, only after confirming, never
with --readonly, never to a pid that has become another process. Real child processes
(`sleep 60`) are the targets; each test kills its child by pid in a `finally`."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time

import pytest

from fake_watch import OTHER_UID, FakeSource, notes, poll, select_pid, status, table, watch_app
from gpuscope.metrics.samples import ProcessRow
from gpuscope.tui.widgets.watch_dialogs import SignalModal, deliver, refusal, start_since_boot


def _child_row(child: subprocess.Popen[bytes]) -> ProcessRow:
    """A real child as the table lists it: its start time as read from /proc, ours."""
    started = start_since_boot(child.pid) or 0.0
    return ProcessRow(child.pid, os.getpid(), "alice", os.getuid(), "S", 0.0, 1024, 1, started, "sleep 60 (test child)")


@pytest.mark.parametrize(("keys", "expected"), [((), -signal.SIGTERM), (("2",), -signal.SIGKILL), (("3",), -signal.SIGINT)])
async def test_signal_own_process_only_after_confirming(keys: tuple[str, ...], expected: int) -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        app = watch_app(FakeSource(extra=(_child_row(child),)))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await poll(pilot)
            await pilot.press("a")
            await select_pid(pilot, screen, child.pid)
            await pilot.press("k")
            await pilot.pause()
            modal = app.screen
            assert isinstance(modal, SignalModal) and modal.row.pid == child.pid
            time.sleep(0.1)
            assert child.poll() is None  # nothing sent before confirming
            await pilot.press(*keys, "enter")
            await pilot.pause()
            assert child.wait(timeout=5) == expected
            assert any(f"to PID {child.pid}" in n for n in notes(app))
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()


async def test_cancelled_signal_sends_nothing() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        app = watch_app(FakeSource(extra=(_child_row(child),)))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await poll(pilot)
            await pilot.press("a")
            await select_pid(pilot, screen, child.pid)
            await pilot.press("k")
            assert isinstance(app.screen, SignalModal)
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen
            time.sleep(0.2)
            assert child.poll() is None
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()


async def test_signal_refused_for_another_users_process() -> None:
    app = watch_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await poll(pilot)
        await pilot.press("a")
        bob = next(s.row for s in table(screen).shown if s.row.uid == OTHER_UID)
        await select_pid(pilot, screen, bob.pid)
        await pilot.press("k")
        await pilot.pause()
        assert app.screen is screen  # no dialog
        assert any("not your process" in n for n in notes(app))


async def test_readonly_disables_signals_and_says_why() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        app = watch_app(FakeSource(extra=(_child_row(child),)), readonly=True)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await poll(pilot)
            await pilot.press("a")
            await select_pid(pilot, screen, child.pid)
            binding = screen.active_bindings["k"]
            assert binding.binding.action == "signal" and not binding.enabled  # dimmed in the footer
            await pilot.press("k")
            await pilot.pause()
            assert app.screen is screen
            assert any("--readonly" in n for n in notes(app))
            assert "read-only" in status(screen)
            time.sleep(0.1)
            assert child.poll() is None
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()

def test_never_signals_process_groups_or_gpuscope_itself() -> None:
    mine = dict(ppid=1, user="me", uid=os.getuid(), state="S", cpu_percent=0.0, rss=1, threads=1, started=1.0, command="x")
    for pid in (0, -1):
        text, severity = deliver(ProcessRow(pid, **mine), signal.SIGTERM)  # type: ignore[arg-type]
        assert severity == "warning" and "cannot be signalled" in text
    assert "gpuscope itself" in (refusal(ProcessRow(os.getpid(), **mine)) or "")  # type: ignore[arg-type]
    assert "not your process" in (refusal(ProcessRow(os.getpid() + 1, **{**mine, "uid": OTHER_UID})) or "")  # type: ignore[arg-type]

def test_a_reused_or_made_up_pid_is_not_signalled() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        row = _child_row(child)
        text, _ = deliver(dataclasses.replace(row, started=row.started - 3600.0), signal.SIGTERM, listed=True)
        assert "now another process" in text  # an hour-old process cannot be this fresh pid
        time.sleep(0.1)
        assert child.poll() is None
        text, _ = deliver(row, signal.SIGTERM, listed=True)
        assert text.startswith("Sent TERM") and child.wait(timeout=5) == -signal.SIGTERM
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
