"""Provides the nvprof reader: `nvprof --csv` output -> the canonical kernel table.

    from gpuscope.parsers.profilers import nvprof
    result = nvprof.read_kernels("trace.csv")

Formats: shared/research/profile-anchors.md §2.7.
* `--print-gpu-trace --csv`: one row per launch/copy; the row under the header holds the units
  (`s`/`ms`/`us`/`ns`, `B`/`KB`/`MB`/`GB`, binary prefixes: nvprof's KB is 1024 B).
  memcpy/memset rows are kept with `op` and `direction`. nvprof appends the id of the launching
  API call to each name (`vecAdd(float*) [123]`): it goes to column `launch_id`, so one kernel's
  launches share one name.
* `--print-gpu-summary --csv`: `Type,Time(%),Time,Calls,Avg,Min,Max,Name` with a units row ->
  one row per kernel, `duration_ns` = total time, extra `calls`, `avg_ns`, `min_ns`, `max_ns`.
  Hand-made summaries without the units row may write the unit in each cell (`353.084ms`,
  `83.30%`); a blank `Type` continues the row above.
* `--metrics ... --csv`: `Device,Kernel,Invocations,Metric Name,Metric Description,Min,Max,Avg`
  -> one row per (device, kernel): flops = Invocations × Avg of `flop_count_{dp,sp,hp}` (which
  already count FMA twice), bytes = Invocations × (`dram_read_bytes` + `dram_write_bytes`), else
  32 B × `dram_{read,write}_transactions`. The profiler's own figures are kept by the unit of
  their values (METRIC_UNITS): `98.50%` -> `<metric>_pct` (efficiencies, utilisation in %),
  `25.9GB/s` -> `<metric>_gbs`, `Low (2)` -> `<metric>_level` (nvprof's 0-10 utilisation scale).
  `join_metrics` puts the per-call FLOPs and bytes on the launches of a trace of the same run.
* The plain text summary nvprof prints without `--csv` is read by `nvprof_text`.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.profilers import nvprof_text
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import describe_rows, display_name, head_text
from gpuscope.parsers.profilers.kernel_table import KernelRead, canonical, file_read
from gpuscope.parsers.profilers.csv_common import is_code
from gpuscope.parsers.profilers.csv_common import (
    bad_rows_finding, classify_name, csv_rows, failed_read, no_rows, not_numeric_finding, number, number_and_unit, read_csv_export,
    skipped_preamble, split_unit, time_factor,
)

SOURCE = "nvprof"
BYTE_FACTORS_BINARY = {"b": 1.0, "byte": 1.0, "bytes": 1.0, "kb": 1024.0, "mb": 1024.0**2, "gb": 1024.0**3, "tb": 1024.0**4}
FLOP_METRICS = {"flop_count_dp": "flops_fp64", "flop_count_sp": "flops_fp32", "flop_count_hp": "flops_fp16"}
TRACE_EXPECTED = '"Start","Duration","Grid X",...,"Size","Throughput",...,"Device","Context","Stream","Name" then a units row (us,us,,...)'
USED_METRICS = {*FLOP_METRICS, "dram_read_bytes", "dram_write_bytes", "dram_read_transactions", "dram_write_transactions"}
METRICS_EXPECTED = '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"'
SUMMARY_EXPECTED = '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name" then a units row (or units in the cells: 353.084ms)'
LAUNCH_ID = re.compile(r"\s+\[(\d+)\]$")
"""The ` [123]` nvprof appends to a trace row's name: the launching API call, not the kernel."""
METRIC_UNITS = {
    "%": ("pct", 1.0),
    "B/s": ("gbs", 1e-9), "KB/s": ("gbs", 1e-6), "MB/s": ("gbs", 1e-3), "GB/s": ("gbs", 1.0), "TB/s": ("gbs", 1e3),
}
"""A metric value's unit -> (column suffix, factor to that column's unit). Throughputs are taken
as printed, decimal (1 GB/s = 1e9 B/s)."""
LEVEL = re.compile(r"^(?:Idle|Low|Mid|High|Max)\s*\((\d+)\)$", re.IGNORECASE)
"""Utilisation metrics (`dram_utilization`...): `Low (2)` on nvprof's 0-10 scale -> `<metric>_level`."""


