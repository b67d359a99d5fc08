"""Provides the Nsight Compute reader: `ncu --csv` output -> the canonical kernel table, one row per
profiled launch with duration, FLOPs and DRAM bytes.

    from gpuscope.parsers.profilers import ncu
    result = ncu.read_kernels("sgemm.csv") # long (one row per metric) or wide (`--page raw`, units row)

Formats: shared/research/profile-anchors.md §2.6.
* FLOPs = Σ over precisions d/f/h of `add + mul + 2·fma`, from
  `sm__sass_thread_inst_executed_op_{x}{add,mul,fma}_pred_on.sum` (the `smsp__` variant is used
  for an op only where the `sm__` one is absent). Per-precision totals are extra columns
  `flops_fp64`, `flops_fp32`, `flops_fp16`. Tensor-core work is not counted (see the finding).
* bytes = `dram__bytes_read.sum + dram__bytes_write.sum`, else `dram__bytes.sum`.
* duration = `gpu__time_duration.sum`; units (`nsecond`, `usecond`, `Kbyte`, `Mbyte`...) are applied.
ncu replays kernels with locked clocks, so its durations are not production timings.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import describe_rows, head_text
from gpuscope.parsers.profilers.kernel_table import KernelRead, canonical, file_read
from gpuscope.parsers.profilers.csv_common import is_code
from gpuscope.parsers.profilers.csv_common import (
    BYTE_FACTORS_SI, TIME_FACTORS, bad_rows_finding, csv_rows, failed_read, no_rows, number, read_csv_export, skipped_preamble,
)

SOURCE = "ncu"
DURATION = "gpu__time_duration.sum"
DRAM_READ, DRAM_WRITE, DRAM_TOTAL = "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes.sum"
PRECISIONS = {"d": "flops_fp64", "f": "flops_fp32", "h": "flops_fp16"}
OPS = {"add": 1, "mul": 1, "fma": 2}
TENSOR = ("sm__inst_executed_pipe_tensor.sum",)
LONG_EXPECTED = '"ID","Process ID","Process Name","Host Name","Kernel Name",...,"Metric Name","Metric Unit","Metric Value"'
WIDE_EXPECTED = '"ID",...,"Kernel Name",...,"<metric>",... then a units row ("","",...,"byte","nsecond")'

_COUNT_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def flop_metric(precision: str, op: str, prefix: str = "sm") -> str:
    return f"{prefix}__sass_thread_inst_executed_op_{precision}{op}_pred_on.sum"


def convert(value: float, unit: str) -> float | None:
    """`value` in base units (ns, bytes, counts); None when the unit is unknown."""
    key = unit.strip().lower()
    if key in ("", "inst", "warp", "thread", "cycle", "sector", "request", "byte", "bytes", "instruction", "instructions"):
        return value
    if key in TIME_FACTORS:
        return value * TIME_FACTORS[key]
    if key in BYTE_FACTORS_SI:
        return value * BYTE_FACTORS_SI[key]
    match = re.fullmatch(r"([kmgt]?)(inst|instruction|cycle|sector|request|warp|thread)s?", key)
    if match:
        return value * _COUNT_PREFIX[match.group(1)]
    return None


KIND = "ncu"
TITLE = "Nsight Compute export"
VIEW = "kernels"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    if is_code(name):
        return None
    text = head_text(head)
    if "==PROF==" in text:
        return "`==PROF==` lines: Nsight Compute"
    if '"Kernel Name"' in text and ("Metric" in text or "__" in text):
        return "`Kernel Name` and metric columns: Nsight Compute CSV"
    return None


describe = describe_rows


def read(path: Path, columns: Sequence[str] | None = None) -> FileRead:  # noqa: ARG001 - read whole: every column
    return file_read(read_kernels(path))


def read_kernels(path: str | os.PathLike[str], label: str | None = None) -> KernelRead:
    """Read an `ncu --csv` file; never raises on bad content."""
    return read_csv_export(path, label, parse_csv, SOURCE)


def parse_csv(text: str, label: str = "<text>") -> KernelRead:
    """The kernel table from the text of one CSV; a header without rows gives a `no-rows` warning."""
    return no_rows(_parse(text, label), label)


def _parse(text: str, label: str) -> KernelRead:
    rows = csv_rows(text)
    if not rows:
        return failed_read(label, [Finding("error", "empty", "file is empty", label)], source=SOURCE)
    for index, (line, fields) in enumerate(rows):
        names = [f.strip() for f in fields]
        if "Kernel Name" not in names:
            continue
        findings = skipped_preamble(rows, index, label)
        if "Metric Name" in names or "Metric Value" in names:
            missing = [c for c in ("ID", "Metric Name", "Metric Unit", "Metric Value") if c not in names]
            if missing:
                return failed_read(label, findings + [Finding("error", "missing-column", f"ncu long CSV header has no column {', '.join('`' + m + '`' for m in missing)} (expected {LONG_EXPECTED})", label, line)], source=SOURCE)
            return _long(names, rows[index + 1:], label, findings)
        if "ID" not in names:
            return failed_read(label, findings + [Finding("error", "missing-column", f"ncu CSV header has no column `ID` (expected {WIDE_EXPECTED})", label, line)], source=SOURCE)
        return _wide(names, rows[index + 1:], label, findings)
    return failed_read(label, [Finding("error", "unknown-format", f"no ncu CSV header found: no line has a `Kernel Name` column (expected the long form {LONG_EXPECTED} or the wide `--page raw` form {WIDE_EXPECTED})", label, rows[0][0])], source=SOURCE)


_INFO = {"ID": "id", "Kernel Name": "kernel", "Stream": "stream", "Device": "device", "Context": "context",
         "Block Size": "block", "Grid Size": "grid", "CC": "cc", "Process ID": "pid"}


def _long(header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding]) -> KernelRead:
    pos = {name: i for i, name in reversed(list(enumerate(header)))}
    launches: dict[str, dict[str, Any]] = {}
    bad_fields: list[int] = []
    units_unknown: dict[str, int] = {}
    not_numeric = 0
    first_not_numeric: int | None = None
    for line, fields in body:
        if len(fields) != len(header):
            if len(fields) > 1 or fields[0].strip():
                bad_fields.append(line)
            continue
        launch_id = fields[pos["ID"]].strip()
        if not launch_id:
            bad_fields.append(line)
            continue
        launch = launches.setdefault(launch_id, {"_line": line, "_metrics": {}})
        for column, key in _INFO.items():
            if column in pos and key not in launch:
                launch[key] = fields[pos[column]].strip()
        metric = fields[pos["Metric Name"]].strip()
        raw = fields[pos["Metric Value"]]
        value = number(raw)
        if value is None:
            if raw.strip().lower() not in ("", "n/a"):
                not_numeric += 1
                first_not_numeric = first_not_numeric or line
            continue
        unit = fields[pos["Metric Unit"]].strip()
        base = convert(value, unit)
        if base is None:
            units_unknown[unit] = units_unknown.get(unit, 0) + 1
            continue
        launch["_metrics"][metric] = base
    findings = findings + bad_rows_finding(bad_fields, len(header), label)
    if not_numeric:
        findings.append(Finding("warning", "not-numeric", f"{not_numeric} metric value(s) are not numbers and were skipped (first at line {first_not_numeric})", label, first_not_numeric, not_numeric))
    for unit, count in units_unknown.items():
        findings.append(Finding("warning", "unit", f"{count} metric value(s) with unknown unit `{unit}` were skipped", label, None, count))
    return _assemble(list(launches.values()), label, findings, "ncu-long")


def _wide(header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding]) -> KernelRead:
    pos = {name: i for i, name in reversed(list(enumerate(header)))}
    metrics = [(i, name) for i, name in enumerate(header) if "__" in name]
    units = [""] * len(header)
    start = 0
    if body and len(body[0][1]) == len(header) and not body[0][1][pos["ID"]].strip():
        units = [u.strip() for u in body[0][1]]
        start = 1
    else:
        findings = findings + [Finding("warning", "no-units", "wide ncu CSV has no units row under the header; values are taken as base units (ns, bytes)", label)]
    launches: list[dict[str, Any]] = []
    bad_fields: list[int] = []
    units_unknown: dict[str, int] = {}
    for line, fields in body[start:]:
        if len(fields) != len(header) or not fields[pos["ID"]].strip():
            bad_fields.append(line)
            continue
        launch: dict[str, Any] = {"_line": line, "_metrics": {}}
        for column, key in _INFO.items():
            if column in pos:
                launch[key] = fields[pos[column]].strip()
        for i, name in metrics:
            value = number(fields[i])
            if value is None:
                continue
            base = convert(value, units[i])
            if base is None:
                units_unknown[units[i]] = units_unknown.get(units[i], 0) + 1
                continue
            launch["_metrics"][name] = base
        launches.append(launch)
    findings = findings + bad_rows_finding(bad_fields, len(header), label)
    for unit, count in units_unknown.items():
        findings.append(Finding("warning", "unit", f"{count} metric value(s) with unknown unit `{unit}` were skipped", label, None, count))
    return _assemble(launches, label, findings, "ncu-wide")


def _flops(metrics: dict[str, float]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for precision, column in PRECISIONS.items():
        total, seen = 0.0, False
        for op, weight in OPS.items():
            value = metrics.get(flop_metric(precision, op, "sm"), metrics.get(flop_metric(precision, op, "smsp")))
            if value is not None:
                total += weight * value
                seen = True
        out[column] = total if seen else None
    known = [v for v in out.values() if v is not None]
    out["flops"] = sum(known) if known else None
    return out


def _assemble(launches: list[dict[str, Any]], label: str, findings: list[Finding], fmt: str) -> KernelRead:
    records = []
    partial_bytes = 0
    for launch in launches:
        metrics = launch["_metrics"]
        record = {k: launch.get(k) for k in _INFO.values()}
        record["duration_ns"] = metrics.get(DURATION)
        record.update(_flops(metrics))
        if DRAM_READ in metrics and DRAM_WRITE in metrics:
            record["bytes"] = metrics[DRAM_READ] + metrics[DRAM_WRITE]
        elif DRAM_TOTAL in metrics:
            record["bytes"] = metrics[DRAM_TOTAL]
        elif DRAM_READ in metrics or DRAM_WRITE in metrics:
            partial_bytes += 1
            record["bytes"] = None
        else:
            record["bytes"] = None
        record["tensor_inst"] = next((metrics[m] for m in TENSOR if m in metrics), None)
        records.append(record)
    frame = pd.DataFrame.from_records(records, columns=list(_INFO.values()) + ["duration_ns", "flops_fp64", "flops_fp32", "flops_fp16", "flops", "bytes", "tensor_inst"])
    frame["op"] = "kernel"
    for column in ("flops_fp64", "flops_fp32", "flops_fp16", "tensor_inst"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(pd.Float64Dtype())
    ids = pd.to_numeric(frame["id"], errors="coerce")
    frame["id"] = ids.astype(pd.Int64Dtype()) if ids.notna().all() and (ids == ids.round()).all() else frame["id"]
    table = canonical(frame, SOURCE)
    if len(table):
        table = table.sort_values("id", kind="stable").reset_index(drop=True) if table["id"].dtype == "Int64" else table
        for column, metric in (("duration_ns", DURATION), ("flops", "sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum"), ("bytes", f"{DRAM_READ} + {DRAM_WRITE}")):
            missing = int(table[column].isna().sum())
            if missing:
                findings.append(Finding("info", "metric-missing", f"{missing} of {len(table)} launch(es) have no {metric}; `{column}` left unknown (collect it with --metrics)", label, None, missing))
        if partial_bytes:
            findings.append(Finding("warning", "metric-missing", f"{partial_bytes} launch(es) have only one of {DRAM_READ} / {DRAM_WRITE}; bytes left unknown", label, None, partial_bytes))
        tensor = int(table["tensor_inst"].fillna(0).gt(0).sum())
        if tensor:
            findings.append(Finding("warning", "tensor-cores", f"{tensor} launch(es) used tensor cores; their tensor FLOPs are not in `flops` (SASS FP counters only)", label, None, tensor))
    findings.append(Finding("info", "replayed", "ncu replays kernels with locked clocks: durations are not production timings", label))
    return KernelRead(table, findings, ("start_ns",), {"format": fmt})
