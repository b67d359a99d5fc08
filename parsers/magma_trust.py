"""Provides trust for MAGMA rows and runs: warm-up, failed, impossible, truncated, cancelled.

No existing tool says which MAGMA numbers cannot be believed; this module does, and keeps the
rows (flagged, with the reason in `excluded`) so nothing disappears silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from gpuscope.metrics.distribution import sort_by_group
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.gpu_peaks import find_peak
from gpuscope.parsers.magma_rows import FAILED, NO_STATUS

if TYPE_CHECKING:  # pragma: no cover
    from gpuscope.parsers.magma import _File
    from gpuscope.parsers.magma_scan import Block, FileScan

PRECISIONS = "sdczh"
EXCLUDED = pd.Index(["", "failed", "warm-up", "impossible", "not a number"], dtype=object)
STATUS = pd.Index(["ok", "failed", ""], dtype=object)  # in the order of magma_rows' codes
PRECISION_WORD = {"s": "FP32", "c": "FP32", "d": "FP64", "z": "FP64", "h": "FP16 tensor"}


def precision_of(test: str) -> str:
    return test[0] if len(test) > 1 and test[0] in PRECISIONS else ""


def _categorical(codes: np.ndarray, labels: list[Any]) -> pd.Categorical:
    """Per-row categorical from per-block (or per-file) labels. Object-dtype categories:
    pandas' Arrow strings cost more to build than the whole column is worth here."""
    position: dict[Any, int] = {}
    remap = [position.setdefault(x, len(position)) for x in labels]
    categories = pd.Index(list(position), dtype=object)
    width = code_type(len(categories))
    if not codes.size or remap == list(range(len(remap))):  # distinct labels (one per file): no lookup needed
        row_codes = codes.astype(width)
    else:
        row_codes = np.array(remap, width)[codes]
    return _from_codes(row_codes, categories)


def code_type(n_categories: int) -> type:
    """The code width pandas picks for that many categories: codes made in it are kept as
    they are instead of being copied."""
    return next(t for t in (np.int8, np.int16, np.int32, np.int64) if n_categories < np.iinfo(t).max or t is np.int64)


def _from_codes(codes: np.ndarray, categories: pd.Index) -> pd.Categorical:
    """`Categorical.from_codes` for codes known to be in range (no second pass to check them)."""
    try:
        return pd.Categorical.from_codes(codes, categories=categories, validate=False)
    except TypeError:  # pandas < 2.1 always validates
        return pd.Categorical.from_codes(codes, categories=categories)


def size_label(packed: int) -> str:
    """`MxNxK` of a `packed_sizes` value, as `_problem_sizes` labels it."""
    dims = ((packed >> 42) - 1, ((packed >> 21) & ((1 << 21) - 1)) - 1, (packed & ((1 << 21) - 1)) - 1)
    return "x".join(str(v) for v in dims if v >= 0)


def packed_sizes(m: np.ndarray, n: np.ndarray, k: np.ndarray) -> np.ndarray | None:
    """One int64 per (m, n, k) that sorts like the triple (a missing size counts as -1), or
    None when a size is 2**20 or more and does not fit."""
    with np.errstate(invalid="ignore"):  # rows that are not data rows may hold anything; they are dropped
        dims = [np.where(np.isnan(d), -1, d).astype(np.int64) for d in (m, n, k)]
    return _pack(dims)


def _pack(dims: list[np.ndarray]) -> np.ndarray | None:
    """`packed_sizes` of (m, n, k) already as int64 with -1 for a missing size."""
    if max((int(d.max()) for d in dims if d.size), default=0) >= (1 << 20):
        return None
    return ((dims[0] + 1) << 42) | ((dims[1] + 1) << 21) | (dims[2] + 1)


def whole_numbers(values: np.ndarray) -> np.ndarray:
    """Whole numbers held as floats as int64 (0 where NaN), for the nullable Int64 columns."""
    with np.errstate(invalid="ignore"):  # rows that are not data rows may hold anything; they are dropped
        return np.where(np.isnan(values), 0, values).astype(np.int64)


