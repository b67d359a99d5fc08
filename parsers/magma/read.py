"""Provides the MAGMA tester reader: output files -> one tidy row per data row and implementation.

    from gpuscope.parsers.magma import read as magma
    rows, findings = magma.read("magma-vbatched-iter-1.out")
    result = magma.read_tree(["experiments/"], exclude=("attempt-1",))

Formats: shared/research/formats-scaling.md §1; what a header means is in magma_layout, the
one place that knows columns. Rows are kept even when they cannot be trusted: the `excluded`
column says why statistics skip them (magma_trust decides).

How, in one path: files are read a few MB at a time on two threads (magma_lines): numpy finds
the lines and tokenises those that start with a blank or a digit, one Arrow cast reads the
numbers, and a data row is a line whose first token is a whole number; the few other lines that
say something (usage and command lines, options, headers, trailers) are read in Python, in file
order, and give each data row its header. The batches' columns are then joined into one table.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.magma import layout as fmt
from gpuscope.metrics.magma import trust as magma_trust
from gpuscope.parsers.magma.lines import Block, Lines, RunInfo, label_blocks, read_lines
from gpuscope.parsers.rules import mentions_magma
from gpuscope.parsers.patterns import PathPattern, context_for, is_excluded, strip_common_prefix
from gpuscope.parsers.files import MAX_BYTES, MAX_LINES, MB, decode, display_name, read_bytes, too_many_lines

SKIPPED_NAMED = 20
"""How many of the files skipped as not MAGMA output the finding names."""


@dataclass(frozen=True)
class MagmaResult:
    """Every row of every file read, one row per file in `runs`, and all findings."""

    rows: pd.DataFrame
    runs: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    files_read: int = 0


def _walk(root: Path, findings: list[Finding]) -> Iterable[Path]:
    """Every file under `root`; a folder that cannot be listed (permission denied, a path over
    PATH_MAX) is a finding, and the walk goes on."""

    def unlisted(exc: OSError) -> None:
        where = display_name(exc.filename) if exc.filename is not None else display_name(root)
        findings.append(Finding("warning", "unreadable", f"cannot list folder: {exc.strerror or exc}", where))

    for folder, dirs, files in os.walk(root, followlinks=False, onerror=unlisted):
        dirs.sort()
        base = Path(folder)
        for name in sorted(files):
            yield base / name


def discover(paths: Sequence[str | os.PathLike[str]], exclude: Sequence[str] = ()) -> tuple[list[tuple[Path, Path, bool]], list[Finding]]:
    """(root, file, given explicitly) for every candidate file, and findings for missing paths."""
    found: list[tuple[Path, Path, bool]] = []
    findings: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            walked: Iterable[Path] = _walk(path, findings)
            if exclude:
                walked = (f for f in walked if not is_excluded(PurePosixPath(f.relative_to(path).as_posix()), tuple(exclude)))
            found.extend((path, f, False) for f in walked)
        elif path.exists() or path.is_symlink():  # a symlink loop: read, to say so
            found.append((path.parent, path, True))
        else:
            findings.append(Finding("error", "missing", "no such file or folder", display_name(path)))
    return found, findings


def _label(root: Path, path: Path) -> str:
    return display_name(path.relative_to(root).as_posix() if path != root else path.name)


def _load(root: Path, path: Path, explicit: bool, pattern: PathPattern | None,
          budget: tuple[int, int] = (MAX_BYTES, MAX_LINES)) -> tuple[bytes, RunInfo, int] | Finding | str:
    """One file's text (ending with a newline), its run record and its lines; a finding when it
    cannot be read; for a file met while walking a folder that is not MAGMA output, why (a few words)."""
    label = _label(root, path)
    data, problems = read_bytes(path, label, budget[0], max_lines=None)  # lines counted once, here
    if data is None:
        return problems[0] if explicit or problems[0].kind not in ("binary", "empty") else problems[0].kind
    lines = int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10))  # newlines: twice as fast as bytes.count
    if lines > budget[1]:
        return too_many_lines(lines, budget[1], label)
    if not explicit and not mentions_magma(data):  # rules.MAGMA_MARKERS: a file met while walking
        return "no MAGMA header"
    if not data.isascii():  # ASCII is valid UTF-8: only other bytes need decoding
        text, problems = decode(data, label)
        data = text.encode("utf-8")
    context = context_for(label, pattern)
    if context is None:
        problems.append(Finding("warning", "path", f"path does not match --path-pattern {pattern.text!r}; environment unknown", label))  # type: ignore[union-attr]
        context = {"environment": ".", "nodes": None}
    run = RunInfo(label, context, findings=list(problems))
    if not data.endswith(b"\n"):
        run.last_line_cut = True
        data += b"\n"
        lines += 1
    return data, run, lines


def read_tree(paths: Sequence[str | os.PathLike[str]], *, path_pattern: str | None = None, exclude: Sequence[str] = (),
              peak_override: float | None = None) -> MagmaResult:
    """Read every MAGMA output under `paths` (files or folders) into one tidy table.

    `peak_override` (Gflop/s) replaces the peak table for the impossible-value check."""
    pattern = PathPattern.compile(path_pattern) if path_pattern else None
    candidates, findings = discover(paths, exclude)
    texts: list[bytes] = []
    runs: list[RunInfo] = []
    skipped: list[str] = []
    left = [MAX_BYTES, MAX_LINES]  # one budget for the tree: every text is kept until the table is built
    for root, path, explicit in candidates:
        loaded = _load(root, path, explicit, pattern, (left[0], left[1]))
        if isinstance(loaded, str):
            skipped.append(f"{_label(root, path)} ({loaded})")
        elif isinstance(loaded, Finding):
            if loaded.kind == "huge" and left != [MAX_BYTES, MAX_LINES]:
                loaded = Finding("error", "huge", f"{loaded.message}; the limit is what the files read before it left of the budget of one read "
                                 f"({MAX_BYTES // MB} MB and {MAX_LINES:,} lines of text for all files)", loaded.file)
            findings.append(loaded)
        else:
            texts.append(loaded[0])
            runs.append(loaded[1])
            left[0] -= len(loaded[0])
            left[1] -= loaded[2]
    if skipped:
        named = ", ".join(skipped[:SKIPPED_NAMED]) + (f" and {len(skipped) - SKIPPED_NAMED} more" if len(skipped) > SKIPPED_NAMED else "")
        findings.append(Finding("info", "skipped", f"{len(skipped)} file(s) under the given folders hold no MAGMA output and were skipped: {named}",
                                count=len(skipped)))
    if not runs and not findings:
        findings.append(Finding("warning", "no-data", "no MAGMA output files found"))
    rename = strip_common_prefix([str(r.context.get("environment", ".")) for r in runs])
    for r in runs:
        r.context["environment"] = rename.get(str(r.context.get("environment", ".")), r.context.get("environment"))
    _digests(texts, runs)
    rows = _rows(texts, runs)
    return _result(magma_trust.flag(rows, runs, peak_override), runs, findings)


def _result(rows: pd.DataFrame, runs: list[RunInfo], findings: list[Finding]) -> MagmaResult:
    stats = magma_trust.file_stats(rows, runs)
    for r in runs:
        findings.extend(r.findings)
    findings += magma_trust.findings(rows, runs, stats)
    return MagmaResult(rows=rows, runs=magma_trust.runs_table(rows, runs, stats), findings=findings, files_read=len(runs))


def _digests(texts: list[bytes], runs: list[RunInfo]) -> None:
    """Give byte-identical files the same `digest` (the label of the first of them). Files are
    compared whole only when their size, head and tail match: most copies differ early."""
    first: dict[tuple, list[int]] = {}
    for i, text in enumerate(texts):
        same = first.setdefault((len(text), text[:4096], text[-4096:]), [])
        match = next((j for j in same if texts[j] == text), None)
        if match is None:
            same.append(i)
        else:
            runs[match].digest = runs[i].digest = runs[match].label


def read(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> tuple[pd.DataFrame, list[Finding]]:
    """One file (or folder) as (tidy rows, findings): the notebook entry point. `root`: the
    folder the file's label (and so its environment) is taken relative to."""
    path = Path(path)
    if root is None or path.is_dir():
        result = read_tree([path])
    else:
        loaded = _load(Path(root), path, True, None)
        if not isinstance(loaded, tuple):
            return _rows([], []), [loaded] if isinstance(loaded, Finding) else []
        data, run, _ = loaded
        result = _result(magma_trust.flag(_rows([data], [run]), [run], None), [run], [])
    return result.rows, result.findings


