"""Searching a log: plain text or `r/` regex with smart case, matching lines found by byte
offset chunk by chunk (the same lines as a line-by-line `re` loop, whatever the chunk size),
and in the view: `/`, highlighted matches, the count, `n` / `N`, `w` wrapping and the `›` mark
of a cut line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.tui.model import log_search
from gpuscope.tui.model.log_search import LogSearch
from gpuscope.tui.screens.views.log import LogViewScreen
from gpuscope.tui.widgets.log_lines import CUT, LogLines
from loading_helpers import open_screen, until

LOG = (b"epoch 1 loss 0.91 lr 0.1\n"
       b"WARNING: grad norm 1e6 [clipped]\n"
       b"epoch 2 Loss 0.52 lr 0.1\n"
       b"ERROR: CUDA error: out of memory\n"
       b"epoch 3 loss 0.33 lr 0.05 " + b"x" * 300 + b"\n"
       b"done\n")


def search_all(path: Path, text: str) -> LogSearch:
    search = LogSearch.compile(text)
    for found in search.scan(path, 0, path.stat().st_size):
        search.add(found)
    return search


def line_starts(data: bytes) -> list[int]:
    return [0] + [i + 1 for i, b in enumerate(data[:-1]) if b == 10]


def test_plain_text_is_literal_regex_after_r_slash_and_smart_case(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    path.write_bytes(LOG)
    starts = line_starts(LOG)
    assert list(search_all(path, "loss").lines) == [starts[0], starts[2], starts[4]]  # lower case: any case
    assert list(search_all(path, "Loss").lines) == [starts[2]]  # a capital: exact case
    assert list(search_all(path, "[clipped]").lines) == [starts[1]]  # brackets are text
    found = search_all(path, r"r/loss 0\.[35]")
    assert list(found.lines) == [starts[2], starts[4]] and found.match_count == 2
    with pytest.raises(ValueError, match="regular expression"):
        LogSearch.compile("r/(unclosed")
    with pytest.raises(ValueError):
        LogSearch.compile("r/")


def test_next_and_previous_matching_line(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    path.write_bytes(LOG)
    starts = line_starts(LOG)
    search = search_all(path, "epoch")
    assert search.next_line(-1) == starts[0] and search.next_line(starts[0]) == starts[2]
    assert search.next_line(starts[4]) is None
    assert search.next_line(starts[4], backwards=True) == starts[2] and search.next_line(starts[0], backwards=True) is None


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.text(alphabet="ab \tx", max_size=30), min_size=1, max_size=40),
       needle=st.text(alphabet="abx", min_size=1, max_size=3), chunk=st.integers(1, 64))
def test_chunked_search_finds_the_lines_a_line_loop_finds(tmp_path_factory: pytest.TempPathFactory, lines: list[str], needle: str, chunk: int) -> None:
    data = "\n".join(lines).encode()
    path = tmp_path_factory.mktemp("search") / "x.log"
    path.write_bytes(data)
    starts = line_starts(data) if data else []
    expected = [s for s, line in zip(starts, data.split(b"\n")) if needle.encode() in line]
    original = log_search.CHUNK
    log_search.CHUNK = chunk
    try:
        search = LogSearch.compile(needle)
        for found in search.scan(path, 0, len(data)):
            search.add(found)
    finally:
        log_search.CHUNK = original
    assert list(search.lines) == expected
    assert search.match_count == sum(len(re.findall(re.escape(needle), line)) for line in "\n".join(lines).split("\n"))
    assert np.all(np.diff(search.lines) > 0)


async def test_view_searches_highlights_counts_and_steps(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    path.write_bytes(LOG * 20)
    async with open_screen(LogViewScreen(path, follow=False), LogViewScreen, (80, 20)) as (app, pilot, screen):
        lines = screen.query_one(LogLines)
        await pilot.press("slash")
        await pilot.press(*"loss", "enter")
        status = screen.query_one("#view-status")
        assert await until(pilot, lambda: "60 matching lines" in str(status.render()))
        assert lines.cursor is not None and "loss" in screen.document.line(lines.cursor).lower()
        row = lines.cursor - int(lines.scroll_offset.y)
        segments = list(lines.render_line(row))
        match = lines.get_component_rich_style("log-lines--match")
        assert any(s.text.lower() == "loss" and s.style is not None and s.style.bgcolor == match.bgcolor for s in segments)
        first = lines.cursor
        await pilot.press("n")
        assert lines.cursor is not None and lines.cursor > first
        await pilot.press("N")
        assert lines.cursor == first
        await pilot.press("slash", *"r/(oops", "enter")  # a bad regex: said, the search stays
        assert screen.search is not None and screen.search.text == "loss"


async def test_cut_lines_are_marked_and_w_wraps_them(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    path.write_bytes(LOG)
    async with open_screen(LogViewScreen(path, follow=False), LogViewScreen, (80, 20)) as (app, pilot, screen):
        lines = screen.query_one(LogLines)
        row = 4 - int(lines.scroll_offset.y)
        cut = "".join(s.text for s in lines.render_line(row))
        assert cut.endswith(CUT) and len(cut) == lines.size.width
        await pilot.press("w")
        rows = ["".join(s.text for s in lines.render_line(y)) for y in range(lines.size.height)]
        assert all(CUT not in r for r in rows)
        assert sum("x" * 40 in r for r in rows) >= 4 and "".join(rows).count("x") == 300  # the whole line, on several rows
        assert any("epoch 3 loss" in r for r in rows) and "done" in "".join(rows)
        assert "wrapped" in str(screen.query_one("#view-status").render())
