"""Provides `read_runs`: many profiler exports at once, each with its configuration and markers.

    from gpuscope.parsers import registry
    runs = registry.read_profiles(["data/pcm/"], name_pattern=None)   # the seed's naming by default
    runs.kernels          # every kernel launch of every file (copies left out), column `file`

Folders are walked (`files.walk`); each file is recognised and read by the registry, which hands
its `recognise` and `read` in (no reader imports the registry), so `kernels` takes a file for a
profile exactly when the browser does. Marker CSVs
(`markers_*.csv`) given as paths are used as markers, not profiles. Each profile gets its
configuration fields from its name (`run_config`) and, when a marker file matches it
(`markers.marker_for`), its batch duration. Nothing raises on file content: unreadable,
unknown or empty files, names that do not match and bad marker lines are findings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.profilers import markers as marker_files
from gpuscope.parsers.profilers import nvprof
from gpuscope.parsers.base import FileRead
from gpuscope.parsers.profilers.kernel_table import KERNEL_COLUMNS, KernelRead, empty, kernel_read
from gpuscope.parsers.files import display_name, walk
from gpuscope.parsers.patterns import NamePattern, config_fields

COPY_OPS = ("memcpy", "memset")
SHARED = (*KERNEL_COLUMNS, "calls", "file")
"""The columns of `ProfileRuns.everything`: the canonical ones, the launches a summary row
stands for (`efficiency.launch_counts`) and the profile's name."""
"""Copies and memsets are not kernels: left out of efficiencies and rankings, kept for busy time."""


@dataclass(frozen=True)
class ProfileRun:
    """One profile: its path, config fields, kernel launches (no copies), batch duration, and the
    facts its file states (`KernelRead.meta`, e.g. the GPU name: each profile gets its own peak)."""

    file: str
    fields: dict[str, Any]
    kernels: pd.DataFrame
    batch_s: float | None = None
    marker_file: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProfileRuns:
    runs: list[ProfileRun]
    """Profiles that had at least one launch, in the order found."""
    everything: pd.DataFrame
    """Every launch, copy and memset of every profile: KERNEL_COLUMNS, `calls` where a format
    counts them, and `file` (a format's other columns stay in its run's `kernels`)."""
    kernels: pd.DataFrame
    """`everything` without copies and memsets."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Facts from the files (first one wins), e.g. the GPU name an nsys export states."""
    findings: list[Finding] = field(default_factory=list)
    markers_found: int = 0
    metrics: pd.DataFrame | None = None
    """nvprof `--metrics` tables read (columns `file`, `joined_to`): not runs, they have no times;
    their FLOPs and bytes are joined into the trace of the same run (`nvprof.pair_metrics`)."""


KNOWN = ("PyProf Parquet/--csv/-w, Nsight Systems SQLite or `nsys stats` CSV, Nsight Compute CSV, "
         "nvprof CSV, PyTorch profiler trace (.json/.json.gz)")
VIEW = "kernels"
"""The view of the kinds that are profiles (parsers/base: a reader module's VIEW)."""


class Seen(Protocol):
    """What the registry's `recognise` says of a file (its `Recognition`)."""

    kind: str | None
    screen: str | None
    problem: Finding | None


Recognise = Callable[[Path], Seen]
Read = Callable[..., FileRead]
"""The registry's `read(path, columns=...)`."""


def find_files(paths: Sequence[str | os.PathLike[str]], recognise: Recognise) -> tuple[list[Path], list[Path], list[Finding]]:
    """(profiles, marker files, findings): files as given, and what folders hold (`files.walk`:
    recursively, hidden names skipped, links to folders not followed). What a folder holds that
    is not a profile is named in the findings: files of other kinds (one finding for all), and
    each entry that cannot be opened (not a regular file, permission denied, a symlink loop, a
    folder that cannot be listed or whose path is too long)."""
    found: list[Path] = []
    markers: list[Path] = []
    findings: list[Finding] = []
    unknown: list[str] = []

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for full in walk(path):
                if marker_files.is_marker_file(full):
                    markers.append(full)
                    continue
                seen = recognise(full)
                if seen.screen == VIEW:
                    found.append(full)
                elif seen.kind is None and seen.problem is not None and seen.problem.kind not in ("binary", "folder"):
                    findings.append(seen.problem)
                elif seen.problem is None or seen.problem.kind != "folder":  # a link to a folder is not followed
                    unknown.append(display_name(full))
        elif path.exists() or path.is_symlink():
            (markers if marker_files.is_marker_file(path) else found).append(path)
        else:
            findings.append(Finding("error", "missing", "no such file or folder", display_name(path)))
    if unknown:
        shown = ", ".join(unknown[:UNKNOWN_NAMED]) + (f" and {len(unknown) - UNKNOWN_NAMED} more" if len(unknown) > UNKNOWN_NAMED else "")
        findings.append(Finding("info", "skipped", f"{len(unknown)} file(s) under the given folders are not profiler exports and were skipped: {shown}",
                                count=len(unknown)))
    return found, markers, findings


