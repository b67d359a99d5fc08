"""Provides `read_text()`: load a result file as text, or say in one finding why not.

Every parser starts here so binary, empty, huge, compressed, unreadable and non-UTF-8 files
get the same clear messages everywhere. Gzip files are opened transparently because result
folders are often compressed after a study.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from gpuscope.metrics.findings import Finding

MAX_BYTES = int(os.environ.get("GPUSCOPE_MAX_FILE_MB", "1024")) * 1024 * 1024
"""Files larger than this are refused: text results of that size are a mistake, not a run."""
SNIFF_BYTES = 64 * 1024


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"  # pragma: no cover


def looks_binary(head: bytes) -> bool:
    """NUL bytes do not occur in text results (the same rule git and grep use)."""
    return b"\x00" in head


def read_bytes(path: Path, label: str, max_bytes: int = MAX_BYTES) -> tuple[bytes | None, list[Finding]]:
    """Raw (decompressed) bytes, or None and one error finding."""
    try:
        size = os.stat(path).st_size
        if size > max_bytes:
            return None, [Finding("error", "huge", f"file is {_human(size)}, over the {_human(max_bytes)} limit for a text result (GPUSCOPE_MAX_FILE_MB raises it)", label)]
        with open(path, "rb") as handle:
            # Ask for the size stat gave: read(max_bytes + 1) would make Python allocate
            # (and the kernel map) a buffer of max_bytes for every file. A file that grew
            # since is read on to the limit, as before.
            data = handle.read(size + 1)
            if len(data) > size:
                data += handle.read(max_bytes + 1 - len(data))
    except IsADirectoryError:
        return None, [Finding("error", "unreadable", "is a folder, not a file", label)]
    except OSError as exc:
        return None, [Finding("error", "unreadable", f"cannot read: {exc.strerror or exc}", label)]
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            return None, [Finding("error", "corrupt", f"gzip file is corrupt or truncated ({exc})", label)]
        if len(data) > max_bytes:
            return None, [Finding("error", "huge", f"decompresses to {_human(len(data))}, over the {_human(max_bytes)} limit", label)]
    if not data or data.isspace():  # `not data.strip()` without copying the file
        return None, [Finding("error", "empty", "file is empty", label)]
    if data.find(b"\x00", 0, SNIFF_BYTES) >= 0:  # looks_binary(data[:SNIFF_BYTES]), no copy
        return None, [Finding("error", "binary", "binary file, not a text result", label)]
    return data, []


def decode(data: bytes, label: str) -> tuple[str, list[Finding]]:
    """UTF-8 text; other encodings are decoded with replacement and reported once."""
    if data.isascii():  # the common case: no UTF-8 validation needed (ASCII is UTF-8)
        return data.decode("ascii"), []
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        line = data.count(b"\n", 0, exc.start) + 1
        return text, [Finding("warning", "encoding", f"not valid UTF-8 (first bad byte at line {line}); undecodable bytes shown as \ufffd", label, line)]


def read_text(path: Path, label: str | None = None, max_bytes: int = MAX_BYTES) -> tuple[str | None, list[Finding]]:
    """Text of `path` (None when unusable) and the findings that explain any problem."""
    label = label if label is not None else str(path)
    data, findings = read_bytes(path, label, max_bytes)
    if data is None:
        return None, findings
    text, more = decode(data, label)
    return text, findings + more
