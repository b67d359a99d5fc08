"""Provides the one list of file kinds, and the two questions asked of it: what is this file
(`recognise`), and what does it hold (`read`).

    from gpuscope.parsers import registry
    seen = registry.recognise("results/magma-1-iter-1.out")   # kind, reason, one-line summary
    got = registry.read("results/summary.csv")                 # table, findings, metadata

`READERS` is the only list of file kinds: each entry is a reader module (parsers/base: KIND,
TITLE, VIEW, BOUNDED, match, describe, read). Its `match(name, head)` says why a file is of its
kind ("`% MAGMA 2.8.0` banner on line 1") or returns None. Entries are tried in order, most
specific first: magic bytes, then names that say what a file is, then the words each tool
prints, then the generic kinds. A kind with two recognitions (Parquet or text, SQLite or CSV)
is one module, placed where the more specific one has to be. A new kind is one module and one
line here. No reader imports this module.

Recognition is cheap and bounded, because a browser runs it on every file of a tree: one
`stat` and at most `files.HEAD_BYTES` read, never a full read (`files.read_head`). The summary
is made from the stat and the head alone. Nothing here raises: a file that cannot be recognised
(permission denied, a FIFO, a symlink loop, binary garbage) gets a `problem` finding that says
why in plain words. Study commands read through here too (`read_profiles`), so the browser and
`kernels` never tell one file apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Sequence

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import csv_table, expected, image, json_table, logs, markdown, parquet_table, pdf, text
from gpuscope.parsers.base import FileRead, Reader
from gpuscope.parsers.magma import kind as magma
from gpuscope.parsers.recording import kind as recording
from gpuscope.parsers.files import MAX_BYTES, _human, binary_garbage, display_name, read_head
from gpuscope.parsers.profilers import ncu, nsys, nvprof, pyprof, torch_trace
from gpuscope.parsers.runlogs import mlperf, reframe, sacct, seed

if TYPE_CHECKING:
    from gpuscope.parsers.profilers.runs import ProfileRuns


# ============================================================== the list
READERS: tuple[Reader | ModuleType, ...] = (
    # magic bytes first: they cannot be mistaken
    pyprof,          # PyProf Parquet (and, by its header words, PyProf text)
    parquet_table,
    nsys,            # SQLite export (and `nsys stats` CSV)
    recording,
    image,
    pdf,
    # then names that say what a file is
    expected,
    markdown,
    # then the words each tool prints
    magma,
    mlperf,
    reframe,
    sacct,
    torch_trace,
    ncu,
    nvprof,
    seed,
    # generic kinds last
    csv_table,
    json_table,
    logs,
    text,
)

KINDS: tuple[str, ...] = tuple(r.KIND for r in READERS)
TEXT_KINDS = ("text", "log", "markdown", "csv", "json")
"""Kinds known by name or by being text: binary data under such a name is a problem, not the kind."""


def reader(kind: str | None) -> Reader | None:
    """The reader of `kind` (its TITLE, VIEW and read)."""
    return next((r for r in READERS if r.KIND == kind), None)  # type: ignore[return-value]


# ============================================================== recognition
@dataclass(frozen=True)
class Recognition:
    path: Path
    kind: str | None
    """None: not recognised, or a problem stops it from being read."""
    reason: str
    summary: str
    screen: str | None
    """The kind's VIEW: which view opens it."""
    problem: Finding | None = None
    """Why the file cannot be read (or only in part); a huge file keeps its kind."""

    @property
    def name(self) -> str:
        """The file's name, safe to print (undecodable bytes and escape sequences removed)."""
        return clean(display_name(self.path.name or self.path))


def _problem(kind: str, message: str, label: str, severity: str = "error") -> Finding:
    return Finding(severity, kind, message, label)  # type: ignore[arg-type]


def recognise(path: str | os.PathLike[str]) -> Recognition:
    """What `path` is, why, and a one-line summary; reads at most HEAD_BYTES. Never raises."""
    path = Path(path)
    label = clean(display_name(path))
    try:
        head, size, gzipped, problem = read_head(path, label)
    except Exception as exc:  # noqa: BLE001 - a browser shows every file; one surprise never stops it
        return Recognition(path, None, f"could not be recognised ({type(exc).__name__})", "", None,
                           _problem("reader-bug", f"could not be recognised ({type(exc).__name__}: {clean(exc)})", label))
    if head is None:
        assert problem is not None
        return Recognition(path, None, problem.message, _human(size) if size else "", None, problem)
    try:
        for entry in READERS:
            reason = entry.match(path.name, head)
            if reason is not None:
                return _recognised(path, entry, reason, head, size, gzipped, label)
    except Exception as exc:  # noqa: BLE001
        return Recognition(path, None, "could not be recognised", _human(size), None,
                           _problem("reader-bug", f"a recognition rule failed ({type(exc).__name__}: {clean(exc)}); please report this file", label))
    if binary_garbage(head):
        return Recognition(path, None, "binary data of no known format", _human(size), None,
                           _problem("binary", "binary data of no format gpuscope reads (no known magic bytes)", label, "warning"))
    return Recognition(path, None, "no known format", _human(size), None, None)


def _recognised(path: Path, entry: Reader | ModuleType, reason: str, head: bytes, size: int, gzipped: bool, label: str) -> Recognition:
    if entry.KIND in TEXT_KINDS and binary_garbage(head):
        return Recognition(path, None, "binary data despite its name", _human(size), None,
                           _problem("binary", f"binary data (NUL or control bytes) in a file named like {entry.TITLE.lower()}", label, "warning"))
    try:
        detail = entry.describe(head, size if not gzipped else size * 8)
    except Exception:  # noqa: BLE001 - a summary is a nicety
        detail = ""
    summary = " · ".join(p for p in (_human(size) + (" gzip" if gzipped else ""), detail) if p)
    if gzipped:
        reason += " (gzip)"
    problem = None
    if size > MAX_BYTES and not entry.BOUNDED:
        problem = _problem("huge", f"{_human(size)}: over the {_human(MAX_BYTES)} limit for a full read (GPUSCOPE_MAX_FILE_MB raises it); only its head and tail can be shown", label, "warning")
    return Recognition(path, entry.KIND, reason, summary, entry.VIEW, problem)


# ============================================================== reading
def read(path: str | os.PathLike[str], **options: Any) -> FileRead:
    """The file read by the reader of its kind, `meta` with its `kind` and `reason`. Never
    raises: what fails is a finding. `options` go to the reader (profiles: `columns`)."""
    path = Path(path)
    seen = recognise(path)
    label = clean(display_name(path))
    entry = reader(seen.kind)
    if entry is None:
        finding = seen.problem or Finding("error", "unknown-format", f"{seen.reason}: no reader for it", label)
        return FileRead(None, [finding], {})
    try:
        got = entry.read(path, **options)
    except MemoryError:
        return FileRead(None, [Finding("error", "huge", "not enough memory to read it", label)], {})
    except Exception as exc:  # noqa: BLE001 - one bad file never stops a browser
        return FileRead(None, [Finding("error", "reader-bug", f"could not be read ({type(exc).__name__}: {clean(exc)}); please report this file", label)], {})
    return FileRead(got.table, got.findings, {"kind": seen.kind, "reason": seen.reason, **got.meta})


def read_profiles(paths: Sequence[str | os.PathLike[str]], **options: Any) -> ProfileRuns:
    """`kernels`' reading: every profile under `paths` (parsers/profilers/runs: markers, config
    fields from names), each file recognised and read here."""
    from gpuscope.parsers.profilers import runs
    return runs.read_runs(paths, recognise=recognise, read=read, **options)
