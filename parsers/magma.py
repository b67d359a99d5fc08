"""Provides the MAGMA tester reader: output files -> one tidy row per data row, plus findings.

    from gpuscope.parsers import magma
    rows, findings = magma.read("magma-vbatched-iter-1.out")
    result = magma.read_tree(["experiments/"], exclude=("attempt-1",))

Formats: shared/research/formats-scaling.md §1 (gemm, gemm_batched, gemm_vbatched, LAPACK-style
testers, banners 1.5-2.10, interleaved ranks, Flux trailers, Start/End time lines). Rows are
kept even when they cannot be trusted; the `excluded` column says why statistics skip them.

How: files are read a few MB at a time, straight into a batch buffer (kept until the read is
done, as the rows are tokenised where they lie in it, then kept for the next read), and each
batch is scanned (magma_scan), tokenised (magma_rows) and flagged (magma_trust) on one of a few
threads; the batches are then joined into one table. Whatever a batch cannot decide alone (a
tester whose rows need the general readers, lines that are not data rows, one label under two
roots) is redone for all files at once, the slower way, with the same result.
"""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics import magma_stats
from gpuscope.metrics.findings import Finding
from gpuscope.parsers import magma_trust
from gpuscope.parsers.magma_header import HeaderSpec
from gpuscope.parsers.magma_rows import FAILED, NO_STATUS, map_columns, numeric_rows, read_numeric, split_rows, tokenize
from gpuscope.parsers.magma_scan import FileBuffer, FileScan, RowText, scan_buffer
from gpuscope.parsers.path_context import PathPattern, context_for, is_excluded, strip_common_prefix
from gpuscope.parsers.textfile import MAX_BYTES, SNIFF_BYTES, decode, read_bytes

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


def _walk(root: Path) -> Iterable[Path]:
    for folder, dirs, files in os.walk(root, onerror=None, followlinks=False):
        dirs.sort()
        base = Path(folder)  # once per folder, not per file
        for name in sorted(files):
            yield base / name


def discover(paths: Sequence[str | os.PathLike[str]], exclude: Sequence[str] = ()) -> tuple[list[tuple[Path, Path, bool]], list[Finding]]:
    """(root, file, given explicitly) for every candidate file, and findings for missing paths."""
    found: list[tuple[Path, Path, bool]] = []
    findings: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            walked = _walk(path)
            if exclude:
                walked = (f for f in walked if not is_excluded(PurePosixPath(f.relative_to(path).as_posix()), tuple(exclude)))
            found.extend((path, f, False) for f in walked)
        elif path.exists():
            found.append((path.parent, path, True))
        else:
            findings.append(Finding("error", "missing", "no such file or folder", str(path)))
    return found, findings


def _label(root: Path, path: Path) -> str:
    """`path` relative to `root`, with `/` between folders (plain string work when it can be)."""
    whole, prefix = str(path), str(root)
    if os.sep == "/" and whole.startswith(prefix) and whole[len(prefix) : len(prefix) + 1] == "/" and prefix not in ("", "."):
        return whole[len(prefix) + 1 :]
    return str(PurePosixPath(path.relative_to(root).as_posix()) if path != root else PurePosixPath(path.name))


def _context(label: str, pattern: PathPattern | None, contexts: dict[str, dict[str, object] | None] | None) -> dict[str, object] | None:
    """`context_for(label, pattern)`; without a pattern the context depends on the folders
    alone, so files of one folder share one lookup (`contexts` keeps them; each file gets
    its own copy, which read_tree changes later)."""
    if pattern is not None or contexts is None:
        return context_for(label, pattern)
    folder = label.rpartition("/")[0]
    if folder not in contexts:
        contexts[folder] = context_for(label, None)
    found = contexts[folder]
    return None if found is None else dict(found)


_NOT_SPACE = re.compile(rb"[^ \t\n\r\x0b\x0c]")
"""A byte that `bytes.isspace` does not take as whitespace."""


