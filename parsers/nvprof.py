"""Provides the nvprof reader: `nvprof --csv` output -> the canonical kernel table.

    from gpuscope.parsers import nvprof
    result = nvprof.read("trace.csv")

Formats: shared/research/profile-anchors.md §2.7.
* `--print-gpu-trace --csv`: one row per launch/copy; the row under the header holds the units
  (`s`/`ms`/`us`/`ns`, `B`/`KB`/`MB`/`GB`, binary prefixes: nvprof's KB is 1024 B).
  memcpy/memset rows are kept with `op` and `direction`.
* `--print-gpu-summary --csv`: `Type,Time(%),Time,Calls,Avg,Min,Max,Name` with a units row ->
  one row per kernel, `duration_ns` = total time, extra `calls`.
* `--metrics ... --csv`: `Device,Kernel,Invocations,Metric Name,Metric Description,Min,Max,Avg`
  -> one row per (device, kernel): flops = Invocations × Avg of `flop_count_{dp,sp,hp}` (which
  already count FMA twice), bytes = Invocations × (`dram_read_bytes` + `dram_write_bytes`), else
  32 B × `dram_{read,write}_transactions`.
"""

from __future__ import annotations

import os
from typing import Sequence

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.kernel_table import KernelRead, canonical
from gpuscope.parsers.nsys import (
    bad_rows_finding, classify_name, csv_rows, failed_read, no_rows, not_numeric_finding, number, read_csv_export, skipped_preamble,
    split_unit, time_factor,
)

SOURCE = "nvprof"
BYTE_FACTORS_BINARY = {"b": 1.0, "byte": 1.0, "bytes": 1.0, "kb": 1024.0, "mb": 1024.0**2, "gb": 1024.0**3, "tb": 1024.0**4}
FLOP_METRICS = {"flop_count_dp": "flops_fp64", "flop_count_sp": "flops_fp32", "flop_count_hp": "flops_fp16"}
TRACE_EXPECTED = '"Start","Duration","Grid X",...,"Size","Throughput",...,"Device","Context","Stream","Name" then a units row (us,us,,...)'
USED_METRICS = {*FLOP_METRICS, "dram_read_bytes", "dram_write_bytes", "dram_read_transactions", "dram_write_transactions"}
METRICS_EXPECTED = '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"'
SUMMARY_EXPECTED = '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name" then a units row'


def read(path: str | os.PathLike[str], label: str | None = None) -> KernelRead:
    """Read an `nvprof --csv` file; never raises on bad content."""
    return read_csv_export(path, label, parse_csv, SOURCE)


def parse_csv(text: str, label: str = "<text>") -> KernelRead:
    """The kernel table from the text of one CSV; a header without rows gives a `no-rows` warning."""
    return no_rows(_parse(text, label), label)


def _parse(text: str, label: str) -> KernelRead:
    rows = csv_rows(text)
    if not rows:
        return failed_read(label, [Finding("error", "empty", "file is empty", label)], source=SOURCE)
    near: Finding | None = None
    for index, (line, fields) in enumerate(rows):
        names = [f.strip() for f in fields]
        have = set(names)
        findings = skipped_preamble(rows, index, label)
        if {"Metric Name", "Kernel"} <= have:
            missing = [c for c in ("Kernel", "Invocations", "Metric Name", "Avg") if c not in have]
            if missing:
                return failed_read(label, findings + [_missing(missing, METRICS_EXPECTED, label, line)], source=SOURCE)
            return _metrics(names, rows[index + 1:], label, findings)
        if {"Start", "Duration", "Name"} <= have:
            return _table(names, rows[index + 1:], label, findings, "trace")
        if {"Type", "Calls", "Name"} <= have and any(split_unit(n) == ("time", "") for n in names):
            return _table(names, rows[index + 1:], label, findings, "summary")
        if near is None:
            if len(have & {"Start", "Duration", "Name", "Grid X", "Stream"}) >= 2:
                near = _missing([c for c in ("Start", "Duration", "Name") if c not in have], TRACE_EXPECTED, label, line)
            elif len(have & {"Device", "Kernel", "Invocations", "Metric Name", "Avg"}) >= 3:
                near = _missing([c for c in ("Kernel", "Invocations", "Metric Name", "Avg") if c not in have], METRICS_EXPECTED, label, line)
    if near is not None:
        return failed_read(label, [near], source=SOURCE)
    return failed_read(label, [Finding("error", "unknown-format", f"no nvprof CSV header found (expected --print-gpu-trace: {TRACE_EXPECTED}; --metrics: {METRICS_EXPECTED}; or --print-gpu-summary: {SUMMARY_EXPECTED})", label, rows[0][0])], source=SOURCE)


