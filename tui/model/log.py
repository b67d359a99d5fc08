"""Provides `LogDocument`: a log file's lines read on demand, the tail first (no Textual).

A log can be gigabytes, and the end is what one looks at first (where it failed, whether it
finished), so the view opens on the last `TAIL_BYTES` (VisiData#1707 asks for exactly this)
and never holds the file: a line is read from its offset when it is drawn, as toolong does.
The offsets of every line and the lines of each class (error, warning, success) come from one
read of the file (`scan`) in the screen's worker; until they arrive the document knows the
tail's lines only (and not their line numbers). `scan` uses the plain-log reader's chunks and
class words, not `plain_log.read`, whose table of flagged lines would load pandas into a view
that only shows lines. Lines are read when drawn, a screen of them in one read
(`read_lines`), and a few screens' worth are kept decoded. `bytes_read` counts what the
document itself read, for tests that a first screen did not read the whole file. Text is
decoded with replacement and cleaned of escape sequences (`metrics.safe_text`): a log line
cannot retitle or clear the terminal.

Following a growing log (`less +F`, toolong) is `read_growth` (in a worker: one `stat`, then
only the bytes past `end`) and `extend` (on the UI thread: the new offsets appended). The new
lines' classes are found with `bytes.find` over what was read, not line by line. A file that
shrank (truncated, `>` redirect) or whose inode changed (rotated, replaced) is not extended:
`read_growth` says so and the viewer opens the file again.
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
READ_LINES_BYTES = 1024 * 1024
"""The most `read_lines` reads at once (a screen of lines, unless they are very long)."""
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
    """Offset -> class of the lines in `data` (from byte `base`) starting at `starts`: the
    class words are found over the whole of `data` (a busy log costs a few `bytes.find` per
    look, not a test per line)."""
    if not len(starts):
        return {}
    first = int(starts[0]) - base  # what comes before is the end of a line known already
    rows = plain_log.line_rows(starts - starts[0], data[first:])
    return {int(starts[row]): name for name, found in rows.items() for row in found}


@dataclass
class Scan:
    """What one read of a log's first `end` bytes found: each line's offset, and the line
    numbers (0-based) of each class, the first `plain_log.MAX_NUMBERS` of each."""

    offsets: np.ndarray
    end: int
    counts: dict[str, int]
    lines_of: dict[str, np.ndarray]


def scan(path: str | Path, limit: int) -> Scan | None:
    """Read the log's first `limit` bytes once, in chunks cut at line ends: the offset of every
    line and the lines of each class. None when the file cannot be opened now."""
    handle, _, _ = open_regular(path, display_name(path))
    if handle is None:
        return None
    parts: list[np.ndarray] = []
    counts = dict.fromkeys(plain_log.CLASSES, 0)
    kept: dict[str, list[np.ndarray]] = {name: [] for name in plain_log.CLASSES}
    lines = end = 0
    with handle:
        for offset, data in plain_log.read_chunks(handle, limit):
            starts = plain_log.line_starts(offset, data)
            for name, rows in plain_log.line_rows(starts, data, offset).items():
                room = plain_log.MAX_NUMBERS - sum(len(a) for a in kept[name])
                counts[name] += len(rows)
                kept[name].append(rows[:max(0, room)] + lines)
            parts.append(starts)
            lines += len(starts)
            end = offset + len(data)
    offsets = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return Scan(offsets, end, counts, {name: np.concatenate(a) if a else np.zeros(0, np.int64) for name, a in kept.items()})


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
        """The line numbers (0-based) of each class (`scan`'s `lines_of`) in the first
        `counted` lines, once the document is indexed (before, they could not be placed); the
        classes of the lines after them (followed since) stay."""
        if not self.indexed:
            return
        later = {i: c for i, c in self.classes.items() if i >= counted}
        last = min(counted, self.line_count)
        self.classes = {int(n): name for name in reversed(plain_log.CLASSES) for n in lines_of.get(name, ()) if 0 <= int(n) < last}
        self.classes.update(later)

    def index_of_offset(self, offset: int) -> int:
        """The line holding byte `offset` (to keep the view in place when the index arrives)."""
        return max(0, int(np.searchsorted(self.offsets, offset, side="right")) - 1)

    def _raw(self, index: int, end_of_file: int | None = None) -> bytes:
        start = int(self.offsets[index])
        end = int(self.offsets[index + 1]) if index + 1 < len(self.offsets) else (end_of_file or self._end)
        return self._read(start, min(end, start + MAX_LINE_BYTES))

    def _read(self, start: int, end: int) -> bytes:
        """The file's bytes `start` to `end`; b'' when it cannot be read now."""
        handle, _, _ = open_regular(self.path, self.label)
        if handle is None:
            return b""
        with handle:
            try:
                handle.seek(start)
                data = handle.read(max(0, end - start))
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
        return self._keep(index, self._raw(index))

    def read_lines(self, first: int, stop: int) -> None:
        """Read the lines `first` to `stop` (excluded) not decoded yet with one read of the
        file (a screen of new lines when following), not one open and read each."""
        first, stop = max(0, first), min(stop, self.line_count)
        missing = [i for i in range(first, stop) if i not in self._cache]
        if not missing:
            return
        start = int(self.offsets[missing[0]])
        end = int(self.offsets[missing[-1] + 1]) if missing[-1] + 1 < self.line_count else self._end
        if end - start > READ_LINES_BYTES:  # very long lines: each is read alone, up to MAX_LINE_BYTES
            return
        data = self._read(start, end)
        for index in missing:
            begin = int(self.offsets[index]) - start
            after = int(self.offsets[index + 1]) - start if index + 1 < self.line_count else len(data)
            self._keep(index, data[begin:min(after, begin + MAX_LINE_BYTES)])

    def _keep(self, index: int, raw: bytes) -> str:
        """Line `index` as clean text from its bytes (at most `MAX_LINE_BYTES`: a line cut
        there ends in …), kept decoded among the last `CACHE_LINES` read."""
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