def _read_plain(path: Path, size: int, into: FileBuffer) -> int | None:
    """Read a plain text file of the size stat gave straight into `into` at its end, in one
    system call that runs without the interpreter lock (no bytes object to make, page-fault
    and copy again later); returns its length, or None for whatever `read_bytes` must judge:
    gzip, empty, binary, huge, changed since stat, unreadable."""
    if not 0 < size <= MAX_BYTES:
        return None
    room = into.room(size + 1)  # one byte more: a file that grew since stat reads longer
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            length = os.readv(fd, [room])
        finally:
            os.close(fd)
    except OSError:
        return None
    big, at = into.buffer, into.end
    # The checks `read_bytes` makes, on the buffer (bytearray methods take bounds: no copy).
    if (length != size or big[at : at + 2] == b"\x1f\x8b" or _NOT_SPACE.search(big, at, at + size) is None
            or big.find(b"\x00", at, at + min(size, SNIFF_BYTES)) >= 0):
        return None
    return size


def _is_ascii(big: bytearray, start: int, end: int) -> bool:
    """`big[start:end].isascii()` without copying the bytes (numpy scans them off the
    interpreter lock)."""
    return end <= start or int(np.frombuffer(big, np.uint8, end - start, start).max()) < 128


def _load(root: Path, path: Path, explicit: bool, pattern: PathPattern | None, into: FileBuffer,
          contexts: dict[str, dict[str, object] | None] | None = None, size: int = -1) -> _File | Finding | None:
    """Read one file into `into` (committed there when it is a MAGMA output); None for a
    non-MAGMA file met while walking a folder (counted, not listed). `size`: the file's size
    from stat, when known (a plain file is then read straight into the buffer)."""
    label = _label(root, path)
    length = _read_plain(path, size, into)
    if length is None:  # the general path: gzip, a file that changed size, ... or an error
        data, problems = read_bytes(path, label)
        if data is None:
            return problems[0] if explicit or problems[0].kind not in ("binary", "empty") else None
        length = into.write(data)
    big, at = into.buffer, into.end
    end = at + length
    if not explicit and not (any(big.find(m, at, min(end, at + 4 * SNIFF_BYTES)) >= 0 for m in MARKERS)
                             or any(big.find(m, at, end) >= 0 for m in MARKERS)):
        return None
    problems = []
    if not _is_ascii(big, at, end):  # ASCII is valid UTF-8: only other bytes need decoding
        text, problems = decode(bytes(big[at:end]), label)
        if problems:  # not UTF-8: the file is scanned as its decoded text
            length = into.write(text.encode("utf-8"))
    context = _context(label, pattern, contexts)
    if context is None:
        problems.append(Finding("warning", "path", f"path does not match --path-pattern {pattern.text!r}; environment unknown", label))  # type: ignore[union-attr]
        context = {"environment": ".", "nodes": None}
    into.commit(length)
    return _File(label, context, FileScan(), problems)


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
    batches: list[_Batch] = []
    skipped = n_rows = 0
    for loaded, batch in _read_batches(candidates, pattern, peak_override):
        first_file = len(files)
        for item in loaded:
            if isinstance(item, _File):
                files.append(item)
            elif isinstance(item, Finding):
                findings.append(item)
            else:
                skipped += 1
        batch.rows.file += first_file
        batch.first_row = n_rows
        batches.append(batch)
        n_rows += batch.rows.size
    if skipped:
        findings.append(Finding("info", "skipped", f"{skipped} file(s) under the given folders hold no MAGMA output and were skipped"))
    if not files and not findings:
        findings.append(Finding("warning", "no-data", "no MAGMA output files found"))
    rename = strip_common_prefix([str(f.context.get("environment", ".")) for f in files])
    for f in files:
        f.context["environment"] = rename.get(str(f.context.get("environment", ".")), f.context.get("environment"))
    rows, known = _assemble(files, batches, peak_override)
    _spare(b.buffer for b in batches if b.buffer is not None)  # no row is read from them any more
    for f in files:
        findings.extend(f.findings)
    return _result(rows, files, findings, known)


def _result(rows: pd.DataFrame, files: list[_File], findings: list[Finding], known: tuple[dict, dict] | None = None) -> MagmaResult:
    """Findings and runs from the rows; `known` = (per_file stats, failed sizes) when the
    batches computed them already."""
    stats, failed = known if known is not None else (magma_trust.per_file(rows), None)
    findings = findings + magma_trust.row_findings(rows, stats, failed)
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
    into = FileBuffer()
    loaded = _load(root, path, True, None, into)
    if not isinstance(loaded, _File):
        return _result(_assemble([], [], None)[0], [], [loaded] if loaded else [])
    rows, known = _assemble([loaded], [_scan_batch([loaded], into, {}, None)], None)
    return _result(rows, [loaded], list(loaded.findings), known)


