"""Provides the ReFrame perflogs' reader: 3.x lines (one per performance variable) and >= 4
tables (a `job_completion_time` header, one line per test run); the time comes from the
performance variable with a time unit, resources from the test's parameters.

    from gpuscope.parsers.runlogs import reframe
    got = reframe.read(Path("perflogs/stream.log"))   # FileRead: runs table, findings
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import describe_lines, first_line, head_text

if TYPE_CHECKING:
    from gpuscope.parsers.runlogs.run import Counts, Run

KIND = "reframe"
TITLE = "ReFrame perflog"
VIEW = "scaling"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    text = head_text(head)
    if "job_completion_time" in first_line(text):
        return "`job_completion_time` header: ReFrame perflog"
    if "|reframe " not in text:  # one search of the head first: most files tried here are other logs
        return None
    at = next((i for i, ln in enumerate(text.split("\n", 20)[:20]) if "|reframe " in ln), None)
    return None if at is None else f"`|reframe ` field on line {at + 1}: ReFrame perflog"


def describe(head: Head, size: int) -> str:
    return describe_lines(head, size)


def read(path: Path) -> FileRead:
    """The test runs of one perflog."""
    from gpuscope.parsers.runlogs import assemble  # the run-log reader: only when a log is read

    return assemble.read_one(path, parse)


def _reframe_params(name: str) -> Counts:
    from gpuscope.parsers.runlogs import formats as fmt
    from gpuscope.parsers.runlogs.run import put

    counts: Counts = {}
    for m in fmt.REFRAME_PARAMETER.finditer(name):
        param = m.group("name").split(".")[-1].lower()
        kind = fmt.REFRAME_RESOURCE_COLUMNS.get(param) or fmt.TABLE_RESOURCE_COLUMNS.get(param)
        if kind:
            put(counts, kind, m.group("value"), f"test parameter %{m.group('name')}={m.group('value')}")
    return counts


def _perf_pick(perf: list[tuple[str, float, str]], run: Run, where: str) -> None:
    """Sets time_s from the time-unit performance variable; another variable becomes the quality."""
    from gpuscope.parsers.runlogs import formats as fmt

    timed = [(n, v, u) for n, v, u in perf if fmt.unit_seconds(u) is not None]
    timed.sort(key=lambda p: not any(w in p[0].lower() for w in ("time", "elapsed", "runtime", "duration")))
    if timed:
        name, value, unit = timed[0]
        run.time_s = value * (fmt.unit_seconds(unit) or math.nan)
        run.time_from = f"performance variable {name} ({unit}) {where}"
    else:
        run.status = "no-timing"
    others = [(n, v, u) for n, v, u in perf if fmt.unit_seconds(u) is None]
    if others:
        name, value, unit = others[0]
        run.quality_name, run.quality = name, value
        run.quality_higher_is_better = True if unit.strip().endswith("/s") else pd.NA
        run.settings["perf_unit"] = unit


def parse(text: str, label: str, path: Path | None, findings: list[Finding]) -> list[Run] | None:
    from gpuscope.parsers.runlogs import formats as fmt
    from gpuscope.parsers.runlogs.run import Run, put

    lines = text.splitlines()
    runs: list[Run] = []
    # ReFrame 3.x: one line per performance variable
    groups: dict[tuple[str, str, str], tuple[int, list[tuple[str, float, str]]]] = {}
    for i, line in enumerate(lines):
        m = fmt.REFRAME3_LINE.match(line.strip())
        if m:
            key = (m.group("time"), m.group("info"), m.group("jobid"))
            groups.setdefault(key, (i + 1, []))[1].append((m.group("var").strip(), fmt.to_float(m.group("value")), m.group("unit").strip()))
    for (_time, info, jobid), (line_no, perf) in groups.items():
        run = Run(f"{label}:{line_no}", "reframe")
        run.benchmark = info.split(" @")[0].split(" %")[0].strip()
        run.job_id = jobid or None
        run.counts.update(_reframe_params(info))
        _perf_pick(perf, run, f"(line {line_no})")
        runs.append(run)
    if groups:
        return runs
    # ReFrame >= 4: a header line, one line per test run
    start = next((i for i, ln in enumerate(lines) if "job_completion_time" in ln), None)
    if start is None:
        return None
    header_line = lines[start]
    delim = "|" if header_line.count("|") >= header_line.count(",") else ","
    header = [h.strip().removeprefix("check_") for h in header_line.split(delim)]
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        if "job_completion_time" in line:
            header = [h.strip().removeprefix("check_") for h in line.split(delim)]
            continue
        cells = [c.strip() for c in line.split(delim)]
        if len(cells) != len(header):
            findings.append(Finding("warning", "bad-line", f"line {i + 1} has {len(cells)} fields, the header {len(header)}: skipped", label, i + 1))
            continue
        row = dict(zip(header, cells))
        name = row.get("display_name") or row.get("name") or row.get("short_name") or row.get("unique_name") or None
        run = Run(f"{label}:{i + 1}", "reframe")
        run.benchmark = name.split(" %")[0].strip() if name else None
        run.job_id = row.get("jobid") or None
        result = row.get("result", "").lower()
        if result:
            run.status = fmt.REFRAME_RESULTS.get(result, "ok")
        run.counts.update(_reframe_params(name or ""))
        for column, kind in fmt.REFRAME_RESOURCE_COLUMNS.items():
            if column in row and row[column] not in ("null", "None", ""):
                put(run.counts, kind, row[column], f"ReFrame {column}={row[column]} (line {i + 1})")
        perf = []
        for column in header:
            if column.endswith("_value"):
                var = column[: -len("_value")]
                perf.append((var, fmt.to_float(row[column]), row.get(f"{var}_unit", "")))
        status = run.status
        _perf_pick(perf, run, f"(line {i + 1})")
        if status != "ok":
            run.status = status
            findings.append(Finding("warning", status, f"test run on line {i + 1} is {result!r}", label, i + 1))
        runs.append(run)
    for run in runs:
        if run.status == "no-timing":
            findings.append(Finding("warning", "no-timing", "no performance variable with a time unit: time unknown (the first other variable is kept as its quality)", label))
            break
    return runs or None