KIND = "nvprof"
TITLE = "nvprof export"
VIEW = "kernels"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    if is_code(name):
        return None
    text = head_text(head)
    if "NVPROF" in text:
        return "`NVPROF` banner: nvprof"
    if "==" in text.split("\n", 1)[0] and "Profiling result" in text:
        return "`==PID== Profiling result`: nvprof"
    if '"Grid X"' in text:
        return "`Grid X` column: nvprof GPU trace CSV"
    if "GPU activities:" in text:
        return "`GPU activities:` summary: nvprof"
    if "Invocations" in text and "Metric Name" in text:
        return "`Invocations` and `Metric Name` columns: nvprof --metrics"
    if "Time(%)" in text and "Calls" in text and "Avg" in text:
        return "`Time(%)`, `Calls`, `Avg` columns: nvprof summary"
    return None


describe = describe_rows


def read(path: Path, columns: Sequence[str] | None = None) -> FileRead:  # noqa: ARG001 - read whole: every column
    return file_read(read_kernels(path))


def read_kernels(path: str | os.PathLike[str], label: str | None = None) -> KernelRead:
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
        if {"Calls", "Name"} <= have and any(split_unit(n) == ("time", "") for n in names):
            return _table(names, rows[index + 1:], label, findings, "summary")
        if near is None:
            if len(have & {"Start", "Duration", "Name", "Grid X", "Stream"}) >= 2:
                near = _missing([c for c in ("Start", "Duration", "Name") if c not in have], TRACE_EXPECTED, label, line)
            elif len(have & {"Device", "Kernel", "Invocations", "Metric Name", "Avg"}) >= 3:
                near = _missing([c for c in ("Kernel", "Invocations", "Metric Name", "Avg") if c not in have], METRICS_EXPECTED, label, line)
    if near is not None:
        return failed_read(label, [near], source=SOURCE)
    if nvprof_text.has_summary(text):
        return nvprof_text.parse_text(text, label)
    return failed_read(label, [Finding("error", "unknown-format", f"no nvprof CSV header found (expected --print-gpu-trace: {TRACE_EXPECTED}; --metrics: {METRICS_EXPECTED}; --print-gpu-summary: {SUMMARY_EXPECTED}; or nvprof's text summary: {nvprof_text.EXPECTED})", label, rows[0][0])], source=SOURCE)


def _missing(columns: list[str], expected: str, label: str, line: int) -> Finding:
    return Finding("error", "missing-column", f"nvprof CSV header has no column {', '.join('`' + c + '`' for c in columns)} (expected {expected})", label, line)


def _looks_like_units(fields: list[str]) -> bool:
    cells = [f.strip() for f in fields if f.strip()]
    return bool(cells) and all(number(c) is None and (time_factor(c) is not None or c.lower() in BYTE_FACTORS_BINARY or c.endswith("/s") or c == "%") for c in cells)


def _factor(unit: str, scale: str) -> float | None:
    """Multiply a value in `unit` by this to get ns (`time`), bytes (`bytes`) or a count; '' is
    the base unit; None for a unit this scale does not know."""
    if scale == "time":
        return time_factor(unit)
    if scale == "bytes":
        return BYTE_FACTORS_BINARY.get(unit.lower()) if unit else 1.0
    return None if unit else 1.0


