"""Provides the file kind `parquet`: a Parquet file that is no profiler's export, read as a table
(parsers/tables) within the decoded-data budget."""

from __future__ import annotations

from pathlib import Path

from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import head_bytes

KIND = "parquet"
TITLE = "Parquet table"
VIEW = "table"
BOUNDED = True
MAGIC = b"PAR1"


def match(name: str, head: Head) -> str | None:
    return "PAR1 magic: Parquet" if head_bytes(head).startswith(MAGIC) else None


def describe(head: Head, size: int) -> str:
    return "Parquet"


def read(path: Path) -> FileRead:
    from gpuscope.parsers import tables
    return tables.read(path)
