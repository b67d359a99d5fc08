"""The one exporter: text looks like the screen, markdown escapes, CSV keeps raw values."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

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
    assert rows[1] == ["[bold]gpu0[/] | x", "1234.5678", "3"]
    assert rows[2][1:] == ["", ""]


def test_json_has_nulls_not_nan() -> None:
    records = json.loads(export.render([TABLE], "json"))
    assert records[1]["value"] is None and records[0]["n"] == 3
    several = json.loads(export.render([TABLE, TABLE], "json"))
    assert list(several) == ["Demo [bold]title[/]"]


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