def derived_columns(cols: dict[str, np.ndarray], total: int) -> dict[str, np.ndarray]:
    """What `tidy` derives row by row from the number columns; computed per batch of files
    (on the reader's threads) and joined, instead of once for all rows. The sizes as whole
    numbers and where they are missing are all `tidy` needs of them (the Int64 columns)."""
    empty = np.full(total, np.nan)
    out = {}
    for name in ("batch_count", "m", "n", "k"):
        values = cols.get(name, empty)
        missing = np.isnan(values)
        out[f"missing:{name}"] = missing
        if missing.any():
            out[f"whole:{name}"] = whole_numbers(values)
        else:  # no NaN to replace first
            with np.errstate(invalid="ignore"):  # rows that are not data rows may hold anything; they are dropped
                out[f"whole:{name}"] = values.astype(np.int64)
    # packed_sizes(m, n, k) from those: a missing size is -1 = its whole number (0) - 1.
    packed = _pack([out[f"whole:{name}"] - out[f"missing:{name}"] for name in ("m", "n", "k")])
    if packed is not None:
        out["packed_sizes"] = packed
    return out


def _problem_sizes(m: np.ndarray, n: np.ndarray, k: np.ndarray, packed: np.ndarray | None = None,
                   numbered: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[pd.Categorical, np.ndarray]:
    """`MxNxK` as printed (missing dimensions left out), ordered by size; and a numeric key.
    `packed` is `packed_sizes(m, n, k)` when already known, `numbered` its
    `pd.factorize(packed, sort=True)` (codes, sorted distinct values)."""
    if numbered is None and packed is None:
        packed = packed_sizes(m, n, k)
    if numbered is None and packed is not None:
        numbered = pd.factorize(packed, sort=True)  # one int per size, sorts like (m, n, k)
    if numbered is not None:
        codes, uniq = numbered
        triples = np.stack([(uniq >> 42) - 1, ((uniq >> 21) & ((1 << 21) - 1)) - 1, (uniq & ((1 << 21) - 1)) - 1], 1)
    else:  # sizes over a million: slower, exact
        dims = [np.where(np.isnan(d), -1, d).astype(np.int64) for d in (m, n, k)]
        triples, codes = np.unique(np.stack(dims, 1), axis=0, return_inverse=True)
        codes = codes.reshape(-1)
    labels = ["x".join(str(v) for v in row if v >= 0) for row in triples.tolist()]
    return _from_codes(codes, pd.Index(labels, dtype=object)), codes


def _integers(values: np.ndarray, whole: np.ndarray | None = None) -> pd.arrays.IntegerArray:
    """Whole numbers held as floats (NaN = missing) as a nullable Int64 array; `whole` is
    `whole_numbers(values)` when already known."""
    return pd.arrays.IntegerArray(whole_numbers(values) if whole is None else whole, np.isnan(values))


def trust_flags(block_of_row: np.ndarray, key: np.ndarray, blocks: list["Block"], device_of_block: list[str], gflops: np.ndarray,
                time: np.ndarray, status: np.ndarray, peak_override: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: warm-up, physically impossible, and the `excluded` code (EXCLUDED's order).
    `key` tells problem sizes apart (any numbering); a file's rows all fall in its blocks, so
    this works on any set of whole files."""
    total = block_of_row.size
    # Warm-up: a process's first call pays for context creation and module load. Rows carry no
    # rank, so per block take the first size of the sweep and flag, per process that ran it,
    # the slowest of its rows (the first call is always the slow one).
    warm = np.zeros(total, bool)
    if total:
        # The first row of each block: blocks change only where runs of rows do.
        runs = np.flatnonzero(np.concatenate(([True], block_of_row[1:] != block_of_row[:-1])))
        first_row = np.unique(block_of_row[runs], return_index=True)
        first_key = np.full(len(blocks), -1, np.int64)
        first_key[first_row[0]] = key[runs[first_row[1]]]
        candidate = key == first_key[block_of_row]
        processes = np.array([b.processes for b in blocks], np.int64)
        per_block = np.bincount(block_of_row[candidate], minlength=len(blocks))
        warm = candidate.copy()
        crowded = np.flatnonzero(per_block > processes)  # --niter > 1: rank only these blocks
        if crowded.size:
            sub = candidate & np.isin(block_of_row, crowded)
            rank = pd.Series(time[sub]).groupby(block_of_row[sub]).rank(method="first", ascending=False).to_numpy()
            warm[sub] = rank <= processes[block_of_row[sub]]

    if peak_override:
        peaks = np.full(len(blocks), float(peak_override))
    else:
        known: dict[tuple[str, str], float] = {}  # (device, test): blocks repeat a few of them
        for block, device in zip(blocks, device_of_block):
            if (device, block.test) not in known:
                spec = find_peak(device)
                tflops = spec.tflops(precision_of(block.test)) if spec else None
                known[device, block.test] = tflops * 1000.0 if tflops else np.nan
        peaks = np.array([known[device, block.test] for block, device in zip(blocks, device_of_block)], np.float64)
    row_peak = peaks[block_of_row] if total else np.full(0, np.nan)
    with np.errstate(invalid="ignore"):
        impossible = np.isfinite(row_peak) & (gflops > row_peak)
    not_number = ~np.isfinite(gflops) | ~np.isfinite(time)
    excluded = np.zeros(total, np.int8)  # the first reason that applies, as EXCLUDED codes
    for code, applies in ((4, not_number), (3, impossible), (2, warm), (1, status == FAILED)):
        excluded[applies] = code
    return warm, impossible, excluded


def tidy(*, cols: dict[str, np.ndarray], lines: np.ndarray, file_of_row: np.ndarray, block_of_row: np.ndarray,
         files: list["_File"], blocks: list["Block"], peak_override: float | None, columns: list[str],
         sizes: np.ndarray | None = None) -> pd.DataFrame:
    """The tidy table with context columns and trust flags. `sizes`: the distinct
    `packed_sizes`, sorted, when `cols["size_code"]` numbers the rows by them."""
    total = lines.size
    numbered = (cols["size_code"], sizes) if sizes is not None else None
    floats = ["gflops", "time_ms", "cpu_gflops", "cpu_time_ms", "ref_gflops", "ref_time_ms", "error"]
    floats += [name for name in ("m", "n", "k", "batch_count") if f"missing:{name}" not in cols or (name != "batch_count" and numbered is None)]
    empty = np.full(total, np.nan) if any(name not in cols for name in floats) else np.empty(0)  # one all-NaN column for whatever is missing
    m, n, k = (cols.get(c, empty) for c in ("m", "n", "k"))
    problem, key = _problem_sizes(m, n, k, cols.get("packed_sizes"), numbered)

    def integers(name: str) -> pd.arrays.IntegerArray:
        if f"missing:{name}" in cols:  # as the batches derived them
            return pd.arrays.IntegerArray(cols[f"whole:{name}"], cols[f"missing:{name}"])
        return _integers(cols.get(name, empty), cols.get(f"whole:{name}"))

    tests = [b.test for b in blocks]
    device_of_file = [f.scan.device for f in files]

    time = cols.get("time_ms", empty)
    gflops = cols.get("gflops", empty)
    status = cols.get("status", np.full(total, NO_STATUS, np.int8))

    if "excluded" in cols:  # flagged batch by batch already
        warm, impossible, excluded = cols["warmup"], cols["impossible"], cols["excluded"]
    else:
        device_of_block = [device_of_file[f] for f, found in enumerate(files) for _ in found.scan.blocks]
        warm, impossible, excluded = trust_flags(block_of_row, key, blocks, device_of_block, gflops, time, status, peak_override)

    def file_column(values: list[Any]) -> pd.Categorical:
        return _categorical(file_of_row, values)

    nodes = np.array([np.nan if f.context.get("nodes") is None else float(f.context["nodes"]) for f in files])  # type: ignore[arg-type]
    nodes_of_row = pd.arrays.IntegerArray(whole_numbers(nodes)[file_of_row], np.isnan(nodes)[file_of_row])  # per file, then per row
    frame = pd.DataFrame({
        "test": _categorical(block_of_row, tests),
        "precision": _categorical(block_of_row, [precision_of(t) for t in tests]),
        "batch_count": integers("batch_count"),
        "m": integers("m"),
        "n": integers("n"),
        "k": integers("k"),
        "problem_size": problem,
        "gflops": gflops,
        "time_ms": time,
        "cpu_gflops": cols.get("cpu_gflops", empty),
        "cpu_time_ms": cols.get("cpu_time_ms", empty),
        "ref_gflops": cols.get("ref_gflops", empty),
        "ref_time_ms": cols.get("ref_time_ms", empty),
        "error": cols.get("error", empty),
        "status": pd.Categorical.from_codes(status, categories=STATUS),
        "device": file_column(device_of_file),
        "file": file_column([f.label for f in files]),
        "line": lines.astype(np.int64, copy=False),
        "environment": file_column([str(f.context.get("environment", ".")) for f in files]),
        "nodes": nodes_of_row,
        "warmup": warm,
        "impossible": impossible,
        "excluded": pd.Categorical.from_codes(excluded, categories=EXCLUDED),
    }, columns=columns, copy=False)
    extra = sorted({key for f in files for key in f.context} - {"environment", "nodes"})
    for pos, name in enumerate(extra):
        frame.insert(columns.index("nodes") + 1 + pos, name, file_column([f.context.get(name) for f in files]))
    return frame


def _segments(codes: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Rows grouped by code: (row order, or None when the rows already are grouped; group
    starts in that order; the groups in order of first appearance). Rows come file after
    file, so they usually are."""
    n = codes.size
    order = None
    if n > 1 and (codes[1:] < codes[:-1]).any():  # the same label under two roots
        order = np.argsort(codes, kind="stable")
        codes = codes[order]
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    appearance = np.argsort(order[starts], kind="stable") if order is not None else np.arange(starts.size)
    return order, starts, appearance


def _median(values: np.ndarray) -> float:
    """pandas' groupby median: NaN skipped, NaN when nothing is left."""
    values = values[~np.isnan(values)]
    return float(np.median(values)) if values.size else float("nan")


def per_file(rows: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Everything the findings and the runs table need per file label (groups in order of
    first appearance, like a groupby), in numpy passes over rows grouped by file."""
    if rows.empty:
        return {}
    codes = {c: rows[c].cat.codes.to_numpy() for c in ("environment", "device", "precision")}
    names = {c: rows[c].cat.categories for c in codes}
    nodes = rows["nodes"].array
    size_labels = rows["problem_size"].cat.categories

    def first_fields(row: int) -> dict[str, Any]:
        return {"environment": names["environment"][codes["environment"][row]], "nodes": nodes[row],
                "device": names["device"][codes["device"][row]], "precision": names["precision"][codes["precision"][row]]}

    return file_stats(
        rows["file"].cat.codes.to_numpy(), [str(x) for x in rows["file"].cat.categories],
        (rows["status"] == "failed").to_numpy(bool), rows["warmup"].to_numpy(bool), rows["impossible"].to_numpy(bool),
        rows["line"].to_numpy(np.float64), rows["gflops"].to_numpy(np.float64), rows["time_ms"].to_numpy(np.float64),
        rows["problem_size"].cat.codes.to_numpy().astype(np.int64), lambda code: size_labels[code], first_fields,
    )


def file_stats(file_codes: np.ndarray, labels: list[str], failed: np.ndarray, warm: np.ndarray, impossible: np.ndarray,
               line: np.ndarray, gflops: np.ndarray, time_ms: np.ndarray, size_codes: np.ndarray,
               size_label: Any, first_fields: Any) -> dict[str, dict[str, Any]]:
    """`per_file` on arrays: rows of the files `labels[file_codes]`, sizes numbered in size
    order (`size_label(code)` names one), and `first_fields(row)` giving environment, nodes,
    device and precision of a file's first row."""
    order, starts, appearance = _segments(file_codes)
    ends = np.concatenate((starts[1:], [file_codes.size]))

    def col(values: np.ndarray) -> np.ndarray:
        return values if order is None else values[order]

    failed, warm = col(failed), col(warm)
    bad = col(impossible) & ~failed
    line, gflops, time_ms, size_codes = col(line), col(gflops), col(time_ms), col(size_codes)
    n_groups, n_sizes = starts.size, int(size_codes.max()) + 1 if size_codes.size else 1
    group = np.repeat(np.arange(n_groups), ends - starts)

    def per_group(mask: np.ndarray, values: np.ndarray, reduce: np.ufunc) -> np.ndarray:
        """`reduce` of the chosen values of each group (NaN for a group with none); the
        chosen rows are few (failed, warm-up, impossible), so only they are touched."""
        chosen = np.flatnonzero(mask)
        out = np.full(n_groups, np.nan)
        if chosen.size:
            where = group[chosen]
            first = np.flatnonzero(np.concatenate(([True], where[1:] != where[:-1])))
            out[where[first]] = reduce.reduceat(values[chosen], first)
        return out

    failed_n, warm_n, bad_n = (np.bincount(group[m], minlength=n_groups) for m in (failed, warm, bad))
    failed_line, failed_max = per_group(failed, line, np.minimum), per_group(failed, gflops, np.fmax)  # fmax: NaN skipped, like pandas
    warm_line = per_group(warm, line, np.minimum)
    bad_line, bad_max = per_group(bad, line, np.minimum), per_group(bad, gflops, np.fmax)
    # Rows per (file, size): the smallest and the largest count of each file.
    pair = group * n_sizes + size_codes
    if n_groups * n_sizes <= 1 << 22:
        per_pair = np.bincount(pair, minlength=n_groups * n_sizes).reshape(n_groups, n_sizes)
        smallest = np.where(per_pair > 0, per_pair, np.iinfo(np.int64).max).min(axis=1)
        largest = per_pair.max(axis=1)
    else:  # many files and many sizes: only the pairs that occur
        pairs, counts = np.unique(pair, return_counts=True)
        smallest = np.full(n_groups, np.iinfo(np.int64).max)
        largest = np.zeros(n_groups, np.int64)
        np.minimum.at(smallest, pairs // n_sizes, counts)
        np.maximum.at(largest, pairs // n_sizes, counts)

    # Warm-up context: the warm-up size, the median time of its rows, and the size after it
    # (the smallest other size among the later calls) with its median time.
    big = np.iinfo(np.int64).max
    index = np.arange(group.size)
    first_warm = np.minimum.reduceat(np.where(warm, index, big), starts)
    has_warm = first_warm < big
    warm_code = np.where(has_warm, size_codes[np.minimum(first_warm, group.size - 1)], -1)
    cold = ~warm & (size_codes != warm_code[group])
    next_code = np.minimum.reduceat(np.where(cold, size_codes, big), starts)
    warm_ms = _group_medians(time_ms, group, warm, n_groups)
    next_ms = _group_medians(time_ms, group, cold & (size_codes == next_code[group]), n_groups)

    first_rows = (starts if order is None else order[starts]).tolist()
    # Python numbers, converted once for all groups (indexing numpy arrays per group is slow).
    rows_n = (ends - starts).tolist()
    failed_n, warm_n, bad_n, smallest, largest = (a.tolist() for a in (failed_n, warm_n, bad_n, smallest, largest))
    failed_line, failed_max, warm_line, warm_ms, bad_line, bad_max, next_ms = (
        a.tolist() for a in (failed_line, failed_max, warm_line, warm_ms, bad_line, bad_max, next_ms))
    last_size, warm_code, next_code, has_warm = (a.tolist() for a in (size_codes[ends - 1], warm_code, next_code, has_warm))
    labels_of: dict[int, Any] = {}

    def label(code: int) -> Any:  # each size is named once
        if code not in labels_of:
            labels_of[code] = size_label(code)
        return labels_of[code]

    out: dict[str, dict[str, Any]] = {}
    for g in appearance.tolist():
        first = first_rows[g]
        record: dict[str, Any] = {
            "rows": rows_n[g],
            "failed": failed_n[g], "failed_line": failed_line[g], "failed_max": failed_max[g],
            "warmup": warm_n[g], "warm_line": warm_line[g], "warm_ms": warm_ms[g],
            "impossible": bad_n[g], "bad_line": bad_line[g], "bad_max": bad_max[g],
            **first_fields(first),
            "last_size": label(last_size[g]),
            "smallest_size_rows": smallest[g], "largest_size_rows": largest[g],
            "warm_size": str(label(warm_code[g])) if has_warm[g] else float("nan"),
            "next_size": float("nan"), "next_ms": float("nan"),
        }
        if has_warm[g] and next_code[g] < big:
            record["next_size"] = label(next_code[g])
            record["next_ms"] = next_ms[g]
            if next_ms[g] != next_ms[g]:  # NaN: no number at that size; the first later size that has one
                a, b = int(starts[g]), int(ends[g])
                mine, times = size_codes[a:b][cold[a:b]], time_ms[a:b][cold[a:b]]
                for code in np.unique(mine).tolist():
                    median = _median(times[mine == code])
                    if not np.isnan(median):
                        record["next_ms"] = median
                        break
        out[labels[file_codes[first]]] = record
    return out


def _group_medians(values: np.ndarray, group: np.ndarray, mask: np.ndarray, n_groups: int) -> np.ndarray:
    """Median of the chosen values of each group (NaN skipped; NaN when none), computed as
    pandas' groupby median does: the middle value, or the mean of the two middle ones."""
    chosen = mask & ~np.isnan(values)
    values, codes = sort_by_group(values[chosen], group[chosen])
    counts = np.bincount(codes, minlength=n_groups)
    out = np.full(n_groups, np.nan)
    present = np.flatnonzero(counts)
    if present.size:
        n = counts[present]
        start = np.concatenate(([0], np.cumsum(n)[:-1]))
        upper = values[start + n // 2]
        lower = values[start + (n - 1) // 2]
        out[present] = np.where(n % 2 == 1, upper, (lower + upper) / 2)
    return out


def _where(row: dict[str, Any]) -> str:
    nodes = row.get("nodes")
    return f"{row.get('environment')}" + ("" if nodes is None or pd.isna(nodes) else f", {int(nodes)} nodes") + ": "


def _failed_sizes(rows: pd.DataFrame) -> dict[str, list[str]]:
    """Per file label: the sizes of its failed rows, in order of first appearance."""
    size_labels = rows["problem_size"].cat.categories
    return failed_sizes(rows["file"].cat.codes.to_numpy(), [str(x) for x in rows["file"].cat.categories],
                        (rows["status"] == "failed").to_numpy(bool), rows["problem_size"].cat.codes.to_numpy(), lambda code: str(size_labels[code]))


def failed_sizes(file_codes: np.ndarray, labels: list[str], failed: np.ndarray, size_codes: np.ndarray, size_label: Any) -> dict[str, list[str]]:
    """`_failed_sizes` on arrays (see `file_stats`)."""
    chosen = np.flatnonzero(failed)
    if not chosen.size:
        return {}
    files = file_codes[chosen].astype(np.int64)
    sizes = size_codes[chosen].astype(np.int64)
    n_sizes = int(sizes.max()) + 1
    _, first = np.unique(files * n_sizes + sizes, return_index=True)
    first.sort()
    out: dict[str, list[str]] = {}
    for f, size in zip(files[first].tolist(), sizes[first].tolist()):
        out.setdefault(labels[f], []).append(size_label(size))
    return out


def row_findings(rows: pd.DataFrame, stats: dict[str, dict[str, Any]], sizes_failed: dict[str, list[str]] | None = None) -> list[Finding]:
    """Per file: failed, warm-up and physically impossible rows, in plain words.
    `stats` is `per_file(rows)`, `sizes_failed` `_failed_sizes(rows)` when already known."""
    out: list[Finding] = []
    if rows.empty:
        return out
    sizes_failed = _failed_sizes(rows) if sizes_failed is None else sizes_failed
    peaks: dict[str, Any] = {}  # find_peak once per device, not once per file
    for label, row in stats.items():
        where = _where(row)
        if row["failed"]:
            sizes = ", ".join(sizes_failed.get(label, [])[:3])
            out.append(Finding("warning", "failed", f"{where}{row['failed']} row(s) failed MAGMA's own accuracy check (sizes {sizes}; up to {row['failed_max']:,.0f} Gflop/s): excluded from statistics", label, int(row["failed_line"]), int(row["failed"])))
        if row["warmup"]:
            nxt = f"; next size {row['next_size']}: {row['next_ms']:.2f} ms" if pd.notna(row.get("next_ms")) else ""
            out.append(Finding("info", "warmup", f"{where}{row['warmup']} warm-up row(s) (first call of each process, size {row['warm_size']}: median {row['warm_ms']:.2f} ms{nxt}): excluded; --keep-warmup keeps them", label, int(row["warm_line"]), int(row["warmup"])))
        if row["impossible"]:
            device, precision = str(row["device"]), str(row["precision"])
            peak = peaks[device] if device in peaks else peaks.setdefault(device, find_peak(device))
            peak_gflops = (peak.tflops(precision) or 0) * 1000 if peak else float("nan")
            worst = row["bad_max"]
            ratio = f" = {worst / peak_gflops:.1f}x peak" if peak_gflops else ""
            out.append(Finding("error", "impossible", f"{where}{row['impossible']} of {row['rows']} rows exceed the {PRECISION_WORD.get(precision, '')} peak of the {device} ({peak_gflops:,.0f} Gflop/s), up to {worst:,.0f} Gflop/s{ratio}: PHYSICALLY IMPOSSIBLE, excluded; --keep-impossible keeps them", label, int(row["bad_line"]), int(row["impossible"])))
    devices = {str(d) for d in rows["device"].unique() if str(d)}
    for device in sorted(devices):
        if find_peak(device) is None:
            out.append(Finding("info", "no-peak", f"no peak known for device {device!r}: impossible values not checked (--peak-gflops sets one)"))
    return out


def runs_table(stats: dict[str, dict[str, Any]], files: list["_File"]) -> pd.DataFrame:
    """One row per file: what ran, how it ended, and how many rows each trust rule took out.
    `stats` is `per_file(rows)`."""
    records = []
    by_file = stats
    for f in files:
        s = f.scan
        c = by_file.get(f.label, {})
        n_rows = int(c.get("rows", 0))
        uneven = n_rows and c["smallest_size_rows"] < c["largest_size_rows"]
        if n_rows == 0:
            outcome = "assert-only" if s.asserts else ("error" if s.errors else "no data")
        elif s.cancelled:
            outcome = "cancelled"
        elif uneven or s.last_line_cut or (s.start is not None and s.end is None):
            outcome = "truncated"
        elif c.get("failed"):
            outcome = "failed checks"
        elif s.exit_code:
            outcome = f"exit {s.exit_code}"
        else:
            outcome = "complete"
        records.append({
            "file": f.label,
            "environment": f.context.get("environment"),
            "nodes": f.context.get("nodes"),
            "test": ",".join(dict.fromkeys(b.test for b in s.blocks)),
            "processes": s.banners,
            "rows": n_rows,
            "failed": int(c.get("failed", 0)),
            "warmup": int(c.get("warmup", 0)),
            "impossible": int(c.get("impossible", 0)),
            "outcome": outcome,
            "duration_s": (s.end - s.start) if s.start is not None and s.end is not None else None,
            "exit_code": s.exit_code,
            "cancelled": s.cancelled,
            "device": s.device,
            "visible_devices": s.visible_devices,
            "magma_version": s.version,
            "last_size": str(c.get("last_size", "")) if n_rows else "",
            "smallest_size_rows": int(c.get("smallest_size_rows", 0) or 0),
            "largest_size_rows": int(c.get("largest_size_rows", 0) or 0),
        })
    runs = pd.DataFrame.from_records(records, columns=None if records else ["file", "outcome", "nodes", "exit_code"])
    for name in ("nodes", "exit_code"):
        runs[name] = runs[name].astype("Int64")
    return runs


def run_findings(runs: pd.DataFrame, scans: dict[str, "FileScan"]) -> list[Finding]:
    """Per file: how the run ended when it did not end well, and lines that were not read."""
    out: list[Finding] = []
    columns = list(runs.columns)
    for values in zip(*(runs[c].tolist() for c in columns)):  # like to_dict("records"), faster
        run = dict(zip(columns, values))
        label, s = run["file"], scans[run["file"]]
        where = f"{run['environment']}" + ("" if run.get("nodes") is None or pd.isna(run.get("nodes")) else f", {int(run['nodes'])} nodes") + ": "
        outcome = run["outcome"]
        took = f" after {run['duration_s']:.1f} s" if run.get("duration_s") is not None and pd.notna(run["duration_s"]) else ""
        if outcome == "assert-only":
            line, text = s.asserts[0]
            out.append(Finding("error", "assert-only", f"{where}no data rows: {len(s.asserts)} process(es) stopped at {text!r}", label, line, len(s.asserts)))
        elif outcome in ("error", "no data"):
            detail = f" first error: {s.errors[0][1]!r}" if s.errors else ""
            out.append(Finding("error", "no-data", f"{where}no data rows in this MAGMA output.{detail}", label))
        elif outcome == "cancelled":
            last = f", last size {run['last_size']}" if run.get("last_size") else ""
            out.append(Finding("warning", "cancelled", f"{where}run was cancelled (exit {run['exit_code']}){took}: partial table of {run['rows']} rows{last}", label))
        elif outcome == "truncated":
            out.append(Finding("warning", "truncated", f"{where}table ends early: some sizes have {run['smallest_size_rows']} rows, others {run['largest_size_rows']} (killed, timed out, or still running?)", label))
        elif pd.notna(run.get("exit_code")) and run.get("exit_code"):
            out.append(Finding("warning", "exit-code", f"{where}processes exited with code {run['exit_code']} (a MAGMA tester returns its number of failed checks)", label))
        if s.errors and outcome not in ("error", "no data"):
            out.append(Finding("warning", "error-line", f"{len(s.errors)} error line(s), first: {s.errors[0][1]!r}", label, s.errors[0][0], len(s.errors)))
        if s.orphan_rows:
            out.append(Finding("warning", "no-header", f"{s.orphan_rows} numeric line(s) but no MAGMA column header: not read", label, None, s.orphan_rows))
        if s.unknown:
            line, text = s.unknown[0]
            out.append(Finding("info", "unrecognised", f"{len(s.unknown)} line(s) not recognised, ignored; first: {text[:80]!r}", label, line, len(s.unknown)))
        if s.last_line_cut:
            out.append(Finding("warning", "cut", "the last line is cut short (file ends mid-line)", label))
        if s.visible_devices > 1 and s.banners > 1:
            out.append(Finding("warning", "shared-device", f"{where}each of {s.banners} processes saw {s.visible_devices} GPUs and MAGMA uses device 0 unless --dev is given: processes on one node may have shared GPU 0", label))
    return out
