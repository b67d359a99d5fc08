"""Provides the reader of `sacct -p` / `-P` output (and tab- or comma-separated sacct tables):
one run per finished job, with its elapsed time, state, nodes, GPUs, tasks and CPUs. A log
with the same job id takes its resources from here (`assemble`).

    from gpuscope.parsers.runlogs import sacct
    got = sacct.read(Path("jobs.sacct"))   # FileRead: runs table, findings
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import describe_rows, first_line, head_text

if TYPE_CHECKING:
    from gpuscope.parsers.runlogs.run import Run

KIND = "sacct"
TITLE = "sacct output"
VIEW = "scaling"
BOUNDED = False


def delimiter(header: str) -> str | None:
    """The field separator of a sacct header line naming JobID, or None."""
    for delim in ("|", "\t", ","):
        if delim in header and "JobID" in [h.strip() for h in header.split(delim)]:
            return delim
    return None


def match(name: str, head: Head) -> str | None:
    first = first_line(head_text(head))
    delim = delimiter(first)
    if delim is None or not first.lstrip().startswith("JobID") and delim != "|":
        return None
    if not first.lstrip().startswith("JobID") and "State" not in first and "Elapsed" not in first:
        return None
    return f"`{'|' if delim == '|' else 'tab' if delim == chr(9) else ','}`-separated header with JobID: sacct"


def describe(head: Head, size: int) -> str:
    return describe_rows(head, size)


def read(path: Path) -> FileRead:
    """The jobs of one sacct output."""
    from gpuscope.parsers.runlogs import assemble  # the run-log reader: only when a log is read

    return assemble.read_one(path, parse)


def parse(text: str, label: str, path: Path | None, findings: list[Finding]) -> list[Run] | None:
    from gpuscope.parsers.runlogs import formats as fmt
    from gpuscope.parsers.runlogs.run import Run, benchmark_name, put

    lines = [ln for ln in text.splitlines()]
    start = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if start is None:
        return []
    delim = delimiter(lines[start])
    if delim is None:
        return []
    header = [h.strip() for h in lines[start].split(delim)]
    if header and header[-1] == "":
        header = header[:-1]  # -p: a delimiter after every field
    runs: list[Run] = []
    steps: dict[str, list[dict[str, str]]] = {}
    unfinished = 0
    for i in range(start + 1, len(lines)):
        if not lines[i].strip():
            continue
        cells = lines[i].split(delim)
        if len(cells) == len(header) + 1 and cells[-1] == "":
            cells = cells[:-1]
        if len(cells) != len(header):
            findings.append(Finding("warning", "bad-line", f"line {i + 1} has {len(cells)} fields, the header {len(header)}: skipped", label, i + 1))
            continue
        row = dict(zip(header, (c.strip() for c in cells)))
        job_id = row.get("JobID", "")
        if not job_id:
            continue
        if "." in job_id:
            steps.setdefault(job_id.split(".")[0], []).append(row)
            continue
        state = row.get("State", "").split(" ")[0].rstrip("+")
        if state in fmt.SACCT_UNFINISHED:
            unfinished += 1
            continue
        run = Run(f"{label}:{i + 1}", "sacct")
        run.job_id = job_id
        run.benchmark = benchmark_name(row.get("JobName"))
        run.status = fmt.SACCT_STATES.get(state, "failed" if state else "ok")
        where = f"sacct line {i + 1}"
        if "Elapsed" in row:
            run.time_s, run.time_from = fmt.slurm_seconds(row["Elapsed"]), f"Elapsed {row['Elapsed']} ({where})"
        elif "ElapsedRaw" in row:
            run.time_s, run.time_from = fmt.to_float(row["ElapsedRaw"]), f"ElapsedRaw {row['ElapsedRaw']} ({where})"
        if not math.isfinite(run.time_s):
            run.time_s, run.time_from = math.nan, ""
            if run.status == "ok":
                run.status = "no-timing"
            findings.append(Finding("warning", "no-timing", f"job {job_id} has no usable Elapsed time", label, i + 1))
        for column, kind in (("AllocNodes", "nodes"), ("NNodes", "nodes")):
            if column in row:
                put(run.counts, kind, row[column], f"sacct {column}={row[column]} (job {job_id})")
        tres = row.get("AllocTRES", "") or row.get("ReqTRES", "")
        tres_name = "AllocTRES" if row.get("AllocTRES") else "ReqTRES"
        gpus = fmt.tres_value(tres, "gres/gpu")
        if gpus:
            put(run.counts, "gpus", gpus, f"sacct {tres_name} gres/gpu={gpus} (job {job_id})")
        nodes = fmt.tres_value(tres, "node")
        if nodes:
            put(run.counts, "nodes", nodes, f"sacct {tres_name} node={nodes} (job {job_id})")
        cpus = row.get("AllocCPUS") or row.get("NCPUS")
        tasks = fmt.to_count(row.get("NTasks"))
        if cpus:
            if tasks and tasks > 1 and fmt.to_count(cpus):
                put(run.counts, "processes", tasks, f"sacct NTasks={tasks} (job {job_id})")
                put(run.counts, "threads", int(fmt.to_count(cpus) or 0) // tasks, f"sacct AllocCPUS={cpus} / NTasks={tasks} (job {job_id})")
            else:
                put(run.counts, "threads", cpus, f"sacct AllocCPUS={cpus} (job {job_id})")
        if run.status not in ("ok", "no-timing"):
            findings.append(Finding("warning", run.status, f"job {job_id} ended {row.get('State')!r}", label, i + 1))
        runs.append(run)
    for run in runs:  # tasks are counted on the step rows
        if "processes" not in run.counts and run.job_id in steps:
            tasks = [fmt.to_count(r.get("NTasks")) for r in steps[run.job_id] if not r["JobID"].endswith((".batch", ".extern"))]
            tasks = [t for t in tasks if t]
            if tasks:
                put(run.counts, "processes", max(tasks), f"sacct NTasks={max(tasks)} on a step of job {run.job_id}")
    if unfinished:
        findings.append(Finding("info", "unfinished", f"{unfinished} job(s) still running or pending: left out", label, None, unfinished))
    return runs
