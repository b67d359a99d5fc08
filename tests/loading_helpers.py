"""Pilot helpers shared by the screen tests: `open_screen` starts the app on one screen at a
terminal size and waits until that screen is ready; `settled` waits for a screen that loads
its files in a worker (LoadingScreen)."""

from __future__ import annotations

import ast
import subprocess
import sys
from contextlib import asynccontextmanager, suppress
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

from textual.screen import Screen
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


@asynccontextmanager
async def open_screen(first: Screen | Callable[[], Screen] | Any, kind: type[S] = Screen, size: tuple[int, int] = (120, 40), *,
                      ready: Callable[[Any, Any], Awaitable[Any]] | None = None, **app_options: Any) -> AsyncIterator[tuple[Any, Any, S]]:
    """`async with open_screen(lambda: MagmaScreen(...), MagmaScreen, (120, 40)) as (app, pilot, screen)`.

    `first` is the app's first screen: a factory, a screen, or an app already built (as a test
    that patches the app before it runs has). The screen is `settled` (loading workers done)
    unless `ready(app, pilot)` says how to wait for it (a watch screen's first poll); it is
    checked to be a `kind`."""
    from gpuscope.tui.app import GpuscopeApp

    if isinstance(first, GpuscopeApp):
        app = first
    else:
        factory = first if not isinstance(first, Screen) else (lambda: first)
        app = GpuscopeApp(first_screen=factory, **app_options)
    async with app.run_test(size=size) as pilot:
        if ready is None:
            screen = await settled(app, pilot, kind)
        else:
            screen = await ready(app, pilot)
            assert isinstance(screen, kind), screen
        yield app, pilot, screen


def polled(times: int = 1) -> Callable[[Any, Any], Awaitable[Any]]:
    """`ready` for a watch screen: its first `times` polls applied."""
    async def ready(app: Any, pilot: Any) -> Any:
        from fake_watch import poll

        return await poll(pilot, times)

    return ready


async def until(pilot: Any, condition: Callable[[], Any], guard_s: float = 60.0) -> Any:
    """Let the app run until `condition()` holds (what a busy machine delays, e.g. the footer's
    keys after a screen is pushed), and return its value; `guard_s` only stops a hang."""
    import time

    give_up = time.monotonic() + guard_s
    while not (value := condition()) and time.monotonic() < give_up:
        await pilot.pause(0.05)
    return value


def capture_notifications(app: Any) -> list[dict[str, Any]]:
    """Every `app.notify` from now on, as {"message": ..., and its keywords}, still shown."""
    notes: list[dict[str, Any]] = []
    original = app.notify

    def notify(message: str, **kwargs: Any) -> None:
        notes.append({"message": message, **kwargs})
        original(message, **kwargs)

    app.notify = notify
    return notes


def heavy_modules_loaded(imports: str, screen: str, ready: str, size: tuple[int, int] = (120, 40)) -> list[str]:
    """Which of pandas and pyarrow a new process has loaded once the screen made by the
    expression `screen` (after `imports`) is shown and the expression `ready` holds for it."""
    code = f"""
import asyncio, sys
from gpuscope.tui.app import GpuscopeApp
{imports}
async def main():
    screen = {screen}
    app = GpuscopeApp(first_screen=lambda: screen)
    async with app.run_test(size={size!r}) as pilot:
        while not ({ready}):
            await pilot.pause(0.05)
        app.exit()
asyncio.run(main())
print(sorted(m for m in ("pandas", "pyarrow") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])