PARALLEL_ROWS = 100_000
"""From this many rows on, the batches' columns are joined on several threads."""
BATCH_BYTES = 6 * 1024 * 1024
"""Files are scanned a few MB at a time: the scanner's temporary arrays then stay small and
are reused, instead of touching fresh memory for a whole tree at once. Not less: each batch
costs a fixed number of numpy calls, and each call hands the interpreter lock between the
reader's threads."""


SPARE_BUFFER_BYTES = 4 * BATCH_BYTES
SPARE_BYTES = 64 * 1024 * 1024
_SPARE_BUFFERS: list[FileBuffer] = []
"""Batch buffers kept for the next read (list.pop and append are atomic): a fresh buffer of a
few MB costs a page fault per 4 KB, more than reading the bytes into it. A read keeps each
batch's buffer until it is done (the rows are tokenised, and may be read again, where they
lie in it), then hands them back here: up to SPARE_BYTES in all, and none grown past
SPARE_BUFFER_BYTES (for one huge file)."""


def _spare(buffers: Iterable[FileBuffer]) -> None:
    """Keep some finished batches' buffers for the next read."""
    kept = sum(len(b.buffer) for b in _SPARE_BUFFERS)
    for buffer in buffers:
        size = len(buffer.buffer)
        if size <= SPARE_BUFFER_BYTES and kept + size <= SPARE_BYTES:
            _SPARE_BUFFERS.append(buffer)
            kept += size


@dataclass
class _Batch:
    """A few MB of files, scanned, tokenised and mapped: `cols` holds the tidy columns of the
    rows whose header kind reads as a plain number matrix here (`valid` marks them). The
    tokens are not kept: a kind that needs the general readers is read from the rows' text,
    which lies in `buffer` (kept until the whole read is done)."""

    rows: RowText
    cols: dict[str, np.ndarray]
    valid: np.ndarray
    widths: dict[HeaderSpec, int | None]
    """Tokens per row of each header kind in this batch; None: irregular, read by the general readers."""
    first_row: int = 0
    buffer: FileBuffer | None = None
    """The read's buffer that holds the batch's files, rows included (handed back when the read is done)."""
    derived: dict[str, np.ndarray] = field(default_factory=dict)
    """`magma_trust.derived_columns` of `cols`."""
    flags: dict[str, np.ndarray] | None = None
    """warmup, impossible and excluded per row, when every row of the batch is a data row
    and reads as a number matrix (else the whole tree is flagged at once)."""
    stats: dict[str, dict] = field(default_factory=dict)
    """`magma_trust.per_file` of the batch's files (environment filled in later), with `flags`."""
    failed: dict[str, list[str]] = field(default_factory=dict)
    """`magma_trust.failed_sizes` of the batch's files, with `flags`."""
    sizes: np.ndarray | None = None
    """The batch's distinct `packed_sizes`, sorted, when it has them; `size_codes` numbers
    its rows by them (the tree's problem sizes are then numbered without a pass over all rows)."""
    size_codes: np.ndarray | None = None


def _scan_batch(files: list[_File], joined: FileBuffer, cache: dict, peak_override: float | None) -> _Batch:
    """Scan, tokenise, map and flag the rows of some loaded files, whose bytes `joined` holds
    (row file numbers are local to them)."""
    scans, rows = scan_buffer(joined, cache)
    for f, found in zip(files, scans):
        f.scan = found
    tokens = split_rows(rows.source, rows.first, rows.stop, rows.begin)
    batch = _Batch(rows, {}, np.zeros(rows.size, bool), {})
    if not rows.size:
        return batch
    block_offsets = np.cumsum([0] + [len(f.scan.blocks) for f in files])
    kinds: dict[HeaderSpec, int] = {}
    kind_of_block = np.array([kinds.setdefault(b.spec, len(kinds)) for f in files for b in f.scan.blocks], np.int64)
    kind_of_row = kind_of_block[rows.block + block_offsets[rows.file]]
    for spec, k in kinds.items():
        chosen = np.flatnonzero(kind_of_row == k) if len(kinds) > 1 else np.arange(rows.size)
        if not chosen.size:  # a header with no rows under it (a truncated copy of another)
            continue
        matrix = numeric_rows([(tokens, chosen)])
        batch.widths[spec] = None if matrix is None else matrix.shape[1]
        if matrix is not None:
            _put(batch.cols, batch.valid, chosen, rows.size, *map_columns(matrix, spec))
    batch.derived = magma_trust.derived_columns(batch.cols, rows.size)
    if "packed_sizes" in batch.derived:
        batch.size_codes, batch.sizes = pd.factorize(batch.derived["packed_sizes"], sort=True)  # numbered in size order
    if batch.valid.all() and None not in batch.widths.values() and "packed_sizes" in batch.derived:
        _flag(batch, files, peak_override)
    return batch


