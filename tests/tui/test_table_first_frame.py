"""A table read in time is in the view's first frame: no loading indicator is made, drawn and
hidden; a slower read shows the indicator, then the table. A view's own first Resize is not
handled twice, and a real terminal resize still lays the view out again."""

from __future__ import annotations

import threading
from typing import Iterator

from textual.widgets import ContentSwitcher, DataTable

from gpuscope.tui.model.table import TableModel
from gpuscope.tui.screens.base import Loading
from gpuscope.tui.screens.views.table import TableViewScreen
from loading_helpers import open_screen, until
from paths import ROOT

CSV = ROOT / "examples" / "specmoe" / "research_paper_table.csv"


class PatientTable(TableViewScreen):
    FIRST_STEP_S = 60.0  # "in time" whatever the machine's load: the test is of what follows, not of the clock


async def test_a_table_read_in_time_has_no_loading_indicator() -> None:
    async with open_screen(PatientTable(CSV), PatientTable, (100, 30)) as (app, pilot, screen):
        assert screen.query_one("#view-switch", ContentSwitcher).current == "table-body"
        assert len(screen.rows) == 25
        assert not screen.query(Loading)


class SlowTable(TableViewScreen):
    FIRST_STEP_S = 0.01

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.release = threading.Event()

    def read_steps(self) -> Iterator[TableModel]:
        self.release.wait(60)  # past FIRST_STEP_S until the test has seen the loading indicator
        yield from super().read_steps()


async def mounted(app: object, pilot: object) -> object:
    await pilot.pause()  # type: ignore[attr-defined]
    return app.screen  # type: ignore[attr-defined]


async def test_a_slow_read_shows_the_loading_indicator_then_the_table() -> None:
    slow = SlowTable(CSV)
    async with open_screen(slow, SlowTable, (100, 30), ready=mounted) as (app, pilot, screen):
        switch = screen.query_one("#view-switch", ContentSwitcher)
        assert await until(pilot, lambda: switch.current == "view-loading")
        assert screen.query_one(Loading).display
        slow.release.set()
        assert await until(pilot, lambda: switch.current == "table-body")
        assert len(screen.rows) == 25 and not screen.query_one(Loading).display


async def test_a_terminal_resize_still_lays_the_view_out() -> None:
    async with open_screen(TableViewScreen(CSV), TableViewScreen, (100, 30)) as (app, pilot, screen):
        grid = screen.query_one("#table-grid", DataTable)
        assert grid.size.width == 100
        await pilot.resize_terminal(80, 24)
        assert await until(pilot, lambda: grid.size.width == 80)
        assert screen.outer_size == (80, 24)
