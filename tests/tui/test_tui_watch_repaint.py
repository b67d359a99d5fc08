"""The watch screen repaints only what changed: its idle CPU cost (bench/watch_overhead.py)
depends on it, and each of these once cost a full-screen repaint every second."""

from __future__ import annotations

from typing import Any

from textual.widget import Widget

from fake_watch import FakeSource, poll, table, watch_app
from gpuscope.tui.screens.watch.cpu_pane import CpuPane
from gpuscope.tui.screens.watch.process_table import VIRTUAL_STEP, virtual_height
from gpuscope.tui.screens.watch.screen import WatchScreen
from loading_helpers import open_screen, polled


def test_virtual_height_fills_the_view_then_grows_in_steps() -> None:
    assert virtual_height(0, 30) == 30
    assert virtual_height(29, 30) == 30  # header + 29 rows fit: no scroll bar
    assert virtual_height(30, 30) == VIRTUAL_STEP
    assert virtual_height(40, 30) == 2 * VIRTUAL_STEP
    assert virtual_height(63, 30) == 2 * VIRTUAL_STEP
    assert virtual_height(64, 30) == 3 * VIRTUAL_STEP
    assert all(virtual_height(n, 30) >= n + 1 for n in range(500))  # every row is reachable


class Counting:
    """Counts refresh calls per widget class and layout requests, while armed."""

    def __init__(self, monkeypatch: Any) -> None:
        self.armed = False
        self.repaints: dict[str, int] = {}
        self.layouts: list[str] = []
        original = Widget.refresh

        def refresh(widget: Widget, *regions: Any, **kwargs: Any) -> Any:
            if self.armed:
                name = type(widget).__name__
                self.repaints[name] = self.repaints.get(name, 0) + 1
                if kwargs.get("layout"):
                    self.layouts.append(name)
            return original(widget, *regions, **kwargs)

        monkeypatch.setattr(Widget, "refresh", refresh)


async def test_steady_polls_repaint_no_unchanged_pane_and_run_no_layout(monkeypatch: Any) -> None:
    source = FakeSource(processes=300)
    counting = Counting(monkeypatch)
    async with open_screen(watch_app(source), WatchScreen, (160, 45), ready=polled(3)) as (app, pilot, screen):
        await pilot.press("a")
        await poll(pilot)
        counting.armed = True
        await poll(pilot, 3)
        counting.armed = False
        # The job panel's title and text did not change between these polls: no repaint (its
        # title was compared with Textual's converted copy and always "changed").
        assert counting.repaints.get("JobPanel", 0) == 0, counting.repaints
        assert counting.layouts == [], counting.layouts
        assert screen.query_one(CpuPane).region.height > 0


async def test_a_few_processes_more_or_less_keep_the_scroll_height(monkeypatch: Any) -> None:
    source = FakeSource(processes=100)
    async with open_screen(watch_app(source), WatchScreen, (120, 40), ready=polled(2)) as (app, pilot, screen):
        await pilot.press("a")
        await poll(pilot)
        t = table(screen)
        before = t.virtual_size.height
        rows = len(t.shown)
        source.n_processes = 98  # two processes ended
        await poll(pilot)
        assert len(t.shown) < rows
        assert t.virtual_size.height == before  # same step: no layout pass, no full repaint
        assert t.virtual_size.height >= len(t.shown) + 1
        source.n_processes = 10  # now everything fits: the view's own height, no scroll bar
        await poll(pilot)
        assert t.virtual_size.height == t.scrollable_content_region.height
        assert t.max_scroll_y == 0


async def test_cached_lines_follow_a_theme_change() -> None:
    async with open_screen(watch_app(FakeSource(processes=20)), WatchScreen, (120, 40), ready=polled(2)) as (app, pilot, screen):
        t = table(screen)
        dark = [t.render_line(y) for y in range(1, 4)]
        app.theme = "textual-light"
        await pilot.pause()
        light = [t.render_line(y) for y in range(1, 4)]
        assert [s.text for s in dark] == [s.text for s in light]
        styles = lambda strips: [seg.style for s in strips for seg in s]  # noqa: E731
        assert styles(dark) != styles(light)  # not served stale from the line cache