def _table(header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding], kind: str) -> KernelRead:
    findings = list(findings)
    units = [""] * len(header)
    start = 0
    if body and len(body[0][1]) == len(header) and _looks_like_units(body[0][1]):
        units = [u.strip() for u in body[0][1]]
        start = 1
    pos = {name: i for i, name in reversed(list(enumerate(header)))}
    good, bad = [], []
    for line, fields in body[start:]:
        if len(fields) == len(header):
            good.append((line, fields))
        elif len(fields) > 1 or fields[0].strip():
            bad.append(line)
    findings += bad_rows_finding(bad, len(header), label)
    not_numeric: dict[str, list[int]] = {}
    unitless: list[str] = []

    def values(column: str, scale: str) -> list[float | None]:
        """The column in base units: each cell's own unit (`353.084ms`) first, else the units row's."""
        if column not in pos:
            return [None] * len(good)
        i = pos[column]
        if _factor(units[i], scale) is None:
            findings.append(Finding("warning", "unit", f"unknown unit `{units[i]}` in column `{column}`; its values are left unknown", label))
            return [None] * len(good)
        out: list[float | None] = []
        for line, fields in good:
            value, unit = number_and_unit(fields[i])
            factor = _factor(unit or units[i], scale)
            if value is None or factor is None:
                if fields[i].strip():
                    not_numeric.setdefault(column, []).append(line)
                out.append(None)
                continue
            if scale != "count" and not unit and not units[i] and column not in unitless:
                unitless.append(column)
            out.append(value * factor)
        return out

    names = [f[pos["Name"]] for _, f in good]
    launch_ids = [LAUNCH_ID.search(n) for n in names]
    names = [n[: m.start()] if m else n for n, m in zip(names, launch_ids)]
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
        if any(launch_ids):
            frame["launch_id"] = pd.array([int(m.group(1)) if m else None for m in launch_ids], dtype="Int64")
        unavailable: tuple[str, ...] = ("flops",)
    else:
        time_col = next(n for n in header if split_unit(n)[0] == "time" and split_unit(n)[1] != "%")
        frame["duration_ns"] = values(time_col, "time")
        frame["calls"] = pd.array([int(v) if v is not None else None for v in values("Calls", "count")], dtype="Int64")
        for extra, column in (("avg_ns", "Avg"), ("min_ns", "Min"), ("max_ns", "Max")):
            frame[extra] = values(column, "time")
        if "Type" in pos:
            types = pd.Series([f[pos["Type"]].strip() or None for _, f in good], dtype="object").ffill()  # blank: the section above
            frame["type"] = pd.array(types, dtype="string")
            api = frame["type"].str.contains("API", case=False, na=False)
            if api.any():
                findings.append(Finding("info", "api-rows", f"skipped {int(api.sum())} host API call row(s) of the summary (not GPU activities)", label, None, int(api.sum())))
                frame = frame[~api]
        unavailable = ("start_ns", "device", "stream", "flops", "bytes")
    if unitless:
        findings.append(Finding("warning", "no-units", f"no units row under the header and no unit in the cells of {', '.join('`' + c + '`' for c in unitless)}; times taken as ns and sizes as bytes", label))
    findings += not_numeric_finding(not_numeric, label)
    return KernelRead(canonical(frame, SOURCE), findings, unavailable, {"format": f"nvprof-{kind}"})


