"""Provides the MAGMA tester reader: output files -> one tidy row per data row and implementation.

    from gpuscope.parsers.magma import read as magma
    rows, findings = magma.read("magma-vbatched-iter-1.out")
    result = magma.read_tree(["experiments/"], exclude=("attempt-1",))

Formats: shared/research/formats-scaling.md §1; what a header means is in `layout`, the one
place that knows columns. Rows are kept even when they cannot be trusted: the `excluded` column
says why statistics skip them (metrics/magma/trust decides).

How, in one path: one regular expression pass per file (`lines.scan`) finds the runs of data
rows and reads the other lines that say something, which give each run its block (tester,
options, header). The rows of all blocks under one header kind go through pandas' C CSV parser
as one text; numpy then checks each row against its layout and makes the tidy table.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.magma import layout as fmt
from gpuscope.metrics.magma import trust as magma_trust
from gpuscope.metrics.magma.run import RunInfo
from gpuscope.parsers.magma.lines import BLANKS, Block, label_blocks, mentions_magma, scan
from gpuscope.parsers.patterns import PathPattern, context_for, is_excluded, strip_common_prefix
from gpuscope.parsers.files import MAX_BYTES, MAX_LINES, MB, decode, display_name, read_bytes, too_many_lines, walk

SKIPPED_NAMED = 20
"""How many of the files skipped as not MAGMA output the finding names."""


@dataclass(frozen=True)
class MagmaResult:
    """Every row of every file read, one row per file in `runs`, and all findings."""

    rows: pd.DataFrame
    runs: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    files_read: int = 0


def discover(paths: Sequence[str | os.PathLike[str]], exclude: Sequence[str] = (),
             root: str | os.PathLike[str] | None = None) -> tuple[list[tuple[Path, Path, bool]], list[Finding]]:
    """(root, file, given explicitly) for every candidate file (through the one folder walker),
    and findings for missing paths and folders that cannot be listed. A file given by itself
    is labelled relative to `root`, by default its folder."""
    found: list[tuple[Path, Path, bool]] = []
    findings: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in walk(path):
                if exclude and is_excluded(PurePosixPath(file.relative_to(path).as_posix()), tuple(exclude)):
                    continue
                if os.path.isdir(file):  # a link to a folder is not followed; a folder yielded itself cannot be listed
                    if not os.path.islink(file):
                        findings.append(Finding("warning", "unreadable", "cannot list folder", _label(path, file)))
                    continue
                found.append((path, file, False))
        elif path.exists() or path.is_symlink():  # a symlink loop: read, to say so
            found.append((Path(root) if root is not None else path.parent, path, True))
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
    lines = data.count(b"\n")
    if lines > budget[1]:
        return too_many_lines(lines, budget[1], label)
    if not explicit and not mentions_magma(data):  # a file met while walking
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
              peak_override: float | None = None, root: str | os.PathLike[str] | None = None) -> MagmaResult:
    """Read every MAGMA output under `paths` (files or folders) into one tidy table.

    `peak_override` (Gflop/s) replaces the peak table for the impossible-value check."""
    pattern = PathPattern.compile(path_pattern) if path_pattern else None
    candidates, findings = discover(paths, exclude, root)
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
    rows = magma_trust.flag(_rows(texts, runs), runs, peak_override)
    stats = magma_trust.file_stats(rows, runs)
    for r in runs:
        findings.extend(r.findings)
    findings += magma_trust.findings(rows, runs, stats)
    return MagmaResult(rows=rows, runs=magma_trust.runs_table(rows, runs, stats), findings=findings, files_read=len(runs))


def _digests(texts: list[bytes], runs: list[RunInfo]) -> None:
    """Give byte-identical files the same `digest` (the label of the first of them)."""
    first: dict[bytes, int] = {}
    for i, text in enumerate(texts):
        j = first.setdefault(text, i)
        if j != i:
            runs[j].digest = runs[i].digest = runs[j].label


def read(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> tuple[pd.DataFrame, list[Finding]]:
    """One file (or folder) as (tidy rows, findings): the notebook entry point. `root`: the
    folder a file's label (and so its environment) is taken relative to."""
    result = read_tree([path], root=root)
    return result.rows, result.findings


# --- data rows -------------------------------------------------------------------------------

NUMBER, DASHES, OK, FAILED, MISSING, WORD = range(6)
"""What a row's field is: a number, `---` (not run), a status word, no field, anything else."""
NUMBER_TEXT = r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$"
"""A field Arrow reads as a number; any other field (`nan`, `inf`, a status word, a word) is
looked at by `_word`."""
SAMPLE = 1000
"""Rows of a header kind looked at to see how its rows really print (`layout.fit_layout`)."""


