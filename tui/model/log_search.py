"""Provides `LogSearch`: a pattern searched through a log's bytes, the lines that match kept
by byte offset (no Textual).

    search = LogSearch.compile("r/loss [0-9.]+")      # ValueError says why a regex is bad
    for part in search.scan(path, 0, size): search.add(part)
    search.next_line(after_offset), search.match_count, search.line_count

A pattern is plain text, or a regular expression after a leading `r/` (as `less` and toolong
take both); the case is ignored unless the pattern has a capital letter ("smart case", as
ripgrep's -S). The file is read in chunks of `CHUNK` bytes cut at line ends, and `re` runs
over each chunk's bytes, so a search over gigabytes runs in a worker and never holds the file.
A matching line is kept as its byte offset, which stays true when the line numbers become
known later (the index arrives) or lines are appended (following). At most `MAX_KEPT` lines
are kept for `n` / `N`; the counts go on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from gpuscope.parsers.files import display_name, open_regular

CHUNK = 4 * 1024 * 1024
MAX_KEPT = 1_000_000
"""Matching lines kept for `n` / `N` (8 MB); past them the counts go on."""
REGEX_PREFIX = "r/"


@dataclass
class Found:
    """What one chunk gave: the offsets of its matching lines, the matches, where it stopped."""

    lines: np.ndarray
    matches: int
    done: int


class LogSearch:
    """A compiled pattern and the matching lines found so far."""

    def __init__(self, text: str, pattern: re.Pattern[str], raw: re.Pattern[bytes]) -> None:
        self.text = text
        """What the user typed."""
        self.pattern = pattern
        """For the lines as shown (highlighting)."""
        self.raw = raw
        """For the file's bytes (finding)."""
        self.match_count = 0
        self.line_count = 0
        self.scanned_to = 0
        """The bytes before this are searched."""
        self._parts: list[np.ndarray] = []
        self._lines = np.zeros(0, np.int64)

    @classmethod
    def compile(cls, text: str) -> "LogSearch":
        """The search for `text`: plain, or a regex after `r/`; ValueError for a bad regex."""
        regex = text[len(REGEX_PREFIX):] if text.startswith(REGEX_PREFIX) else re.escape(text)
        if not regex:
            raise ValueError("nothing to search for")
        flags = 0 if any(c.isupper() for c in regex.replace("\\", "")) else re.IGNORECASE
        try:
            return cls(text, re.compile(regex, flags), re.compile(regex.encode("utf-8"), flags))
        except (re.error, UnicodeEncodeError) as exc:
            raise ValueError(f"not a regular expression: {exc}") from None

    @property
    def lines(self) -> np.ndarray:
        """The offsets of the matching lines kept, in order."""
        if self._parts:
            self._lines = np.concatenate((self._lines, *self._parts))
            self._parts = []
        return self._lines

    def add(self, found: Found) -> None:
        """Take one chunk's matches (chunks come in file order)."""
        self.match_count += found.matches
        self.line_count += len(found.lines)
        room = MAX_KEPT - len(self._lines) - sum(len(p) for p in self._parts)
        if room > 0 and len(found.lines):
            self._parts.append(found.lines[:room])
        self.scanned_to = max(self.scanned_to, found.done)

    @property
    def capped(self) -> bool:
        """Whether more lines matched than were kept."""
        return self.line_count > len(self.lines)

    def next_line(self, offset: int, backwards: bool = False) -> int | None:
        """The offset of the first matching line after (or before) the line at `offset`;
        None when there is none that way."""
        lines = self.lines
        if backwards:
            at = int(np.searchsorted(lines, offset, side="left")) - 1
            return int(lines[at]) if at >= 0 else None
        at = int(np.searchsorted(lines, offset, side="right"))
        return int(lines[at]) if at < len(lines) else None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each match in a line as shown."""
        return [m.span() for m in self.pattern.finditer(text) if m.end() > m.start()]

    def scan(self, path: str | Path, start: int, end: int, cancelled: Callable[[], bool] = lambda: False) -> Iterator[Found]:
        """Search bytes `start`..`end` of `path` (`start` at a line start), a `Found` per chunk.
        Nothing for a file that no longer opens."""
        handle, _, _ = open_regular(path, display_name(path))
        if handle is None:
            return
        with handle:
            handle.seek(start)
            at, carry = start, b""
            while at + len(carry) < end and not cancelled():
                data = carry + handle.read(min(CHUNK, end - at - len(carry)))
                if len(data) == len(carry):
                    break
                cut = data.rfind(b"\n") + 1 if at + len(data) < end else len(data)
                if cut == 0:  # one line longer than a chunk: read on
                    carry = data
                    continue
                yield self._find(data[:cut], at)
                at, carry = at + cut, data[cut:]

    def _find(self, data: bytes, base: int) -> Found:
        hits = np.fromiter((m.start() for m in self.raw.finditer(data)), np.int64)
        if not len(hits):
            return Found(hits, 0, base + len(data))
        newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
        starts = np.concatenate(([0], newlines + 1))
        lines = np.unique(starts[np.searchsorted(starts, hits, side="right") - 1])
        return Found(lines.astype(np.int64) + base, len(hits), base + len(data))
