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

Following a growing log (`less +F`, toolong) is `read_growth` (in a worker: one `stat`, then
only the bytes past `end`) and `extend` (on the UI thread: the new offsets appended). A file
that shrank (truncated, `>` redirect) or whose inode changed (rotated, replaced) is not
extended: `read_growth` says so and the viewer opens the file again.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
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
GROWTH_BYTES = 8 * 1024 * 1024
"""The most one `read_growth` reads (a burst is taken over several polls, memory bounded)."""


@dataclass
class Growth:
    """What `read_growth` found: `change` is 'grown', 'same', 'truncated', 'replaced' or
    'gone' (the name no longer opens); for 'grown', the bytes `start`..`end` were read and
    `offsets` are the lines that start in them, `classes` their classes by offset."""

    change: str
    start: int = 0
    end: int = 0
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    classes: dict[int, str] = field(default_factory=dict)


def _starts_after(data: bytes, base: int, end: int) -> np.ndarray:
    """Offsets of the lines that start after a newline in `data` (which begins at byte
    `base`), before `end`: the start of a line after the last newline is not a line yet."""
    starts = base + np.flatnonzero(np.frombuffer(data, np.uint8) == 10).astype(np.int64) + 1
    return starts[starts < end]


def _classes_of(data: bytes, base: int, starts: np.ndarray) -> dict[int, str]:
    """Offset -> class of the lines in `data` (from byte `base`) starting at `starts`; each
    line is classified only when one of the class words occurs in `data` at all (so following
    a busy log costs a few `bytes.find` per poll, not one per line)."""
    if not any(word in data for _, words in plain_log.LINE_CLASSES for word in words):
        return {}
    out = {}
    for i, start in enumerate(starts):
        stop = int(starts[i + 1]) - base if i + 1 < len(starts) else len(data)
        kind = plain_log.classify(data[int(start) - base:stop])
        if kind is not None:
            out[int(start)] = kind
    return out


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
        self._identity: tuple[int, int] | None = None
        """(device, inode) of the file opened: another one at the path was rotated in."""
        self._cache: OrderedDict[int, str] = OrderedDict()

    @property
    def line_count(self) -> int:
        return len(self.offsets)

    @property
    def end(self) -> int:
        """Where the bytes known (indexed, tail or followed) stop."""
        return self._end

    @property
    def first_offset(self) -> int:
        """Where the known lines start (0 once indexed, the tail's first line before)."""
        return int(self.offsets[0]) if len(self.offsets) else self._end

    def open_tail(self) -> list[Finding]:
        """Read the last `TAIL_BYTES` and know its lines; findings when the file cannot be
        shown (not a regular file, unreadable, empty, binary)."""
        handle, size, findings = open_regular(self.path, self.label)
        if handle is None:
            return findings
        with handle:
            info = os.fstat(handle.fileno())
            self._identity = (info.st_dev, info.st_ino)
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
        self.indexed = start == 0
        if not data.strip():
            return [Finding("error", "empty", "file is empty", self.label)]
        skip = data.find(b"\n") + 1 if start > 0 else 0  # the first piece is the end of a line
        skip = skip if start + skip < size else 0  # one line longer than the tail: shown cut
        first = np.array([start + skip], np.int64)
        self.offsets = np.concatenate((first, _starts_after(data[skip:], start + skip, size)))
        lines = data[skip:].split(b"\n")[: self.line_count]
        self.classes = {i: c for i, line in enumerate(lines) if (c := plain_log.classify(line)) is not None}
        return []

    def read_growth(self) -> Growth:
        """What happened to the file since `end` (runs in a worker; changes nothing here)."""
        try:
            info = os.stat(self.path)
        except OSError:
            return Growth("gone")
        if self._identity is not None and (info.st_dev, info.st_ino) != self._identity:
            return Growth("replaced")
        if info.st_size < self._end:
            return Growth("truncated")
        if info.st_size == self._end:
            return Growth("same")
        start = max(0, self._end - 1)  # the byte before: does a line start right at `end`?
        handle, _, _ = open_regular(self.path, self.label)
        if handle is None:
            return Growth("gone")
        with handle:
            try:
                handle.seek(start)
                data = handle.read(min(info.st_size, self._end + GROWTH_BYTES) - start)
            except OSError:
                return Growth("gone")
        end = start + len(data)
        self.bytes_read += len(data)
        offsets = _starts_after(data, start, end)
        if self._end == 0 and end > 0:  # the first bytes of a file that was empty
            offsets = np.concatenate((np.zeros(1, np.int64), offsets))
        return Growth("grown", self._end, end, offsets, _classes_of(data, start, offsets))

    def extend(self, growth: Growth) -> None:
        """Take the lines `read_growth` found (on the UI thread, which draws the lines). The
        last line known may have grown (it had no newline yet): it is read again."""
        if growth.change != "grown" or growth.start != self._end:
            return
        if self.line_count:
            self._cache.pop(self.line_count - 1, None)
            last = self.line_count - 1
            stop = int(growth.offsets[0]) if len(growth.offsets) else growth.end
            if self.classes.get(last) is None and (kind := plain_log.classify(self._raw(last, stop))) is not None:
                self.classes[last] = kind
        first = self.line_count
        self.offsets = np.concatenate((self.offsets, growth.offsets))
        self.classes.update({first + i: growth.classes[int(o)] for i, o in enumerate(growth.offsets) if int(o) in growth.classes})
        self._end = self.size = growth.end

    def set_offsets(self, offsets: np.ndarray, end: int) -> None:
        """Every line's offset, from the worker; `end` is where the indexed part stops (lines
        followed since start at or after it, and stay). The tail's known classes move to their
        line numbers."""
        old = {int(self.offsets[i]): c for i, c in self.classes.items()}
        followed = self.offsets[self.offsets >= end]
        self.offsets = np.concatenate((offsets.astype(np.int64), followed))
        self.indexed = True
        self._end = max(end, self._end)
        self._cache.clear()
        self.classes = {self.index_of_offset(offset): c for offset, c in old.items()}

    def set_classes(self, lines_of: dict[str, Sequence[int]], counted: int) -> None:
        """The 1-based line numbers of each class (`plain_log.read`'s `error_lines` ...) in the
        first `counted` lines, once the document is indexed (before, they could not be
        placed); the classes of the lines after them (followed since) stay."""
        if not self.indexed:
            return
        later = {i: c for i, c in self.classes.items() if i >= counted}
        self.classes = {int(n) - 1: name for name in reversed(plain_log.CLASSES) for n in lines_of.get(name, ())
                        if 0 < int(n) <= min(counted, self.line_count)}
        self.classes.update(later)

    def index_of_offset(self, offset: int) -> int:
        """The line holding byte `offset` (to keep the view in place when the index arrives)."""
        return max(0, int(np.searchsorted(self.offsets, offset, side="right")) - 1)

    def _raw(self, index: int, end_of_file: int | None = None) -> bytes:
        start = int(self.offsets[index])
        end = int(self.offsets[index + 1]) if index + 1 < len(self.offsets) else (end_of_file or self._end)
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

    def next_of(self, kinds: Sequence[str], after: int, backwards: bool = False) -> int | None:
        """The next line of one of the classes `kinds` after (or before) line `after`; None
        when there is none."""
        lines = sorted(i for i, c in self.classes.items() if c in kinds)
        if backwards:
            earlier = [i for i in lines if i < after]
            return earlier[-1] if earlier else None
        return next((i for i in lines if i > after), None)