def _rows(texts: list[bytes], runs: list[RunInfo]) -> pd.DataFrame:
    """The tidy table of every data row of the files (`texts[i]` is `runs[i]`'s text)."""
    big = b"\n" + b"".join(texts)
    blocks: list[Block] = []
    found: list[tuple[int, int, int, int, int, int]] = []  # file, start, end, first line, lines, block
    meaning: dict = {}
    lo = 0
    for f, (text, run) in enumerate(zip(texts, runs)):
        found += [(f, *r) for r in scan(big, lo, lo + len(text), f, run, blocks, meaning)]
        lo += len(text)
    label_blocks(blocks, runs)
    _overlap(found, runs)
    first_block = {b.layout.header: i for i, b in reversed(list(enumerate(blocks)))}
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(found):
        groups.setdefault(blocks[r[5]].layout.header, []).append(i)
    counts = np.array([r[4] for r in found], np.int64)
    base = np.concatenate(([0], np.cumsum(counts)))  # each run's first row number
    ends = np.cumsum([len(t) for t in texts])  # each file's last newline in `big`
    cut = [runs[f].last_line_cut and end == ends[f] for f, _, end, *_ in found]  # the run holds the file's cut last line
    impls: list[str] = []
    pieces = [p for header in sorted(groups, key=first_block.get) for p in _read_group(big, blocks, found, groups[header], base, runs, cut, impls)]
    names = list(dict.fromkeys(n for cols, _ in pieces for n in cols))
    row = np.concatenate([r for _, r in pieces]) if pieces else np.empty(0, np.int64)
    order = np.argsort(row, kind="stable")  # file and line order; a row's implementations in header order
    cols = {n: np.concatenate([c[n] if n in c else _missing(n, r.size) for c, r in pieces])[order] for n in names}
    at = np.searchsorted(base, row[order], "right") - 1  # the run of each row
    meta = np.array([r[0:1] + r[3:4] + r[5:6] for r in found] or [(0, 0, 0)], np.int64)
    line = meta[at, 1] + row[order] - base[at]
    return _frame(cols, meta[at, 0], meta[at, 2], line, blocks, runs, impls)


def _overlap(found: list[tuple], runs: list[RunInfo]) -> None:
    """Processes ran at the same time when most rows do not come after the last banner."""
    rows, before = [0] * len(runs), [0] * len(runs)
    for f, _, _, first, lines, _ in found:
        rows[f] += lines
        before[f] += min(lines, max(0, runs[f].last_banner_line - first))
    for f, run in enumerate(runs):
        run.overlapped = run.banners > 1 and before[f] < 0.99 * rows[f] * (run.banners - 1) / run.banners


def _missing(name: str, size: int) -> np.ndarray:
    """A column a piece has no values for: no status, or NaN."""
    return np.full(size, MISSING, np.int8) if name == "status" else np.full(size, np.nan)


