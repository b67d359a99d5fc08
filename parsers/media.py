"""Provides what gpuscope says about figures: an image's format and size, a PDF's page count.

A result folder's figures are named, sized and counted, not decoded: the width and height
come from the header bytes (PNG IHDR, GIF logical screen, JPEG start-of-frame), and a PDF's
pages are its `/Type /Page` objects, counted in a bounded read. A PDF whose page objects are
compressed (object streams) has no countable pages: its count is n/a, never 0. The picture
itself is decoded by the image view, off the UI thread.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead
from gpuscope.parsers.files import MAX_BYTES, display_name, open_regular

JPEG_SCAN_BYTES = 1 << 20
"""A JPEG's size is in its start-of-frame segment, after EXIF and colour profiles: this much is
searched for it."""
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_JPEG_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2:at + 4])
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        if length < 2:
            return None
        at += 2 + length
    return None


def image_size(head: bytes) -> tuple[str, int, int] | None:
    """(format, width, height) from an image's first bytes, or None when they do not say."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24 and head[12:16] == b"IHDR":
        width, height = struct.unpack(">II", head[16:24])
        return "PNG", width, height
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return "GIF", width, height
    if head.startswith(b"\xff\xd8\xff"):
        size = _jpeg_size(head)
        return ("JPEG", *size) if size else None
    return None


def _read_prefix(path: Path, label: str, limit: int) -> tuple[bytes | None, int, list[Finding]]:
    handle, size, findings = open_regular(path, label)
    if handle is None:
        return None, 0, findings
    try:
        with handle:
            return handle.read(limit), size, []
    except OSError as exc:
        return None, 0, [Finding("error", "unreadable", f"cannot read: {exc.strerror or exc}", label)]


def read_image(path: str | Path) -> FileRead:
    label = display_name(path)
    data, size, findings = _read_prefix(Path(path), label, JPEG_SCAN_BYTES)
    if data is None:
        return FileRead(None, findings, {})
    found = image_size(data)
    if found is None:
        return FileRead(None, [Finding("warning", "no-size", "image size not found in its header (truncated or unusual file): n/a", label)],
                        {"format": "image", "bytes": size, "width": None, "height": None})
    fmt, width, height = found
    return FileRead(None, [], {"format": fmt, "bytes": size, "width": width, "height": height})


def pdf_pages(data: bytes) -> int | None:
    """How many `/Type /Page` objects the bytes hold; None when there are none to count."""
    count = len(_PDF_PAGE.findall(data))
    return count or None


def read_pdf(path: str | Path) -> FileRead:
    label = display_name(path)
    data, size, findings = _read_prefix(Path(path), label, MAX_BYTES)
    if data is None:
        return FileRead(None, findings, {})
    pages = pdf_pages(data)
    version = data[5:8].decode("ascii", "replace") if data.startswith(b"%PDF-") else None
    more: list[Finding] = []
    if pages is None:
        why = "its page objects are compressed" if b"/ObjStm" in data else "no page objects found"
        more.append(Finding("info", "no-pages", f"page count n/a: {why}", label))
    if size > len(data):
        more.append(Finding("info", "partial", f"pages counted in the first {len(data) // (1 << 20)} MB only", label))
    return FileRead(None, more, {"format": "PDF", "version": version, "bytes": size, "pages": pages})
