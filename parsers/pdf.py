"""Provides the file kind `pdf`: a PDF document, known by its `%PDF-` header; its pages are
counted in a bounded read (parsers/media)."""

from __future__ import annotations

from pathlib import Path

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import head_bytes

KIND = "pdf"
TITLE = "PDF document"
VIEW = "pdf"
BOUNDED = True
MAGIC = b"%PDF-"


def match(name: str, head: Head) -> str | None:
    data = head_bytes(head)
    return f"`{data[:8].decode('ascii', 'replace').strip()}` header: PDF" if data.startswith(MAGIC) else None


def describe(head: Head, size: int) -> str:
    """`PDF 1.4`, with the page count when the whole file is in the head."""
    data = head_bytes(head)
    version = data[5:8].decode("ascii", "replace") if data[5:6].isdigit() else ""
    said = clean(f"PDF {version}".strip())
    if len(data) >= size:
        from gpuscope.parsers import media
        pages = media.pdf_pages(data)
        if pages:
            said += f" · {pages} page{'s' if pages != 1 else ''}"
    return said


def read(path: Path) -> FileRead:
    from gpuscope.parsers import media
    return media.read_pdf(path)