# --- data rows -------------------------------------------------------------------------------

BATCH_BYTES = 4 << 20
"""Files are read a few MB at a time, on two threads: numpy and Arrow work with the interpreter
lock released, so both cores of a small node share the work, and each batch's temporary arrays
stay small enough to be reused instead of faulted in afresh."""


@dataclass
class _Batch:
    """The rows of some consecutive files: columns, and per row its file, block and line."""

    cols: dict[str, np.ndarray]
    file: np.ndarray
    block: np.ndarray
    line: np.ndarray
    blocks: list[Block]
    impl_names: list[str]
    """The names of the batch's `impl` codes."""


def _rows(texts: list[bytes], runs: list[RunInfo]) -> pd.DataFrame:
    """The tidy table of every data row of the files (`texts[i]` is `runs[i]`'s text)."""
    cuts = [0]
    size = 0
    for i, text in enumerate(texts):
        size += len(text)
        if size >= BATCH_BYTES * len(cuts):
            cuts.append(i + 1)
    if cuts[-1] != len(texts):
        cuts.append(len(texts))
    spans = list(zip(cuts, cuts[1:]))
    with ThreadPoolExecutor(2) as pool:
        batches = list(pool.map(lambda span: _read_batch(texts[span[0] : span[1]], runs[span[0] : span[1]], span[0]), spans))
    blocks = [b for batch in batches for b in batch.blocks]
    label_blocks(blocks, runs)
    offsets = np.cumsum([0] + [len(batch.blocks) for batch in batches])
    impls = list(dict.fromkeys(name for batch in batches for name in batch.impl_names))
    for batch in batches:  # one numbering of the implementations for all batches
        if "impl" in batch.cols:
            batch.cols["impl"] = np.array([impls.index(name) for name in batch.impl_names], np.int16)[batch.cols["impl"]]
    names = list(dict.fromkeys(name for batch in batches for name in batch.cols))
    cols = {name: np.concatenate([batch.cols.get(name, _missing(name, batch.file.size)) for batch in batches]) for name in names}

    def joined(part: str) -> np.ndarray:
        """A per-row array of all batches (block numbers of the whole read)."""
        return np.concatenate([getattr(batch, part) + (offset if part == "block" else 0) for batch, offset in zip(batches, offsets)] or [np.empty(0, np.int64)])

    return _frame(cols, joined("file"), joined("block"), joined("line"), blocks, runs, impls)


