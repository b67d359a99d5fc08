"""Provides the reader of plain (resources, time) tables: CSV, TSV and JSON files whose columns
name a resource count (`gpus`, `num_threads` ...) or a time (`time_s`, `elapsed (ms)` ...).
Not a kind of its own in the registry (such a file is a `csv` or `json` table there): the
scaling command tries any table it is given.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.runlogs import formats as fmt
from gpuscope.parsers.runlogs.run import Run, put


def _table_rows(text: str, path: Path | None) -> list[dict[str, Any]] | None:
    stripped = text.lstrip()
    if stripped[:1] in "[{":
        try:
            data = json.loads(stripped)
        except ValueError:
            return None
        if isinstance(data, dict):
            for key in ("runs", "results", "data", "rows"):
                if isinstance(data.get(key), list):
                    data = data[key]
                    break
            else:
                if data and all(isinstance(v, list) for v in data.values()):
                    length = len(next(iter(data.values())))
                    if all(len(v) == length for v in data.values()):
                        data = [dict(zip(data, values)) for values in zip(*data.values())]
        if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
            return [{str(k): v for k, v in r.items()} for r in data]
        return None
    first = stripped.splitlines()[0] if stripped else ""
    delims = [d for d in (",", "\t", ";", "|") if d in first]
    if not delims:
        return None
    delim = max(delims, key=first.count)
    try:
        reader = csv.DictReader(io.StringIO(stripped, newline=""), delimiter=delim)
        rows = [dict(r) for r in reader]
    except csv.Error:
        return None
    return [{str(k): v for k, v in r.items() if k is not None} for r in rows]


def parse(text: str, label: str, path: Path | None, findings: list[Finding]) -> list[Run] | None:
    rows = _table_rows(text, None)
    if not rows:
        return None
    columns = list(rows[0].keys())
    normal = {c: fmt.normalise_column(c) for c in columns}
    resource_cols = {c: fmt.TABLE_RESOURCE_COLUMNS[n] for c, n in normal.items() if n in fmt.TABLE_RESOURCE_COLUMNS}
    time_col, time_unit = None, None
    for c, n in normal.items():
        m = fmt.TABLE_TIME_COLUMN.match(n.replace(" ", "_").replace("(", "").replace(")", "").replace("[", "").replace("]", "").rstrip("_"))
        if m and (time_col is None or (time_unit is None and m.group("unit"))):
            unit = m.group("unit")
            if unit is not None and fmt.unit_seconds(unit) is None:
                continue
            time_col, time_unit = c, unit
    if not resource_cols and time_col is None:
        return None
    runs: list[Run] = []
    if time_col is None:
        findings.append(Finding("warning", "no-timing", f"table has no time column (looked for time, elapsed, runtime, time_s, time (ms) ...): times unknown; columns are {', '.join(columns)[:200]}", label))
    quality_col = next((c for c in columns if normal[c] in fmt.TABLE_QUALITY_COLUMNS), None)
    bench_col = next((c for c in columns if normal[c] in fmt.TABLE_TEXT_COLUMNS), None)
    status_col = next((c for c in columns if normal[c] in fmt.TABLE_STATUS_COLUMNS), None)
    setting_cols = [c for c in columns if normal[c] in fmt.TABLE_SETTING_COLUMNS]
    cell_units: set[str] = set()
    assumed = False
    for index, row in enumerate(rows):
        where = f"row {index + 1}"
        run = Run(f"{label}:{index + 2}" if not text.lstrip().startswith(("[", "{")) else f"{label}#{index + 1}", "table")
        for c, kind in resource_cols.items():
            put(run.counts, kind, row.get(c), f"column {c!r} of {where}")
        if time_col is not None:
            cell = row.get(time_col)
            value, unit = math.nan, time_unit
            if isinstance(cell, (int, float)) and not isinstance(cell, bool):
                value = float(cell)
            elif isinstance(cell, str):
                m = fmt.VALUE_WITH_UNIT.match(cell)
                if m:
                    value = fmt.to_float(m.group("value"))
                    if m.group("unit"):
                        unit = m.group("unit")
                        cell_units.add(unit.lower())
            per = fmt.unit_seconds(unit) if unit else 1.0
            if unit is None:
                assumed = True
            if per is None:
                findings.append(Finding("warning", "mixed-units", f"{where}: unknown time unit {unit!r}: time unknown", label, None))
                value = math.nan
            run.time_s = value * (per or math.nan) if math.isfinite(value) and value >= 0 else math.nan
            run.time_from = f"column {time_col!r} of {where}"
        if not math.isfinite(run.time_s):
            run.time_s, run.time_from, run.status = math.nan, "", "no-timing"
        if status_col is not None and isinstance(row.get(status_col), str):
            state = row[status_col].strip().lower()
            mapped = {"ok": "ok", "success": "ok", "completed": "ok", "pass": "ok", "passed": "ok", "aborted": "aborted",
                      "failed": "failed", "fail": "failed", "cancelled": "cancelled", "timeout": "timeout"}.get(state)
            if mapped and mapped != "ok":
                run.status = mapped
                if mapped == "aborted":
                    run.converged = False
        if quality_col is not None:
            run.quality_name = normal[quality_col]
            run.quality = fmt.to_float(row.get(quality_col))
            run.quality_higher_is_better = fmt.TABLE_QUALITY_COLUMNS[normal[quality_col]]
        if bench_col is not None and row.get(bench_col) not in (None, ""):
            run.benchmark = str(row[bench_col])
        for c in setting_cols:
            key = {"batch_size": "global_batch_size", "lr": "learning_rate", "version": "code_version", "size": "problem_size"}.get(normal[c], normal[c])
            value = row.get(c)
            number = fmt.to_float(value)
            run.settings[key] = number if math.isfinite(number) else (value if value not in ("", None) else None)
        runs.append(run)
    if len(cell_units) > 1:
        findings.append(Finding("warning", "mixed-units", f"column {time_col!r} mixes units ({', '.join(sorted(cell_units))}): all converted to seconds", label))
    elif assumed and time_col is not None and not cell_units:
        findings.append(Finding("info", "unit-assumed", f"column {time_col!r} states no unit: taken as seconds", label))
    missing = sum(1 for r in runs if r.status == "no-timing")
    if missing and time_col is not None:
        findings.append(Finding("warning", "no-timing", f"{missing} row(s) have no usable time in column {time_col!r}", label, None, missing))
    return runs
