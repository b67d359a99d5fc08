"""The one exporter: text looks like the screen, markdown escapes, CSV keeps raw values."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpuscope.metrics import export
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import Column, ResultTable

TABLE = ResultTable(
    "Demo [bold]title[/]",
    (Column("name"), Column("value", "Value", ",.2f"), Column("n")),
    (("[bold]gpu0[/] | x", 1234.5678, 3), ("\x1b[31mred\x1b[0m", math.nan, None)),
    ("a note",),
)


def test_text_is_plain_and_keeps_markup_literally() -> None:
    text = export.render([TABLE], "text", width=80)
    assert "[bold]gpu0[/] | x" in text and "Demo [bold]title[/]" in text
    assert "1,234.57" in text and "\x1b" not in text and "a note" in text
    assert all(line == line.rstrip() for line in text.splitlines())


def test_text_never_truncates_wide_cells() -> None:
    wide = ResultTable("t", (Column("path"),), (("x" * 200,),))
    assert "x" * 200 in export.render([wide], "text", width=40)


def test_markdown_escapes_pipes_and_aligns_numbers() -> None:
    text = export.render([TABLE], "markdown")
    assert "\\|" in text and "| :--- | ---: | ---: |" in text


def test_csv_keeps_raw_values_and_blanks_missing() -> None:
    rows = list(csv.reader(io.StringIO(export.render([TABLE], "csv"))))
    assert rows[0] == ["name", "value", "n"]
    assert rows[1] == ["[bold]gpu0[/] | x", "1234.568", "3"]  # floats to export.SIGNIFICANT (7) digits
    assert rows[2][1:] == ["", ""]


def test_json_has_nulls_not_nan() -> None:
    records = json.loads(export.render([TABLE], "json"))
    assert records[1]["value"] is None and records[0]["n"] == 3
    several = json.loads(export.render([TABLE, TABLE], "json"))
    assert list(several) == ["demo_bold_title", "demo_bold_title_2"]  # snake_case keys; a repeated title kept


def test_write_is_atomic_and_picks_format_from_extension(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    export.write(target, export.format_for_path(target), [TABLE])
    assert target.read_text().startswith("### Demo")
    assert [p.name for p in tmp_path.iterdir()] == ["out.md"]
    with pytest.raises(OSError):
        export.write(tmp_path / "missing" / "x.csv", "csv", [TABLE])


def test_clean_strips_escapes_and_controls() -> None:
    assert clean("\x1b[2J\x1b]0;title\x07name\r\n") == "name "
    assert clean("plain [b]text[/b]") == "plain [b]text[/b]"


CELL = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Mn", "Me", "Cf")), max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(CELL, st.floats(-1e9, 1e9) | st.none(), st.integers(-10**6, 10**6)), max_size=8), CELL)
@example([], " ")  # a title of blanks: rich prints it as a blank line
def test_fast_text_equals_rich(rows: list[tuple[str, float | None, int]], title: str) -> None:
    """The hand-made table text is what rich prints for the same model, byte for byte."""
    table = ResultTable(title, (Column("name"), Column("value", "Value", ",.2f"), Column("n")), tuple(rows), ("note",))
    assert export.to_text([table, table]) == export.to_text_with_rich([table, table], width=10_000)


def test_fast_text_equals_rich_on_the_real_summary() -> None:
    from gpuscope.metrics.magma import stats as magma_stats
    from gpuscope.parsers.magma import read as magma
    from paths import EXAMPLES

    result = magma.read_tree([EXAMPLES])
    summary = magma_stats.summarize(result.rows)
    tables = [magma_stats.summary_table(summary), magma_stats.findings_table(result.findings), magma_stats.runs_table(result.runs)]
    # Unlimited text keeps each note on one line, as rich does on a console wide enough.
    assert export.to_text(tables) == export.to_text_with_rich(tables, width=10_000)


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_titles_headers_notes_and_cells_from_outside_carry_no_escapes(fmt: str) -> None:
    # Titles and notes name files (kernels' "Same in every run: run=\x1b]0;x\x07"), headers can
    # come from a CSV's header line: every format keeps the text and drops the sequences.
    hostile = "a\x1b]0;owned\x07b\x1b[2J\x9b31mc"
    table = ResultTable(f"Runs of {hostile}", (Column(hostile), Column("n")), ((hostile, 1),), (f"note {hostile}",))
    out = export.render([table, table], fmt) if fmt != "csv" else export.render([table], fmt)
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    # JSON keeps the value as read, its escapes written as \u001b (safe to print, faithful).
    assert ("abc" in out) if fmt != "json" else ("\\u001b" in out)


def test_write_text_into_a_fifo_writes_in_place(tmp_path: Path) -> None:
    # `-o /dev/null` renamed a plain file over the device (as root, the system's /dev/null);
    # a FIFO stands in for any target that is not a regular file.
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    export.write_text(fifo, "a,b\n1,2\n")
    reader.join(10)
    assert got == ["a,b\n1,2\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_write_text_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    export.write_text(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