UNKNOWN_NAMED = 20
"""How many of the files skipped as not profiler exports the finding names."""


def _without_copies(table: pd.DataFrame) -> pd.DataFrame:
    """`table` without its copies and memsets; the table itself when it has none (most formats:
    selecting every row would copy every column for nothing)."""
    if "op" not in table:
        return table
    copies = table["op"].isin(COPY_OPS).to_numpy(dtype=bool, na_value=False)
    return table[~copies] if copies.any() else table


def _batch(profile: Path, candidates: list[Path], findings: list[Finding]) -> tuple[float | None, Path | None]:
    path = marker_files.marker_for(profile, candidates)
    if path is None:
        return None, None
    read = marker_files.read_markers(path)
    findings.extend(read.findings)
    batch = marker_files.batch_duration_s(read.table)
    if batch is None:
        findings.append(Finding("warning", "no-batch", "too few 'End of Batch' / 'Forward Pass' markers for a batch duration", display_name(path)))
    return batch, path


def _profile(path: Path, recognise: Recognise, read: Read, columns: Sequence[str] | None) -> KernelRead:
    """One profile read through the registry; a file of another kind read as none (a finding)."""
    label = display_name(path)
    seen = recognise(path)
    if seen.screen != VIEW:
        problem = seen.problem if seen.kind is None and seen.problem is not None else \
            Finding("error", "unknown-format", f"not a profiler export gpuscope reads (it reads {KNOWN})", label)
        return KernelRead(empty("unknown"), [problem])
    return kernel_read(read(path, columns=columns), drop=("kind", "reason"))


def read_runs(paths: Sequence[str | os.PathLike[str]], *, recognise: Recognise, read: Read, name_pattern: str | None = None,
              markers: Sequence[str | os.PathLike[str]] = (), want_fields: bool = False,
              columns: Sequence[str] | None = None) -> ProfileRuns:
    """Read every profile under `paths`, each file recognised and read by `recognise` and `read`
    (the registry's: `registry.read_profiles`). Raises ValueError only for a malformed
    `name_pattern`. `want_fields`: report names that do not match as findings even for a single
    profile (the user asked for fields); otherwise only when several profiles are compared.
    `columns`: the canonical columns the caller uses (None: all); a reader that can leave the
    others unread does (PyProf Parquet), and they are null."""
    pattern = NamePattern.compile(name_pattern) if name_pattern else None
    files, given_markers, findings = find_files(paths, recognise)
    for path in markers:
        if not Path(path).exists():
            findings.append(Finding("error", "missing", "no such marker file or folder", display_name(path)))
    candidates = marker_files.marker_candidates(files, [*given_markers, *(Path(p) for p in markers if Path(p).exists())])
    runs: list[ProfileRun] = []
    tables: list[pd.DataFrame] = []
    meta: dict[str, Any] = {}
    name_findings: list[Finding] = []
    reads, metrics, metric_findings = nvprof.pair_metrics([(path, _profile(path, recognise, read, columns)) for path in files])
    used: set[Path] = set()
    findings.extend(metric_findings)
    for path, result in reads:
        findings.extend(result.findings)
        for key, value in result.meta.items():
            meta.setdefault(key, value)
        if not len(result.table):
            continue
        table = result.table.assign(file=display_name(path))
        tables.append(table)
        fields, found = config_fields(path, pattern)
        name_findings.extend(found)
        batch, marker = _batch(path, candidates, findings)
        used.update([marker] if marker else [])
        runs.append(ProfileRun(display_name(path), fields or {}, _without_copies(table), batch, display_name(marker) if marker else None,
                               dict(result.meta)))
    if want_fields or len(runs) > 1:
        findings.extend(name_findings)
    for path in [*given_markers, *(Path(p) for p in markers if Path(p).is_file())]:
        if path not in used and not any(u.samefile(path) for u in used):
            findings.append(Finding("warning", "unused-markers", "marker file matches no profile read (expected markers_<profile name>.csv)", display_name(path)))
    # the columns every format shares: joining the formats' own columns as well would fill each
    # with nulls for the other formats, the largest cost of reading a few small profiles
    everything = pd.concat([t[[c for c in SHARED if c in t]] for t in tables], ignore_index=True) if tables \
        else pd.DataFrame(columns=[*KERNEL_COLUMNS, "file"])
    if len(tables) > 1:  # concat of different category sets gives object: keep codes for speed
        everything["kernel"] = everything["kernel"].astype("category")
    return ProfileRuns(runs, everything, _without_copies(everything), meta, findings,
                       markers_found=sum(run.marker_file is not None for run in runs), metrics=metrics)
