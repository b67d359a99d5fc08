"""Provides the file kind `json`: JSON (records, columns, JSON lines) no specialist reader
claims, known by its name or its first character, read as a table by parsers/tables."""

from __future__ import annotations

from pathlib import Path

from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import describe_lines, head_text, suffix

KIND = "json"
TITLE = "JSON"
VIEW = "table"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    found = suffix(name)
    if found in (".json", ".jsonl"):
        return f"`{found}` name: JSON"
    start = head_text(head).lstrip()[:1]
    return "starts with `[` or `{`: JSON" if start in ("[", "{") and found in ("", ".txt", ".out") else None


describe = describe_lines


def read(path: Path) -> FileRead:
    from gpuscope.parsers import tables
    return tables.read(path)