def _missing(columns: list[str], expected: str, label: str, line: int) -> Finding:
    return Finding("error", "missing-column", f"nvprof CSV header has no column {', '.join('`' + c + '`' for c in columns)} (expected {expected})", label, line)


def _looks_like_units(fields: list[str]) -> bool:
    cells = [f.strip() for f in fields if f.strip()]
    return bool(cells) and all(number(c) is None and (time_factor(c) is not None or c.lower() in BYTE_FACTORS_BINARY or c.endswith("/s") or c == "%") for c in cells)


def _table(header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding], kind: str) -> KernelRead:
    findings = list(findings)
    units = [""] * len(header)
    start = 0
    if body and len(body[0][1]) == len(header) and _looks_like_units(body[0][1]):
        units = [u.strip() for u in body[0][1]]
        start = 1
    else:
        findings.append(Finding("warning", "no-units", "no units row under the header; times taken as ns and sizes as bytes", label))
    pos = {name: i for i, name in reversed(list(enumerate(header)))}
    good, bad = [], []
    for line, fields in body[start:]:
        if len(fields) == len(header):
            good.append((line, fields))
        elif len(fields) > 1 or fields[0].strip():
            bad.append(line)
    findings += bad_rows_finding(bad, len(header), label)
    not_numeric: dict[str, list[int]] = {}

    def values(column: str, scale: str) -> list[float | None]:
        if column not in pos:
            return [None] * len(good)
        i = pos[column]
        factor = time_factor(units[i]) if scale == "time" else BYTE_FACTORS_BINARY.get(units[i].lower(), None) if units[i] else 1.0
        if scale == "count":
            factor = 1.0
        if factor is None:
            findings.append(Finding("warning", "unit", f"unknown unit `{units[i]}` in column `{column}`; its values are left unknown", label))
            return [None] * len(good)
        out: list[float | None] = []
        for line, fields in good:
            value = number(fields[i])
            if value is None and fields[i].strip():
                not_numeric.setdefault(column, []).append(line)
            out.append(value * factor if value is not None else None)
        return out

    names = [f[pos["Name"]] for _, f in good]
    frame = pd.DataFrame({"kernel": names})
    ops = [classify_name(n) for n in names]
    frame["op"] = [o for o, _ in ops]
    frame["direction"] = [d for _, d in ops]
    if kind == "trace":
        frame["start_ns"] = pd.array([round(v) if v is not None else None for v in values("Start", "time")], dtype="Int64")
        frame["duration_ns"] = values("Duration", "time")
        # sizes are printed with 6 decimals of KB/MB: round back to whole bytes
        frame["bytes"] = [round(v) if v is not None else None for v in values("Size", "bytes")]
        frame.loc[frame["op"] == "kernel", "bytes"] = None
        if "Device" in pos:
            frame["device"] = [f[pos["Device"]].strip() or None for _, f in good]
        frame["stream"] = values("Stream", "count")
        if "Correlation_ID" in pos:
            frame["correlation_id"] = pd.array([int(v) if v is not None else None for v in values("Correlation_ID", "count")], dtype="Int64")
        unavailable: tuple[str, ...] = ("flops",)
    else:
        time_col = next(n for n in header if split_unit(n)[0] == "time" and split_unit(n)[1] != "%")
        frame["duration_ns"] = values(time_col, "time")
        frame["calls"] = pd.array([int(v) if v is not None else None for v in values("Calls", "count")], dtype="Int64")
        for extra, column in (("avg_ns", "Avg"), ("min_ns", "Min"), ("max_ns", "Max")):
            frame[extra] = values(column, "time")
        if "Type" in pos:
            frame["type"] = pd.array([f[pos["Type"]].strip() for _, f in good], dtype="string")
            api = frame["type"].str.contains("API", case=False, na=False)
            if api.any():
                findings.append(Finding("info", "api-rows", f"skipped {int(api.sum())} host API call row(s) of the summary (not GPU activities)", label, None, int(api.sum())))
                frame = frame[~api]
        unavailable = ("start_ns", "device", "stream", "flops", "bytes")
    findings += not_numeric_finding(not_numeric, label)
    return KernelRead(canonical(frame, SOURCE), findings, unavailable, {"format": f"nvprof-{kind}"})


