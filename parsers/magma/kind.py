"""Provides the MAGMA kind as the registry sees it: how a MAGMA tester's output is recognised
from its name and head, its one-line summary, and `read(path) -> FileRead`."""

from __future__ import annotations

import re
from pathlib import Path

from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import head_bytes, line_at, line_of, quote
from gpuscope.parsers.magma.layout import mentions_magma

KIND = "magma"
TITLE = "MAGMA tester output"
VIEW = "magma"
BOUNDED = False

_LINES = ((re.compile(rb"^% MAGMA \d", re.M), "banner"), (re.compile(rb"^%.*G[Ff]lop/s", re.M), "table header"),
          (re.compile(rb"^Assert failed: ", re.M), "assertion of a MAGMA tester"))
_TESTER = re.compile(rb"testing_\w+")


def match(name: str, head: Head) -> str | None:
    data = head_bytes(head)
    if not mentions_magma(data):  # substring searches first: most files are not MAGMA output
        return None
    for pattern, what in _LINES:
        found = pattern.search(data)
        if found is not None:
            line = line_at(data[found.start():found.start() + 200].decode("utf-8", "replace"), 0)
            return f"{quote(line)} {what} on line {line_of(data, found.start())}"
    tester = _TESTER.search(data) if b"START OF JOBSPEC" in data else None
    return f"Flux jobspec trailer running {tester.group().decode()}: MAGMA tester output" if tester else None


def describe(head: Head, size: int) -> str:
    found = _TESTER.search(head_bytes(head))
    return f"MAGMA {found.group().decode()}" if found else "MAGMA output"


def read(path: Path) -> FileRead:
    from gpuscope.parsers.magma import read as magma  # pandas: not needed to recognise a file

    rows, findings = magma.read(path, root=Path(path).parent)
    return FileRead(rows, list(findings), {"rows": len(rows)})
