"""Provides the one low-level procfs reader the host and process collectors share.

`read_bytes` is a bare `os.open` / `os.read` / `os.close`: for /proc files that is several
times cheaper than `open().read()` (no buffered file object, no fstat, no decoding), and the
process table reads two or three files per process per refresh. It raises `OSError` and lets
the caller decide what a vanished (`FileNotFoundError`, `ProcessLookupError`) or hidden
(`PermissionError`) file means. Collectors look it up as `procfs.read_bytes` at call time, so
tests can swap it (monkeypatch) to simulate a process that denies access or vanishes mid-scan.
Paths are always built from a root folder, so tests point collectors at a fake /proc tree.
"""

from __future__ import annotations

import os

_CHUNK = 4096
"""One page: every per-process file the table reads (stat, most cmdlines) fits in one read."""


def proc_dir(root: str | os.PathLike[str]) -> str:
    """Return the proc folder under `root` ("/" gives "/proc") as a plain string for fast joins."""
    return os.path.join(os.fspath(root), "proc")


def read_bytes(path: str, limit: int = 1 << 20) -> bytes:
    """Return the contents of `path`, at most `limit` bytes.

    A read shorter than asked means end of file (true for regular files, and for procfs,
    whose seq_file and cmdline readers fill the buffer they are given), so small files cost
    exactly one `read` call; larger ones (/proc/stat on a many-core node) are read in pages.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        want = min(limit, _CHUNK)
        data = os.read(fd, want)
        if len(data) < want or len(data) >= limit:
            return data
        parts = [data]
        total = len(data)
        while total < limit:
            want = min(_CHUNK * 4, limit - total)
            chunk = os.read(fd, want)
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
            if len(chunk) < want:
                break
        return b"".join(parts)
    finally:
        os.close(fd)


def read_text(path: str) -> str:
    """Return `path` decoded as UTF-8 (bad bytes replaced), or "" when it cannot be read.

    For host-wide files (stat, meminfo, loadavg, uptime) where "missing" only means "report
    what the other files give": never raises.
    """
    try:
        return read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return ""
