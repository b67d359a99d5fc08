"""Provides `QuietLinuxDriver`: Textual's Linux driver with an input thread that sleeps until
there is input.

Textual's input thread (8.2.8, pinned) waits on stdin with a 0.1 s timeout, so it wakes ten
times a second even when nobody types: to time out a lone Escape, and to notice shutdown.
In `gpuscope watch` that was 0.12-0.17 % of a core, a tenth of the screen's whole cost at a
1 s refresh, where the issue asks for no more than htop. This driver's thread waits with no
timeout while the key parser has nothing pending, ticks every 0.1 s only while it waits for
the rest of an escape sequence (so Escape still arrives as fast), and its `exit_event`
writes to a pipe the thread also waits on, so quitting is as quick as before.

The loop is Textual's own `LinuxDriver.run_input_thread` with those three changes;
`tests/test_quiet_driver.py` runs it in a pseudo-terminal.
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder
from typing import Any

from textual._loop import loop_last
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

TICK_S = 0.1
"""How often the parser is asked about a timeout while an escape sequence is incomplete."""


class _WakingEvent(threading.Event):
    """An event whose `set()` also wakes a `select()` waiting on the pipe's read end."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self._wake_fd = wake_fd

    def set(self) -> None:
        super().set()
        try:
            os.write(self._wake_fd, b"\0")
        except OSError:
            pass  # the pipe is full (the thread is awake anyway) or closed


class QuietLinuxDriver(LinuxDriver):
    """`LinuxDriver` whose input thread costs nothing while no key is pressed."""

    def __init__(self, app: Any, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self.exit_event = _WakingEvent(self._wake_write)
        self.wakeups = 0
        """Times the input thread woke up (tests check that idle means asleep)."""

    def close(self) -> None:
        super().close()
        for fd in (self._wake_read, self._wake_write):
            try:
                os.close(fd)
            except OSError:
                pass

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's loop; see the module docstring)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(self._wake_read, selectors.EVENT_READ)

        fileno = self.fileno
        EVENT_READ = selectors.EVENT_READ

        parser = XTermParser(self._debug)
        feed = parser.feed
        tick = parser.tick

        decode = getincrementaldecoder("utf-8")().decode
        read = os.read

        def process_selector_events(selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            self.wakeups += 1
            for last, (selector_key, mask) in loop_last(selector_events):
                if selector_key.fd == self._wake_read:
                    try:
                        read(self._wake_read, 64)  # drain; the loop condition does the rest
                    except OSError:
                        pass
                    continue
                if mask & EVENT_READ:
                    unicode_data = decode(read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        # This can occur if the stdin is piped
                        break
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        def timeout() -> float | None:
            # Only a half-read escape sequence needs the clock (the parser's own deadline).
            return TICK_S if parser._timeout_time is not None else None

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(timeout()))
            selector.unregister(self.fileno)
            selector.unregister(self._wake_read)
            process_selector_events(selector.select(TICK_S), final=True)

        finally:
            selector.close()
            try:
                for event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass
