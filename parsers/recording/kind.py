"""Provides the recording kind as the registry sees it: a `gpuscope record` file recognised by
its first bytes (an Arrow IPC stream that names gpuscope's schema version), and
`read(path) -> FileRead` with the samples' host and GPU history."""

from __future__ import annotations

from pathlib import Path

from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import head_bytes

ARROW_STREAM = b"\xff\xff\xff\xff"
"""An Arrow IPC stream's first bytes (`read.MAGIC`, repeated here so that recognising a file
that is not one never imports the reader and pyarrow)."""

KIND = "recording"
TITLE = "gpuscope recording"
VIEW = "replay"
BOUNDED = True
"""Read batch by batch within the decoded budget, never whole."""


def match(name: str, head: Head) -> str | None:
    data = head_bytes(head)
    if not data.startswith(ARROW_STREAM):
        return None
    from gpuscope.parsers.recording.read import looks_like_recording

    if looks_like_recording(data):
        return "Arrow IPC stream with gpuscope's schema version: a recording"
    return None


def describe(head: Head, size: int) -> str:
    return ""  # the kind says it; its samples need more than the head


def read(path: Path) -> FileRead:
    from gpuscope.parsers.recording import read as recording

    got = recording.read(path, processes=False)  # the samples' host and GPU history; processes stay packed
    table = got.table.to_pandas() if got.table is not None else None
    return FileRead(table, list(got.findings), {"samples": got.samples, "version": got.version, "complete": got.complete})