def _missing(name: str, size: int) -> np.ndarray:
    """A column a batch has no values for: no status, or NaN."""
    if name in ("status", "impl"):
        return np.full(size, fmt.NO_STATUS, np.int8) if name == "status" else np.zeros(size, np.int16)
    return np.full(size, np.nan)


def _read_batch(texts: list[bytes], runs: list[RunInfo], first_file: int) -> _Batch:
    """The rows of some consecutive files, in file and line order, a row's implementations in
    header order."""
    big = b"".join(texts)
    lines = read_lines(big, [len(t) for t in texts], runs)
    pieces = []
    for layout, rows in lines.groups():
        pieces += _read_group(big, layout, rows, lines)
    names = list(dict.fromkeys(n for cols, _ in pieces for n in cols))
    cols = {name: np.concatenate([c.get(name, _missing(name, r.size)) for c, r in pieces]) for name in names}
    row_of = np.concatenate([r for _, r in pieces]) if pieces else np.empty(0, np.int64)
    if len(pieces) > 1:
        order = np.argsort(row_of, kind="stable")
        row_of = row_of[order]
        cols = {name: values[order] for name, values in cols.items()}
    for block in lines.blocks:  # file numbers of the whole read, from here on
        block.file += first_file
    return _Batch(cols, lines.row_file[row_of] + first_file, lines.row_block[row_of], lines.row_line[row_of], lines.blocks, lines.impl_names)


