"""Provides the MAGMA tester reader: output files -> one tidy row per data row, plus findings.

    from gpuscope.parsers import magma
    rows, findings = magma.read("magma-vbatched-iter-1.out")
    result = magma.read_tree(["experiments/"], exclude=("attempt-1",))

Formats: shared/research/formats-scaling.md §1 (gemm, gemm_batched, gemm_vbatched, LAPACK-style
testers, banners 1.5-2.10, interleaved ranks, Flux trailers, Start/End time lines). Rows are
kept even when they cannot be trusted; the `excluded` column says why statistics skip them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers import magma_trust
from gpuscope.parsers.magma_rows import map_columns, read_numeric, tokenize
from gpuscope.parsers.magma_scan import FileScan, join_lines, scan_many
from gpuscope.parsers.path_context import PathPattern, context_for, is_excluded, strip_common_prefix
from gpuscope.parsers.textfile import SNIFF_BYTES, decode, looks_binary, read_bytes

COLUMNS = [
    "test", "precision", "batch_count", "m", "n", "k", "problem_size", "gflops", "time_ms",
    "cpu_gflops", "cpu_time_ms", "ref_gflops", "ref_time_ms", "error", "status", "device",
    "file", "line", "environment", "nodes", "warmup", "impossible", "excluded",
]
MARKERS = (b"% MAGMA ", b"Gflop/s", b"START OF JOBSPEC", b"Assert failed")


@dataclass(frozen=True)
class MagmaResult:
    """Every row of every file read, one row per file in `runs`, and all findings."""

    rows: pd.DataFrame
    runs: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    files_read: int = 0


@dataclass
class _File:
    label: str
    context: dict[str, object]
    scan: FileScan
    findings: list[Finding]
    data: bytes = b""


def _walk(root: Path) -> Iterable[Path]:
    for folder, dirs, files in os.walk(root, onerror=None, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            yield Path(folder) / name


def discover(paths: Sequence[str | os.PathLike[str]], exclude: Sequence[str] = ()) -> tuple[list[tuple[Path, Path, bool]], list[Finding]]:
    """(root, file, given explicitly) for every candidate file, and findings for missing paths."""
    found: list[tuple[Path, Path, bool]] = []
    findings: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend((path, f, False) for f in _walk(path) if not is_excluded(PurePosixPath(f.relative_to(path).as_posix()), tuple(exclude)))
        elif path.exists():
            found.append((path.parent, path, True))
        else:
            findings.append(Finding("error", "missing", "no such file or folder", str(path)))
    return found, findings


def _load(root: Path, path: Path, explicit: bool, pattern: PathPattern | None) -> _File | Finding | None:
    """Scan one file; None for a non-MAGMA file met while walking a folder (counted, not listed)."""
    rel = PurePosixPath(path.relative_to(root).as_posix()) if path != root else PurePosixPath(path.name)
    label = str(rel)
    data, problems = read_bytes(path, label)
    if data is None:
        return problems[0] if explicit or problems[0].kind not in ("binary", "empty") else None
    if not explicit and not any(m in data[: 4 * SNIFF_BYTES] or m in data for m in MARKERS):
        return None
    text, problems = decode(data, label)
    if problems:
        data = text.encode("utf-8")
    context = context_for(rel, pattern)
    if context is None:
        problems.append(Finding("warning", "path", f"path does not match --path-pattern {pattern.text!r}; environment unknown", label))  # type: ignore[union-attr]
        context = {"environment": ".", "nodes": None}
    return _File(label, context, FileScan(), problems, data)


def read_tree(
    paths: Sequence[str | os.PathLike[str]],
    *,
    path_pattern: str | None = None,
    exclude: Sequence[str] = (),
    peak_override: float | None = None,
) -> MagmaResult:
    """Read every MAGMA output under `paths` (files or folders) into one tidy table.

    `peak_override` (Gflop/s) replaces the peak table for the impossible-value check.
    """
    pattern = PathPattern.compile(path_pattern) if path_pattern else None
    candidates, findings = discover(paths, exclude)
    files: list[_File] = []
    skipped = 0
    for root, path, explicit in candidates:
        loaded = _load(root, path, explicit, pattern)
        if isinstance(loaded, _File):
            files.append(loaded)
        elif isinstance(loaded, Finding):
            findings.append(loaded)
        else:
            skipped += 1
    if skipped:
        findings.append(Finding("info", "skipped", f"{skipped} file(s) under the given folders hold no MAGMA output and were skipped"))
    if not files and not findings:
        findings.append(Finding("warning", "no-data", "no MAGMA output files found"))
    rename = strip_common_prefix([str(f.context.get("environment", ".")) for f in files])
    for f in files:
        f.context["environment"] = rename.get(str(f.context.get("environment", ".")), f.context.get("environment"))
    rows = _assemble(files, peak_override)
    for f in files:
        findings.extend(f.findings)
    return _result(rows, files, findings)


def _result(rows: pd.DataFrame, files: list[_File], findings: list[Finding]) -> MagmaResult:
    stats = magma_trust.per_file(rows)
    findings = findings + magma_trust.row_findings(rows, stats)
    runs = magma_trust.runs_table(stats, files)
    findings += magma_trust.run_findings(runs, {f.label: f.scan for f in files})
    return MagmaResult(rows=rows, runs=runs, findings=findings, files_read=len(files))


def read(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> tuple[pd.DataFrame, list[Finding]]:
    """One file (or folder) as (tidy rows, findings): the notebook entry point."""
    if root is not None:
        path = Path(path)
        result = read_tree([path]) if path.is_dir() else _read_under(Path(root), path)
    else:
        result = read_tree([path])
    return result.rows, result.findings


def _read_under(root: Path, path: Path) -> MagmaResult:
    loaded = _load(root, path, True, None)
    if not isinstance(loaded, _File):
        return _result(_assemble([], None), [], [loaded] if loaded else [])
    rows = _assemble([loaded], None)
    return _result(rows, [loaded], list(loaded.findings))


BATCH_BYTES = 4 * 1024 * 1024
"""Files are scanned a few MB at a time: the scanner's temporary arrays then stay small and
are reused, instead of touching fresh memory for a whole tree at once."""


def _batches(files: list[_File]) -> Iterable[list[_File]]:
    batch: list[_File] = []
    size = 0
    for f in files:
        batch.append(f)
        size += len(f.data)
        if size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _assemble(files: list[_File], peak_override: float | None) -> pd.DataFrame:
    """Tokenise all files' rows at once, map columns per header kind, add context and flags."""
    row_parts = []
    for batch in _batches(files):
        scans, rows = scan_many([f.data for f in batch])
        row_parts.append(rows)
        for f, found in zip(batch, scans):
            f.scan, f.data = found, b""  # the bytes are not needed any more: free them
    row_bytes = b"".join(row_parts)
    per_file = np.array([f.scan.row_lines.size for f in files], np.int64)
    total = int(per_file.sum())

    # Global block ids: (file, header kind) pairs, numbered across files.
    block_offsets = np.concatenate(([0], np.cumsum([len(f.scan.blocks) for f in files]))).astype(np.int64)
    file_of_row = np.repeat(np.arange(len(files)), per_file)
    block_of_row = (np.concatenate([f.scan.row_block for f in files]) if files else np.empty(0, np.int32)) + block_offsets[file_of_row] if total else np.empty(0, np.int64)
    blocks = [b for f in files for b in f.scan.blocks]

    cols: dict[str, np.ndarray] = {}
    valid = np.zeros(total, bool)
    by_spec: dict[object, list[int]] = {}
    for i, block in enumerate(blocks):
        by_spec.setdefault(block.spec, []).append(i)
    ends = np.flatnonzero(np.frombuffer(row_bytes, np.uint8) == 10)
    starts = np.concatenate(([0], ends[:-1] + 1)) if ends.size else ends
    for spec, ids in by_spec.items():
        mask = np.isin(block_of_row, ids) if len(by_spec) > 1 else np.ones(total, bool)
        chosen = np.flatnonzero(mask)
        chunk = row_bytes if chosen.size == total else join_lines(row_bytes, chosen, starts, ends)
        # One tester's rows usually share one layout: numpy reads them as plain floats; any
        # irregular row sends the group to the general tokeniser.
        frame = read_numeric(chunk, chosen.size)
        if frame is None:
            frame = tokenize(chunk, np.bincount(file_of_row[chosen], minlength=len(files)).tolist())
        mapped, ok = map_columns(frame, spec)
        for name, values in mapped.items():
            if name not in cols:
                cols[name] = np.full(total, np.nan) if values.dtype != object else np.full(total, "", dtype=object)
            cols[name][mask] = values
        valid[mask] = ok

    lines = np.concatenate([f.scan.row_lines for f in files]) if files else np.empty(0, np.int64)
    junk = ~valid
    if junk.any():
        for fi in np.unique(file_of_row[junk]).tolist():
            bad = lines[junk & (file_of_row == fi)]
            files[fi].findings.append(Finding("warning", "unparsed", f"{bad.size} line(s) start with a number but are not data rows of this tester's table; skipped", files[fi].label, int(bad[0]), int(bad.size)))
    keep = valid
    return magma_trust.tidy(
        cols={k: v[keep] for k, v in cols.items()},
        lines=lines[keep],
        file_of_row=file_of_row[keep],
        block_of_row=block_of_row[keep],
        files=files,
        blocks=blocks,
        peak_override=peak_override,
        columns=COLUMNS,
    )