def _flag(batch: _Batch, files: list[_File], peak_override: float | None) -> None:
    """Trust flags and per-file statistics of a batch whose rows all read as numbers: files
    are independent, so this is the batch's share of `tidy` and `per_file`."""
    rows, cols, total = batch.rows, batch.cols, batch.rows.size
    blocks = [b for f in files for b in f.scan.blocks]
    block_of_row = rows.block + np.cumsum([0] + [len(f.scan.blocks) for f in files])[rows.file]
    empty = np.full(total, np.nan)
    gflops, time = cols.get("gflops", empty), cols.get("time_ms", empty)
    failed = cols["status"] == FAILED if "status" in cols else np.zeros(total, bool)
    key = batch.derived["packed_sizes"]
    warm, impossible, excluded = magma_trust.trust_flags(
        block_of_row, key, blocks, [f.scan.device for f in files for _ in f.scan.blocks], gflops, time,
        cols.get("status", np.full(total, NO_STATUS, np.int8)), peak_override)
    batch.flags = {"warmup": warm, "impossible": impossible, "excluded": excluded}
    size_codes, sizes = batch.size_codes, batch.sizes

    def size_label(code: int) -> str:
        return magma_trust.size_label(int(sizes[code]))

    def first_fields(row: int) -> dict:
        f = files[rows.file[row]]
        nodes = f.context.get("nodes")
        return {"environment": None, "nodes": pd.NA if nodes is None else np.int64(float(nodes)),  # type: ignore[arg-type]
                "device": f.scan.device, "precision": magma_trust.precision_of(blocks[block_of_row[row]].test)}

    labels = [f.label for f in files]
    batch.stats = magma_trust.file_stats(rows.file, labels, failed, warm, impossible, rows.line.astype(np.float64), gflops, time,
                                         size_codes, size_label, first_fields)
    batch.failed = magma_trust.failed_sizes(rows.file, labels, failed, size_codes, size_label)


def _put(cols: dict[str, np.ndarray], valid: np.ndarray, chosen: np.ndarray, total: int,
         mapped: dict[str, np.ndarray | None], ok: np.ndarray | None) -> None:
    """Write one header kind's columns into the columns of all rows."""
    for name, values in mapped.items():
        if values is None:  # not in this tester's rows: NaN (no status) stays
            continue
        if chosen.size == total:
            cols[name] = values
            continue
        if name not in cols:
            cols[name] = _blank_column(name, total)
        cols[name][chosen] = values
    valid[chosen] = True if ok is None else ok


def _blank_column(name: str, size: int) -> np.ndarray:
    return np.full(size, NO_STATUS, np.int8) if name == "status" else np.full(size, np.nan)


def _workers() -> int:
    return max(1, min(4, magma_stats.usable_cpus()))


