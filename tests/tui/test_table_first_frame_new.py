"""A table read in time is in the view's first frame: no loading indicator is made, drawn and
hidden; a slower read shows the indicator, then the table. A view's own first Resize is not
handled twice, and a real terminal resize still lays the view out again."""

from __future__ import annotations

import time
from typing import Iterator

from textual.widgets import ContentSwitcher, DataTable

from gpuscope.tui.model.table import TableModel
from gpuscope.tui.screens.base import Loading
from gpuscope.tui.screens.views.table import TableViewScreen
from loading_helpers import open_screen, until
from paths import ROOT

CSV = ROOT / "examples" / "specmoe" / "research_paper_table.csv"


async def test_a_table_read_in_time_has_no_loading_indicator() -> None:
    async with open_screen(TableViewScreen(CSV), TableViewScreen, (100, 30)) as (app, pilot, screen):
        assert screen.query_one("#view-switch", ContentSwitcher).current == "table-body"
        assert len(screen.rows) == 25
        assert not screen.query(Loading)


class SlowTable(TableViewScreen):
    FIRST_STEP_S = 0.01

    def read_steps(self) -> Iterator[TableModel]:
        time.sleep(0.3)  # past FIRST_STEP_S: the loading indicator is shown meanwhile
        yield from super().read_steps()


async def mounted(app: object, pilot: object) -> object:
    await pilot.pause()  # type: ignore[attr-defined]
    return app.screen  # type: ignore[attr-defined]


async def test_a_slow_read_shows_the_loading_indicator_then_the_table() -> None:
    async with open_screen(SlowTable(CSV), SlowTable, (100, 30), ready=mounted) as (app, pilot, screen):
        switch = screen.query_one("#view-switch", ContentSwitcher)
        assert await until(pilot, lambda: switch.current == "view-loading")
        assert screen.query_one(Loading).display
        assert await until(pilot, lambda: switch.current == "table-body")
        assert len(screen.rows) == 25 and not screen.query_one(Loading).display


async def test_a_terminal_resize_still_lays_the_view_out() -> None:
    async with open_screen(TableViewScreen(CSV), TableViewScreen, (100, 30)) as (app, pilot, screen):
        grid = screen.query_one("#table-grid", DataTable)
        assert grid.size.width == 100
        await pilot.resize_terminal(80, 24)
        assert await until(pilot, lambda: grid.size.width == 80)
        assert screen.outer_size == (80, 24)