def _read_group(big: bytes, layout: fmt.Layout, rows: np.ndarray, lines: Lines) -> list[tuple[dict, np.ndarray]]:
    """The rows (indices into `lines.row_*`) under one header kind: one piece per
    implementation that ran (a Gflop/s or time printed, not `---`)."""
    tokens = lines.tokens
    # The layout as the rows print it, from a row of the most common length (not the first:
    # it may be cut short).
    count = lines.row_count[rows]
    typical = int(rows[np.flatnonzero(count == np.bincount(count).argmax())[0]])
    layout = fmt.fit_layout(layout, big[lines.row_start[typical] : lines.row_end[typical]].decode("utf-8", "replace"))
    width = layout.width
    with_status = count == width + 1
    # A row may end after its implementations' columns: a tester run without its check
    # (no --lapack) prints no error and no status; those errors are NaN.
    checks = len(layout.errors)
    unchecked = (count == width - checks) & (checks > 0)
    if unchecked.any():  # but a file's cut last line is no unchecked row: it lost its end
        cut = np.array([run.last_line_cut for run in lines.runs] + [False])
        last = np.zeros(len(lines.runs) + 1, np.int64)
        np.maximum.at(last, lines.row_file, lines.row_line)
        files = lines.row_file[rows]
        unchecked &= ~(cut[files] & (lines.row_line[rows] == last[files]))
    ok = (count == width) | with_status | unchecked
    first = lines.row_token[rows]
    index = first[:, None] + np.arange(width)[None, :]
    index[~ok] = 0
    index[unchecked, width - checks :] = 0
    kinds = tokens.kind[index]
    values = tokens.value[index]
    kinds[unchecked, width - checks :] = fmt.DASHES
    values[unchecked, width - checks :] = np.nan
    ok &= (kinds <= fmt.DASHES).all(axis=1)  # numbers or `---`; a word inside a row: not a data row
    n_sizes = len(layout.sizes)
    ok &= (kinds[:, :n_sizes] == fmt.NUMBER).all(axis=1) & np.isfinite(values[:, :n_sizes]).all(axis=1)
    last = tokens.kind[np.where(with_status, first + width, 0)]
    status = np.where(with_status, last, fmt.NO_STATUS).astype(np.int8)
    ok &= (status == fmt.NO_STATUS) | (status == fmt.OK) | (status == fmt.FAILED)
    lines.reject(rows[~ok])
    rows, values, status = rows[ok], values[ok], status[ok]
    decimals = tokens.decimals[index[ok]]
    shared = {name: values[:, i] for i, name in enumerate(layout.sizes)}
    at = n_sizes
    impl_cols = []
    for impl, timed, to_ms in layout.impls:
        # A time is as precise as printed: `0.00` s says under 5 ms (half the last digit).
        if layout.time_only:  # eigen and singular value testers print a time and no Gflop/s
            gflops, time, column = np.full(rows.size, np.nan), values[:, at] * to_ms, at
            at += 1
        else:
            gflops, column = values[:, at], at + 1
            time = values[:, column] * to_ms if timed else np.full(rows.size, np.nan)
            at += 2 if timed else 1
        resolution = 0.5 * to_ms * 10.0 ** -decimals[:, column].astype(np.float64) if timed else np.full(rows.size, np.nan)
        impl_cols.append((impl, gflops, time, resolution))
    for name in layout.errors:
        shared[name] = values[:, at]
        at += 1
    shared["status"] = status
    pieces: list[tuple[dict, np.ndarray]] = []
    for impl, gflops, time, resolution in impl_cols:
        ran = ~(np.isnan(gflops) & np.isnan(time))
        if not ran.any():
            continue
        chosen = np.flatnonzero(ran)
        cols = {name: v[chosen] for name, v in shared.items()}
        cols.update(gflops=gflops[chosen], time_ms=time[chosen], time_res_ms=np.where(np.isnan(time[chosen]), np.nan, resolution[chosen]))
        cols["impl"] = np.full(chosen.size, lines.impl_code(impl), np.int16)
        pieces.append((cols, rows[chosen]))
    return pieces