def _read_batches(candidates: list[tuple[Path, Path, bool]], pattern: PathPattern | None, peak_override: float | None = None) -> Iterable[tuple[list[_File | Finding | None], _Batch]]:
    """Load, scan and tokenise the candidate files a few MB at a time, in order.

    Batches run on a few threads: reading, numpy and Arrow spend most of their time outside
    the interpreter lock, so the cores of the machine share the work. Each batch comes with
    what loading said about each of its files (a file, a finding, or None for a skipped one)."""
    sizes = []
    for _, path, _ in candidates:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)  # _load reports it
    # Batches of about BATCH_BYTES, as many as a multiple of the workers, so that no core
    # waits for the last one alone.
    workers = _workers()
    count = max(1, -(-sum(sizes) // BATCH_BYTES))
    count = -(-count // workers) * workers if count >= workers else count
    share = max(1, sum(sizes)) / count
    plan: list[list[tuple[Path, Path, bool, int]]] = [[]]
    done = 0
    for candidate, file_size in zip(candidates, sizes):
        plan[-1].append((*candidate, file_size))
        done += file_size
        if done >= share * len(plan):  # cut at equal shares of the total: no small last batch
            plan.append([])
    cache: dict = {}
    contexts: dict = {}

    def work(chunk: list[tuple[Path, Path, bool, int]]) -> tuple[list[_File | Finding | None], _Batch]:
        try:
            into = _SPARE_BUFFERS.pop()  # one call: two threads never get the same buffer
        except IndexError:
            into = FileBuffer()
        into.clear(sum(size for *_, size in chunk) + len(chunk))  # grown once, not file by file
        loaded = [_load(root, path, explicit, pattern, into, contexts, size) for root, path, explicit, size in chunk]
        batch = _scan_batch([x for x in loaded if isinstance(x, _File)], into, cache, peak_override)
        batch.buffer = into  # its rows lie in it: kept until the read is done
        return loaded, batch

    plan = [chunk for chunk in plan if chunk]
    workers = min(workers, len(plan))
    if workers <= 1:
        yield from map(work, plan)
        return
    pool = ThreadPoolExecutor(workers, thread_name_prefix="magma-read")
    gate = threading.Event()
    try:
        # Start every thread before handing out work: a thread that starts straight on a
        # batch holds the interpreter lock, and the next one would start a switch interval
        # (5 ms) later. Each waits at the gate (off the lock) until all work is queued.
        for _ in range(workers):
            pool.submit(gate.wait)
        futures = [pool.submit(work, chunk) for chunk in plan]
        gate.set()
        for future in futures:
            yield future.result()
    finally:  # also when the caller stops early or a batch fails: drop what has not started
        gate.set()
        pool.shutdown(wait=True, cancel_futures=True)


def _join(parts: dict[str, list[np.ndarray]], total: int) -> dict[str, np.ndarray]:
    """Each column's parts joined, one array per column, on the reader's threads: writing
    the columns touches fresh memory (page faults), which the cores can share. Not one
    block per dtype: a block that large makes numpy ask for huge pages, and fresh huge pages
    cost far more than the small pages the allocator recycles (stalls of tens of ms on a VM)."""

    def join(pieces: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(pieces) if pieces else np.empty(total)

    workers = _workers()
    if workers < 2 or total < PARALLEL_ROWS:
        return {name: join(pieces) for name, pieces in parts.items()}
    with ThreadPoolExecutor(workers, thread_name_prefix="magma-join") as pool:
        return dict(zip(parts, pool.map(join, parts.values())))


def _assemble(files: list[_File], batches: list[_Batch], peak_override: float | None) -> tuple[pd.DataFrame, tuple[dict, dict] | None]:
    """Join the batches' columns; header kinds whose rows are not one number matrix across
    all files (another token count, a word) are read again by the general readers. Then
    add context and flags."""
    total = sum(b.rows.size for b in batches)
    n_blocks = np.array([len(f.scan.blocks) for f in files], np.int64)
    block_offsets = np.concatenate(([0], np.cumsum(n_blocks)[:-1])).astype(np.int64)
    blocks = [b for f in files for b in f.scan.blocks]
    names = list(dict.fromkeys(name for b in batches for name in b.cols))
    parts = {name: [b.cols[name] if name in b.cols else _blank_column(name, b.rows.size) for b in batches] for name in names}
    widths: dict[HeaderSpec, set[int | None]] = {}
    for b in batches:
        for spec, width in b.widths.items():
            widths.setdefault(spec, set()).add(width)
    irregular = [spec for spec, found in widths.items() if len(found) > 1 or None in found]
    derived = set.intersection(*(set(b.derived) for b in batches if b.rows.size)) if total and not irregular else set()
    parts.update({name: [b.derived[name] for b in batches if b.rows.size] for name in sorted(derived)})
    tree_sizes = None
    if "packed_sizes" in derived:  # number the problem sizes of all rows from each batch's own numbering
        tree_sizes = np.unique(np.concatenate([b.sizes for b in batches if b.rows.size]))
        width = magma_trust.code_type(tree_sizes.size)
        parts["size_code"] = [np.searchsorted(tree_sizes, b.sizes).astype(width)[b.size_codes] for b in batches if b.rows.size]
        if all(b.valid.all() for b in batches):
            # No row is read again or dropped: the sizes as floats and their packed key are
            # not needed (tidy takes whole numbers, missing masks and size codes), so they
            # are not joined (less fresh memory to fill).
            for name in ("batch_count", "m", "n", "k", "packed_sizes"):
                parts.pop(name, None)
    # Flags and per-file statistics from the batches, when every batch could make them and
    # no label is shared by two files (their rows would count together).
    known = None
    flagged = [b for b in batches if b.rows.size]
    if not irregular and all(b.flags is not None for b in flagged) and len({f.label for f in files}) == len(files):
        if flagged:
            parts.update({name: [b.flags[name] for b in flagged] for name in ("warmup", "impossible", "excluded")})  # type: ignore[index]
        stats = {label: record for b in flagged for label, record in b.stats.items()}
        environment = {f.label: str(f.context.get("environment", ".")) for f in files}
        for label, record in stats.items():
            record["environment"] = environment[label]
        known = (stats, {label: sizes for b in flagged for label, sizes in b.failed.items()})
    own = ("file", "block", "line", "valid")  # the rows' own arrays, joined with the columns
    parts.update({f"row:{name}": [getattr(b.rows, name) if name != "valid" else b.valid for b in batches] for name in own})
    cols = _join(parts, total)
    file_of_row, block_of_row, lines, valid = (cols.pop(f"row:{name}") for name in own)
    if not batches:
        file_of_row, block_of_row, lines, valid = np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.zeros(0, bool)
    block_of_row = block_of_row + block_offsets[file_of_row] if total else np.empty(0, np.int64)
    if irregular:  # read those kinds' rows again, all files at once, with the general readers
        spec_ids: dict[HeaderSpec, int] = {}
        spec_of_block = np.array([spec_ids.setdefault(b.spec, len(spec_ids)) for b in blocks], np.int64)
        spec_of_row = spec_of_block[block_of_row]
        bounds = np.array([b.first_row for b in batches] + [total], np.int64)
        for spec in irregular:
            chosen = np.flatnonzero(spec_of_row == spec_ids[spec])
            cut = np.searchsorted(chosen, bounds)
            chunk = b"".join(b.rows.joined(chosen[cut[i] : cut[i + 1]] - b.first_row)[0] for i, b in enumerate(batches) if cut[i + 1] > cut[i])
            frame = read_numeric(chunk, chosen.size)
            if frame is None:
                frame = tokenize(chunk, np.bincount(file_of_row[chosen], minlength=len(files)).tolist())
            mapped, ok = map_columns(frame, spec)
            for name, values in cols.items():  # drop what a batch may have read for these rows
                values[chosen] = NO_STATUS if name == "status" else np.nan
            _put(cols, valid, chosen, total, mapped, ok)

    junk = ~valid
    if junk.any():
        for fi in np.unique(file_of_row[junk]).tolist():
            bad = lines[junk & (file_of_row == fi)]
            files[fi].findings.append(Finding("warning", "unparsed", f"{bad.size} line(s) start with a number but are not data rows of this tester's table; skipped", files[fi].label, int(bad[0]), int(bad.size)))
        keep = valid
        cols = {k: v[keep] for k, v in cols.items()}
        lines, file_of_row, block_of_row = lines[keep], file_of_row[keep], block_of_row[keep]
        known = None  # rows were dropped: flag and count what is left, all files at once
        for name in ("warmup", "impossible", "excluded", "size_code"):  # size_code: some sizes may be gone
            cols.pop(name, None)
    return magma_trust.tidy(
        cols=cols,
        lines=lines,
        file_of_row=file_of_row,
        block_of_row=block_of_row,
        files=files,
        blocks=blocks,
        peak_override=peak_override,
        columns=COLUMNS,
        sizes=tree_sizes if "size_code" in cols else None,
    ), known
