"""Provides the Nsight Systems reader: an SQLite export or an `nsys stats --format csv` report
-> the canonical kernel table (`gpuscope.parsers.profilers.kernel_table`).

    from gpuscope.parsers.profilers import nsys
    result = nsys.read_kernels("report.sqlite")  # or report_cuda_gpu_trace.csv, ..._cuda_gpu_kern_sum.csv
    result.table, result.findings, result.meta["peak_gbs"], result.meta.get("nvtx")

Formats: shared/research/profile-anchors.md §2.1-2.5.
* SQLite: CUPTI_ACTIVITY_KIND_KERNEL (+ MEMCPY, MEMSET) with names through StringIds; GPU facts
  from TARGET_INFO_GPU (memoryBandwidth B/s -> `peak_gbs`, clockRate, smCount); NVTX push/pop and
  start/end ranges from NVTX_EVENTS -> `meta['nvtx']`.
* CSV: `cuda_gpu_kern_sum` / older `gpukernsum` (one row per kernel, `duration_ns` = total time,
  extra `calls`), `cuda_gpu_trace` / `gputrace` (one row per launch, memcpy/memset rows kept with
  `op` and `direction`), NVTX reports (`nvtx_pushpop_trace`, `nvtx_sum`, ...) -> `meta['nvtx']`.
  The unit is read from each header (`Start (ns)`, `Start(sec)`, `Bytes (MB)`...); stdout preambles
  before the header are skipped.

The file kind `nsys`: recognised by SQLite magic (with its CUPTI / NVTX tables named in the head)
or by the header words of an `nsys stats` report.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.profilers import sqlite_bounded as db
from gpuscope.parsers.profilers.csv_common import (
    SQLITE_MAGIC, bad_rows_finding, byte_factor, classify_name, csv_rows, failed_read, is_code, load_text,
    no_rows, not_numeric_finding, number, skipped_preamble, split_unit, time_factor,
)
from gpuscope.parsers.profilers.kernel_table import KernelRead, canonical, empty, file_read
from gpuscope.parsers.files import check_regular, describe_rows, display_name, head, head_bytes, head_text

SOURCE = "nsys"

# --------------------------------------------------------------------------------------------
# the file kind

KIND = "nsys"
TITLE = "Nsight Systems export"
VIEW = "kernels"
BOUNDED = True
"""An SQLite export is read within row budgets; an `nsys stats` CSV is read whole, within the
full-read limit (the registry says so for a large one)."""


def match_sqlite(name: str, head: Head) -> str | None:
    data = head_bytes(head)
    if not data.startswith(SQLITE_MAGIC[:15]):
        return None
    tables = [t for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "TARGET_INFO_GPU", "NVTX_EVENTS") if t.encode() in data]
    return f"SQLite magic, {', '.join(tables)} tables: Nsight Systems export" if tables else "SQLite magic: read as an Nsight Systems export"


def match_text(name: str, head: Head) -> str | None:
    if is_code(name):
        return None
    text = head_text(head)
    for clue in ("Instances", "(ns)", "(us)", "Start(sec)", "cuda_gpu"):
        if clue in text:
            return f"`{clue}` in the header: nsys stats CSV"
    return None


def match(name: str, head: Head) -> str | None:
    return match_sqlite(name, head) or match_text(name, head)


def describe(head: Head, size: int) -> str:
    return "nsys SQLite" if head_bytes(head).startswith(SQLITE_MAGIC[:15]) else describe_rows(head, size)


def read(path: Path, columns: Sequence[str] | None = None) -> FileRead:  # noqa: ARG001 - read whole: every column
    return file_read(read_kernels(path))


# --------------------------------------------------------------------------------------------
# entry point


def read_kernels(path: str | os.PathLike[str], label: str | None = None) -> KernelRead:
    """Read an nsys SQLite export or `nsys stats` CSV report; never raises on bad content."""
    label = label if label is not None else display_name(path)
    first, findings = head(path, label, len(SQLITE_MAGIC))
    if first is None:
        return failed_read(label, findings)
    if first == SQLITE_MAGIC:
        return read_sqlite(path, label)
    text, label, findings = load_text(path, label)
    if text is None:
        return failed_read(label, findings)
    result = parse_csv(text, label)
    return KernelRead(result.table, findings + result.findings, result.unavailable, result.meta)


# --------------------------------------------------------------------------------------------
# SQLite export


def read_sqlite(path: str | os.PathLike[str], label: str | None = None) -> KernelRead:
    """An nsys SQLite export, opened read-only (regular files only), each query bounded in time
    and the rows read bounded in number (parsers/sqlite_bounded)."""
    label = label if label is not None else display_name(path)
    problem = check_regular(path, label)
    if problem is not None:
        return failed_read(label, [problem])
    uri = Path(path).resolve().as_uri() + "?mode=ro&immutable=1"
    try:
        con = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        return failed_read(label, [Finding("error", "corrupt", f"cannot open the SQLite export: {exc}", label)])
    try:
        return _read_sqlite(con, label)
    except MemoryError:
        return failed_read(label, [Finding("error", "huge", "not enough memory to read it", label)])
    except db.Refused as exc:
        return failed_read(label, [Finding("error", "refused", f"table {exc.args[0]} refused: its query ran over {db.QUERY_SECONDS:g} s", label)])
    except sqlite3.DatabaseError as exc:
        return failed_read(label, [Finding("error", "corrupt", f"SQLite export is corrupt or not an nsys export: {exc}", label)])
    finally:
        con.close()


_KERNEL_REQUIRED = ("start", "end", "deviceId", "streamId")


def _read_sqlite(con: sqlite3.Connection, label: str) -> KernelRead:
    tables, refused = db.tables(con)
    findings: list[Finding] = [Finding("warning", "refused", f"{name} is a view or virtual table, not a table an nsys export has: not read", label)
                               for name in refused]
    meta: dict[str, Any] = {"format": "nsys-sqlite"}
    gpus = _gpu_info(con, tables, findings, label)
    if gpus:
        meta["gpus"] = gpus
        first = gpus[0]
        for key in ("gpu_name", "peak_gbs", "clock_hz", "sm_count", "compute_capability"):
            if first.get(key) is not None:
                meta[key] = first[key]
    names = _device_names(gpus)
    strings = "StringIds" in tables
    if not strings:
        findings.append(Finding("warning", "missing-table", "no StringIds table: kernel names are shown as string ids (expected an nsys SQLite export with StringIds(id, value))", label))
    frames, budget = [], db.RowBudget(label, findings)  # kernels, copies and sets share one budget
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
        findings.append(Finding("warning", "no-kernels", "no CUDA kernel data: table CUPTI_ACTIVITY_KIND_KERNEL is absent (profile with --trace=cuda)", label))
    else:
        cols = db.columns(con, "CUPTI_ACTIVITY_KIND_KERNEL")
        missing = [c for c in _KERNEL_REQUIRED if c not in cols]
        name_cols = [c for c in ("demangledName", "shortName", "mangledName") if c in cols]
        if missing or not name_cols:
            miss = missing + ([] if name_cols else ["demangledName"])
            findings.append(Finding("error", "missing-column", f"CUPTI_ACTIVITY_KIND_KERNEL lacks column(s) {', '.join(miss)} (expected the nsys export schema: start, end, deviceId, streamId, demangledName/shortName -> StringIds)", label))
        else:
            frames.append(_kernels(con, cols, name_cols, strings, budget))
    for table, op in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if table in tables:
            cols = db.columns(con, table)
            if all(c in cols for c in _KERNEL_REQUIRED):
                frames.append(_copies(con, table, op, cols, budget))
    frame = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else pd.DataFrame()
    if len(frame):
        frame = frame.sort_values("start_ns", kind="stable", na_position="last")
        frame["device"] = [names.get(d, str(d)) if d is not None and not pd.isna(d) else None for d in frame["device_id"]]
        bad = frame["duration_ns"].isna() | (pd.to_numeric(frame["duration_ns"], errors="coerce") < 0)
        if bad.any():
            findings.append(Finding("warning", "impossible", f"{int(bad.sum())} activity row(s) have no end or end < start; duration left unknown", label, None, int(bad.sum())))
            frame.loc[bad, "duration_ns"] = pd.NA
        frame = frame.drop(columns=["device_id"])
    nvtx = _nvtx_sqlite(con, tables, strings, db.RowBudget(label, findings))
    if nvtx is not None:
        meta["nvtx"] = nvtx
    table = canonical(frame, SOURCE) if len(frame) else empty(SOURCE)
    return KernelRead(table, findings, ("flops", "bytes"), meta)


def _kernels(con: sqlite3.Connection, cols: list[str], name_cols: list[str], strings: bool, budget: db.RowBudget) -> pd.DataFrame:
    if strings:
        joins = " ".join(f"LEFT JOIN StringIds s_{c} ON s_{c}.id = k.{c}" for c in name_cols)
        name = "coalesce(" + ", ".join(f"s_{c}.value" for c in name_cols) + ", " + ", ".join(f"CAST(k.{c} AS TEXT)" for c in name_cols) + ")"
        short = "s_shortName.value" if "shortName" in name_cols else "NULL"
    else:
        joins = ""
        name = "coalesce(" + ", ".join(f"CAST(k.{c} AS TEXT)" for c in name_cols) + ")"
        short = "NULL"
    corr = "k.correlationId" if "correlationId" in cols else "NULL"
    sql = (f"SELECT k.start AS start_ns, k.\"end\" - k.start AS duration_ns, k.deviceId AS device_id, "
           f"k.streamId AS stream, {name} AS kernel, {short} AS short_name, {corr} AS correlation_id "
           f"FROM CUPTI_ACTIVITY_KIND_KERNEL k {joins}")
    frame = budget.read(con, sql, "CUPTI_ACTIVITY_KIND_KERNEL")
    frame["op"] = "kernel"
    return frame


_COPY_KINDS = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP"}


def _copies(con: sqlite3.Connection, table: str, op: str, cols: list[str], budget: db.RowBudget) -> pd.DataFrame:
    nbytes = "bytes" if "bytes" in cols else "NULL"
    kind = "copyKind" if "copyKind" in cols else "NULL"
    corr = "correlationId" if "correlationId" in cols else "NULL"
    sql = (f"SELECT start AS start_ns, \"end\" - start AS duration_ns, deviceId AS device_id, streamId AS stream, "
           f"{nbytes} AS bytes, {kind} AS copy_kind, {corr} AS correlation_id FROM {table}")
    frame = budget.read(con, sql, table)
    frame["op"] = op
    if op == "memcpy":
        frame["direction"] = [_COPY_KINDS.get(int(k)) if k is not None and not pd.isna(k) else None for k in frame["copy_kind"]]
        frame["kernel"] = ["[CUDA memcpy " + (d or "?") + "]" for d in frame["direction"]]
    else:
        frame["kernel"] = "[CUDA memset]"
    return frame.drop(columns=["copy_kind"])


def _gpu_info(con: sqlite3.Connection, tables: set[str], findings: list[Finding], label: str) -> list[dict[str, Any]]:
    table = "TARGET_INFO_GPU" if "TARGET_INFO_GPU" in tables else "TARGET_INFO_CUDA_GPU" if "TARGET_INFO_CUDA_GPU" in tables else None
    if table is None:
        findings.append(Finding("info", "no-gpu-info", "no TARGET_INFO_GPU table: GPU name and peak bandwidth come from elsewhere", label))
        return []
    cols = db.columns(con, table)
    wanted = [c for c in ("id", "deviceId", "name", "memoryBandwidth", "clockRate", "smCount", "computeMajor", "computeMinor", "totalMemory", "chipName") if c in cols]
    if not wanted:
        return []
    rows = db.query(con, f"SELECT {', '.join(wanted)} FROM {table} LIMIT 64", table, rows=True)  # one row per GPU
    out = []
    for row in rows:
        info = dict(zip(wanted, row))
        device = info.get("id", info.get("deviceId"))
        bandwidth = number(info.get("memoryBandwidth"))
        major, minor = info.get("computeMajor"), info.get("computeMinor")
        out.append({
            "device_id": device,
            "gpu_name": info.get("name"),
            "peak_gbs": bandwidth / 1e9 if bandwidth else None,
            "clock_hz": number(info.get("clockRate")),
            "sm_count": info.get("smCount"),
            "compute_capability": f"{major}.{minor}" if major is not None and minor is not None else None,
            "total_memory_bytes": info.get("totalMemory"),
            "chip": info.get("chipName"),
        })
    return out


def _device_names(gpus: list[dict[str, Any]]) -> dict[Any, str]:
    return {g["device_id"]: f"{g['gpu_name']} ({g['device_id']})" if g.get("gpu_name") else str(g["device_id"]) for g in gpus if g.get("device_id") is not None}


def _nvtx_sqlite(con: sqlite3.Connection, tables: set[str], strings: bool, budget: db.RowBudget) -> pd.DataFrame | None:
    if "NVTX_EVENTS" not in tables:
        return None
    cols = db.columns(con, "NVTX_EVENTS")
    if not all(c in cols for c in ("start", "end", "eventType")):
        return None
    text = "n.text" if "text" in cols else "NULL"
    if strings and "textId" in cols:
        name, join = f"coalesce({text}, s.value)", "LEFT JOIN StringIds s ON s.id = n.textId"
    else:
        name, join = text, ""
    tid = "n.globalTid" if "globalTid" in cols else "NULL"
    sql = (f"SELECT n.start AS start_ns, n.\"end\" AS end_ns, n.\"end\" - n.start AS duration_ns, {name} AS name, "
           f"n.eventType AS event_type, {tid} AS global_tid FROM NVTX_EVENTS n {join} "
           f"WHERE n.eventType IN (59, 60, 70) ORDER BY n.start")
    frame = budget.read(con, sql, "NVTX_EVENTS")
    frame["style"] = frame["event_type"].map({59: "PushPop", 70: "PushPop", 60: "StartEnd"})
    gtid = pd.to_numeric(frame["global_tid"], errors="coerce").astype(pd.Int64Dtype())
    frame["pid"] = (gtid // (1 << 24)) % (1 << 24)
    frame["tid"] = gtid % (1 << 24)
    return frame.drop(columns=["global_tid"])


# --------------------------------------------------------------------------------------------
# `nsys stats --format csv` reports

_KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "kern_sum": (("total time", "instances", "name"), "cuda_gpu_kern_sum / gpukernsum: Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"),
    "trace": (("start", "duration", "name"), "cuda_gpu_trace / gputrace: Start (ns),Duration (ns),CorrId,GrdX,...,Device,Ctx,Strm,Name"),
    "nvtx_trace": (("start", "end", "name"), "nvtx_pushpop_trace: Start (ns),End (ns),Duration (ns),...,Name,PID,TID,Lvl,..."),
    "nvtx_sum": (("total time", "instances", "range"), "nvtx_sum / nvtx_pushpop_sum: Time (%),Total Time (ns),Instances,Avg (ns),...,Range"),
}


def _kind_of(bases: list[str]) -> str | None:
    names = set(bases)
    if "range" in names and {"total time", "instances"} <= names:
        return "nvtx_sum"
    if names & {"rangeid", "lvl", "nametree", "range stack", "rangestack"} and {"start", "name"} <= names:
        return "nvtx_trace"
    if {"total time", "instances", "name"} <= names:
        return "kern_sum"
    if {"start", "duration", "name"} <= names:
        return "trace"
    return None


def _near_miss(bases: list[str]) -> str | None:
    names = set(bases)
    for required, expected in _KINDS.values():
        have = [r for r in required if r in names]
        if len(have) >= 2 and len(have) < len(required):
            missing = [r for r in required if r not in names]
            return f"header has no column {', '.join('`' + m.title() + '`' for m in missing)} (expected {expected})"
    return None


def parse_csv(text: str, label: str = "<text>") -> KernelRead:
    """The kernel table from the text of one `nsys stats --format csv` report."""
    rows = csv_rows(text)
    if not rows:
        return failed_read(label, [Finding("error", "empty", "file is empty", label)])
    near: tuple[int, str] | None = None
    for index, (line, fields) in enumerate(rows):
        bases = [split_unit(f)[0] for f in fields]
        kind = _kind_of(bases)
        if kind is not None:
            findings = skipped_preamble(rows, index, label)
            body = rows[index + 1:]
            if kind == "kern_sum":
                return no_rows(_kern_sum(fields, body, label, findings), label)
            if kind == "trace":
                return no_rows(_trace(fields, body, label, findings), label)
            return _nvtx_csv(kind, fields, body, label, findings)
        if near is None:
            miss = _near_miss(bases)
            if miss:
                near = (line, miss)
    if near is not None:
        return failed_read(label, [Finding("error", "missing-column", near[1], label, near[0])])
    expected = "; ".join(v[1] for v in _KINDS.values())
    return failed_read(label, [Finding("error", "unknown-format", f"no nsys stats CSV header found (expected one of {expected}; `--format column` tables are not read, use --format csv)", label, rows[0][0])])


def _index(header: list[str]) -> dict[str, tuple[int, str]]:
    """base name -> (position, unit), first occurrence wins."""
    out: dict[str, tuple[int, str]] = {}
    for position, cell in enumerate(header):
        base, unit = split_unit(cell)
        out.setdefault(base, (position, unit))
    return out


def _collect(header: list[str], body: Sequence[tuple[int, list[str]]], label: str) -> tuple[list[tuple[int, list[str]]], list[Finding]]:
    good, bad = [], []
    for line, fields in body:
        if len(fields) == len(header):
            good.append((line, fields))
        elif len(fields) == len(header) + 1 and fields[-1] == "":
            good.append((line, fields[:-1]))
        else:
            bad.append(line)
    return good, bad_rows_finding(bad, len(header), label)


def _unit_factor(column: str, unit: str, kind: str, default: float, label: str, findings: list[Finding]) -> float | None:
    factor = time_factor(unit, default) if kind == "time" else byte_factor(unit, default=default)
    if factor is None:
        findings.append(Finding("warning", "unit", f"unknown unit `{unit}` in column `{column}`; its values are left unknown", label))
    return factor


def _numbers(good: list[tuple[int, list[str]]], position: int | None, factor: float | None, column: str, bad: dict[str, list[int]]) -> list[float | None]:
    out: list[float | None] = []
    for line, fields in good:
        if position is None or factor is None:
            out.append(None)
            continue
        cell = fields[position]
        value = number(cell)
        if value is None and cell.strip() not in ("", "n/a", "N/A", "-"):
            bad.setdefault(column, []).append(line)
        out.append(value * factor if value is not None else None)
    return out


def _kern_sum(header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding]) -> KernelRead:
    idx = _index(header)
    good, more = _collect(header, body, label)
    findings = findings + more
    bad: dict[str, list[int]] = {}
    frame = pd.DataFrame({"kernel": [f[idx["name"][0]] for _, f in good]})
    position, unit = idx["total time"]
    frame["duration_ns"] = _numbers(good, position, _unit_factor("Total Time", unit, "time", 1.0, label, findings), "Total Time", bad)
    frame["calls"] = pd.array([int(v) if v is not None else None for v in _numbers(good, idx["instances"][0], 1.0, "Instances", bad)], dtype="Int64")
    for extra, names in (("avg_ns", ("avg", "average")), ("median_ns", ("med", "median")), ("min_ns", ("min", "minimum")), ("max_ns", ("max", "maximum")), ("stddev_ns", ("stddev",))):
        found = next((idx[n] for n in names if n in idx), None)
        if found is not None:
            frame[extra] = _numbers(good, found[0], _unit_factor(extra, found[1], "time", 1.0, label, findings), extra, bad)
    for extra, name in (("grid", "gridxyz"), ("block", "blockxyz")):
        if name in idx:
            frame[extra] = [f[idx[name][0]].strip() for _, f in good]
    frame["op"] = "kernel"
    findings += not_numeric_finding(bad, label)
    unavailable = ("start_ns", "device", "stream", "flops", "bytes")
    return KernelRead(canonical(frame, SOURCE), findings, unavailable, {"format": "nsys-cuda_gpu_kern_sum"})


def _trace(header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding]) -> KernelRead:
    idx = _index(header)
    good, more = _collect(header, body, label)
    findings = findings + more
    bad: dict[str, list[int]] = {}
    names = [f[idx["name"][0]] for _, f in good]
    frame = pd.DataFrame({"kernel": names})
    position, unit = idx["start"]
    # 2021.1 wrote `Start(sec)`; a bare `Start` means the ns default
    starts = _numbers(good, position, _unit_factor("Start", unit, "time", 1.0, label, findings), "Start", bad)
    frame["start_ns"] = pd.array([round(v) if v is not None else None for v in starts], dtype="Int64")
    position, unit = idx["duration"]
    frame["duration_ns"] = _numbers(good, position, _unit_factor("Duration", unit, "time", 1.0, label, findings), "Duration", bad)
    if "bytes" in idx:
        position, unit = idx["bytes"]
        frame["bytes"] = _numbers(good, position, _unit_factor("Bytes", unit, "bytes", 1.0, label, findings), "Bytes", bad)
    if "device" in idx:
        frame["device"] = [f[idx["device"][0]].strip() or None for _, f in good]
    stream_col = next((c for c in ("strm", "stream") if c in idx), None)
    if stream_col:
        frame["stream"] = _numbers(good, idx[stream_col][0], 1.0, "Strm", bad)
    if "corrid" in idx:
        frame["correlation_id"] = pd.array([int(v) if v is not None else None for v in _numbers(good, idx["corrid"][0], 1.0, "CorrId", bad)], dtype="Int64")
    ops = [classify_name(n) for n in names]
    frame["op"] = [o for o, _ in ops]
    frame["direction"] = [d for _, d in ops]
    # kernel rows carry no byte count in this report (the Bytes column is for copies)
    if "bytes" in frame:
        frame.loc[frame["op"] == "kernel", "bytes"] = None
    findings += not_numeric_finding(bad, label)
    unavailable = ("flops",) + (() if "bytes" in idx else ("bytes",))
    return KernelRead(canonical(frame, SOURCE), findings, unavailable, {"format": "nsys-cuda_gpu_trace"})


def _integral(column: pd.Series) -> pd.Series:
    """Float values that are all whole numbers become Int64 (ids, levels, ns); others unchanged."""
    if column.dtype == object or str(column.dtype) in ("str", "string"):
        return column
    if pd.api.types.is_integer_dtype(column.dtype) and (column.abs() < 2**62).all():  # exact: no float on the way
        return column.astype("Int64")
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)  # numpy: a column costs µs
    known = values[~np.isnan(values)]
    if len(known) and (known == np.round(known)).all() and (np.abs(known) < 2**62).all():
        return pd.Series(pd.array(np.round(values), dtype=pd.Int64Dtype()), index=column.index)
    return pd.Series(pd.array(values, dtype=pd.Float64Dtype()), index=column.index)


def _nvtx_csv(kind: str, header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding]) -> KernelRead:
    good, more = _collect(header, body, label)
    findings = findings + more
    bad: dict[str, list[int]] = {}
    columns: dict[str, Any] = {}  # one frame built at the end: a column inserted at a time costs pandas more than the 100 rows
    for position, cell in enumerate(header):
        base, unit = split_unit(cell)
        factor = time_factor(unit) if unit else None
        if factor is not None:
            columns[base.replace(" ", "_") + "_ns"] = _numbers(good, position, factor, cell, bad)
        elif base in ("name", "range", "style", "rangestack", "nametree"):
            columns[base] = [f[position] for _, f in good]
        else:
            columns[base.replace(" ", "_") + ("_pct" if unit == "%" else "")] = pd.to_numeric(pd.Series([number(f[position]) for _, f in good], dtype=object), errors="coerce")
    frame = pd.DataFrame(columns, index=range(len(good)))
    frame = pd.DataFrame({column: _integral(frame[column]) for column in frame.columns}, index=frame.index)
    findings += not_numeric_finding(bad, label)
    findings.append(Finding("info", "no-kernels", f"NVTX report ({len(frame)} range rows) has no kernels; ranges are in meta['nvtx']", label))
    return KernelRead(empty(SOURCE), findings, ("kernel", "start_ns", "duration_ns", "flops", "bytes"), {"format": f"nsys-{kind}", "nvtx": frame})
