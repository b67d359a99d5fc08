"""Provides what the browser says about a folder: kinds counted per folder as recognition
arrives, the studies `a` can open (every file of one kind below the folder), and the one-page
folder summary (files per kind, what could not be read, warning and error lines of the logs).

Headless (no Textual): the browser screen and tests use it; the summary's tables are
`ResultTable`s, so they export like every other table.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from gpuscope.metrics.table import Column, ResultTable

if TYPE_CHECKING:
    from gpuscope.parsers.registry import Recognition

STUDIES = {"magma": "MAGMA distributions", "kernels": "Kernel efficiency", "scaling": "Scaling study"}
"""The screens that read many files as one study (`Reader.screen` values), in the order `a`
offers them."""
UNRECOGNISED = "(not recognised)"
PROBLEM = "(not read)"
"""Counted in place of a kind for files with no kind."""
LOG_LINES_SHOWN = 500
"""Error and warning lines the summary lists (the count says how many there were)."""


def kind_of(rec: Recognition) -> str:
    """The kind a file is counted under: its kind, or why it has none."""
    if rec.problem is not None:
        return PROBLEM
    return rec.kind or UNRECOGNISED


def is_below(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class FolderCounts:
    """Kinds counted for every folder between a file and the root, as recognitions arrive
    (each file costs its depth), so a folder's counts are ready when the cursor reaches it.
    Folders are keyed by their text and climbed with `os.path.dirname`: pathlib's `parents`
    took a third of a second for 10,000 files, on the UI thread, in stalls of a batch each."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root = str(root)
        self._counts: dict[str, Counter[str]] = {}

    def add(self, rec: Recognition) -> None:
        kind = kind_of(rec)
        path = str(rec.path)
        while (folder := os.path.dirname(path)) != path:  # stops at "/" (or "" for a relative path)
            self._counts.setdefault(folder, Counter())[kind] += 1
            if folder == self._root or not folder:
                break
            path = folder

    def merge(self, other: FolderCounts) -> None:
        """Add counts made elsewhere (the browser counts each batch in its worker thread and
        merges them on the UI thread: one step per folder instead of per file)."""
        for folder, counts in other._counts.items():
            self._counts.setdefault(folder, Counter()).update(counts)

    def of(self, folder: Path) -> Counter[str]:
        return self._counts.get(str(folder), Counter())

    def line(self, folder: Path, most: int = 3) -> str:
        """`12 magma · 3 csv · +2 kinds` for a folder's label; empty when nothing is known."""
        counts = self.of(folder)
        known = [(k, n) for k, n in counts.most_common() if k not in (UNRECOGNISED, PROBLEM)]
        parts = [f"{n} {k}" for k, n in known[:most]]
        if len(known) > most:
            parts.append(f"+{len(known) - most} kinds")
        if counts[PROBLEM]:
            parts.append(f"{counts[PROBLEM]} not read")
        return " · ".join(parts)


def studies(recognitions: Iterable[Recognition], folder: Path) -> dict[str, list[Path]]:
    """Per study screen (magma, kernels, scaling), the recognised files below `folder`,
    sorted; only screens with at least one file, in `STUDIES` order."""
    found: dict[str, list[Path]] = {}
    for rec in recognitions:
        if rec.problem is None and rec.screen in STUDIES and is_below(rec.path, folder):
            found.setdefault(rec.screen, []).append(rec.path)
    return {screen: sorted(found[screen]) for screen in STUDIES if screen in found}


LOG_KINDS = ("log", "text", "seed-log")
"""Kinds whose lines are looked through for errors, warnings and successes."""


@dataclass(frozen=True)
class LogCounts:
    """One log's error, warning and success lines (counted by `parsers.plain_log`)."""

    path: Path
    errors: int | None
    warnings: int | None
    successes: int | None
    lines: tuple[tuple[int, str, str], ...] = ()
    """(line number, 'error' or 'warning', text) of its flagged lines."""
    problem: str = ""


def read_logs(recognitions: Iterable[Recognition], folder: Path) -> list[LogCounts]:
    """Every log below `folder` read by the plain-log reader (bounded per file); runs in a
    worker thread. A log that cannot be read says why, with n/a counts."""
    from gpuscope.parsers import logs as plain_log

    found = []
    for rec in sorted((r for r in recognitions if r.kind in LOG_KINDS and r.problem is None and is_below(r.path, folder)), key=lambda r: r.path):
        got = plain_log.read(rec.path)
        if got.table is None:
            found.append(LogCounts(rec.path, None, None, None, problem="; ".join(f.message for f in got.findings) or "not read"))
            continue
        flagged = got.table[got.table["severity"].isin(("error", "warning"))]
        lines = tuple((int(n), str(sev), str(text)) for n, sev, text in zip(flagged["line"], flagged["severity"], flagged["text"]))
        found.append(LogCounts(rec.path, got.meta.get("errors"), got.meta.get("warnings"), got.meta.get("successes"), lines))
    return found


def summary_tables(folder: Path, recognitions: Iterable[Recognition], titles: dict[str, str],
                   logs: Sequence[LogCounts] = ()) -> list[ResultTable]:
    """Files per kind; files that could not be read or recognised; per log its error,
    warning and success lines; the error and warning lines themselves (the first
    `LOG_LINES_SHOWN`). `titles`: kind -> what it is ("MAGMA tester output")."""
    below = [r for r in recognitions if is_below(r.path, folder)]
    counts = Counter(kind_of(r) for r in below)
    opens = {r.kind: r.screen for r in below if r.kind}
    kinds = ResultTable(
        f"Files by kind ({len(below)} files)",
        (Column("kind", "Kind"), Column("what", "What"), Column("files", "Files"), Column("opens", "Opens in")),
        tuple((kind, titles.get(kind, ""), n, opens.get(kind) or "") for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
    )
    problems = [r for r in below if r.problem is not None or r.kind is None]
    failed = ResultTable(
        f"Not read ({len(problems)} files)",
        (Column("file", "File"), Column("why", "Why")),
        tuple((_relative(r.path, folder), r.problem.message if r.problem is not None else r.reason or "not recognised") for r in problems),
    )
    per_log = ResultTable(
        f"Logs ({len(logs)})",
        (Column("file", "File"), Column("errors", "Errors", missing="n/a"), Column("warnings", "Warnings", missing="n/a"),
         Column("successes", "Success lines", missing="n/a"), Column("problem", "Problem")),
        tuple((_relative(x.path, folder), x.errors, x.warnings, x.successes, x.problem) for x in logs),
    )
    flagged = [(x.path, *line) for x in logs for line in x.lines]
    total = sum((x.errors or 0) + (x.warnings or 0) for x in logs)
    shown = flagged[:LOG_LINES_SHOWN]
    lines = ResultTable(
        f"Errors and warnings in logs ({total} lines)",
        (Column("file", "File"), Column("line", "Line"), Column("severity", "Severity"), Column("text", "Text")),
        tuple((_relative(path, folder), n, severity, text) for path, n, severity, text in shown),
        (f"the first {len(shown)} of {total} lines",) if total > len(shown) else (),
    )
    return [kinds, failed, per_log, lines]


def _relative(path: Path, folder: Path) -> str:
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)
