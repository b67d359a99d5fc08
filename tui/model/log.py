"""Provides `LogDocument`: a log file's lines read on demand, the tail first (no Textual).

A log can be gigabytes, and the end is what one looks at first (where it failed, whether it
finished), so the view opens on the last `TAIL_BYTES` (VisiData#1707 asks for exactly this)
and never holds the file: a line is read from its offset when it is drawn, as toolong does.
The offsets of every line come from `parsers.plain_log.line_index` in the screen's worker;
until they arrive the document knows the tail's lines only (and not their line numbers).
Counts and the lines of each class (error, warning, success) come from `plain_log.read` in
the same worker. `bytes_read` counts what the document itself read, for tests that a first
screen did not read the whole file. Text is decoded with replacement and cleaned of escape
sequences (`metrics.safe_text`): a log line cannot retitle or clear the terminal.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Sequence

import numpy as np

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import logs as plain_log
from gpuscope.parsers.files import display_name, looks_binary, open_regular

TAIL_BYTES = plain_log.TAIL_BYTES
"""What the first screen is read from."""
MAX_LINE_BYTES = 16 * 1024
"""A line longer than this is shown cut (a log line of megabytes is data, not a message)."""
CACHE_LINES = 4096
"""Lines kept decoded (a few screens' worth while scrolling back and forth)."""


class LogDocument:
    """Lines by number, read from the file through an offset index."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.label = display_name(self.path)
        self.size = 0
        self.offsets = np.zeros(0, np.int64)
        """Byte offset of each line known: the tail's lines, or (once indexed) every line."""
        self.indexed = False
        """`offsets` starts at the file's first line, so line numbers are known."""
        self.bytes_read = 0
        self.classes: dict[int, str] = {}
        """Line index -> 'error' / 'warning' / 'success', for the lines known to be one."""
        self._end = 0
        self._cache: OrderedDict[int, str] = OrderedDict()

    @property
    def line_count(self) -> int:
        return len(self.offsets)

    def open_tail(self) -> list[Finding]:
        """Read the last `TAIL_BYTES` and know its lines; findings when the file cannot be
        shown (not a regular file, unreadable, empty, binary)."""
        handle, size, findings = open_regular(self.path, self.label)
        if handle is None:
            return findings
        with handle:
            try:
                if size and looks_binary(handle.read(8192)):
                    return [Finding("error", "binary", "binary file, not a text log", self.label)]
                start = max(0, size - TAIL_BYTES)
                handle.seek(start)
                data = handle.read(TAIL_BYTES)
            except OSError as exc:
                return [Finding("error", "unreadable", f"cannot read: {exc.strerror or exc}", self.label)]
        self.size = self._end = size
        self.bytes_read += len(data) + min(size, 8192)
        if not data.strip():
            return [Finding("error", "empty", "file is empty", self.label)]
        skip = data.find(b"\n") + 1 if start > 0 else 0  # the first piece is the end of a line
        self.offsets = start + skip + np.concatenate(([0], np.flatnonzero(np.frombuffer(data[skip:], np.uint8) == 10) + 1))
        if len(self.offsets) > 1 and self.offsets[-1] >= size:
            self.offsets = self.offsets[:-1]
        self.indexed = start == 0
        lines = data[skip:].split(b"\n")[: self.line_count]
        self.classes = {i: c for i, line in enumerate(lines) if (c := plain_log.classify(line)) is not None}
        return []

    def set_offsets(self, offsets: np.ndarray, end: int) -> None:
        """Every line's offset, from the worker; `end` is where the indexed part stops. The
        tail's known classes move to their line numbers."""
        old = {int(self.offsets[i]): c for i, c in self.classes.items()}
        self.offsets = offsets.astype(np.int64)
        self.indexed = True
        self._end = end
        self._cache.clear()
        self.classes = {self.index_of_offset(offset): c for offset, c in old.items()}

    def set_classes(self, lines_of: dict[str, Sequence[int]]) -> None:
        """The 1-based line numbers of each class (`plain_log.read`'s `error_lines` ...), once
        the document is indexed (before, they could not be placed)."""
        if not self.indexed:
            return
        self.classes = {int(n) - 1: name for name in reversed(plain_log.CLASSES) for n in lines_of.get(name, ())
                        if 0 < int(n) <= self.line_count}

    def index_of_offset(self, offset: int) -> int:
        """The line holding byte `offset` (to keep the view in place when the index arrives)."""
        return max(0, int(np.searchsorted(self.offsets, offset, side="right")) - 1)

    def _raw(self, index: int) -> bytes:
        start = int(self.offsets[index])
        end = int(self.offsets[index + 1]) if index + 1 < len(self.offsets) else self._end
        handle, _, _ = open_regular(self.path, self.label)
        if handle is None:
            return b""
        with handle:
            try:
                handle.seek(start)
                data = handle.read(min(max(0, end - start), MAX_LINE_BYTES))
            except OSError:
                return b""
        self.bytes_read += len(data)
        return data

    def line(self, index: int) -> str:
        """Line `index` (0-based) as clean text; '' outside the document."""
        if not 0 <= index < self.line_count:
            return ""
        if index in self._cache:
            self._cache.move_to_end(index)
            return self._cache[index]
        raw = self._raw(index)
        cut = len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n")
        text = clean(raw.rstrip(b"\r\n").decode("utf-8", "replace")) + (" …" if cut else "")
        self._cache[index] = text
        if len(self._cache) > CACHE_LINES:
            self._cache.popitem(last=False)
        return text

    def next_of(self, kind: str, after: int, backwards: bool = False) -> int | None:
        """The next line of class `kind` after (or before) line `after`; None when there is none."""
        lines = sorted(i for i, c in self.classes.items() if c == kind)
        if backwards:
            earlier = [i for i in lines if i < after]
            return earlier[-1] if earlier else None
        return next((i for i in lines if i > after), None)
