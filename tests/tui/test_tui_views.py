"""Pilot tests of the generic file views (table, log, markdown, image, PDF) on real files and
hostile ones, and hypothesis tests of the table filter parser.

Each view is opened as the app's first screen, as `gpuscope browse` opens it over the browser;
files are read by the screen's own worker, as for a user.
"""

from __future__ import annotations

import json
import math
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image as PILImage
from textual.widgets import ContentSwitcher, DataTable, Input, Markdown, OptionList, Static

from gpuscope.parsers import registry

from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.render.halfblocks import halfblocks
from gpuscope.tui.model.log import TAIL_BYTES, LogDocument
from gpuscope.tui.model.table_filter import FilterError, RowFilter, parse_filter
from gpuscope.tui.model.table import TableModel, TableView
from gpuscope.tui.model.table_read import TableRead, read_all, read_head
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.screens.help import HelpScreen
from gpuscope.tui.screens.views.image import ImageViewScreen
from gpuscope.tui.screens.views.log import LogViewScreen, TextViewScreen
from gpuscope.tui.screens.views.markdown import MarkdownViewScreen
from gpuscope.tui.screens.views.pdf import TEXT_CHARS, PdfViewScreen, first_pages_text
from gpuscope.tui.screens.views.table import TableViewScreen, XYPlot
from gpuscope.tui.screens.views.pick import view_for
from gpuscope.tui.screens.views.plot_pick import PlotPickModal
from gpuscope.tui.widgets.log_lines import LogLines
from loading_helpers import open_screen, settled, until
from paths import ROOT

SPECMOE = ROOT.parent / "shared" / "data" / "specmoe"
PAPER_TABLE = SPECMOE / "evalSwitchB8" / "results" / "research_paper_table.csv"
STRATEGY_JSON = SPECMOE / "evalSwitchB8" / "results" / "strategy_A_batch_1.json"
needs_specmoe = pytest.mark.skipif(not PAPER_TABLE.is_file(), reason="../shared/data/specmoe is absent")
KERNELS_CSV = ROOT / "tests" / "data" / "profiles" / "nvprof_summary_units_in_cells.csv"


def app_for(screen: Any) -> GpuscopeApp:
    return GpuscopeApp(first_screen=lambda: screen)


