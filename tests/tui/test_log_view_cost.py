"""What keeps the log view cheap, checked as behaviour (no timings): a screen of lines is one
read of the file and decodes as line-by-line reading does; one read of the file gives the
offsets and the counts the plain-log reader gives; the classes of followed lines are those of
`classify`; a look that finds lines is one frame without a layout of the screen; a row is cut
to the view as Textual's own cropping cuts it (wide characters too)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.segment import Segment
from textual.strip import Strip

from gpuscope.parsers import logs as plain_log
from gpuscope.tui.model.log import MAX_LINE_BYTES, LogDocument, scan
from gpuscope.tui.screens.views.log import LogViewScreen
from gpuscope.tui.widgets.log_lines import CUT, LogLines
from loading_helpers import heavy_modules_loaded, open_screen, until

ROOT = Path(__file__).resolve().parents[2]
SLURM_OUT = ROOT / "examples" / "slurm" / "slurm-4123456.out"
WORDS = ["step 12 loss 0.5", "ERROR: CUDA error", "WARNING: low memory", "COMPLETED SUCCESSFULLY", "WARNINGS are fine",
         "errors: 0", "Traceback (most recent call last):", "日本語の行", "\x1b[31mred\x1b[0m", "a\tb", ""]


def test_a_screen_of_lines_is_one_read_and_reads_as_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "odd.log"
    path.write_bytes(b"plain\r\n" + b"\xff\xfe not utf-8\n" + b"\x1b]0;title\x07escaped\n" + b"x" * (MAX_LINE_BYTES + 10) + b"\n" + b"last, no newline")
    alone, together = LogDocument(path), LogDocument(path)
    assert alone.open_tail() == [] and together.open_tail() == []
    before = together.bytes_read
    together.read_lines(0, together.line_count)
    read = together.bytes_read - before
    assert read == path.stat().st_size  # the lines, once
    assert [together.line(i) for i in range(together.line_count)] == [alone.line(i) for i in range(alone.line_count)]
    assert together.bytes_read - before == read  # every line came from that one read
    assert together.line(3).endswith(" …") and "\x1b" not in together.line(2)


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(st.sampled_from(WORDS), min_size=1, max_size=60), limit=st.integers(1, 4000))
def test_one_read_gives_the_readers_offsets_and_counts(tmp_path_factory: pytest.TempPathFactory, lines: list[str], limit: int) -> None:
    path = tmp_path_factory.mktemp("scan") / "x.log"
    path.write_bytes("\n".join(lines).encode())
    found = scan(path, limit)
    got = plain_log.read(path, limit=limit)
    assert found is not None
    assert list(found.offsets) == list(np.concatenate(list(plain_log.line_index(path, limit=limit)) or [np.zeros(0, np.int64)]))
    assert found.counts == {"error": got.meta["errors"], "warning": got.meta["warnings"], "success": got.meta["successes"]}
    assert {name: list(rows + 1) for name, rows in found.lines_of.items()} == {name: got.meta[f"{name}_lines"] for name in plain_log.CLASSES}


def test_one_read_of_a_real_log_and_a_file_gone(tmp_path: Path) -> None:
    found = scan(SLURM_OUT, 1 << 30)
    got = plain_log.read(SLURM_OUT)
    assert found is not None and len(found.offsets) == got.meta["lines"] and found.end == SLURM_OUT.stat().st_size
    assert found.counts["error"] == got.meta["errors"] and found.counts["warning"] == got.meta["warnings"]
    assert scan(tmp_path / "gone.log", 100) is None


@settings(max_examples=40, deadline=None)
@given(first=st.lists(st.sampled_from(WORDS), min_size=1, max_size=20).filter(any),  # a file of blank lines is shown as empty
       batches=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=20), min_size=1, max_size=4))
def test_followed_lines_are_classed_as_classify_does(tmp_path_factory: pytest.TempPathFactory, first: list[str], batches: list[list[str]]) -> None:
    path = tmp_path_factory.mktemp("grow") / "job.out"
    path.write_bytes("".join(line + "\n" for line in first).encode())
    document = LogDocument(path)
    document.open_tail()
    for batch in batches:
        with path.open("ab") as handle:
            handle.write("".join(line + "\n" for line in batch).encode())
        document.extend(document.read_growth())
    every = first + [line for batch in batches for line in batch]
    assert document.line_count == len(every)
    assert document.classes == {i: kind for i, line in enumerate(every) if (kind := plain_log.classify(line)) is not None}


async def test_a_look_that_finds_lines_is_one_frame_without_a_layout(tmp_path: Path) -> None:
    path = tmp_path / "slurm-9.out"
    line = b"2024-01-01 12:00:00 INFO step 123 loss 0.123 lr 0.001\n"  # one width: the scroll range stays as wide
    path.write_bytes(line * 300)
    async with open_screen(LogViewScreen(path, follow=True), LogViewScreen, (100, 24)) as (app, pilot, screen):
        lines = screen.query_one(LogLines)
        assert await until(pilot, lambda: screen.counts is not None and lines.at_end)
        await pilot.pause(0.2)
        frames, layouts = [], []
        draw, reflow = screen._compositor_refresh, screen._compositor.reflow
        screen._compositor_refresh = lambda: (frames.append(1), draw())[1]  # type: ignore[method-assign]
        screen._compositor.reflow = lambda *a: (layouts.append(1), reflow(*a))[1]  # type: ignore[method-assign]
        with path.open("ab") as handle:
            handle.write(line * 500)
        assert await until(pilot, lambda: screen.document.line_count == 800)
        await pilot.pause(0.1)
        assert frames == [1] and layouts == []
        assert lines.at_end and "800" in str(screen.query_one("#view-status").render())


async def test_a_log_over_the_size_limit_keeps_its_tail_and_counts_its_first_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuscope.tui.screens.views import log as log_view

    monkeypatch.setattr(log_view, "MAX_BYTES", 4096)
    path = tmp_path / "huge.log"
    block = b"ERROR: first part\n" + b"step 1 loss 0.5\n" * 300
    path.write_bytes(block + b"WARNING: later\n" * 10000)
    async with open_screen(LogViewScreen(path, follow=False), LogViewScreen, (100, 24)) as (app, pilot, screen):
        assert await until(pilot, lambda: screen.counts is not None)
        expected = plain_log.read(path, limit=4096).meta
        assert screen.counts == {"error": expected["errors"], "warning": expected["warnings"], "success": expected["successes"]}
        assert not screen.document.indexed and screen.document.line(screen.document.line_count - 1) == "WARNING: later"
        status = str(screen.query_one("#view-status").render())
        assert "in the first 4.0 KB" in status and "the tail only" in status
        assert "counted in the first 4.0 KB only" in str(screen.query_one("#log-notes").render())


def reference_row(lines: LogLines, y: int) -> str:
    """The row as Textual's Strip.crop cuts the line (how the widget drew it before)."""
    document, width = lines.document, lines.scrollable_content_region.width
    assert document is not None
    index = int(lines.scroll_offset.y) + y
    gutter = lines._gutter(index)
    room = width - lines._gutter_width()
    segments, style, length = lines._line_segments(index, document)
    line, x = Strip(segments, length), int(lines.scroll_offset.x)
    shown = list(line.crop(x, x + room - 1)) + [Segment(CUT)] if length > x + room and room > 1 else list(line.crop(x, x + room))
    return Strip(gutter + shown).extend_cell_length(width).crop(0, width).text