def _fields(frame: pd.DataFrame, j: int, decimals: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Field j of every row: its number (NaN for others), its kind, and, when asked, the digits
    printed after its `.` (how precise a time is)."""
    col = frame[j]
    if col.dtype.kind in "iuf":
        return col.to_numpy(np.float64), np.zeros(len(col), np.int8), None
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.array(col.array)  # pandas' strings are Arrow's already; `---` is the parser's NA: null here
    number = pc.fill_null(pc.match_substring_regex(text, NUMBER_TEXT), True)
    values = pc.cast(pc.if_else(number, text, None), pa.float64()).to_numpy(zero_copy_only=False)
    kind = np.where(text.is_null().to_numpy(zero_copy_only=False), DASHES, NUMBER).astype(np.int8)
    odd = np.flatnonzero(~number.to_numpy(zero_copy_only=False))
    if odd.size:  # fields that are not plain numbers: a few distinct words, each looked at once
        words = pc.dictionary_encode(text.take(odd))
        known = [_word(w) for w in words.dictionary.to_pylist()]
        where = words.indices.to_numpy(zero_copy_only=False)
        kind[odd] = np.array([k for k, _ in known], np.int8)[where]
        values[odd] = np.array([v for _, v in known])[where]
    if not decimals:
        return values, kind, None
    dot = pc.find_substring(text, ".").to_numpy(zero_copy_only=False).astype(np.float64)
    length = pc.utf8_length(text).to_numpy(zero_copy_only=False).astype(np.float64)
    return values, kind, np.where(dot >= 0, length - dot - 1, 0)


def _word(text: str) -> tuple[int, float]:
    """What a field that is not read as a number by pandas is."""
    if not text or text == "---":
        return (MISSING if not text else DASHES), np.nan
    if text in fmt.STATUS_WORDS:
        return OK + fmt.STATUS_WORDS.index(text), np.nan
    if len(text) > 1 and text[0] == text[-1] == "-" and not text.strip("-"):
        return DASHES, np.nan
    try:
        return NUMBER, float(text)
    except ValueError:
        return WORD, np.nan


def _read_group(big: bytes, blocks: list[Block], found: list[tuple], chosen: list[int], base: np.ndarray, runs: list[RunInfo],
                cut: list[bool], impls: list[str]) -> list[tuple[dict, np.ndarray]]:
    """The rows of the runs `chosen` (one header kind): one piece per implementation that ran
    (a Gflop/s or time printed, not `---`), with each row's number."""
    spans = [found[i][1:3] for i in chosen]
    # The layout as the rows print it, from a row of the most common length (the first may be cut short).
    sample = [line for a, b in spans[:SAMPLE] for line in big[a:b].split(b"\n")][:SAMPLE]
    count = [len(line.translate(BLANKS).split()) for line in sample]
    typical = sample[count.index(min(set(count), key=lambda c: (-count.count(c), c)))]
    layout = fmt.fit_layout(blocks[found[chosen[0]][5]].layout, typical.decode("utf-8", "replace"))
    width, checks, n_sizes = layout.width, len(layout.errors), len(layout.sizes)
    timed, at = [], n_sizes  # the field of each implementation's Gflop/s and time (None: not printed)
    for _, has_time, _ in layout.impls:
        timed.append((None, at) if layout.time_only else (at, at + 1 if has_time else None))
        at += 1 if layout.time_only or not has_time else 2
    times = {t for _, t in timed if t is not None}
    data = b" 0" * (width + 2) + b"\n" + b"\n".join(big[a:b] for a, b in spans).translate(BLANKS)  # a first row of every field
    frame = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, names=range(width + 2), usecols=range(width + 2), keep_default_na=False,
                        na_values=["---"], quoting=csv.QUOTE_NONE, dtype={t: str for t in times}, low_memory=False).iloc[1:]
    fields = [_fields(frame, j, j in times) for j in range(width + 2)]
    values = np.stack([v for v, _, _ in fields], 1)
    kinds = np.stack([k for _, k, _ in fields], 1)
    sizes = np.array([found[i][4] for i in chosen], np.int64)
    row = np.arange(sizes.sum()) + np.repeat(base[chosen] - np.cumsum(sizes) + sizes, sizes)  # each row's number in the read
    n = (kinds != MISSING).sum(axis=1)
    with_status = n == width + 1
    # A row may end after its implementations' columns: a tester run without its check
    # (no --lapack) prints no error and no status; those errors are NaN. But a file's cut last
    # line is no unchecked row: it lost its end.
    unchecked = (n == width - checks) & (checks > 0)
    if unchecked.any():
        last = np.zeros(row.size, bool)
        last[np.cumsum(sizes) - 1] = [cut[i] for i in chosen]
        unchecked &= ~last
        kinds[unchecked, width - checks : width] = DASHES
    ok = (n == width) | with_status | unchecked
    ok &= (kinds[:, :width] <= DASHES).all(axis=1)  # numbers or `---`; a word inside a row: not a data row
    sizes_of_rows = values[:, :n_sizes]  # whole numbers: a size of 12.5 is not a problem size
    ok &= (kinds[:, :n_sizes] == NUMBER).all(axis=1) & np.isfinite(sizes_of_rows).all(axis=1) & (sizes_of_rows == np.floor(sizes_of_rows)).all(axis=1)
    status = np.where(with_status, kinds[:, width], MISSING).astype(np.int8)
    ok &= (status == MISSING) | (status == OK) | (status == FAILED)
    run_of = np.repeat(chosen, sizes)
    for i, r in zip(run_of[~ok].tolist(), row[~ok].tolist()):
        runs[found[i][0]].unparsed.append(found[i][3] + r - int(base[i]))
    row, values, status = row[ok], values[ok], status[ok]
    shared = {name: values[:, i] for i, name in enumerate(layout.sizes)}
    shared.update({name: values[:, width - checks + i] for i, name in enumerate(layout.errors)})
    shared["status"] = status
    pieces = []
    for (impl, _, to_ms), (g, t) in zip(layout.impls, timed):
        gflops = values[:, g] if g is not None else np.full(row.size, np.nan)
        time = values[:, t] * to_ms if t is not None else np.full(row.size, np.nan)
        ran = ~(np.isnan(gflops) & np.isnan(time))
        if not ran.any():
            continue
        # A time is as precise as printed: `0.00` s says under 5 ms (half the last digit).
        resolution = 0.5 * to_ms * 10.0 ** -fields[t][2][ok][ran] if t is not None else np.full(int(ran.sum()), np.nan)
        cols = {name: v[ran] for name, v in shared.items()}
        cols.update(gflops=gflops[ran], time_ms=time[ran], time_res_ms=np.where(np.isnan(time[ran]), np.nan, resolution))
        if impl not in impls:
            impls.append(impl)
        cols["impl"] = np.full(int(ran.sum()), impls.index(impl), np.int16)
        pieces.append((cols, row[ran]))
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

    # Problem sizes numbered in (m, n, k) order; a size a tester does not print is -1.
    dims = pd.DataFrame({c: np.where(np.isnan(d), -1, d).astype(np.int64) for c, d in ((c, cols.get(c, empty)) for c in ("m", "n", "k"))})
    size_codes = dims.groupby(["m", "n", "k"], sort=True).ngroup().to_numpy()
    triples = dims.drop_duplicates().sort_values(["m", "n", "k"]).to_numpy()
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
    frame["status"] = pd.Categorical.from_codes(cols.get("status", np.full(n, MISSING, np.int8)) - OK, categories=pd.Index(fmt.STATUS_NAMES, dtype=object))
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