def text_of(screen: Any, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def column_texts(screen: TableViewScreen, column: str) -> list[str]:
    """A column's cells in the order the view shows them (all rows, not only those drawn)."""
    assert screen.model is not None
    return [screen.model.text[column][r] for r in screen.rows]


# ---- table view -------------------------------------------------------------------------


@needs_specmoe
async def test_paper_table_sort_filter_stats_plot_export(tmp_path: Path) -> None:
    async with open_screen(TableViewScreen(PAPER_TABLE, marks={(0, "Speedup")}), TableViewScreen, (120, 40)) as (app, pilot, screen):
        assert screen.model is not None and screen.model.complete and screen.model.row_count == 25
        assert "25 rows" in text_of(screen, "#view-status") and "1 cell(s) outside expected range" in text_of(screen, "#view-status")
        grid = screen.query_one("#table-grid", DataTable)
        assert grid.get_cell_at((0, 7)).style == "bold white on red"  # Oracle's 15.85× is marked
        # `±` and `×` cells are numbers: sort by mean latency (third column), descending on a second `s`.
        await pilot.press("right", "right", "s")
        assert screen.view.sort == "Mean Latency (ms)" and not screen.view.descending
        assert column_texts(screen, "Mean Latency (ms)")[:2] == ["143.9 ± 0.0", "174.6 ± 8.8"]
        await pilot.press("s")
        assert column_texts(screen, "Mean Latency (ms)")[0] == "36503.6 ± 0.0"
        assert "sorted by Mean Latency (ms) ↓" in text_of(screen, "#view-status")
        stats = text_of(screen, "#table-stats")
        assert "count 25" in stats and "min 143.9" in stats and "max 36503.6" in stats and "median 1151.5" in stats
        # Speedup (last column): 15.85× reads as 15.85 with unit x.
        await pilot.press("end")
        stats = text_of(screen, "#table-stats")
        assert stats.startswith("Speedup:") and "max 15.85 x" in stats and "min 1 x" in stats and "unique 17" in stats
        # Filter: an expression over the numbers, then plain text.
        await pilot.press("slash")
        await pilot.press(*'speedup > 13 and "batch size" >= 4')
        assert sorted(column_texts(screen, "Strategy")) == ["Oracle", "Oracle", "Oracle"]
        assert "3 match" in text_of(screen, "#view-status")
        await pilot.press("enter")
        assert screen.query_one("#table-filter", Input).display
        # Plot Speedup against Batch Size: the first plot asks for x and y.
        await pilot.press("end", "p")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, PlotPickModal))
        assert isinstance(app.screen, PlotPickModal) and app.screen.chosen == ("row", "Speedup")
        app.screen.query_one("#plot-pick-x", OptionList).highlighted = app.screen.x_choices.index("Batch Size")
        await pilot.press("enter")
        await pilot.pause()
        plot = screen.query_one(XYPlot)
        assert plot.display and screen.plot_xy == ("Batch Size", "Speedup")
        assert "Speedup against Batch Size" in str(plot.render())
        # Export writes every filtered row, the file's own text.
        await pilot.press("e")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal)
        target = tmp_path / "view.csv"
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        exported = pd.read_csv(target, dtype=str)
        assert list(exported["Strategy"]) == ["Oracle"] * 3 and exported["Speedup"].iloc[0] == "15.85×"
        # `?` lists the view's keys; Escape goes back (here: leaves, the view is the only screen).
        await pilot.press("question_mark")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert isinstance(app.screen, HelpScreen)
        listed = app.screen.keys
        assert [k for k, _, _ in listed][:5] == ["s", "/", "p", "x", "e"]
        assert ("esc", "Back") in [(k, d) for k, d, _ in listed]
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("escape")  # a plot is shown: it is hidden first, the filter stays
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and not screen.query_one(XYPlot).display and not screen.view.filter.empty
        await pilot.press("slash", "escape")  # Escape in the filter box clears it
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen and screen.view.filter.empty and screen.filter_text == ""
        await pilot.press("escape")  # back
        await pilot.pause()
    assert app.return_code == 0


@needs_specmoe
async def test_records_json_and_escape_pops_to_the_screen_below() -> None:
    app = GpuscopeApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.push_screen(TableViewScreen(STRATEGY_JSON))
        screen = await settled(app, pilot, TableViewScreen)
        assert screen.model is not None and screen.model.row_count == 10 and "inference_latency_ms" in screen.model.columns
        assert screen.model.is_numeric("inference_latency_ms") and not screen.model.is_numeric("strategy")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TableViewScreen)
        assert app.is_running


async def test_units_in_cells_fixture_and_stats() -> None:
    async with open_screen(TableViewScreen(KERNELS_CSV), TableViewScreen, (120, 40)) as (app, pilot, screen):
        assert screen.model is not None and screen.model.row_count > 0
        numeric = [c for c in screen.model.columns if screen.model.is_numeric(c)]
        assert numeric, screen.model.columns


