"""The three screens as a new user meets them at 80x24: the keys to quit and get help are on
the footer, help details are whole, table headers are never cut to 'u…%' (they wrap onto a
second line), a node without GPUs gives the command line the GPU columns' room, the kernels
cards keep readable titles, the MAGMA findings tab shows findings, `w` says what it did."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.console import Console

from fake_watch import FakeSource, poll, watch_app
from gpuscope.metrics import export
from gpuscope.metrics.snapshot_tables import snapshot_tables
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.parsers.magma.read import read_tree
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.help import HelpScreen
from gpuscope.tui.screens.studies.kernels import KernelsScreen
from gpuscope.tui.screens.studies.magma import MagmaScreen
from gpuscope.tui.widgets.findings import FindingsPane
from gpuscope.tui.widgets.keys_footer import KeysFooter
from gpuscope.tui.screens.studies.kernel_cards import KernelCards
from gpuscope.tui.screens.watch.process_table import ProcessTable
from gpuscope.tui.widgets.result_table import ResultTableView
from gpuscope.tui.screens.watch.screen import WatchScreen
from loading_helpers import capture_notifications, open_screen, polled, until
from paths import ROOT

KERNELS_SAMPLE = ROOT / "tests" / "data" / "kernels"


def magma_app(folder: Path) -> GpuscopeApp:
    result = read_tree([folder])
    return GpuscopeApp(first_screen=lambda: MagmaScreen([folder], loader=lambda: result))


def footer_keys(app: GpuscopeApp) -> dict[str, bool]:
    """Description -> whether its key lies wholly on screen (the footer lists the keys it draws
    whole, with their columns)."""
    footer = app.screen.query_one(KeysFooter)
    width = app.size.width
    return {key.description: 0 <= key.start < key.end <= width for key in footer.shown_keys()}


# --- footer ----------------------------------------------------------------------------------


async def test_watch_at_80_columns_footer_gpu_columns_help_and_window_key() -> None:
    """One watch screen at 80x24: Quit and Help on the footer, a GPU node keeps its GPU columns,
    help details whole, and `w` says what it chose (the help and `w` checks are below)."""
    app = watch_app(FakeSource())
    notes = capture_notifications(app)
    async with open_screen(app, WatchScreen, (80, 24), ready=polled()) as (app, pilot, screen):
        await pilot.pause()
        keys = footer_keys(app)
        assert keys.get("Quit") and keys.get("Help"), keys
        assert "Commands" not in keys  # ctrl+p still works; docked right it covered Quit
        assert "gpu_mem_bytes" in [c[0] for c in screen.query_one(ProcessTable).columns()], "a GPU node keeps its GPU columns"
        await help_details_are_whole(app, pilot, screen)
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen, "escape closes help"
        await pilot.press("w")
        await pilot.pause()
        assert notes and "15 minutes" in notes[-1]["message"] and "p shows them" in notes[-1]["message"], "w: says what it chose"


async def test_magma_at_80x24_footer_comparison_headers_and_findings_rows(magma_data: Path) -> None:
    """One MAGMA screen at 80x24: Quit and Help on the footer, the comparison's headers wrap
    instead of being cut, the findings tab shows rows."""
    async with open_screen(magma_app(magma_data), MagmaScreen, (80, 24)) as (app, pilot, screen):
        await pilot.pause()
        keys = footer_keys(app)
        assert keys.get("Quit") and keys.get("Help"), keys
        await pilot.press("c")
        await pilot.pause()
        table = screen.query_one("#comparison", ResultTableView)
        labels = [column.label.plain for column in table.columns.values()]
        assert labels and all("…" not in label for label in labels), labels
        assert table.header_height == 2 and any("\n" in label for label in labels)
        await pilot.press("f")
        await pilot.pause()
        findings = screen.query_one("#findings-pane", FindingsPane).table
        assert findings.findings and findings.region.height >= 3  # header and at least two rows


async def test_wide_footer_keeps_the_palette_key_status_says_more_and_help_lists_fold_keys_next_to_tree() -> None:
    from fake_watch import status

    async with open_screen(watch_app(FakeSource()), WatchScreen, (160, 40), ready=polled()) as (app, pilot, screen):
        await pilot.pause()
        keys = footer_keys(app)
        assert keys.get("Quit") and keys.get("Help") and keys.get("Commands"), keys
        assert "every 1 s (+/-)" in status(screen) and "scope processes" in status(screen), "a wide status line"
        await pilot.press("question_mark")
        await pilot.pause()
        actions = [row[1] for row in app.screen.keys]
        assert actions.index("Fold") == actions.index("Tree") + 1 and actions.index("Unfold") == actions.index("Tree") + 2, actions


# --- help ------------------------------------------------------------------------------------


async def help_details_are_whole(app: Any, pilot: Any, screen: WatchScreen) -> None:
    """At 80 columns (checked in the watch test above) every help detail is whole, wrapped."""
    await pilot.press("question_mark")
    await pilot.pause()
    help_screen = app.screen
    assert isinstance(help_screen, HelpScreen)
    listing = help_screen.query_one("#help-list")
    console = Console(width=listing.content_region.width, color_system=None, record=True)
    console.print(help_screen.keys_table())
    text = " ".join(console.export_text().split())
    for binding in screen.BINDINGS:
        # every key the screen offers here (b, browse, only in the app of watch and browse)
        if getattr(binding, "tooltip", "") and screen.check_action(binding.action.split("(")[0], ()) is not False:
            assert " ".join(binding.tooltip.split()) in text  # wrapped, never cut
    # F10 (the screen's) and q (the app's) are one Quit row
    quit_rows = [row for row in help_screen.keys if row[1] == "Quit"]
    assert len(quit_rows) == 1 and "f10" in quit_rows[0][0] and "q" in quit_rows[0][0].split(" / ")


# --- table headers ---------------------------------------------------------------------------


def test_header_lines_wrap_at_a_space_and_never_cut_a_word() -> None:
    assert export.header_lines("median Gflop/s", 20) == ["median Gflop/s"]
    assert export.header_lines("median Gflop/s", 8) == ["median", "Gflop/s"]
    assert export.header_lines("mem total MiB", 9) in (["mem total", "MiB"], ["mem", "total MiB"])
    assert export.header_floor("mem used MiB") == 8
    assert export.header_floor("Launches") == 8
    assert export.header_lines("Launches", 5) == [export.middle("Launches", 5)]  # only when it cannot wrap


def test_fit_wraps_headers_before_cutting_names() -> None:
    # A name one cell too wide for the room: a header wraps, the name stays whole.
    widths = [25, 14]
    fitted = export.fit_widths(widths, [25, max(6, export.header_floor("median Gflop/s"))], [True, False], 1)
    assert fitted[0] == 25 and fitted[1] < 14


def test_once_text_at_80_columns_fits_with_whole_header_words() -> None:
    snapshot = FakeSource().poll()
    text = export.to_text(snapshot_tables(snapshot), 80, limit=80)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    start = lines.index("GPUs")
    rule = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("─"))
    header = " ".join(lines[rule - 2 : rule])  # the header, wrapped onto two lines above its rule
    assert "…" not in header, header
    for word in ("util", "mem", "used", "total", "MiB", "temp", "power", "procs"):
        assert word in header.split(), header


def test_text_table_wraps_a_header_onto_two_lines() -> None:
    table = ResultTable("", (Column("name"), Column("used_mib", "mem used MiB", ".0f"), Column("total_mib", "mem total MiB", ".0f")),
                        tuple((f"gpu-{i}", 100.0, 200.0) for i in range(3)))
    lines = export.table_lines(table, limit=32)
    assert max(len(line) for line in lines) <= 32, lines
    first, second = lines[1], lines[2]  # no title: a blank line, then the two header lines
    assert "mem" in first.split() and "MiB" in second.split() and "…" not in first + second, lines
    assert "gpu-0" in lines[4]


async def test_wide_magma_summary_keeps_names_whole(magma_data: Path) -> None:
    async with open_screen(magma_app(magma_data), MagmaScreen, (200, 50)) as (app, pilot, screen):
        table = screen.query_one("#summary", ResultTableView)
        column = table.columns["environment"]
        assert column.width >= max(len(str(v)) for v in table.model.column_values(table.model.keys.index("environment")) if v)


# --- watch without a GPU ---------------------------------------------------------------------


async def test_no_gpu_node_gives_the_gpu_columns_room_to_the_command() -> None:
    async with open_screen(watch_app(FakeSource(backend="none")), WatchScreen, (80, 24), ready=polled()) as (app, pilot, screen):
        procs = screen.query_one(ProcessTable)
        keys = [c[0] for c in procs.columns()]
        assert "gpu_mem_bytes" not in keys and "sm_percent" not in keys and "gpus" not in keys
        assert "command" in keys  # a GPU node's are checked in the first watch test


# --- kernels and MAGMA at 80x24 --------------------------------------------------------------


async def test_kernel_cards_keep_readable_titles_at_80_columns() -> None:
    async with open_screen(GpuscopeApp(first_screen=lambda: KernelsScreen([KERNELS_SAMPLE])), KernelsScreen, (80, 24)) as (app, pilot, screen):
        await pilot.pause()
        cards = screen.query_one(KernelCards)
        titles = [str(card.border_title) for card in cards.query(".kernel-card")]
        assert titles[:4] == ["Compute", "FLOPS", "Bandwidth", "Busy/sum"], titles
        await pilot.resize_terminal(160, 40)
        await pilot.pause()
        titles = [str(card.border_title) for card in screen.query_one(KernelCards).query(".kernel-card")]
        assert titles[0] == "Compute eff.", titles


def test_one_gpu_model_with_rounded_peaks_is_one_roof() -> None:
    """An nsys export measures 1555.2 GB/s for the A100 the table lists at 1555: one roof, not
    'GPUs with different peaks' (which drew no roofline for the shared profiles folder)."""
    from gpuscope.metrics.kernels.peak_choice import ChosenPeak
    from gpuscope.tui.model.kernels import same_roofs

    measured = ChosenPeak(19.5, 1555.2, "FP32", "from the profile", gpu="A100 40GB SXM4")
    table = ChosenPeak(19.5, 1555.0, "FP32", "from the table", gpu="A100 40GB SXM4")
    other = ChosenPeak(67.0, 3350.0, "FP32", "H100", gpu="H100 SXM")
    assert same_roofs([measured, table, other]) == [measured, measured, other]
    assert same_roofs([table, ChosenPeak(19.5, 1555.0, "FP64", "x")])[1].precision == "FP64"


async def test_status_line_keeps_counts_and_filter_on_screen_at_80_columns() -> None:
    from fake_watch import status

    async with open_screen(watch_app(FakeSource()), WatchScreen, (80, 24), ready=polled()) as (app, pilot, screen):
        await pilot.press("I", "t", "slash", "p", "y", "t", "h", "o", "n", "enter")
        await pilot.pause()
        line = status(screen)
        assert len(line) <= 78, line  # inside the line's padding
        assert "filter 'python'" in line and re.search(r"\d+/\d+ scope procs", line) and "tree" in line, line


async def test_all_key_in_node_scope_says_every_process_is_listed() -> None:
    app = watch_app(FakeSource(scope="node"))
    notes = capture_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await poll(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert not screen.view.everyone and notes and "whole node" in notes[-1]["message"]


async def test_status_line_says_a_search_is_running() -> None:
    from fake_watch import status

    async with open_screen(watch_app(FakeSource()), WatchScreen, (80, 24), ready=polled()) as (app, pilot, screen):
        await pilot.press("f3", "s", "e", "r", "v", "e")
        await pilot.pause()
        assert "search 'serve'" in status(screen), status(screen)
        await pilot.press("enter")
        await pilot.pause()
        assert "search" not in status(screen)
        await pilot.press("slash", "b", "a")
        await pilot.pause()
        assert "filter 'ba'" in status(screen) and "search" not in status(screen)


async def test_plots_asked_for_at_80x24_get_rows_in_both_columns() -> None:
    from gpuscope.tui.widgets.history_plot import HistoryPlot

    async with open_screen(watch_app(FakeSource()), WatchScreen, (80, 24), ready=polled(2)) as (app, pilot, screen):
        await pilot.press("p")
        await pilot.pause()
        plots = list(screen.query(HistoryPlot))
        assert len(plots) == 2 and all(p.display for p in plots)
        assert all(p.content_region.height >= 3 for p in plots), [p.content_region for p in plots]


def test_once_process_table_leaves_out_empty_gpu_columns_under_a_width() -> None:
    from gpuscope.metrics.snapshot_tables import process_table

    no_gpu = FakeSource(backend="none").poll()
    narrow = process_table(no_gpu, width=80)
    assert not {"gpu_mem_bytes", "sm_percent", "gpus"} & set(narrow.keys) and "command" in narrow.keys
    text = export.to_text([narrow], 80, limit=80)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert {"gpu_mem_bytes", "sm_percent", "gpus"} <= set(process_table(no_gpu).keys)  # CSV/JSON without --width: every column
    assert "gpu_mem_bytes" in process_table(FakeSource().poll(), width=80).keys  # a GPU node keeps them
