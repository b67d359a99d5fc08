"""Provides the listing `gpuscope browse DIR --format ...` prints: every file below a folder with
its kind, why, a one-line summary and any problem, as one ResultTable.

It is the browser's tree in a form scripts and tests read: the same walk and the same
recognition (parsers/registry), so what a script sees is what the screen shows. Nothing here
reads a whole file: recognition is a stat and a few KB per file.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Iterable

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.parsers import registry
from gpuscope.parsers.files import display_name, walk

COLUMNS = (
    Column("path", "Path"),
    Column("kind", "Kind", missing="?"),
    Column("reason", "Why"),
    Column("summary", "Summary"),
    Column("problem", "Problem"),
)


def relative(path: Path, root: Path) -> str:
    """`path` below `root` as a printable label (root itself: its name)."""
    try:
        rel = path.relative_to(root).as_posix() if path != root else path.name
    except ValueError:
        rel = str(path)
    return clean(display_name(rel or str(path)))


def recognise_all(root: str | os.PathLike[str]) -> Iterable[registry.Recognition]:
    """Recognition of every file below `root` (or of `root` itself, a file), in walk order."""
    for path in walk(root):
        yield registry.recognise(path)


def listing(root: str | os.PathLike[str], seen: Iterable[registry.Recognition] | None = None) -> ResultTable:
    """The table of every file below `root`; a note counts the kinds and the problems."""
    base = Path(root)
    found = list(recognise_all(base) if seen is None else seen)
    rows = tuple(
        (relative(r.path, base), r.kind, clean(r.reason), clean(r.summary), clean(r.problem.message) if r.problem else None)
        for r in found
    )
    kinds = Counter(r.kind or "unrecognised" for r in found)
    problems = sum(r.problem is not None for r in found)
    counted = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    note = f"{len(found)} file(s): {counted or 'none'}; {problems} with a problem" if found else "no files"
    title = f"Files below {clean(display_name(base))}"
    return ResultTable(title, COLUMNS, rows, notes=(note,))