async def test_large_csv_shows_the_head_first_then_every_row(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    rows = 40_000
    frame = pd.DataFrame({"run": np.arange(rows), "time": [f"{v:.2f} ms" for v in np.linspace(1, 2, rows)], "name": ["gemm"] * rows})
    frame.to_csv(path, index=False)
    head = read_head(path)
    assert not head.complete and head.total_rows is None and head.bytes_read <= 64 * 1024 < path.stat().st_size
    assert 0 < len(head.frame) < rows
    async with open_screen(TableViewScreen(path), TableViewScreen, (100, 30)) as (app, pilot, screen):
        assert screen.model is not None and screen.model.complete and screen.model.row_count == rows
        assert screen.query_one("#table-grid", DataTable).row_count == 2000  # drawn; the rest by sort/filter
        status = text_of(screen, "#view-status")
        assert "40,000 rows" in status and "first 2,000 drawn" in status
        await pilot.press("right", "s", "s")
        assert column_texts(screen, "time")[0] == "2.00 ms"


async def test_head_status_says_the_row_count_is_not_known_yet(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    pd.DataFrame({"a": np.arange(20_000)}).to_csv(path, index=False)
    screen = TableViewScreen(path)
    async with open_screen(screen, TableViewScreen, (100, 30)) as (app, pilot, _):
        screen.model = TableModel(read_head(path))  # as shown before the worker's second message
        screen.apply(TableView())
        assert "row count not known yet" in text_of(screen, "#view-status")


async def test_hostile_cells_are_shown_cleaned(tmp_path: Path) -> None:
    path = tmp_path / "hostile.csv"
    path.write_text("name,[b]value[/b]\n\x1b]0;pwned\x07evil\x1b[2J,1\n[red]x[/red],2\n", encoding="utf-8")
    async with open_screen(TableViewScreen(path), TableViewScreen, (100, 30)) as (app, pilot, screen):
        grid = screen.query_one("#table-grid", DataTable)
        assert grid.get_cell_at((0, 0)).plain == "evil"
        assert grid.get_cell_at((1, 0)).plain == "[red]x[/red]"  # markup shown as typed
        assert "[b]value[/b]" in grid.columns["[b]value[/b]"].label.plain


@pytest.mark.parametrize(("content", "expected"), [
    (b"", "file is empty"),
    (b"\x00\x01\x02garbage\xff\xfe" * 100, "binary"),
    (b"[[1, 2], [3]]", "not records"),
    (b"{not json", "not valid JSON"),
], ids=["empty", "binary", "list-of-lists", "broken-json"])
async def test_bad_files_give_a_message_not_a_crash(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / ("bad.json" if content[:1] in (b"{", b"[", b"4") else "bad.csv")
    path.write_bytes(content)
    async with open_screen(TableViewScreen(path), TableViewScreen, (100, 30)) as (app, pilot, screen):
        assert screen.model is None
        shown = text_of(screen, "#view-empty-message") + " ".join(f.message for f in screen.query_one("#view-empty-findings").query_one("DataTable").findings)  # type: ignore[attr-defined]
        assert expected in shown
        await pilot.press("s", "slash", "p", "e")  # keys without data do nothing
        assert isinstance(app.screen, TableViewScreen)


async def test_partly_tabular_json_shows_the_table_and_what_was_skipped(tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    path.write_text('[1, {"a": "\\u001b[31m2 ms"}, {"a": "3 ms"}]')  # JSON's own escape for ESC
    async with open_screen(TableViewScreen(path), TableViewScreen, (100, 30)) as (app, pilot, screen):
        assert screen.model is not None and screen.model.row_count == 2
        assert "not objects; skipped" in text_of(screen, "#table-notes")
        assert screen.query_one("#table-grid", DataTable).get_cell_at((0, 0)).plain.strip() == "2 ms"


def test_json_shapes_records_columns_nested(tmp_path: Path) -> None:
    columns = tmp_path / "columns.json"
    columns.write_text(json.dumps({"gpus": [1, 2, 4], "speedup": ["1.0×", "1.9×", "3.6×"]}))
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"meta": {"v": 1}, "results": [{"a": 1, "b": [1, 2]}, {"a": 2}]}))
    lines = tmp_path / "runs.jsonl"
    lines.write_text('{"a": 1}\nnot json\n{"a": 2, "b": "x"}\n')
    read = read_all(columns)
    assert list(read.frame.columns) == ["gpus", "speedup"] and TableModel(read).is_numeric("speedup")
    read = read_all(nested)
    assert list(TableModel(read).text["b"]) == ["[1, 2]", ""] and read.findings[0].kind == "nested"
    read = read_all(lines)
    assert len(read.frame) == 2 and read.findings[0].count == 1


def test_parquet_head_knows_the_row_count(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pd.DataFrame({"x": np.arange(5000), "y": np.arange(5000) * 2.0}).to_parquet(path)
    head = read_head(path)
    assert len(head.frame) == 500 and head.total_rows == 5000 and not head.complete
    model = TableModel(read_all(path))
    assert model.complete and model.stats("y").maximum == 9998.0


def test_stats_na_and_sort_puts_missing_last() -> None:
    frame = pd.DataFrame({"v": ["3 ms", "n/a", "", "1 ms", "2 ms"], "t": ["b", "", "a", "c", "a"]}, dtype=str)
    model = TableModel(TableRead(frame, True, 5))
    stats = model.stats("v")
    assert (stats.count, stats.missing, stats.minimum, stats.maximum, stats.unit) == (3, 2, 1.0, 3.0, "ms")
    assert math.isclose(stats.mean, 2.0) and stats.unique == 3
    assert list(model.rows(TableView("v", True))) == [0, 4, 3, 1, 2]
    assert list(model.rows(TableView("t"))) == [2, 4, 0, 3, 1]
    text_stats = model.stats("t")
    assert (text_stats.count, text_stats.missing, text_stats.unique, math.isnan(text_stats.mean)) == (4, 1, 3, True)


# ---- the filter parser --------------------------------------------------------------------

COLUMNS = ["gpus", "Mean Latency (ms)", "name"]


def test_filter_forms() -> None:
    assert parse_filter("  ", COLUMNS) == RowFilter()
    assert parse_filter("gemm kernel", COLUMNS).text == "gemm kernel"
    f = parse_filter('GPUS>=4 and "mean latency (ms)" < 1e3 and name ~ gemm', COLUMNS)
    assert [(c.column, c.op, c.number) for c in f.conditions][:2] == [("gpus", ">=", 4.0), ("Mean Latency (ms)", "<", 1000.0)]
    assert f.conditions[2].op == "~" and math.isnan(f.conditions[2].number)
    assert parse_filter("name = x", COLUMNS).conditions[0].op == "=="
    for bad, says in (("nope > 3", "no column named 'nope'"), ("gpus >", "no value"), ("> 3", "no column before"),
                      ('"gpus > 3', "quote"), ("gpus > 3 and gemm", "needs an operator")):
        with pytest.raises(FilterError, match=says):
            parse_filter(bad, COLUMNS)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_filter_parser_never_raises_anything_else(text: str) -> None:
    try:
        parse_filter(text, COLUMNS)
    except FilterError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30), st.floats(-1e6, 1e6, allow_nan=False),
       st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
def test_numeric_filter_keeps_exactly_the_rows_that_hold(values: list[float], bound: float, op: str) -> None:
    frame = pd.DataFrame({"v": [f"{v!r} ± 0.1" for v in values]}, dtype=str)
    model = TableModel(TableRead(frame, True, len(values)))
    kept = model.rows(TableView(filter=parse_filter(f"v {op} {bound!r}", ["v"])))
    holds = {"<": float.__lt__, "<=": float.__le__, ">": float.__gt__, ">=": float.__ge__, "==": float.__eq__, "!=": float.__ne__}[op]
    assert list(kept) == [i for i, v in enumerate(values) if holds(float(v), bound)]


# ---- log view -----------------------------------------------------------------------------

LOG_LINE = b"2024-01-01 12:00:00 INFO step 123 loss 0.123 lr 0.001 throughput 1234.5 samples/s\n"
SMALL_LOG = (b"starting analysis\n"
             b"WARNING: low memory on node \x1b[31mgpu01\x1b[0m\n"
             b"step 1 ok\n"
             b"ERROR: could not open results/\x1b]0;pwned\x07file.csv\n"
             b"Traceback (most recent call last):\n"
             b'  File "x.py", line 1, in <module>\n'
             b"step 2 ok\n"
             b"ANALYSIS COMPLETED SUCCESSFULLY\n")


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 50 MB log: an error every 1,000 lines, the success line last."""
    path = tmp_path_factory.mktemp("logs") / "train.log"
    block = LOG_LINE * 999 + b"2024-01-01 ERROR: CUDA error: out of memory\n"
    with path.open("wb") as handle:
        for _ in range(50 * 1024 * 1024 // len(block) + 1):
            handle.write(block)
        handle.write(b"ANALYSIS COMPLETED SUCCESSFULLY\n")
    return path


def test_log_document_reads_the_tail_only(big_log: Path) -> None:
    document = LogDocument(big_log)
    assert document.open_tail() == []
    assert document.bytes_read <= TAIL_BYTES + 8192 and document.size > 50 * 1024 * 1024
    assert not document.indexed and 500 < document.line_count < 1000
    last = document.line_count - 1
    assert document.line(last) == "ANALYSIS COMPLETED SUCCESSFULLY" and document.classes[last] == "success"
    error = document.next_of("error", last, backwards=True)
    assert error is not None and document.line(error) == "2024-01-01 ERROR: CUDA error: out of memory"
    assert document.bytes_read < TAIL_BYTES + 8192 + 200


async def test_big_log_opens_on_its_tail_before_it_is_indexed(big_log: Path) -> None:
    app = app_for(LogViewScreen(big_log))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, LogViewScreen)
        for _ in range(200):
            if screen.ready:
                break
            await pilot.pause(0.01)
        assert screen.ready
        # The first screen was drawn from the tail: the view never read the 50 MB.
        assert screen.document.bytes_read < 256 * 1024
        lines = screen.query_one(LogLines)
        assert lines.document is screen.document and lines.max_scroll_y > 0
        assert "ANALYSIS COMPLETED SUCCESSFULLY" in screen.document.line(screen.document.line_count - 1)


async def test_log_counts_highlights_and_jumps(tmp_path: Path) -> None:
    path = tmp_path / "analysis.log"
    path.write_bytes(SMALL_LOG)
    async with open_screen(LogViewScreen(path), LogViewScreen, (100, 30)) as (app, pilot, screen):
        status = text_of(screen, "#view-status")
        assert "ERROR 2" in status and "WARNING 1" in status and "SUCCESS 1" in status and "8 lines" in status
        document = screen.document
        assert document.indexed and document.line(1) == "WARNING: low memory on node gpu01"
        assert document.line(3) == "ERROR: could not open results/file.csv"  # escape sequences removed
        assert [document.classes.get(i) for i in range(8)] == [None, "warning", None, "error", "error", None, None, "success"]
        lines = screen.query_one(LogLines)
        await pilot.press("g", "e")  # e / E: the next / previous error or warning line
        assert lines.cursor == 1 and "at line 2" in text_of(screen, "#view-status")
        await pilot.press("e")
        assert lines.cursor == 3
        await pilot.press("e", "e")  # none after line 5: stays, says so
        assert lines.cursor == 4
        await pilot.press("E", "E")
        assert lines.cursor == 1
        rendered = "".join(seg.text for seg in lines.render_line(3))
        assert "ERROR: could not open results/file.csv" in rendered and "\x1b" not in rendered


@pytest.mark.parametrize(("content", "expected"), [(b"", "file is empty"), (b"\x00\x01binary\xff" * 50, "binary")], ids=["empty", "binary"])
async def test_bad_logs_give_a_message(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(content)
    async with open_screen(LogViewScreen(path, follow=False), LogViewScreen, (100, 30)) as (app, pilot, screen):
        assert not screen.ready
        findings = screen.query_one("#view-empty-findings").query_one("DataTable").findings  # type: ignore[attr-defined]
        assert expected in " ".join(f.message for f in findings)
        await pilot.press("n", "N", "e", "slash")


# ---- markdown, image, PDF and the mapping -------------------------------------------------

ANALYSIS = ROOT / "examples" / "analysis"
def png_claiming(side: int) -> bytes:
    """A valid PNG header claiming `side` × `side` pixels, with almost no pixel data."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 100)) + chunk(b"IEND", b"")




async def test_markdown_renders_and_links_are_not_followed(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_bytes((ANALYSIS / "summary.md").read_bytes() + b"\n## Esc \x1b]0;pwned\x07title\x1b[2J\n\n[elsewhere](/etc/passwd) [up](#expected-results-sanity-check)\n")
    async with open_screen(MarkdownViewScreen(path), MarkdownViewScreen, (100, 40)) as (app, pilot, screen):
        await pilot.pause()
        document = screen.query_one(Markdown)
        headings = [text for _, text, _ in document.table_of_contents]
        assert headings[0] == "specMoE expert prefetching: summary" and "Esc title" in headings
        assert "\x1b" not in screen.source
        tables = document.query("MarkdownTable")  # by type name: the class is not public
        assert len(tables) == 1
        document.post_message(Markdown.LinkClicked(document, "/etc/passwd"))
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, MarkdownViewScreen))
        assert isinstance(app.screen, MarkdownViewScreen)  # not followed
        assert "lines" in text_of(screen, "#view-status")


