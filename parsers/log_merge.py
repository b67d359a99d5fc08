"""Provides `merge`: several logs' lines as one, in time order where the lines carry timestamps
(toolong's merged view), each line keeping which file it came from; and `read`, the tails of
a job's output files merged.

A line's time is an ISO-like date and time near its start (`2024-05-01T12:00:00.123+02:00`,
`2024-05-01 12:00:00,123` as Python's logging writes it, `[2024/05/01 12:00:00]`). A line
without one (a traceback's body, a continuation) travels with the stamped line before it in
its own file; lines before a file's first stamp go just before that stamp. Each file's own
order is never changed: a stamp earlier than one above it in the same file (clock steps,
buffered writes) sorts as the latest stamp so far. Times without a zone are taken as UTC, so
files that mix zoned and zoneless stamps can interleave wrongly (the usual case, one job's
files in one format, is exact). Files without any stamp follow the stamped lines, whole and in
the order given.
"""

from __future__ import annotations

import calendar
import heapq
import os
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Sequence

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.files import display_name, open_regular

STAMP = re.compile(
    r"(\d{4})[-/](\d\d)[-/](\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?\s?(Z|[+-]\d\d:?\d\d)?(?!\d)")
STAMP_WITHIN = 48
"""A stamp counts only if it starts within the first characters of a line (a prefix, not a
date quoted in a message)."""
TAIL_BYTES = 4 * 1024 * 1024
"""What `read` takes of each file: its last bytes (a job's output can be gigabytes)."""


def stamp(line: str) -> float | None:
    """Seconds since the epoch of the timestamp that starts `line`, or None."""
    found = STAMP.search(line, 0, STAMP_WITHIN + 40)
    if found is None or found.start() > STAMP_WITHIN:
        return None
    year, month, day, hour, minute, second = (int(g) for g in found.groups()[:6])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 60):
        return None
    try:
        seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (OverflowError, ValueError):
        return None
    fraction, zone = found.group(7), found.group(8)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        seconds -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return seconds + (int(fraction) / 10 ** len(fraction) if fraction else 0.0)


@dataclass(frozen=True, slots=True)
class MergedLine:
    """One line of the merged view: `source` indexes the files given, `number` is the line's
    index in its file's lines, `time` its own stamp (None when it has none)."""

    source: int
    number: int
    text: str
    time: float | None


def _keys(times: Sequence[float | None]) -> list[float] | None:
    """Each line's sort key: the latest stamp at or above it, the first stamp for the lines
    above that; None when the file has no stamp at all."""
    first = next((t for t in times if t is not None), None)
    if first is None:
        return None
    filled = [first if t is None else t for t in times]  # lines above the first stamp join it
    return list(accumulate(filled, max))


def merge(sources: Sequence[Sequence[str]]) -> list[MergedLine]:
    """The lines of every source, stamped ones in time order (ties: the source given first),
    each source's own order kept; the sources without stamps after them, in the order given."""
    timed, untimed = [], []
    for index, lines in enumerate(sources):
        times = [stamp(line) for line in lines]
        keys = _keys(times)
        rows = [MergedLine(index, n, line, t) for n, (line, t) in enumerate(zip(lines, times))]
        if keys is None:
            untimed.extend(rows)
        else:
            timed.append([(key, index, row.number, row) for key, row in zip(keys, rows)])
    return [entry[3] for entry in heapq.merge(*timed, key=lambda e: e[:3])] + untimed


@dataclass
class Merged:
    """What `read` gives: the merged lines, the label of each source, and what could not be
    read or was left out (findings)."""

    lines: list[MergedLine]
    labels: list[str]
    findings: list[Finding] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    """Labels of the files whose beginning was left out (larger than `TAIL_BYTES`)."""


def labels_for(paths: Sequence[str]) -> list[str]:
    """Short names: the file's name, with its folder where two files share a name."""
    names = [os.path.basename(p) or p for p in paths]
    return [clean(display_name(os.path.join(os.path.basename(os.path.dirname(p)), n)) if names.count(n) > 1 else display_name(n))
            for p, n in zip(paths, names)]


def read_lines(path: str, label: str, limit: int = TAIL_BYTES) -> tuple[list[str], bool, list[Finding]]:
    """The last `limit` bytes of `path` as cleaned lines (a partial first line dropped), whether
    the beginning was left out, and the finding when it cannot be read."""
    handle, size, findings = open_regular(path, label)
    if handle is None:
        return [], False, findings
    with handle:
        start = max(0, size - limit)
        try:
            handle.seek(start)
            data = handle.read(limit)
        except OSError as error:
            return [], False, [Finding("error", "unreadable", f"cannot read: {error.strerror or error}", label)]
    if start:
        data = data[data.find(b"\n") + 1:]
    return split_lines(data), start > 0, []


def split_lines(data: bytes) -> list[str]:
    """Whole lines of `data`, decoded with replacement and cleaned (no escape sequence left).
    Only newlines end lines: a progress bar's carriage returns redraw one line, whose last
    state is the line."""
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return [clean(line.rstrip("\r").rsplit("\r", 1)[-1]) for line in lines]


def read(paths: Sequence[str], limit: int = TAIL_BYTES) -> Merged:
    """The files' last `limit` bytes each, merged by time; unreadable files become findings."""
    labels = labels_for(paths)
    sources, findings, cut = [], [], []
    for path, label in zip(paths, labels):
        lines, was_cut, problems = read_lines(path, label, limit)
        sources.append(lines)
        findings += problems
        if was_cut:
            cut.append(label)
    return Merged(merge(sources), labels, findings, cut)
