"""Provides the file kind `image`: PNG, JPEG and GIF figures, known by their signatures, named
and sized from their header bytes (parsers/media), never decoded here."""

from __future__ import annotations

from pathlib import Path

from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import head_bytes

KIND = "image"
TITLE = "Image"
VIEW = "image"
BOUNDED = True
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
GIF_MAGICS = (b"GIF87a", b"GIF89a")


def match(name: str, head: Head) -> str | None:
    data = head_bytes(head)
    if data.startswith(PNG_MAGIC):
        return "PNG signature"
    if data.startswith(JPEG_MAGIC):
        return "JPEG SOI marker"
    if data[:6] in GIF_MAGICS:
        return "GIF signature"
    return None


def describe(head: Head, size: int) -> str:
    from gpuscope.parsers import media
    found = media.image_size(head_bytes(head))
    return f"{found[0]} {found[1]}x{found[2]}" if found else "image"


def read(path: Path) -> FileRead:
    from gpuscope.parsers import media
    return media.read_image(path)
