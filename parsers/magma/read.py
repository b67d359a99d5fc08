"""Provides the MAGMA tester reader: output files -> one tidy row per data row and implementation.

    from gpuscope.parsers.magma import read as magma
    rows, findings = magma.read("magma-vbatched-iter-1.out")
    result = magma.read_tree(["experiments/"], exclude=("attempt-1",))

One regular expression pass per file (`lines.scan`) finds the runs of data rows and gives each
its block (tester, options, header: `layout` says what its columns are). The rows of all blocks
under one header kind go through pandas' C CSV parser as one text; numpy then checks each row
against its layout and makes the tidy table. Rows are kept even when they cannot be trusted:
the `excluded` column says why statistics skip them (metrics/magma/trust decides).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.magma import trust as magma_trust
from gpuscope.metrics.magma.run import RunInfo, precision_of
from gpuscope.parsers.files import MAX_BYTES, MAX_LINES
from gpuscope.parsers.magma import layout as fmt
from gpuscope.parsers.magma.lines import BLANKS, Block, scan
from gpuscope.parsers.tree import Text, categorical, context_columns, integers, read_texts


@dataclass(frozen=True)
class MagmaResult:
    """Every row of every file read, one row per file in `runs`, and all findings."""

    rows: pd.DataFrame
    runs: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    files_read: int = 0


def read_tree(paths: Sequence[str | os.PathLike[str]], *, path_pattern: str | None = None, exclude: Sequence[str] = (),
              peak_override: float | None = None, root: str | os.PathLike[str] | None = None) -> MagmaResult:
    """Every MAGMA output under `paths` (files or folders) in one tidy table. `peak_override`
    (Gflop/s) replaces the peak table for the impossible-value check."""
    texts, findings = read_texts(paths, fmt.mentions_magma, "MAGMA", path_pattern=path_pattern, exclude=exclude, root=root, budget=(MAX_BYTES, MAX_LINES))
    runs = [RunInfo(t.label, t.context, findings=t.findings, digest=t.digest, last_line_cut=t.cut) for t in texts]
    rows, table, judged = magma_trust.judge(_rows(texts, runs), runs, peak_override)
    return MagmaResult(rows=rows, runs=table, findings=findings + [f for r in runs for f in r.findings] + judged, files_read=len(runs))


def read(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> tuple[pd.DataFrame, list[Finding]]:
    """One file or folder as (tidy rows, findings); `root`: what a file's label is relative to."""
    result = read_tree([path], root=root)
    return result.rows, result.findings


NUMBER, DASHES, OK, FAILED, MISSING, WORD = range(6)
"""What a row's field is: a number, `---` (not run), a status word, no field, anything else."""
NUMBER_TEXT = r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$"
"""A field Arrow reads as a number; `_word` looks at any other (`nan`, `inf`, a status word)."""
SAMPLE = 1000
"""Rows of a header kind looked at to see how its rows really print (`layout.fit_layout`)."""


def _rows(texts: list[Text], runs: list[RunInfo]) -> pd.DataFrame:
    """The tidy table of every data row of the files (`texts[i]` is `runs[i]`'s)."""
    ends = np.cumsum([len(t.data) for t in texts], dtype=np.int64)  # each file's last newline in `big`
    big = b"".join([b"\n", *(t.data for t in texts)])
    blocks, at = scan(big, ends.tolist(), runs)  # per run of rows: file, start, end, first line, lines, block
    file_of, first, block_of = at[:, 0], at[:, 3], at[:, 5]
    base = np.concatenate(([0], np.cumsum(at[:, 4])))  # each run's first row number
    cut = np.array([r.last_line_cut for r in runs] + [False])[file_of] & (at[:, 2] == ends[file_of])  # the run holds a cut last line
    kinds = {h: k for k, h in enumerate(dict.fromkeys(b.layout.header for b in blocks))}  # header kinds in order of first block
    kind_of = np.array([kinds[b.layout.header] for b in blocks] + [0], np.int64)[block_of]
    impls: list[str] = []
    pieces: list[tuple[dict, np.ndarray]] = []
    for chosen in (np.flatnonzero(kind_of == k) for k in range(len(kinds))):
        if chosen.size:
            pieces += _read_group(big, blocks[block_of[chosen[0]]].layout, at[chosen], base[chosen], cut[chosen], runs, impls)
    row = np.concatenate([r for _, r in pieces]) if pieces else np.empty(0, np.int64)
    order = np.argsort(row, kind="stable")  # file and line order; a row's implementations in header order
    cols = {n: np.concatenate([c[n] if n in c else np.full(r.size, MISSING if n == "status" else np.nan) for c, r in pieces])[order]
            for n in dict.fromkeys(n for c, _ in pieces for n in c)}
    run_of = np.searchsorted(base, row[order], "right") - 1
    return _frame(cols, file_of[run_of], block_of[run_of], first[run_of] + row[order] - base[run_of], blocks, texts, runs, impls)


