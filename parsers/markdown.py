"""Provides the file kind `markdown`: a `.md` / `.markdown` file, read as text for the Markdown
view (its text and line count in `meta`)."""

from __future__ import annotations

from pathlib import Path

from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import describe_lines, read_text, suffix

KIND = "markdown"
TITLE = "Markdown"
VIEW = "markdown"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    found = suffix(name)
    return f"`{found}` name: Markdown" if found in (".md", ".markdown") else None


describe = describe_lines


def read(path: Path) -> FileRead:
    text, findings = read_text(path)
    return FileRead(None, findings, {"text": text, "lines": text.count("\n") + 1} if text is not None else {})
