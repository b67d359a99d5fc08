"""Provides the recognition rules of the families whose readers live in subfolders (run logs,
recordings) until each moves its rules into its own kind module: pure functions over
a file's name and head, that read nothing. The other kinds' rules are in their kind modules.
"""

from __future__ import annotations

from gpuscope.parsers.base import Head
from gpuscope.parsers.files import head_bytes as _bytes


# ============================================================== rules: recording
ARROW_STREAM_MAGIC = b"\xff\xff\xff\xff"


def match_recording(name: str, head: Head) -> str | None:
    data = _bytes(head)
    if not data.startswith(ARROW_STREAM_MAGIC):
        return None
    from gpuscope.parsers.recording import read as recording
    return "Arrow IPC stream with gpuscope's schema version: a recording" if recording.looks_like_recording(data) else None