def _metrics(header: list[str], body: Sequence[tuple[int, list[str]]], label: str, findings: list[Finding]) -> KernelRead:
    findings = list(findings)
    pos = {name: i for i, name in reversed(list(enumerate(header)))}
    kernels: dict[tuple[str, str], dict[str, object]] = {}
    bad: list[int] = []
    not_numeric: dict[str, list[int]] = {}
    unused: set[str] = set()
    for line, fields in body:
        if len(fields) != len(header):
            if len(fields) > 1 or fields[0].strip():
                bad.append(line)
            continue
        device = fields[pos["Device"]].strip() if "Device" in pos else ""
        kernel = fields[pos["Kernel"]]
        entry = kernels.setdefault((device, kernel), {"device": device or None, "kernel": kernel, "calls": None, "_m": {}, "_own": {}})
        calls = number(fields[pos["Invocations"]])
        if calls is not None:
            entry["calls"] = calls
        metric = fields[pos["Metric Name"]].strip()
        cell = fields[pos["Avg"]].strip()
        value, unit = number_and_unit(cell)
        level = LEVEL.match(cell)
        column = re.sub(r"\W+", "_", metric).strip("_").lower()
        if level:
            entry["_own"][f"{column}_level"] = float(level.group(1))  # type: ignore[index]
        elif value is not None and unit in METRIC_UNITS:
            suffix, factor = METRIC_UNITS[unit]
            entry["_own"][f"{column}_{suffix}"] = value * factor  # type: ignore[index]
        elif value is not None and not unit:
            entry["_m"][metric] = value  # type: ignore[index]
            if metric not in USED_METRICS:
                unused.add(metric)
        elif cell and (metric in USED_METRICS or unit):
            not_numeric.setdefault("Avg", []).append(line)
    findings += bad_rows_finding(bad, len(header), label)
    findings += not_numeric_finding(not_numeric, label)
    if unused:
        findings.append(Finding("info", "metric-unused", f"{len(unused)} metric(s) with plain counts not used: {', '.join(sorted(unused)[:8])}{' ...' if len(unused) > 8 else ''} (gpuscope uses flop_count_*, dram_*_bytes or dram_*_transactions, and values in %, B/s or Low/Mid/High levels)", label, None, len(unused)))
    records = []
    no_flops = no_bytes = 0
    own_columns: dict[str, None] = {}
    for entry in kernels.values():
        metrics: dict[str, float] = entry.pop("_m")  # type: ignore[assignment]
        own: dict[str, float] = entry.pop("_own")  # type: ignore[assignment]
        own_columns.update(dict.fromkeys(own))
        calls = entry["calls"]
        record = dict(entry, **own)
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
    frame = pd.DataFrame.from_records(records, columns=["device", "kernel", "calls", *FLOP_METRICS.values(), "flops", "bytes", *own_columns])
    frame["calls"] = pd.to_numeric(frame["calls"], errors="coerce").round().astype("Int64")
    for column in (*FLOP_METRICS.values(), *own_columns):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Float64")
    frame["op"] = "kernel"
    if no_flops:
        findings.append(Finding("info", "metric-missing", f"{no_flops} kernel(s) have no flop_count_dp/sp/hp (or no Invocations); flops left unknown", label, None, no_flops))
    if no_bytes:
        findings.append(Finding("info", "metric-missing", f"{no_bytes} kernel(s) have no dram_read_bytes + dram_write_bytes (or transactions); bytes left unknown", label, None, no_bytes))
    meta = {"format": "nvprof-metrics", "own_metrics": tuple(own_columns)}
    return KernelRead(canonical(frame, SOURCE), findings, ("start_ns", "duration_ns", "stream"), meta)


def per_call(metrics: pd.DataFrame, by_device: bool) -> pd.DataFrame:
    """FLOPs and bytes per invocation of each kernel of an nvprof `--metrics` table, indexed by
    kernel name (and device): totals over its devices' invocations / their invocations."""
    keys = ["kernel", "device"] if by_device else ["kernel"]
    frame = metrics[[*keys, "calls", "flops", "bytes"]].astype({k: "string" for k in keys})
    frame = frame.astype({"calls": "float64", "flops": "float64", "bytes": "float64"})
    sums = frame.groupby(keys, dropna=False).sum(min_count=1)
    return pd.DataFrame({"flops": sums["flops"] / sums["calls"], "bytes": sums["bytes"] / sums["calls"]})


