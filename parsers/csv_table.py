"""Provides the file kind `csv`: a delimited table (CSV, TSV) no specialist reader claims,
known by its name, read by parsers/tables."""

from __future__ import annotations

from pathlib import Path

from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import describe_rows, suffix

KIND = "csv"
TITLE = "Delimited table"
VIEW = "table"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    found = suffix(name)
    return f"`{found}` name: delimited table" if found in (".csv", ".tsv") else None


describe = describe_rows


def read(path: Path) -> FileRead:
    from gpuscope.parsers import tables
    return tables.read(path)
