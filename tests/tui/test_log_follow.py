"""Following a growing log: the document reads only the new bytes and appends their lines
(a line written in two pieces included), says when the file shrank or was replaced, and the
log view follows, pauses when scrolled up, goes on at the end and reopens a truncated file;
`gpuscope browse FILE` opens the file straight in its view."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from gpuscope.parsers import logs as plain_log
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model.log import TAIL_BYTES, LogDocument
from gpuscope.tui.screens.browse.screen import BrowseScreen
from gpuscope.tui.screens.views.log import LogViewScreen
from gpuscope.tui.widgets.log_lines import LogLines
from loading_helpers import open_screen, until

LINE = b"2024-01-01 12:00:00 INFO step 123 loss 0.123 lr 0.001\n"


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def lines_of(document: LogDocument) -> list[str]:
    return [document.line(i) for i in range(document.line_count)]


def test_growth_reads_only_new_bytes_and_completes_a_cut_line(tmp_path: Path) -> None:
    path = tmp_path / "job.out"
    path.write_bytes(b"start\nstep 1\n")
    document = LogDocument(path)
    assert document.open_tail() == [] and lines_of(document) == ["start", "step 1"]
    assert document.read_growth().change == "same"
    append(path, b"step 2\nERROR: CUDA err")  # the last line is still being written
    before = document.bytes_read
    growth = document.read_growth()
    assert growth.change == "grown" and document.bytes_read - before == 1 + len(b"step 2\nERROR: CUDA err")
    document.extend(growth)
    assert lines_of(document) == ["start", "step 1", "step 2", "ERROR: CUDA err"]
    assert document.classes.get(3) == "error"
    append(path, b"or: out of memory\ndone\n")
    document.extend(document.read_growth())
    assert lines_of(document) == ["start", "step 1", "step 2", "ERROR: CUDA error: out of memory", "done"]
    assert document.end == path.stat().st_size


def test_truncated_replaced_and_gone_are_told_apart(tmp_path: Path) -> None:
    path = tmp_path / "job.out"
    path.write_bytes(LINE * 10)
    document = LogDocument(path)
    document.open_tail()
    path.write_bytes(LINE)  # `>` redirect: same inode, fewer bytes
    assert document.read_growth().change == "truncated"
    document = LogDocument(path)
    document.open_tail()
    (tmp_path / "new.out").write_bytes(LINE * 20)
    os.replace(tmp_path / "new.out", path)  # rotated: another file at the name
    assert document.read_growth().change == "replaced"
    path.unlink()
    assert document.read_growth().change == "gone"


def test_lines_followed_before_the_index_arrives_stay(tmp_path: Path) -> None:
    """The index covers the file as it was opened; lines followed meanwhile are kept after it."""
    path = tmp_path / "train.log"
    path.write_bytes(LINE * 3000)  # over the tail: line numbers unknown until indexed
    document = LogDocument(path)
    document.open_tail()
    size = document.size
    assert not document.indexed and size > TAIL_BYTES
    append(path, b"WARNING: late line\nlast line\n")
    document.extend(document.read_growth())
    document.set_offsets(np.concatenate(list(plain_log.line_index(path, limit=size))), size)
    assert document.indexed and document.line_count == 3002
    assert lines_of(document)[-3:] == [LINE.decode().strip(), "WARNING: late line", "last line"]
    assert document.classes.get(3000) == "warning"


async def test_view_follows_pauses_when_scrolled_up_and_goes_on_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "slurm-1.out"
    path.write_bytes(LINE * 100)
    async with open_screen(LogViewScreen(path, follow=True), LogViewScreen, (100, 20)) as (app, pilot, screen):
        lines = screen.query_one(LogLines)
        status = screen.query_one("#view-status")
        assert lines.at_end and lines.scroll_offset.y > 0  # opened on its last line
        assert "following" in str(status.render())
        append(path, b"epoch 2 begins\n")
        assert await until(pilot, lambda: screen.document.line_count == 101)
        assert lines.at_end and "epoch 2 begins" in "".join(s.text for s in lines.render_line(lines.size.height - 1))
        await pilot.press("g")  # scrolled up: paused
        assert "paused" in str(status.render())
        append(path, b"epoch 3 begins\n")
        assert await until(pilot, lambda: screen.document.line_count == 102)
        assert lines.scroll_offset.y == 0  # the view stayed where the reader is
        await pilot.press("G")
        assert lines.at_end and "following" in str(status.render())
        await pilot.press("F")  # off: no more looks at the file, and the status says so
        assert not screen.follow and "not following" in str(status.render())
        await pilot.press("F", "g", "F")  # on; scrolled up (paused), F goes on following as G does
        assert screen.follow and lines.at_end and "● following" in str(status.render())


async def test_a_truncated_file_is_said_and_reopened(tmp_path: Path) -> None:
    path = tmp_path / "job.err"
    path.write_bytes(LINE * 50)
    async with open_screen(LogViewScreen(path, follow=True), LogViewScreen, (100, 20)) as (app, pilot, screen):
        path.write_bytes(b"fresh start after > redirect\n")
        assert await until(pilot, lambda: screen.document.line_count == 1 and screen.ready and screen.document.line(0).startswith("fresh"))
        assert await until(pilot, lambda: "truncated" in str(screen.query_one("#view-status").render()))
        assert "reopened" in str(screen.query_one("#view-status").render())


async def test_an_empty_followed_file_waits_for_its_first_lines(tmp_path: Path) -> None:
    path = tmp_path / "slurm-2.err"
    path.write_bytes(b"")
    async with open_screen(LogViewScreen(path), LogViewScreen, (100, 20)) as (app, pilot, screen):
        assert screen.follow and screen.ready  # just written: taken for growing
        assert "empty so far" in str(screen.query_one("#view-status").render())
        append(path, b"Traceback (most recent call last):\n")
        assert await until(pilot, lambda: screen.document.line_count == 1)
        assert screen.document.classes.get(0) == "error"


async def test_browse_file_opens_it_in_its_view(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    path.write_bytes(LINE * 20 + b"ERROR: rank 3 lost\n")
    app = GpuscopeApp(lambda: BrowseScreen(tmp_path, select=path), mode="browse")
    async with app.run_test(size=(100, 30)) as pilot:
        assert await until(pilot, lambda: isinstance(app.screen, LogViewScreen) and app.screen.ready)
        await pilot.press("escape")  # back to the browser, on the file's folder
        assert await until(pilot, lambda: isinstance(app.screen, BrowseScreen))