def join_metrics(timed: pd.DataFrame, metrics: pd.DataFrame, label: str, timed_label: str | None = None) -> tuple[pd.DataFrame, list[Finding]]:
    """`timed` (an nvprof trace or summary: kernel rows with durations) with FLOPs and bytes from
    the `--metrics` table of the same run: per launch, the kernel's per-invocation values; per
    summary row, those times its calls. Rows are matched by kernel name, and by device when every
    device of the metrics is one of the trace's. Known values of `timed` (copies' bytes) stay;
    kernels without metrics keep unknown FLOPs and bytes, and the findings say how many."""
    timed_devices = set(timed["device"].dropna().astype(str)) if "device" in timed else set()
    metric_devices = set(metrics["device"].dropna().astype(str))
    by_device = bool(metric_devices) and metric_devices <= timed_devices
    values = per_call(metrics, by_device)
    keys = ["kernel", "device"] if by_device else ["kernel"]
    where = pd.MultiIndex.from_frame(timed[keys].astype("string")) if by_device else pd.Index(timed["kernel"].astype("string"))
    is_kernel = (timed["op"] == "kernel").fillna(False).to_numpy(dtype=bool)
    calls = pd.to_numeric(timed["calls"], errors="coerce").fillna(1).to_numpy(dtype="float64") if "calls" in timed else 1.0
    out = timed.copy()
    for column in ("flops", "bytes"):
        found = values[column].reindex(where).to_numpy(dtype="float64") * calls
        known = is_kernel & pd.notna(found)
        out[column] = out[column].astype("Float64").mask(pd.Series(known, index=out.index), pd.Series(found, index=out.index))
    names = pd.Series(timed["kernel"].astype("string"))[is_kernel]
    matched = names.isin(values.index.get_level_values("kernel"))
    findings = [Finding("info", "metrics-joined", f"FLOPs and bytes per call of {int(names[matched].nunique())} kernel(s) taken from the nvprof metrics in {label}"
                        + (" (matched by kernel name and device)" if by_device else " (matched by kernel name)"), timed_label, None, int(matched.sum()))]
    missing = names[~matched].nunique()
    if missing:
        findings.append(Finding("warning", "metrics-missing", f"{int(missing)} kernel(s) of the trace have no row in the nvprof metrics of {label}; their FLOPs and bytes stay unknown", timed_label, None, int(missing)))
    return out, findings


def _same_run(path: Path, metrics: pd.DataFrame, reads: list[tuple[Path, KernelRead]], findings: list[Finding]) -> int | None:
    """Index in `reads` of the nvprof trace or summary that `metrics` (from `path`) belongs to:
    the one sharing kernel names with it; among several, the one in the same folder, then the
    one whose file name shares the longest start with it. None, with a finding, otherwise."""
    names = set(map(str, metrics["kernel"].dropna().unique()))
    found = [i for i, (_, read) in enumerate(reads)
             if str(read.meta.get("format", "")).startswith("nvprof-") and names & set(map(str, read.table["kernel"].dropna().unique()))]
    if len(found) > 1:
        found = [i for i in found if reads[i][0].parent == path.parent] or found
    if len(found) > 1:
        common = {i: len(os.path.commonprefix([reads[i][0].name, path.name])) for i in found}
        found = [i for i in found if common[i] == max(common.values())]
    if len(found) == 1:
        return found[0]
    if found:
        findings.append(Finding("warning", "metrics-not-joined", f"these nvprof metrics fit {len(found)} traces equally well ({', '.join(reads[i][0].name for i in found)}); "
                                "not joined: read them with the one trace of the same run", display_name(path)))
    else:
        findings.append(Finding("info", "metrics-alone", "no nvprof trace or summary of the same run was read with these metrics (no kernel name in common): "
                                "they are shown on their own, without times", display_name(path)))
    return None


def pair_metrics(reads: list[tuple[Path, KernelRead]]) -> tuple[list[tuple[Path, KernelRead]], pd.DataFrame | None, list[Finding]]:
    """(reads without the `--metrics` files, those files' tables, their findings). `--metrics`
    files have no times, so they are not profiles of their own: each one's FLOPs and bytes are
    joined into the nvprof trace or summary of the same run (`_same_run`, `join_metrics`), and
    its table (columns `file`, `joined_to`) is kept for the profiler-metrics table."""
    def is_metrics(read: KernelRead) -> bool:
        return read.meta.get("format") == "nvprof-metrics" and len(read.table) > 0

    kept = [(path, read) for path, read in reads if not is_metrics(read)]
    findings: list[Finding] = []
    tables = []
    for path, read in [(p, r) for p, r in reads if is_metrics(r)]:
        findings.extend(read.findings)
        index = _same_run(Path(path), read.table, kept, findings)
        joined_to = None
        if index is not None:
            target, timed = kept[index]
            table, more = join_metrics(timed.table, read.table, display_name(path), display_name(target))
            unavailable = tuple(u for u in timed.unavailable if u not in ("flops", "bytes"))
            kept[index] = (target, replace(timed, table=table, findings=timed.findings + more, unavailable=unavailable))
            joined_to = display_name(target)
        tables.append(read.table.assign(file=display_name(path), joined_to=joined_to))
    return kept, (pd.concat(tables, ignore_index=True) if tables else None), findings
