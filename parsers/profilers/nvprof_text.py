"""Provides the reader of nvprof's plain text summary (what `nvprof ./app` prints on stderr).

    from gpuscope.parsers.profilers import nvprof_text
    result = nvprof_text.parse_text(text, "run.log")

The layout (CUDA 9 and later; shared/research/profile-anchors.md §2.7):

    ==25972== Profiling result:
                Type  Time(%)      Time     Calls       Avg       Min       Max  Name
     GPU activities:   98.62%  97.765ms     16999  5.7510us  2.6560us  11.744us  nms_forward_kernel(float*, ...)
                        1.09%  1.0835ms        90  12.039us     992ns  48.799us  [CUDA memcpy HtoD]
          API calls:   90.00%  400.00ms         3  133.33ms  1.0000us  398.00ms  cudaMemcpy

Older nvprof prints no `Type` column: GPU rows follow `==PID== Profiling result:` and the host
API rows follow a `==PID== API calls:` line. Times carry their unit (`ns`, `us`, `ms`, `s`).
A row continues the section of the row above it. GPU activity rows (kernels, memcpy, memset)
become one row per name with `duration_ns` = total time and `calls`, `avg_ns`, `min_ns`,
`max_ns`; API rows are left out with an info finding.
"""

from __future__ import annotations

import re

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.profilers.kernel_table import KernelRead, canonical, empty
from gpuscope.parsers.profilers.csv_common import classify_name, no_rows, number_and_unit, time_factor

SOURCE = "nvprof"
PID_PREFIX = re.compile(r"^==\d+==\s?")
HEADER = re.compile(r"^\s*(?:Type\s+)?Time\(%\)\s+Time\s+Calls\s+Avg\s+Min\s+Max\s+Name\s*$")
ROW = re.compile(
    r"^\s*(?:(?P<type>[A-Za-z][A-Za-z ()/]*?):)?\s*(?P<pct>[\d.]+)%\s+(?P<time>\S+)\s+(?P<calls>\d+)"
    r"\s+(?P<avg>\S+)\s+(?P<min>\S+)\s+(?P<max>\S+)\s+(?P<name>\S.*?)\s*$")
GPU_TYPE = "GPU activities"
API_SECTION = re.compile(r"^\s*API calls:\s*$")
"""Old layout: `==PID== API calls:` on its own line starts the host API table."""
EXPECTED = "`==PID== Profiling result:` then `Type  Time(%)  Time  Calls  Avg  Min  Max  Name` rows such as ` GPU activities:   98.62%  97.765ms  16999  5.7510us ...`"


def has_summary(text: str) -> bool:
    """Whether `text` holds an nvprof text summary table header."""
    return any(HEADER.match(PID_PREFIX.sub("", line)) for line in text.splitlines())


def _ns(cell: str) -> float | None:
    value, unit = number_and_unit(cell)
    factor = time_factor(unit) if unit else None  # a bare number has no unit: not a time here
    return value * factor if value is not None and factor is not None else None


def parse_text(text: str, label: str = "<text>") -> KernelRead:
    """The kernel table from an nvprof text summary; never raises on bad content."""
    records: list[dict[str, object]] = []
    section: str | None = None  # None: outside a table
    api_rows, bad_lines, device = 0, [], None
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = PID_PREFIX.sub("", raw).rstrip()
        if HEADER.match(line):
            section = section or GPU_TYPE
            continue
        if API_SECTION.match(line):
            section = "API calls"
            continue
        if line.strip().startswith('Device "') and line.strip().endswith('"'):  # --print-summary-per-gpu
            device = line.strip()[len('Device "'):-1]
            continue
        if section is None or not line.strip():
            continue
        match = ROW.match(line)
        if match is None:
            if raw.startswith("=="):  # another nvprof message: the table has ended
                section = None
            else:
                bad_lines.append(number_)
            continue
        section = match.group("type").strip() if match.group("type") else section
        if "API" in section:
            api_rows += 1
            continue
        times = [_ns(match.group(k)) for k in ("time", "avg", "min", "max")]
        if times[0] is None:
            bad_lines.append(number_)
            continue
        name = match.group("name")
        op, direction = classify_name(name)
        records.append({"kernel": name, "duration_ns": times[0], "calls": int(match.group("calls")),
                        "avg_ns": times[1], "min_ns": times[2], "max_ns": times[3], "op": op,
                        "direction": direction, "type": section, "device": device})
    findings: list[Finding] = []
    if bad_lines:
        findings.append(Finding("warning", "malformed", f"skipped {len(bad_lines)} line(s) in the summary tables that are not `pct% time calls avg min max name` rows with time units (first at line {bad_lines[0]})", label, bad_lines[0], len(bad_lines)))
    if api_rows:
        findings.append(Finding("info", "api-rows", f"skipped {api_rows} host API call row(s) of the summary (not GPU activities)", label, None, api_rows))
    if not records and not has_summary(text):
        return KernelRead(empty(SOURCE), [Finding("error", "unknown-format", f"no nvprof summary table found (expected {EXPECTED})", label)], (), {})
    frame = pd.DataFrame.from_records(records, columns=["kernel", "duration_ns", "calls", "avg_ns", "min_ns", "max_ns", "op", "direction", "type", "device"])
    frame["calls"] = pd.array(frame["calls"], dtype="Int64")
    frame["type"] = frame["type"].astype(pd.StringDtype())
    table = canonical(frame, SOURCE)
    return no_rows(KernelRead(table, findings, ("start_ns", "stream", "flops", "bytes"), {"format": "nvprof-summary-text"}), label)