async def test_long_markdown_is_cut_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gpuscope.tui.screens.views.markdown.MAX_MARKDOWN", 256)  # ~20 list items to lay out, not ~370
    path = tmp_path / "long.md"
    path.write_text("".join(f"- item {i}\n" for i in range(2000)))
    async with open_screen(MarkdownViewScreen(path), MarkdownViewScreen, (100, 30)) as (app, pilot, screen):
        assert len(screen.source) <= 256 and "only the first" in text_of(screen, "#view-status")


async def test_image_is_drawn_in_half_blocks_off_the_ui_thread() -> None:
    async with open_screen(ImageViewScreen(ANALYSIS / "figures" / "speedup.png"), ImageViewScreen, (80, 30)) as (app, pilot, screen):
        for _ in range(3):  # decode, then draw: two workers one after the other
            await settled(app, pilot, ImageViewScreen)
        assert screen.image is not None and screen.drawn_size is not None
        picture = screen.query_one("#image-picture", Static).render()
        lines = str(picture).splitlines()
        assert lines and set("".join(lines)) == {"▀"} and len(lines[0]) <= 80
        assert "PNG · 320×200 px" in text_of(screen, "#view-status")
        drawn = screen.drawn_size
        await pilot.resize_terminal(60, 20)
        for _ in range(3):
            await settled(app, pilot, ImageViewScreen)
        assert screen.drawn_size != drawn and len(str(screen.query_one("#image-picture", Static).render()).splitlines()[0]) <= 60


