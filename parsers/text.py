"""Provides the file kind `text`: any file without NUL bytes that no other kind claims, shown
as a plain log (parsers/logs: the same counts, index and tail)."""

from __future__ import annotations

from pathlib import Path

from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import head_bytes

KIND = "text"
TITLE = "Text"
VIEW = "text"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    return None if b"\x00" in head_bytes(head) else "text (no known format)"


def describe(head: Head, size: int) -> str:
    from gpuscope.parsers import logs
    return logs.describe(head, size)


def read(path: Path) -> FileRead:
    from gpuscope.parsers import logs
    return logs.read(path)