async def test_rows_are_cut_to_the_view_as_textual_crops_them(tmp_path: Path) -> None:
    path = tmp_path / "wide.log"
    path.write_bytes("".join(f"{i} 日本語のログ行 {'ab' * (i % 50)}{'c' * 30} 終わり\n" for i in range(60)).encode())
    async with open_screen(LogViewScreen(path, follow=False), LogViewScreen, (70, 20)) as (app, pilot, screen):
        lines = screen.query_one(LogLines)
        await pilot.press("g")
        width, cut = lines.scrollable_content_region.width, {}
        for x in (0, 1, 2, 7, 40, 200):
            lines.scroll_to(x=x, animate=False, immediate=True)
            await pilot.pause()
            rows = [lines.render_line(y) for y in range(lines.scrollable_content_region.height)]
            assert all(row.cell_length == width for row in rows)
            assert [row.text for row in rows] == [reference_row(lines, y) for y in range(len(rows))]
            cut[x] = any(row.text.endswith(CUT) for row in rows)
        assert cut[0] and not cut[200]  # no line is 200 cells wide


def test_the_log_view_does_not_load_pandas(tmp_path: Path) -> None:
    path = tmp_path / "job.out"
    path.write_bytes(b"step 1\nERROR: x\n" * 50)
    assert heavy_modules_loaded("from gpuscope.tui.screens.views.log import LogViewScreen",
                                f"LogViewScreen({str(path)!r}, follow=True)", "screen.counts is not None", size=(80, 24)) == []