def test_halfblocks_colours_top_and_bottom_pixels() -> None:
    image = PILImage.new("RGBA", (2, 2))
    image.putdata([(255, 0, 0, 255), (0, 0, 0, 0), (0, 0, 255, 255), (0, 255, 0, 255)])
    text = halfblocks(image, 2, 1, background=(9, 9, 9))
    assert text.plain == "▀▀"
    first, second = (span.style for span in text.spans)
    assert first.color.triplet == (255, 0, 0) and first.bgcolor.triplet == (0, 0, 255)
    assert second.color.triplet == (9, 9, 9)  # transparent: the background shows


@pytest.mark.parametrize(("content", "says"), [
    (b"", "not a picture"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "not a picture"),
    (png_claiming(1000), "cannot be decoded"),
    (png_claiming(8000), "over the 50,000,000-pixel limit"),
    (png_claiming(60_000), "decompression bomb"),
    (b"\x00garbage\xff" * 200, "not a picture"),
], ids=["empty", "bad-png", "truncated-png", "big-png", "bomb-png", "garbage"])
async def test_bad_images_give_a_message(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "figure.png"
    path.write_bytes(content)
    async with open_screen(ImageViewScreen(path), ImageViewScreen, (80, 24)) as (app, pilot, screen):
        assert screen.image is None
        assert says in text_of(screen, "#view-empty-message")


async def test_pdf_named_with_its_page_count() -> None:
    async with open_screen(PdfViewScreen(ANALYSIS / "figures" / "speedup.pdf"), PdfViewScreen, (80, 24)) as (app, pilot, screen):
        assert screen.pages == 2
        facts = text_of(screen, "#pdf-facts")
        assert facts.startswith("speedup.pdf") and "2 pages · PDF 1.4" in facts


async def test_pdf_shows_the_text_of_its_first_pages() -> None:
    async with open_screen(PdfViewScreen(ANALYSIS / "figures" / "speedup.pdf"), PdfViewScreen, (80, 24)) as (app, pilot, screen):
        assert "── page 1 ──\nSpeedup over on-demand, batch 1\nOracle        15.85x" in screen.text
        assert "Text of all 2 pages" in text_of(screen, "#pdf-notes") and "Oracle" in text_of(screen, "#pdf-text")


SPEC_PDF = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")


@pytest.mark.skipif(not SPEC_PDF.is_file(), reason="no longer PDF on this machine")
def test_long_pdf_text_is_bounded_to_its_first_pages() -> None:
    text, note = first_pages_text(SPEC_PDF)
    assert text.count("── page ") == 3 and "Shared MIME-info Database" in text and len(text) <= TEXT_CHARS
    assert note.startswith("Text of the first 3 of ")


def broken_pdfs(tmp_path: Path) -> dict[str, Path]:
    import pypdf

    source = (ANALYSIS / "figures" / "speedup.pdf").read_bytes()
    writer = pypdf.PdfWriter(clone_from=ANALYSIS / "figures" / "speedup.pdf")
    writer.encrypt("secret", algorithm="RC4-128")
    out = {"encrypted": tmp_path / "locked.pdf", "truncated": tmp_path / "cut.pdf", "garbage": tmp_path / "junk.pdf"}
    writer.write(out["encrypted"])
    out["truncated"].write_bytes(source[: len(source) // 3])
    out["garbage"].write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 8)
    return out


@pytest.mark.parametrize(("which", "says"), [("encrypted", "encrypted (it needs a password)"),
                                              ("truncated", "cannot be parsed as a PDF"), ("garbage", "cannot be parsed as a PDF")])
async def test_bad_pdfs_say_why_there_is_no_text(tmp_path: Path, which: str, says: str) -> None:
    pytest.importorskip("pypdf")
    path = broken_pdfs(tmp_path)[which]
    async with open_screen(PdfViewScreen(path), PdfViewScreen, (80, 24)) as (app, pilot, screen):
        assert screen.text == "" and says in text_of(screen, "#pdf-notes")


def test_without_pypdf_the_view_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pypdf", None)  # import pypdf raises ImportError
    assert first_pages_text(ANALYSIS / "figures" / "speedup.pdf") == ("", "Text not shown: pypdf is not installed (pip install pypdf).")


async def test_pdf_without_countable_pages_says_na(tmp_path: Path) -> None:
    path = tmp_path / "packed.pdf"
    path.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /ObjStm /N 3 >> stream\nxx\nendstream endobj\n%%EOF\n")
    async with open_screen(PdfViewScreen(path), PdfViewScreen, (80, 24)) as (app, pilot, screen):
        assert screen.pages is None and "pages: n/a" in text_of(screen, "#pdf-facts") and "compressed" in text_of(screen, "#pdf-notes")


def test_view_for_maps_the_registry_screens() -> None:
    assert isinstance(view_for("a.csv", "table", marks={(0, "x")}), TableViewScreen)
    assert isinstance(view_for("a.log", "log"), LogViewScreen) and isinstance(view_for("a.txt", "text"), TextViewScreen)
    assert isinstance(view_for("a.md", "markdown"), MarkdownViewScreen)
    assert isinstance(view_for("a.png", "image"), ImageViewScreen) and isinstance(view_for("a.pdf", "pdf"), PdfViewScreen)
    assert view_for("a.out", "magma") is None and view_for("x", None) is None


GENERIC_EXAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*")
                          if p.is_file() and registry.recognise(p).screen in ("table", "log", "text", "markdown", "image", "pdf"))


def test_examples_hold_every_generic_kind() -> None:
    screens = {registry.recognise(ROOT / name).screen for name in GENERIC_EXAMPLES}
    assert screens == {"table", "log", "text", "markdown", "image", "pdf"}


@pytest.mark.parametrize("name", GENERIC_EXAMPLES)
async def test_every_example_file_opens_in_its_view(name: str) -> None:
    path = ROOT / name
    recognition = registry.recognise(path)
    screen = view_for(path, recognition.screen, recognition)
    assert screen is not None, recognition
    app = app_for(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(3):
            await settled(app, pilot, type(screen))
        assert app.screen.query_one("#view-switch", ContentSwitcher).current not in ("view-loading", "view-empty")


async def test_plot_needs_a_numeric_column_and_marks_outside_the_table_are_not_counted() -> None:
    async with open_screen(TableViewScreen(ROOT / "examples" / "expected.toml", marks={(0, "no such column"), (99, "name")}), TableViewScreen, (100, 30)) as (app, pilot, screen):
        assert screen.model is not None and "name" in screen.model.columns
        assert "outside expected range" not in text_of(screen, "#view-status")
        while screen.cursor_column() != "name":
            await pilot.press("right")
        await pilot.press("p")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, PlotPickModal))
        assert isinstance(app.screen, PlotPickModal) and "name" not in app.screen.x_choices + app.screen.y_choices  # text is not plotted
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.query_one(XYPlot).display
