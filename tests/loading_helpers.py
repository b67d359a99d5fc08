"""Pilot helper shared by the tests of screens that load files in a worker (LoadingScreen)."""

from __future__ import annotations

from contextlib import suppress
from typing import Any, TypeVar

from textual.worker import WorkerCancelled

S = TypeVar("S")


async def settled(app: Any, pilot: Any, kind: type[S]) -> S:
    """Wait for the loading worker (superseded exclusive workers end cancelled), let the
    screen handle its message, and return the screen, checked to be a `kind`."""
    with suppress(WorkerCancelled):
        await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, kind)
    return screen