def _frame(cols: dict[str, np.ndarray], file_of: np.ndarray, block_of: np.ndarray, line: np.ndarray, blocks: list[Block],
           runs: list[RunInfo], impls: list[str]) -> pd.DataFrame:
    """The tidy table: number columns, then what each row's block and file say."""
    n = file_of.size
    empty = np.full(n, np.nan)

    def categorical(codes: np.ndarray, labels: list) -> pd.Categorical:
        """Per row, the label of its block or file (None: missing, as for an option only some testers print)."""
        index: dict = {}
        remap = np.array([-1 if x is None else index.setdefault(x, len(index)) for x in labels] or [0], np.int64)
        return pd.Categorical.from_codes(remap[codes] if n else codes, categories=pd.Index(list(index), dtype=object))

    def integers(name: str) -> pd.arrays.IntegerArray:
        values = cols.get(name, empty)
        missing = np.isnan(values)
        return pd.arrays.IntegerArray(np.where(missing, 0, values).astype(np.int64), missing)

    m, nn, k = (cols.get(c, empty) for c in ("m", "n", "k"))
    # Problem sizes numbered in (m, n, k) order: one int64 key per row when the sizes fit.
    dims = [np.where(np.isnan(d), -1, d).astype(np.int64) + 1 for d in (m, nn, k)]
    if n and max(int(d.max()) for d in dims) < 1 << 21:
        codes, found = pd.factorize((dims[0] << 42) | (dims[1] << 21) | dims[2])  # a hash table: few distinct sizes
        order = np.argsort(found)
        keys, size_codes = found[order], np.argsort(order)[codes]
        triples = np.stack([keys >> 42, (keys >> 21) & ((1 << 21) - 1), keys & ((1 << 21) - 1)], 1) - 1
    else:
        triples, size_codes = np.unique(np.stack(dims, 1) - 1 if n else np.empty((0, 3), np.int64), axis=0, return_inverse=True)
    size_labels = ["x".join(str(v) for v in t if v >= 0) for t in triples.tolist()]
    frame = {
        "test": categorical(block_of, [b.label for b in blocks]),
        "precision": categorical(block_of, [fmt.precision_of(b.test) for b in blocks]),
        "impl": pd.Categorical.from_codes(cols.get("impl", np.zeros(n, np.int16)), categories=pd.Index(impls or ["magma"], dtype=object)),
        "batch_count": integers("batch_count"), "m": integers("m"), "n": integers("n"), "k": integers("k"),
        "problem_size": pd.Categorical.from_codes(size_codes.reshape(-1), categories=pd.Index(size_labels, dtype=object)),
        "gflops": cols.get("gflops", empty), "time_ms": cols.get("time_ms", empty), "time_res_ms": cols.get("time_res_ms", empty),
    }
    for name in sorted(set(cols) - set(frame) - {"status", "impl"}):  # the error columns, by the names their headers give
        frame[name] = cols[name]
    frame["status"] = pd.Categorical.from_codes(cols.get("status", np.full(n, fmt.NO_STATUS, np.int8)) - fmt.OK, categories=pd.Index(fmt.STATUS_NAMES, dtype=object))
    frame["device"] = categorical(file_of, [r.device for r in runs])
    frame["file"] = categorical(file_of, [r.label for r in runs])
    frame["line"] = line
    frame["environment"] = categorical(file_of, [str(r.context.get("environment", ".")) for r in runs])
    nodes = np.array([np.nan if r.context.get("nodes") is None else float(r.context["nodes"]) for r in runs] or [np.nan])
    frame["nodes"] = pd.arrays.IntegerArray(np.nan_to_num(nodes[file_of]).astype(np.int64), np.isnan(nodes[file_of]))
    for name in sorted({key for r in runs for key in r.context} - {"environment", "nodes"}):
        frame[name] = categorical(file_of, [r.context.get(name) for r in runs])
    for name in sorted({key for b in blocks for key in b.options}):
        frame[name] = categorical(block_of, [b.options.get(name) for b in blocks])
    return pd.DataFrame(frame)