def _read_group(big: bytes, layout: fmt.Layout, at: np.ndarray, base: np.ndarray, cut: np.ndarray, runs: list[RunInfo],
                impls: list[str]) -> list[tuple[dict, np.ndarray]]:
    """The rows of the runs `at` (one header kind; `base`: their first rows' numbers): a piece per
    implementation that ran (a Gflop/s or time printed, not `---`), with each row's number."""
    starts, ends = at[:, 1].tolist(), at[:, 2].tolist()
    # The layout as the rows print it, from a row of the most common length (the first may be cut short).
    sample: list[bytes] = []
    for a, b in zip(starts, ends):
        sample += big[a:b].split(b"\n", SAMPLE - len(sample))[: SAMPLE - len(sample)]
        if len(sample) == SAMPLE:
            break
    count = [len(line.translate(BLANKS).split()) for line in sample]
    layout = fmt.fit_layout(layout, sample[count.index(min(set(count), key=lambda c: (-count.count(c), c)))].decode("utf-8", "replace"))
    width, checks, n_sizes, places = layout.width, len(layout.errors), len(layout.sizes), layout.places
    times = {t for _, t in places if t is not None}
    # Fields are parted by blanks (a run of them is one: `skipinitialspace`), after a first row
    # that has every field. NA is `---` in the row's columns, no field after them.
    view = memoryview(big)
    data = b"\n".join([b" 0" * (width + 2), *[view[a:b] for a, b in zip(starts, ends)]]).translate(BLANKS)  # one copy, one pass
    na = [DASHES] * width + [MISSING, MISSING]
    frame = pd.read_csv(io.BytesIO(data), sep=" ", skipinitialspace=True, header=None, names=range(width + 2), usecols=range(width + 2),
                        keep_default_na=False, na_values={j: "---" if kind == DASHES else "" for j, kind in enumerate(na)},
                        quoting=csv.QUOTE_NONE, dtype={t: object for t in times}, low_memory=False).iloc[1:]
    fields = [_fields(frame[j], j in times, na[j]) for j in range(width + 2)]  # column by column: no 2-D copies
    kinds = [k for _, k, _ in fields]
    sizes = at[:, 4]
    run_of = np.repeat(np.arange(len(at)), sizes)
    offset = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)  # each row's place in its run
    n = sum(k != MISSING for k in kinds)
    with_status = n == width + 1
    # A tester run without its check (no --lapack) prints no error and no status: those errors
    # are NaN. But a file's cut last line is no such row: it lost its end.
    unchecked = (n == width - checks) & (checks > 0)
    unchecked[np.cumsum(sizes)[cut] - 1] = False
    kinds[width - checks : width] = [np.where(unchecked, DASHES, k) for k in kinds[width - checks : width]]
    ok = ((n == width) | with_status | unchecked) & np.logical_and.reduce([k <= DASHES for k in kinds[:width]])  # a word inside a row: no data row
    for (whole, _, _), k in zip(fields[:n_sizes], kinds):  # sizes are whole numbers: a size of 12.5 is no problem size
        ok &= (k == NUMBER) & np.isfinite(whole) & (whole == np.floor(whole))
    status = np.where(with_status, kinds[width], MISSING).astype(np.int8)
    ok &= (status == MISSING) | (status == OK) | (status == FAILED)
    for f, line in zip(at[run_of[~ok], 0].tolist(), (at[run_of[~ok], 3] + offset[~ok]).tolist()):
        runs[f].unparsed.append(line)
    row, values, status = (base[run_of] + offset)[ok], [v[ok] for v, _, _ in fields], status[ok]
    shared = {name: values[i] for i, name in enumerate(layout.sizes)}
    shared.update({name: values[width - checks + i] for i, name in enumerate(layout.errors)}, status=status)
    pieces = []
    for (impl, _, to_ms), (g, t) in zip(layout.impls, places):
        gflops = values[g] if g is not None else np.full(row.size, np.nan)
        time = values[t] * to_ms if t is not None else np.full(row.size, np.nan)
        ran = ~(np.isnan(gflops) & np.isnan(time))
        if not ran.any():
            continue
        # A time is as precise as printed: `0.00` s says under 5 ms (half the last digit).
        resolution = 0.5 * to_ms * 10.0 ** -fields[t][2][ok][ran] if t is not None else np.nan
        if impl not in impls:
            impls.append(impl)
        cols = {name: v[ran] for name, v in shared.items()}
        cols.update(gflops=gflops[ran], time_ms=time[ran], time_res_ms=np.where(np.isnan(time[ran]), np.nan, resolution),
                    impl=np.full(int(ran.sum()), impls.index(impl), np.int16))
        pieces.append((cols, row[ran]))
    return pieces


