"""A view builds what it hides only when it is first shown: the empty state (its message and
findings table) when there is nothing to show, the table's filter box on `/` or when a kept
filter is restored. What the user sees and can do is as before: the findings have the keys,
the filter box takes them."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input

from gpuscope.tui.screens.views.table import TableViewScreen
from gpuscope.tui.widgets.findings import FindingsTable
from loading_helpers import open_screen, until
from paths import ROOT

CSV = ROOT / "examples" / "specmoe" / "research_paper_table.csv"


async def test_a_table_shown_has_no_empty_state_nor_filter_box_until_slash() -> None:
    async with open_screen(TableViewScreen(CSV), TableViewScreen, (100, 30)) as (app, pilot, screen):
        assert len(screen.rows) == 25
        assert not screen.query("#view-empty-findings") and not screen.query(FindingsTable)
        assert not screen.query("#table-filter")
        assert isinstance(app.focused, DataTable) and app.focused.id == "table-grid"
        await pilot.press("slash")
        assert await until(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*"Oracle")
        assert await until(pilot, lambda: len(screen.rows) == 5)
        await pilot.press("escape")  # clears the filter, the grid has the keys again
        assert await until(pilot, lambda: len(screen.rows) == 25 and app.focused is screen.query_one("#table-grid"))
        assert not screen.query_one("#table-filter", Input).display


async def test_the_empty_state_is_built_when_shown_and_its_findings_have_the_keys(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    async with open_screen(TableViewScreen(path), TableViewScreen, (100, 30)) as (app, pilot, screen):
        assert await until(pilot, lambda: isinstance(app.focused, FindingsTable))
        assert [f.message for f in app.focused.findings] == ["file is empty"]
        assert screen.query_one("#view-empty-findings").display
        screen.show_empty("Shown again.", ())  # a second time: the same widgets, updated
        await pilot.pause()
        assert not screen.query_one("#view-empty-findings").display
        assert len(screen.query(FindingsTable)) == 1