def _metrics(header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding]) -> KernelRead:
    findings = list(findings)
    pos = {name: i for i, name in reversed(list(enumerate(header)))}
    kernels: dict[tuple[str, str], dict[str, object]] = {}
    bad: list[int] = []
    not_numeric: dict[str, list[int]] = {}
    for line, fields in body:
        if len(fields) != len(header):
            if len(fields) > 1 or fields[0].strip():
                bad.append(line)
            continue
        device = fields[pos["Device"]].strip() if "Device" in pos else ""
        kernel = fields[pos["Kernel"]]
        entry = kernels.setdefault((device, kernel), {"device": device or None, "kernel": kernel, "calls": None, "_m": {}})
        calls = number(fields[pos["Invocations"]])
        if calls is not None:
            entry["calls"] = calls
        metric = fields[pos["Metric Name"]].strip()
        value = number(fields[pos["Avg"]])
        if value is None:
            if fields[pos["Avg"]].strip() and metric in USED_METRICS:
                not_numeric.setdefault("Avg", []).append(line)
            continue
        entry["_m"][metric] = value  # type: ignore[index]
    findings += bad_rows_finding(bad, len(header), label)
    findings += not_numeric_finding(not_numeric, label)
    records = []
    no_flops = no_bytes = 0
    for entry in kernels.values():
        metrics: dict[str, float] = entry.pop("_m")  # type: ignore[assignment]
        calls = entry["calls"]
        record = dict(entry)
        per: dict[str, float | None] = {col: metrics.get(m) for m, col in FLOP_METRICS.items()}
        scale = float(calls) if isinstance(calls, float) else None
        for col, value in per.items():
            record[col] = value * scale if value is not None and scale is not None else None
        known = [record[c] for c in FLOP_METRICS.values() if record[c] is not None]
        record["flops"] = sum(known) if known else None  # type: ignore[arg-type]
        if "dram_read_bytes" in metrics and "dram_write_bytes" in metrics:
            per_call = metrics["dram_read_bytes"] + metrics["dram_write_bytes"]
        elif "dram_read_transactions" in metrics and "dram_write_transactions" in metrics:
            per_call = 32.0 * (metrics["dram_read_transactions"] + metrics["dram_write_transactions"])
        else:
            per_call = None
        record["bytes"] = per_call * scale if per_call is not None and scale is not None else None
        no_flops += record["flops"] is None
        no_bytes += record["bytes"] is None
        records.append(record)
    frame = pd.DataFrame.from_records(records, columns=["device", "kernel", "calls", *FLOP_METRICS.values(), "flops", "bytes"])
    frame["calls"] = pd.to_numeric(frame["calls"], errors="coerce").round().astype("Int64")
    for column in FLOP_METRICS.values():
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Float64")
    frame["op"] = "kernel"
    if no_flops:
        findings.append(Finding("info", "metric-missing", f"{no_flops} kernel(s) have no flop_count_dp/sp/hp (or no Invocations); flops left unknown", label, None, no_flops))
    if no_bytes:
        findings.append(Finding("info", "metric-missing", f"{no_bytes} kernel(s) have no dram_read_bytes + dram_write_bytes (or transactions); bytes left unknown", label, None, no_bytes))
    return KernelRead(canonical(frame, SOURCE), findings, ("start_ns", "duration_ns", "stream"), {"format": "nvprof-metrics"})