def _fields(col: pd.Series, decimals: bool, na: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One field of every row: its number (NaN for others), its kind, and, when asked, the digits
    printed after its `.` (how precise a time is). `na`: the kind of what the parser read as NA."""
    if col.dtype.kind in "iuf":
        values = col.to_numpy(np.float64)
        return values, np.where(np.isnan(values), na, NUMBER).astype(np.int8), None
    import pyarrow as pa
    import pyarrow.compute as pc
    at, distinct = pd.factorize(col.to_numpy(object))  # each distinct field is looked at once; NA: -1, the last entry below
    text = pa.array(distinct, pa.string())
    number = pc.match_substring_regex(text, NUMBER_TEXT).to_numpy(zero_copy_only=False)
    values = np.append(pc.cast(pc.if_else(number, text, None), pa.float64()).to_numpy(zero_copy_only=False), np.nan)
    kind = np.append(np.full(len(text), NUMBER, np.int8), np.int8(na))
    for i in np.flatnonzero(~number).tolist():  # not a plain number: a few distinct words
        kind[i], values[i] = _word(distinct[i])
    if not decimals:
        return values[at], kind[at], None
    dot = pc.find_substring(text, ".").to_numpy(zero_copy_only=False).astype(np.float64)
    length = pc.utf8_length(text).to_numpy(zero_copy_only=False).astype(np.float64)
    return values[at], kind[at], np.append(np.where(dot >= 0, length - dot - 1, 0), 0)[at]


def _word(text: str) -> tuple[int, float]:
    """What a field that is no plain number is."""
    if not text:
        return MISSING, np.nan
    if text in fmt.STATUS_WORDS:
        return OK + fmt.STATUS_WORDS.index(text), np.nan
    if len(text) > 1 and not text.strip("-"):  # `---`, or as many dashes as the column is wide
        return DASHES, np.nan
    try:
        return NUMBER, float(text)
    except ValueError:
        return WORD, np.nan


def _frame(cols: dict[str, np.ndarray], file_of: np.ndarray, block_of: np.ndarray, line: np.ndarray, blocks: list[Block],
           texts: list[Text], runs: list[RunInfo], impls: list[str]) -> pd.DataFrame:
    """The tidy table: number columns, then what each row's block and file say."""
    n = file_of.size
    empty = np.full(n, np.nan)
    # Problem sizes numbered in (m, n, k) order; a size a tester does not print is -1.
    dims = pd.DataFrame({c: np.where(np.isnan(d), -1, d).astype(np.int64) for c, d in ((c, cols.get(c, empty)) for c in ("m", "n", "k"))})
    size_codes = dims.groupby(["m", "n", "k"], sort=True).ngroup().to_numpy()
    row_of = np.empty(size_codes.max() + 1 if n else 0, np.int64)
    row_of[size_codes] = np.arange(n)  # a row of each size
    triples = dims.to_numpy()[row_of]
    frame = {
        "test": categorical(block_of, [b.label for b in blocks]),
        "precision": categorical(block_of, [precision_of(b.test) for b in blocks]),
        "impl": pd.Categorical.from_codes(cols.get("impl", np.zeros(n, np.int16)), categories=pd.Index(impls or ["magma"], dtype=object)),
        **{c: integers(cols.get(c, empty)) for c in ("batch_count", "m", "n", "k")},
        "problem_size": pd.Categorical.from_codes(size_codes.reshape(-1), categories=pd.Index(["x".join(str(v) for v in t if v >= 0) for t in triples.tolist()], dtype=object)),
        "gflops": cols.get("gflops", empty), "time_ms": cols.get("time_ms", empty), "time_res_ms": cols.get("time_res_ms", empty),
    }
    for name in sorted(set(cols) - set(frame) - {"status", "impl"}):  # the error columns, by the names their headers give
        frame[name] = cols[name]
    frame["status"] = pd.Categorical.from_codes(cols.get("status", np.full(n, MISSING, np.int8)) - OK, categories=pd.Index([*fmt.STATUS_WORDS, ""], dtype=object))
    frame.update(device=categorical(file_of, [r.device for r in runs]), file=categorical(file_of, [r.label for r in runs]), line=line,
                 **context_columns(file_of, texts))
    for name in sorted({key for b in blocks for key in b.options}):
        frame[name] = categorical(block_of, [b.options.get(name) for b in blocks])
    return pd.DataFrame(frame)
