"""The browser's `freeze_gc` (what `gpuscope browse` asks for): once the files are recognised
and the views imported, the objects alive then are exempt from garbage collection, and they
are handed back when the browser closes; without it the collector is left alone."""

from __future__ import annotations

import gc

from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.browse.screen import BrowseScreen
from loading_helpers import until
from paths import ROOT


def views_imported(app: GpuscopeApp) -> bool:
    screen = app.screen
    return isinstance(screen, BrowseScreen) and screen.recognition_done and all(w.is_finished for w in app.workers if w.group == "views")


async def test_the_browser_freezes_its_startup_objects_and_thaws_them_on_exit() -> None:
    assert gc.get_freeze_count() == 0
    app = GpuscopeApp(first_screen=lambda: BrowseScreen(ROOT / "examples", freeze_gc=True), mode="browse")
    async with app.run_test(size=(120, 40)) as pilot:
        assert await until(pilot, lambda: views_imported(app) and gc.get_freeze_count() > 0)
    assert gc.get_freeze_count() == 0


async def test_without_the_flag_the_collector_is_left_alone() -> None:
    app = GpuscopeApp(first_screen=lambda: BrowseScreen(ROOT / "examples"), mode="browse")
    async with app.run_test(size=(120, 40)) as pilot:
        assert await until(pilot, lambda: views_imported(app))
        assert gc.get_freeze_count() == 0
