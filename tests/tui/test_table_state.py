"""The table view's state: Escape in the filter box clears the filter (the view stays), the sort and the filter kept
with Enter come back when the file is opened again in the same session (not in another), and
the first plot asks for x and y (never a column against itself)."""

from __future__ import annotations

from pathlib import Path

from textual.screen import Screen
from textual.widgets import Input, OptionList, Static

from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model.table import ROW
from gpuscope.tui.screens.views.plot_pick import PlotPickModal
from gpuscope.tui.screens.views.table import TableViewScreen, XYPlot, remembered
from loading_helpers import settled, until
from paths import ROOT

PAPER = ROOT / "examples" / "specmoe" / "research_paper_table.csv"


class Below(Screen[None]):
    """What the view opens over (the browser, in the app)."""


def column_texts(screen: TableViewScreen, column: str) -> list[str]:
    assert screen.model is not None
    return [screen.model.text[column][r] for r in screen.rows]


async def open_table(app: GpuscopeApp, pilot: object, path: Path = PAPER) -> TableViewScreen:
    await app.push_screen(TableViewScreen(path))
    return await settled(app, pilot, TableViewScreen)


async def test_escape_in_the_box_clears_the_filter_and_reopening_restores_sort_and_filter() -> None:
    app = GpuscopeApp(first_screen=Below)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_table(app, pilot)
        await pilot.press("right", "right", "s", "s")  # Mean Latency, descending
        await pilot.press("slash", *"oracle", "enter")
        assert sorted(set(column_texts(screen, "Strategy"))) == ["Oracle"] and screen.view.descending
        await pilot.press("escape")  # the filter is kept: Escape on the grid leaves the view
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, Below))
        assert isinstance(app.screen, Below)
        # Opened again: sorted as left, with the filter kept with Enter.
        again = await open_table(app, pilot)
        assert again.view.sort == "Mean Latency (ms)" and again.view.descending
        assert again.filter_text == "oracle" and sorted(set(column_texts(again, "Strategy"))) == ["Oracle"]
        assert again.query_one("#table-filter", Input).value == "oracle"
        assert "sorted by Mean Latency (ms) ↓" in str(again.query_one("#view-status", Static).render())
        assert column_texts(again, "Mean Latency (ms)")[0] == "2303.0 ± 0.0"  # the slowest Oracle row first
        # Escape in the filter box clears the filter (the view stays), and it is forgotten.
        await pilot.press("slash", "escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is again)
        assert app.screen is again and again.view.filter.empty and len(again.rows) == 25
        assert not again.query_one("#table-filter", Input).display
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, Below))
        assert isinstance(app.screen, Below)
        third = await open_table(app, pilot)
        assert third.view.filter.empty and third.filter_text == "" and third.view.sort == "Mean Latency (ms)"
    # Another session starts afresh.
    other = GpuscopeApp(first_screen=Below)
    async with other.run_test(size=(120, 40)) as pilot:
        fresh = await open_table(other, pilot)
        assert fresh.view.sort is None and fresh.view.filter.empty and fresh.plot_xy is None


async def test_clearing_the_filter_with_enter_is_remembered_and_a_bad_filter_is_not_kept() -> None:
    app = GpuscopeApp(first_screen=Below)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_table(app, pilot)
        await pilot.press("slash", *"speedup > 13", "enter")
        assert screen.filter_text == "speedup > 13"
        await pilot.press("slash", "ctrl+u", *"nosuch > 1", "enter")  # does not parse: the kept one stays
        assert screen.filter_text == "speedup > 13"
        await pilot.press("slash", "ctrl+u", "enter")  # emptied with Enter: nothing kept
        assert screen.filter_text == "" and remembered(app)[screen._key].filter_text == ""


async def test_first_plot_asks_for_x_and_y_then_toggles_and_is_remembered() -> None:
    app = GpuscopeApp(first_screen=Below)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_table(app, pilot)
        await pilot.press("end", "p")  # cursor on Speedup
        modal = await until(pilot, lambda: app.screen if isinstance(app.screen, PlotPickModal) else None)
        assert modal.x_choices[0] == ROW and "Strategy" not in modal.x_choices + modal.y_choices  # text is not offered
        assert modal.chosen == (ROW, "Speedup")
        # x and y the same column: said, not plotted.
        modal.query_one("#plot-pick-x", OptionList).highlighted = modal.x_choices.index("Speedup")
        await pilot.press("enter")
        await pilot.pause()
        await until(pilot, lambda: app.screen is modal)
        assert app.screen is modal and "both Speedup" in str(modal.query_one("#plot-pick-note", Static).render())
        modal.query_one("#plot-pick-x", OptionList).highlighted = modal.x_choices.index("Batch Size")
        await pilot.press("enter")
        await pilot.pause()
        plot = screen.query_one(XYPlot)
        assert app.screen is screen and plot.display and screen.plot_xy == ("Batch Size", "Speedup")
        assert "Speedup against Batch Size" in str(plot.render())
        await pilot.press("p")  # hides
        assert not plot.display
        await pilot.press("p")  # shows again without asking
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and plot.display
        await pilot.press("escape")  # the plot closes first, then the view
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and not plot.display
        await pilot.press("escape")
        await pilot.pause()
        again = await open_table(app, pilot)
        assert again.plot_xy == ("Batch Size", "Speedup")


async def test_plot_pick_escape_cancels_and_a_table_without_numbers_says_so(tmp_path: Path) -> None:
    words = tmp_path / "words.csv"
    words.write_text("name,colour\nann,red\nbob,blue\n")
    app = GpuscopeApp(first_screen=Below)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_table(app, pilot)
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, PlotPickModal))
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and screen.plot_xy is None and not screen.query_one(XYPlot).display
        await pilot.press("escape")
        await pilot.pause()
        plain = await open_table(app, pilot, words)
        await pilot.press("p")
        await pilot.pause()
        await until(pilot, lambda: app.screen is plain)
        assert app.screen is plain and not plain.query_one(XYPlot).display
