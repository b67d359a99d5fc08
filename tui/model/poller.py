"""Provides `Poller`: one thread that runs a blocking poll each time it is asked to.

The watch screen polls once a second for as long as it is open. A Textual thread worker per
poll costs a worker object, a thread-pool hand-off and three state-change messages through
the screen and the app each time (about a tenth of the screen's idle CPU); this thread is
started once and sleeps on an event between polls. Polls never overlap: the thread runs one
at a time, and the screen asks for the next only after it has applied the last.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Poller(Generic[T]):
    """Runs `poll()` in its own daemon thread on `request()`; hands each result, or the text
    of the exception it raised, to `deliver(result, error)` from that thread (so `deliver`
    must be thread-safe: Textual's `post_message` is)."""

    def __init__(self, poll: Callable[[], T], deliver: Callable[[T | None, str | None], None], name: str = "gpuscope-poll") -> None:
        self._poll = poll
        self._deliver = deliver
        self._wanted = threading.Event()
        self._closed = False
        # Daemon: a poll stuck in a driver call must not keep the process alive after quit.
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def request(self) -> None:
        """Ask for one poll (at once if the thread is idle; requests while busy merge)."""
        self._wanted.set()

    def close(self) -> None:
        """Stop after the poll in progress, if any; its result is not delivered."""
        self._closed = True
        self._wanted.set()

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            if self._closed:
                return
            try:
                result, error = self._poll(), None
            except Exception as exc:  # noqa: BLE001 - the screen shows it; polling goes on
                result, error = None, f"{type(exc).__name__}: {exc}"
            if self._closed:
                return
            self._deliver(result, error)


class PollDone:
    """What `WatchScreen.poll_now()` returns: `await done.wait()` returns once that poll's
    result has been applied on the main thread (tests and benchmarks wait on it)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
