"""Provides `read_runs`: one row per run, with its resources, time and quality, from the logs jobs wrote.

    from gpuscope.parsers.runlogs.read import read_runs
    result = read_runs(["results/"], resources_pattern=None)
    result.runs      # one row per run: resources (and where that number came from), time_s, status, quality, set_*
    result.curves    # per-epoch values: loss, val_loss, accuracy, eval_accuracy, epoch_time_s
    result.findings  # every file skipped or partly read, and why

Formats (line patterns in `runlog_formats`): the seeds' own lines (seed 002 `Total training
time`, its `BENCHMARK RESULTS SUMMARY` table; seed 004 `Total Training Time`), MLPerf
`:::MLLOG` logs, ReFrame perflogs, `sacct -p/-P` output, and plain CSV / JSON tables. Files
are recognised by their content; folders are walked.

Resources, per kind (nodes, gpus, processes, threads), come from the first of: `--resources`
(`resources_pattern`, matched against the path), the log's own lines, the `SLURM_*` variables
it echoes, the `#SBATCH` lines of the job script beside it, an MLPerf `systems/NAME.json`,
sacct output (given among the paths) by job id, the file or folder name. `resources_from`
says which. The kind a series scales over is the first of gpus, nodes, processes, threads
that differs between the runs of one benchmark (else the first known). A series is one
machine: its benchmark, accelerator and framework (`metrics.scaling_series`).

A log printed by every rank counts once (the slowest copy's time is taken); a time the log
does not give is NaN, never 0; nothing raises on file content.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from gpuscope.metrics.scaling import series as scaling_series
from gpuscope.metrics.findings import Finding
from gpuscope.parsers import rules
from gpuscope.parsers.runlogs import formats as fmt
from gpuscope.parsers.rules import sacct_delimiter
from gpuscope.parsers.files import read_text

RUN_COLUMNS = (
    "source", "format", "series", "benchmark", "resource_kind", "resources", "resources_from",
    "nodes", "gpus", "threads", "processes", "time_s", "time_from", "status", "converged",
    "quality_name", "quality", "quality_higher_is_better", "quality_target", "epochs", "samples", "label", "epoch_time_s",
)
CURVE_COLUMNS = ("source", "series", "resources", "epoch", "metric", "value")
STATUSES = ("ok", "aborted", "failed", "cancelled", "timeout", "no-timing")


@dataclass(frozen=True)
class RunsResult:
    """Every run read (`runs`), their per-epoch values (`curves`), and what was skipped or doubted."""

    runs: pd.DataFrame
    curves: pd.DataFrame
    findings: list[Finding]


Counts = dict[str, tuple[int, str]]
"""kind (nodes, gpus, gpus_per_node, gpus_per_task, processes, tasks_per_node, threads) -> (count, where from)."""


@dataclass
class _Run:
    """A run while it is being read; `counts` holds what the log itself says."""

    source: str
    format: str
    path: Path | None = None
    benchmark: str | None = None
    counts: Counts = field(default_factory=dict)
    echoed: Counts = field(default_factory=dict)
    time_s: float = math.nan
    time_from: str = ""
    status: str = "ok"
    converged: Any = pd.NA
    quality_name: str | None = None
    quality: float = math.nan
    quality_higher_is_better: Any = pd.NA
    quality_target: float = math.nan
    epochs: int | None = None
    samples: float = math.nan
    label: str | None = None
    """The run's own name for its configuration (seed 002's `4 GPUs (1 node)`): describes the
    resources, so it is not a setting that could differ."""
    epoch_time_s: float = math.nan
    """Time per epoch as the log prints it: a result, not a setting."""
    settings: dict[str, Any] = field(default_factory=dict)
    curve: list[tuple[int, str, float]] = field(default_factory=list)
    job_id: str | None = None
    job_name: str | None = None
    fallback_counts: Counts = field(default_factory=dict)
    """Weakest hints from the content (MLPerf `submission_platform`), used after the file name."""


def _put(counts: Counts, kind: str, value: object, where: str) -> None:
    n = fmt.to_count(value)
    if n is not None and kind not in counts:
        counts[kind] = (n, where)


# ====================================================================== seed logs
def _time_value(match: re.Match[str], label: str, line_no: int, findings: list[Finding]) -> float:
    value = fmt.to_float(match.group("value"))
    unit = match.groupdict().get("unit")
    if unit is None:
        findings.append(Finding("info", "unit-assumed", f"line {line_no} gives a time without a unit: taken as seconds", label, line_no))
        return value
    per = fmt.unit_seconds(unit)
    if per is None:
        findings.append(Finding("warning", "mixed-units", f"line {line_no}: unknown time unit {unit!r}; that time is not used", label, line_no))
        return math.nan
    return value * per


def _seed_table(lines: list[str], start: int, label: str, findings: list[Finding]) -> list[_Run]:
    """Seed 002's `BENCHMARK RESULTS SUMMARY` table, one run per row (start = title line index)."""
    runs: list[_Run] = []
    header_idx = next((i for i in range(start + 1, min(start + 4, len(lines))) if "configuration" in lines[i].lower() or "time (s)" in lines[i].lower()), None)
    if header_idx is None:
        findings.append(Finding("warning", "partial", "BENCHMARK RESULTS SUMMARY without its header line: table not read", label, start + 1))
        return runs
    header = lines[header_idx].lower()
    found = sorted((header.find(text), column) for text, column in fmt.SEED002_TABLE_COLUMNS.items() if header.find(text) >= 0)
    # `time (s)` is also inside `time/epoch (s)`: keep the first position of each column only once
    columns: list[str] = []
    for _pos, column in found:
        if column not in columns:
            columns.append(column)
    if "time/epoch (s)" in header and "time (s)" in header and header.find("time (s)") > header.find("time/epoch (s)"):
        columns = [c for c in columns if c != "time_s"]
    if "configuration" not in columns:
        findings.append(Finding("warning", "partial", "BENCHMARK RESULTS SUMMARY header has no Configuration column: table not read", label, header_idx + 1))
        return runs
    lead = columns[: columns.index("configuration")]
    tail = columns[columns.index("configuration") + 1:]
    for i in range(header_idx + 1, len(lines)):
        text = lines[i].strip()
        if not text or set(text) <= set("-=") and i == header_idx + 1:
            continue
        if set(text) <= set("=-"):
            break
        tokens = text.split()
        if len(tokens) < len(lead) + len(tail) + 1:
            findings.append(Finding("warning", "partial", f"summary table row has {len(tokens)} fields: skipped", label, i + 1))
            continue
        values = dict(zip(lead, tokens[: len(lead)]))
        values.update(zip(tail, tokens[len(tokens) - len(tail):]))
        values["configuration"] = " ".join(tokens[len(lead): len(tokens) - len(tail)])
        run = _Run(f"{label}:{i + 1}", "seed002")
        run.job_id = values.get("job_id")
        run.label = values["configuration"]
        where = f"summary table row on line {i + 1}"
        _put(run.counts, "gpus", values.get("gpus"), f"GPUs column of the {where}")
        _put(run.counts, "nodes", values.get("nodes"), f"Nodes column of the {where}")
        run.time_s = fmt.to_float(values.get("time_s"))
        run.time_from = f"Time (s) column of the {where}"
        if not math.isfinite(run.time_s) or run.time_s <= 0:
            run.time_s, run.status = math.nan, "no-timing"
            findings.append(Finding("warning", "no-timing", f"summary table row on line {i + 1} has no usable time", label, i + 1))
        loss, acc = fmt.to_float(values.get("val_loss")), fmt.to_float(values.get("val_acc"))
        if math.isfinite(loss):
            run.quality_name, run.quality, run.quality_higher_is_better = "val_loss", loss, False
        elif math.isfinite(acc):
            run.quality_name, run.quality, run.quality_higher_is_better = "val_acc", acc, True
        epoch_time = fmt.to_float(values.get("epoch_time_s"))
        if math.isfinite(epoch_time) and epoch_time > 0:
            run.epoch_time_s = epoch_time
            if math.isfinite(run.time_s):
                run.epochs = round(run.time_s / epoch_time)
        runs.append(run)
    if not runs:
        findings.append(Finding("warning", "partial", "BENCHMARK RESULTS SUMMARY table has no rows", label, start + 1))
    return runs


_FAILURE_LINES = (
    (re.compile(r"CANCELLED AT .* DUE TO TIME LIMIT"), "timeout"),
    (re.compile(r"slurmstepd: error: .*CANCELLED AT"), "cancelled"),
    (re.compile(r"oom[-_ ]kill|Out Of Memory|OUT_OF_MEMORY", re.IGNORECASE), "failed"),
    (re.compile(r"^Traceback \(most recent call last\):"), "failed"),
)

# Every line pattern of a seed log, in the order a line is tried against them (the first that
# matches decides what the line is). (tag, pattern, what it gives).
_SEED_LINES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("slurm", fmt.SLURM_ECHO, ""),
    *((f"res{i}", pattern, kind) for i, (pattern, kind) in enumerate(fmt.LOG_RESOURCE_LINES)),
    ("job_id", fmt.JOB_ID_LINE, ""),
    ("table", fmt.SEED002_TABLE_TITLE, ""),
    ("total002", fmt.SEED002_TOTAL, ""),
    ("total004", fmt.SEED004_TOTAL, ""),
    ("per_epoch", fmt.SEED002_PER_EPOCH, ""),
    ("best_loss", fmt.SEED002_BEST_LOSS, ""),
    ("best_acc", fmt.SEED002_BEST_ACC, ""),
    ("max_epochs", fmt.SEED002_MAX_EPOCHS, ""),
    ("setting0", fmt.SEED002_BATCH, "local_batch_size"),
    ("setting1", fmt.SEED002_EFFECTIVE_BATCH, "global_batch_size"),
    ("setting2", fmt.SEED002_LEARNING_RATE, "learning_rate"),
    ("setting3", fmt.SEED002_TORCH, "code_version"),
    ("duration", fmt.SEED002_DURATION, ""),
    ("complete", fmt.SEED002_COMPLETE, ""),
    ("epochs004", fmt.SEED004_EPOCHS, ""),
    ("rate004", fmt.SEED004_RATE, ""),
    ("train004", fmt.SEED004_TRAIN, ""),
    ("test004", fmt.SEED004_TEST, ""),
)
_SEED_BRANCHES = {tag: (pattern, what) for tag, pattern, what in _SEED_LINES}


def _branch(tag: str, pattern: re.Pattern[str]) -> str:
    """One alternative of `_SEED_LINE`: the pattern after its leading `^\\s*`, its own group names
    dropped (names may not repeat in one regex), an empty group named `tag` at its end (the
    group that closes last names the branch, and a branch that starts with a literal is
    skipped at its first character)."""
    assert pattern.pattern.startswith("^\\s*") and not pattern.flags & ~re.UNICODE, pattern.pattern
    return re.sub(r"\(\?P<\w+>", "(?:", pattern.pattern[len("^\\s*"):]) + f"(?P<{tag}>)"


_SEED_LINE = re.compile(r"^\s*(?:" + "|".join(_branch(tag, pattern) for tag, pattern, _what in _SEED_LINES) + ")")
"""All of `_SEED_LINES` in one regex: one match per line says which one a line is (`lastgroup`),
instead of trying the patterns one by one; the named pattern is then matched for its groups."""


@functools.lru_cache(maxsize=4096)
def _seed_line(line: str) -> tuple[str, str, re.Match[str]] | None:
    """(tag, what it gives, the match of its own pattern) of a seed log line, or None: a pure
    function of the text, kept for the lines that repeat from log to log (`Max epochs: 50`,
    `  SLURM_NNODES: 1`, banners)."""
    found = _SEED_LINE.match(line)
    if found is None:
        return None
    tag = found.lastgroup or ""
    pattern, what = _SEED_BRANCHES[tag]
    m = pattern.match(line)  # the same pattern as the branch that matched: never None
    return (tag, what, m) if m is not None else None


_UNSEEN = object()
_ONCE_PER_TEXT = frozenset({"slurm", *(f"res{i}" for i in range(len(fmt.LOG_RESOURCE_LINES))), "job_id", "max_epochs", "complete", *(f"setting{i}" for i in range(4))})
"""Lines whose handling only fills what is still empty (or sets a flag): a second copy of the
same line does nothing, so it is skipped."""


def _first_failure(lines: list[str]) -> tuple[str, int] | None:
    """(status, line number) of the first line that is none of `_SEED_LINES` but says the run
    ended early (`_FAILURE_LINES`, first pattern first); only asked when a log has no time."""
    for i, line in enumerate(lines):
        if len(line) > 2000 or _SEED_LINE.match(line):
            continue
        for pattern, status in _FAILURE_LINES:
            if pattern.search(line):
                return status, i + 1
    return None


def _read_seed(text: str, label: str, findings: list[Finding]) -> list[_Run]:
    """Seed 002 / seed 004 logs (and the job-script echo lines around them)."""
    lines = text.splitlines()  # splits at \r too: a progress bar's redraws are lines of their own
    run = _Run(label, "seed004")
    totals: list[tuple[float, int, str]] = []  # (seconds, line, unit)
    units: set[str] = set()
    table_runs: list[_Run] = []
    seen002 = seen004 = False
    duration: tuple[float, int] | None = None
    epoch = 0
    train_total = None
    loss_sum: dict[int, list[float]] = {}
    test_rows: dict[int, list[tuple[float, float]]] = {}
    rate = math.nan
    epoch_copies = 0
    # what each distinct line is, matched once: every rank prints the same blocks again
    known: dict[str, tuple[str, str, re.Match[str]] | None] = {}
    for i, line in enumerate(lines):
        kind_of_line = known.get(line, _UNSEEN)
        if kind_of_line is _UNSEEN:
            kind_of_line = _seed_line(line) if len(line) <= 2000 else None
            known[line] = kind_of_line
        if kind_of_line is None:
            continue
        tag, what, m = kind_of_line
        line_no = i + 1
        if tag in _ONCE_PER_TEXT:
            known[line] = None  # the same line again (another rank's copy) cannot change anything
        if tag == "slurm":
            name, value = m.group("name"), m.group("value")
            kind = fmt.SLURM_VARIABLES.get(name)
            if kind == "gpu_ids":
                if "gpus_per_node" not in run.echoed:
                    ids = [x for x in value.split(",") if x.strip()]
                    _put(run.echoed, "gpus_per_node", len(ids), f"{name}={value} echoed on line {line_no}")
            elif kind:
                if kind not in run.echoed:
                    _put(run.echoed, kind, value.split("(")[0], f"{name}={value} echoed on line {line_no}")
            elif name in fmt.SLURM_JOB_ID_VARIABLES and run.job_id is None and value.isdigit():
                run.job_id = value
            elif name in fmt.SLURM_JOB_NAME_VARIABLES and run.job_name is None and value != "Not":
                run.job_name = value
        elif tag.startswith("res"):
            if what not in run.counts:
                _put(run.counts, what, m.group(1), f"line {line_no}: {line.strip()!r}")
        elif tag == "job_id":
            if run.job_id is None:
                run.job_id = m.group("value")
        elif tag == "table":
            table_runs.extend(_seed_table(lines, i, label, findings))
        elif tag == "total002":
            seen002 = True
            seconds = _time_value(m, label, line_no, findings)
            units.add(m.group("unit").lower().rstrip("s"))
            if m.group("value2") is not None and math.isfinite(seconds):
                per = fmt.unit_seconds(m.group("unit2"))
                other = fmt.to_float(m.group("value2")) * per if per else math.nan
                if per is None or (math.isfinite(other) and abs(other - seconds) > max(0.6, 0.01 * seconds)):
                    findings.append(Finding("warning", "mixed-units", f"line {line_no} gives {m.group('value')} {m.group('unit')} and {m.group('value2')} {m.group('unit2')}, which disagree; the first is used", label, line_no))
            totals.append((seconds, line_no, "Total training time"))
        elif tag == "total004":
            seen004 = True
            seconds = _time_value(m, label, line_no, findings)
            units.add((m.group("unit") or "s").lower().rstrip("s"))
            totals.append((seconds, line_no, "Total Training Time"))
        elif tag == "per_epoch":
            seen002 = True
            if math.isnan(run.epoch_time_s):
                run.epoch_time_s = _time_value(m, label, line_no, findings)
        elif tag == "best_loss":
            seen002 = True
            run.quality_name, run.quality, run.quality_higher_is_better = "val_loss", fmt.to_float(m.group("value")), False
        elif tag == "best_acc":
            if run.quality_name is None:
                run.quality_name, run.quality, run.quality_higher_is_better = "val_acc", fmt.to_float(m.group("value")), True
        elif tag == "max_epochs":
            seen002 = True
            run.settings.setdefault("epochs", int(m.group("value")))
        elif tag.startswith("setting"):
            if what not in run.settings:
                value = m.group("value")
                run.settings[what] = f"PyTorch {value}" if what == "code_version" else fmt.to_float(value)
        elif tag == "duration":
            seconds = _time_value(m, label, line_no, findings)
            duration = (seconds, line_no)
        elif tag == "complete":
            seen002 = True
        elif tag == "epochs004":
            seen004 = True
            if run.epochs is None:
                run.epochs = int(m.group("value"))
                run.settings.setdefault("epochs", run.epochs)
            else:
                epoch_copies += 1
        elif tag == "rate004":
            seen004 = True
            rate = fmt.to_float(m.group("value"))
        elif tag == "train004":
            seen004 = True
            epoch = int(m.group("epoch"))
            train_total = int(m.group("total"))
            loss_sum.setdefault(epoch, []).append(fmt.to_float(m.group("loss")))
        elif tag == "test004":
            seen004 = True
            total = int(m.group("total"))
            accuracy = int(m.group("correct")) / total if total else math.nan
            key = epoch if epoch else len(test_rows) + 1
            test_rows.setdefault(key, []).append((fmt.to_float(m.group("loss")), accuracy))

    if not (seen002 or seen004 or totals):
        if table_runs:
            return table_runs
        return []
    run.format = "seed002" if seen002 and not seen004 else "seed004"
    # --- the time: one per rank may be printed; the slowest rank bounds the run
    finite = [t for t in totals if math.isfinite(t[0])]
    if finite:
        seconds, line_no, name = max(finite)
        run.time_s = seconds
        run.time_from = f"{name!r} on line {line_no}"
        if len(totals) > 1:
            findings.append(Finding("info", "ranks", f"{len(totals)} copies of {name!r} (one per rank): the slowest, {seconds:.6g} s on line {line_no}, is the run's time", label, line_no, len(totals)))
        if len(units) > 1:
            findings.append(Finding("warning", "mixed-units", f"the time lines use different units ({', '.join(sorted(units))}); all converted to seconds", label))
    elif duration is not None and math.isfinite(duration[0]):
        run.time_s = duration[0]
        run.time_from = f"'Total duration' on line {duration[1]} (job wall time, includes start-up)"
        findings.append(Finding("info", "job-time", f"no training-time line: the job script's 'Total duration' on line {duration[1]} is used, which includes start-up", label, duration[1]))
    else:
        run.status = "no-timing"
        failure = _first_failure(lines)
        if failure is not None:
            run.status = failure[0]
            findings.append(Finding("warning", run.status, f"the run ended early ({run.status}, line {failure[1]}) and printed no training time: time unknown", label, failure[1]))
        else:
            findings.append(Finding("warning", "no-timing", "no timing line ('Total training time' / 'Total Training Time'): time unknown, the rest is kept", label))
    # --- epochs and curves
    if run.format == "seed002" and run.epochs is None and run.settings.get("epochs") is not None and math.isfinite(run.time_s):
        run.epochs = int(run.settings["epochs"])
    if math.isfinite(rate) and rate > 0 and run.epochs and math.isfinite(run.time_s) and run.time_s > 0:
        implied = run.epochs / run.time_s
        if abs(implied - rate) > 0.02 * rate:
            findings.append(Finding("warning", "inconsistent", f"'Total epochs/s: {rate:g}' disagrees with {run.epochs} epochs in {run.time_s:g} s ({implied:g}/s)", label))
    for ep, values in sorted(loss_sum.items()):
        finite_values = [v for v in values if math.isfinite(v)]
        if finite_values:
            run.curve.append((ep, "loss", sum(finite_values) / len(finite_values)))
    for ep, pairs in sorted(test_rows.items()):
        losses = [p[0] for p in pairs if math.isfinite(p[0])]
        accs = [p[1] for p in pairs if math.isfinite(p[1])]
        if losses:
            run.curve.append((ep, "val_loss", sum(losses) / len(losses)))
        if accs:
            run.curve.append((ep, "accuracy", sum(accs) / len(accs)))
    if test_rows and run.quality_name is None:
        last = [p[1] for p in test_rows[max(test_rows)] if math.isfinite(p[1])]
        if last:
            run.quality_name, run.quality, run.quality_higher_is_better = "accuracy", sum(last) / len(last), True
    if train_total and run.epochs and math.isfinite(run.time_s):
        run.samples = float(train_total * run.epochs)
    run.benchmark = benchmark_name(run.job_name)
    return [run, *table_runs]


# ====================================================================== MLPerf
def _mlperf_system(path: Path | None) -> tuple[Path | None, str | None]:
    """`<submitter>/systems/<system>.json` for `<submitter>/results/<system>/<benchmark>/result_N.txt`."""
    if path is None:
        return None, None
    parts = path.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "results" and i + 1 < len(parts) - 1:
            system = parts[i + 1]
            candidate = Path(*parts[:i]) / "systems" / f"{system}.json"
            return (candidate if candidate.is_file() else None), system
    return None, None


_MLPERF_KEYS = frozenset({"run_start", "run_stop", "submission_benchmark", "epoch_start", "epoch_stop", "train_samples", "submission_platform", *fmt.MLPERF_QUALITY_KEYS, *fmt.MLPERF_SETTINGS})
"""Every MLLOG key `_read_mlperf` uses."""
_MLLOG_KEY = re.compile(r'"key": *"([a-z_0-9]+)"')
"""An event's key as MLPerf's logger writes it: lines whose key is not used are not decoded
(half of a log is `weights_initialization` and `tracked_stats`), so a malformed line among
them is not counted as bad; lines written some other way are decoded."""
_JSON_SCAN = json.JSONDecoder().scan_once
_JSON_SPACE = " \t\n\r"


def _json_value(line: str, start: int) -> Any:
    """`json.loads(line[start:])` without the copy and the Python wrappers (one :::MLLOG line
    each): ValueError when that text is not one JSON value with only JSON whitespace around it."""
    if line.startswith("\ufeff", start):
        raise ValueError("Unexpected UTF-8 BOM")
    if start < len(line) and line[start] in _JSON_SPACE:
        start = len(line) - len(line[start:].lstrip(_JSON_SPACE))
    try:
        value, end = _JSON_SCAN(line, start)
    except StopIteration as exc:
        raise ValueError("Expecting value") from exc
    if end != len(line) and line[end:].strip(_JSON_SPACE):
        raise ValueError("Extra data")
    return value


def _read_mlperf(text: str, label: str, path: Path | None, findings: list[Finding]) -> list[_Run]:
    run = _Run(label, "mlperf", path)
    starts: list[tuple[int, int]] = []
    stops: list[tuple[int, int, str | None]] = []
    epoch_start: dict[int, int] = {}
    epoch_stop: dict[int, int] = {}
    quality: list[tuple[int, int, str, float]] = []
    bad = 0
    first_bad = None
    train_samples = math.nan
    tag, skip = fmt.MLLOG_TAG, len(fmt.MLLOG_TAG)
    for i, line in enumerate(text.splitlines()):
        at = line.find(tag)
        if at < 0:
            continue
        written = _MLLOG_KEY.search(line, at + skip)
        if written is not None and written.group(1) not in _MLPERF_KEYS:
            continue
        try:
            event = _json_value(line, at + skip)
            key = str(event["key"])
            t = int(event["time_ms"])
        except (ValueError, KeyError, TypeError, OverflowError):
            bad += 1
            first_bad = first_bad or i + 1
            continue
        if not isinstance(event, dict):
            bad += 1
            continue
        if key not in _MLPERF_KEYS:  # most events (weights_initialization, tracked_stats ...) are not used
            continue
        value = event.get("value")
        meta = event.get("metadata") if isinstance(event.get("metadata"), dict) else {}
        epoch_num = meta.get("epoch_num")
        epoch_num = epoch_num if isinstance(epoch_num, int) and not isinstance(epoch_num, bool) else None
        if key == "run_start":
            starts.append((t, i + 1))
        elif key == "run_stop":
            status = meta.get("status")
            stops.append((t, i + 1, str(status) if status is not None else None))
        elif key == "submission_benchmark" and run.benchmark is None and isinstance(value, str):
            run.benchmark = value
        elif key == "epoch_start" and epoch_num is not None:
            epoch_start.setdefault(epoch_num, t)
        elif key == "epoch_stop" and epoch_num is not None:
            epoch_stop[epoch_num] = max(t, epoch_stop.get(epoch_num, t))
        elif key in fmt.MLPERF_QUALITY_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            quality.append((t, epoch_num if epoch_num is not None else -1, key, float(value)))
        elif key == "train_samples" and isinstance(value, (int, float)) and not isinstance(value, bool):
            train_samples = float(value)
        if key in fmt.MLPERF_SETTINGS and isinstance(value, (int, float, str)) and not isinstance(value, bool):
            run.settings.setdefault(fmt.MLPERF_SETTINGS[key], value)
        if key == "submission_platform" and isinstance(value, str):
            m = fmt.MLPERF_PLATFORM_NODES.match(value)
            if m:
                _put(run.fallback_counts, "nodes", m.group(1), f"submission_platform {value!r}")
    if bad:
        findings.append(Finding("warning", "bad-line", f"{bad} :::MLLOG line(s) are not valid JSON events: skipped", label, first_bad, bad))
    if len(starts) > 1:
        findings.append(Finding("info", "ranks", f"{len(starts)} run_start events (one per rank): the earliest start and the latest stop are used", label, starts[0][1], len(starts)))
    status_values = [s[2] for s in stops if s[2]]
    if not starts or not stops:
        run.status = "no-timing"
        missing = "run_start" if not starts else "run_stop"
        findings.append(Finding("warning", "no-timing", f"no {missing} event: the run did not finish or the log is cut; time unknown, the rest is kept", label))
    else:
        start, start_line = min(starts)
        stop, stop_line, _ = max(stops)
        run.time_s = (stop - start) / 1000.0
        run.time_from = f"run_start (line {start_line}) to run_stop (line {stop_line})"
        if run.time_s < 0:
            findings.append(Finding("warning", "inconsistent", "run_stop is before run_start: time unknown", label, stop_line))
            run.time_s = math.nan
            run.status = "no-timing"
    if status_values:
        final = "success" if all(s == "success" for s in status_values) else next(s for s in status_values if s != "success")
        if final == "success":
            run.converged = True
        else:
            run.converged = False
            if run.status == "ok":
                run.status = "aborted" if final == "aborted" else "failed"
            findings.append(Finding("warning", "aborted", f"run_stop status is {final!r}: the run did not reach its quality target, so its time is not a time to train", label))
    elif stops:
        findings.append(Finding("info", "unknown-status", "run_stop has no status: whether the run converged is unknown", label))
    for ep in sorted(epoch_stop):
        if ep in epoch_start and epoch_stop[ep] >= epoch_start[ep]:
            run.curve.append((ep, "epoch_time_s", (epoch_stop[ep] - epoch_start[ep]) / 1000.0))
    if quality:
        by_epoch: dict[tuple[int, str], float] = {}
        for _t, ep, key, value in sorted(quality):
            by_epoch[(ep, key)] = value
        for (ep, key), value in sorted(by_epoch.items()):
            if ep >= 0:
                run.curve.append((ep, key, value))
        _t, _ep, key, value = max(quality)
        run.quality_name, run.quality, run.quality_higher_is_better = key, value, key == "eval_accuracy"
        target = fmt.MLPERF_QUALITY_TARGETS.get(str(run.benchmark).lower()) if key == "eval_accuracy" else None
        if target is not None:
            run.quality_target, run.quality_higher_is_better = target
    if epoch_stop:
        run.epochs = len(epoch_stop)
    if math.isfinite(train_samples) and run.epochs:
        run.samples = train_samples * run.epochs
    return [run]


def _system_counts(path: Path | None, findings: list[Finding], label: str, cache: dict[Path, tuple[Any, list[Finding]]]) -> Counts:
    """Nodes and GPUs of an MLPerf run from its `systems/NAME.json` (read once per file: `cache`)."""
    counts: Counts = {}
    system_file, system = _mlperf_system(path)
    if system is None:
        return counts
    if system_file is None:
        findings.append(Finding("info", "no-system", f"no systems/{system}.json beside the results folder: nodes and GPUs come from elsewhere", label))
        return counts
    if system_file not in cache:
        text, problems = read_text(system_file, str(system_file))
        try:
            cache[system_file] = (json.loads(text) if text is not None else None), problems
        except ValueError:
            cache[system_file] = None, problems
    data, problems = cache[system_file]
    if not isinstance(data, dict):
        findings.extend(problems)
        findings.append(Finding("warning", "no-system", f"systems/{system}.json is not a JSON object: not used", label))
        return counts
    nodes, per_node = fmt.to_count(data.get("number_of_nodes")), fmt.to_count(data.get("accelerators_per_node"))
    name = f"systems/{system}.json"
    if nodes:
        counts["nodes"] = (nodes, f"{name}: number_of_nodes {nodes}")
    if nodes and per_node:
        counts["gpus"] = (nodes * per_node, f"{name}: {nodes} node{'s' if nodes > 1 else ''} x {per_node} accelerators")
    for key, column in (("accelerator_model_name", "accelerator"), ("framework", "framework")):
        if isinstance(data.get(key), str) and data[key]:
            counts[f"set_{column}"] = (1, data[key])  # carried as a setting, not a count
    return counts


# ====================================================================== sacct
def _read_sacct(text: str, label: str, findings: list[Finding]) -> list[_Run]:
    lines = [ln for ln in text.splitlines()]
    start = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if start is None:
        return []
    delim = sacct_delimiter(lines[start])
    if delim is None:
        return []
    header = [h.strip() for h in lines[start].split(delim)]
    if header and header[-1] == "":
        header = header[:-1]  # -p: a delimiter after every field
    runs: list[_Run] = []
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
        run = _Run(f"{label}:{i + 1}", "sacct")
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
                _put(run.counts, kind, row[column], f"sacct {column}={row[column]} (job {job_id})")
        tres = row.get("AllocTRES", "") or row.get("ReqTRES", "")
        tres_name = "AllocTRES" if row.get("AllocTRES") else "ReqTRES"
        gpus = fmt.tres_value(tres, "gres/gpu")
        if gpus:
            _put(run.counts, "gpus", gpus, f"sacct {tres_name} gres/gpu={gpus} (job {job_id})")
        nodes = fmt.tres_value(tres, "node")
        if nodes:
            _put(run.counts, "nodes", nodes, f"sacct {tres_name} node={nodes} (job {job_id})")
        cpus = row.get("AllocCPUS") or row.get("NCPUS")
        tasks = fmt.to_count(row.get("NTasks"))
        if cpus:
            if tasks and tasks > 1 and fmt.to_count(cpus):
                _put(run.counts, "processes", tasks, f"sacct NTasks={tasks} (job {job_id})")
                _put(run.counts, "threads", int(fmt.to_count(cpus) or 0) // tasks, f"sacct AllocCPUS={cpus} / NTasks={tasks} (job {job_id})")
            else:
                _put(run.counts, "threads", cpus, f"sacct AllocCPUS={cpus} (job {job_id})")
        if run.status not in ("ok", "no-timing"):
            findings.append(Finding("warning", run.status, f"job {job_id} ended {row.get('State')!r}", label, i + 1))
        runs.append(run)
    for run in runs:  # tasks are counted on the step rows
        if "processes" not in run.counts and run.job_id in steps:
            tasks = [fmt.to_count(r.get("NTasks")) for r in steps[run.job_id] if not r["JobID"].endswith((".batch", ".extern"))]
            tasks = [t for t in tasks if t]
            if tasks:
                _put(run.counts, "processes", max(tasks), f"sacct NTasks={max(tasks)} on a step of job {run.job_id}")
    if unfinished:
        findings.append(Finding("info", "unfinished", f"{unfinished} job(s) still running or pending: left out", label, None, unfinished))
    return runs


# ====================================================================== ReFrame
def _reframe_params(name: str) -> Counts:
    counts: Counts = {}
    for m in fmt.REFRAME_PARAMETER.finditer(name):
        param = m.group("name").split(".")[-1].lower()
        kind = fmt.REFRAME_RESOURCE_COLUMNS.get(param) or fmt.TABLE_RESOURCE_COLUMNS.get(param)
        if kind:
            _put(counts, kind, m.group("value"), f"test parameter %{m.group('name')}={m.group('value')}")
    return counts


def _perf_pick(perf: list[tuple[str, float, str]], run: _Run, where: str) -> None:
    """Sets time_s from the time-unit performance variable; another variable becomes the quality."""
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


def _read_reframe(text: str, label: str, findings: list[Finding]) -> list[_Run]:
    lines = text.splitlines()
    runs: list[_Run] = []
    # ReFrame 3.x: one line per performance variable
    groups: dict[tuple[str, str, str], tuple[int, list[tuple[str, float, str]]]] = {}
    for i, line in enumerate(lines):
        m = fmt.REFRAME3_LINE.match(line.strip())
        if m:
            key = (m.group("time"), m.group("info"), m.group("jobid"))
            groups.setdefault(key, (i + 1, []))[1].append((m.group("var").strip(), fmt.to_float(m.group("value")), m.group("unit").strip()))
    for (_time, info, jobid), (line_no, perf) in groups.items():
        run = _Run(f"{label}:{line_no}", "reframe")
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
        return []
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
        run = _Run(f"{label}:{i + 1}", "reframe")
        run.benchmark = name.split(" %")[0].strip() if name else None
        run.job_id = row.get("jobid") or None
        result = row.get("result", "").lower()
        if result:
            run.status = fmt.REFRAME_RESULTS.get(result, "ok")
        run.counts.update(_reframe_params(name or ""))
        for column, kind in fmt.REFRAME_RESOURCE_COLUMNS.items():
            if column in row and row[column] not in ("null", "None", ""):
                _put(run.counts, kind, row[column], f"ReFrame {column}={row[column]} (line {i + 1})")
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
    return runs


# ====================================================================== plain tables
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


def _read_table(text: str, label: str, findings: list[Finding], explicit: bool) -> list[_Run] | None:
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
    runs: list[_Run] = []
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
        run = _Run(f"{label}:{index + 2}" if not text.lstrip().startswith(("[", "{")) else f"{label}#{index + 1}", "table")
        for c, kind in resource_cols.items():
            _put(run.counts, kind, row.get(c), f"column {c!r} of {where}")
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


# ====================================================================== resources beside a log
def _script_counts(script: Path, findings: list[Finding], label: str) -> tuple[Counts, str | None, str | None]:
    """Counts from a job script's #SBATCH lines, its job name and its output pattern."""
    counts: Counts = {}
    name = output = None
    text, _problems = read_text(script, str(script), max_bytes=1 << 20)
    if text is None:
        return counts, None, None
    for line in text.splitlines():
        m = fmt.SBATCH_LINE.match(line)
        if not m:
            continue
        tokens = m.group("options").split()
        j = 0
        while j < len(tokens):
            token = tokens[j]
            if "=" in token and token.startswith("--"):
                option, value = token.split("=", 1)
            elif token.startswith("-") and not token.startswith("--") and len(token) > 2:
                option, value = token[:2], token[2:]
            else:
                option = token
                value = tokens[j + 1] if j + 1 < len(tokens) else ""
                j += 1
            j += 1
            kind = fmt.SBATCH_OPTIONS.get(option)
            if kind is None:
                continue
            where = f"#SBATCH {option}{'=' if option.startswith('--') else ' '}{value} in {script.name}"
            if kind == "job_name":
                name = name or value
            elif kind == "output":
                output = output or value
            elif kind in ("gpus", "gpus_per_node", "gpus_per_task"):
                n = fmt.gpus_of_spec(value)
                if n:
                    _put(counts, kind, n, where)
            elif kind == "nodes" and "-" in value:
                low = value.split("-")[0]
                _put(counts, kind, low, where + " (the minimum of the range)")
            else:
                _put(counts, kind, value, where)
    return counts, name, output


@functools.lru_cache(maxsize=1024)
def _output_regex(pattern: str) -> re.Pattern[str]:
    """`#SBATCH -o` file name pattern -> regex (each script's, once: every log beside it asks)."""
    name = Path(pattern).name
    return re.compile("".join(".*" if fmt.OUTPUT_PATTERN_FIELDS.fullmatch(part) else re.escape(part) for part in re.split(r"(%\d*[jxAaNnustJ%])", name)))


def _output_matches(pattern: str, log: Path) -> bool:
    return _output_regex(pattern).fullmatch(log.name) is not None


def _beside_script(log: Path, cache: dict[Path, list[tuple[Path, Counts, str | None, str | None]]], findings: list[Finding], label: str) -> tuple[Counts, str | None]:
    folder = log.parent
    if folder not in cache:
        scripts = []
        try:
            entries = sorted(folder.iterdir(), key=lambda entry: entry.name)  # one folder: by name is by path
        except OSError:
            entries = []
        for entry in entries:
            if entry.suffix.lower() in fmt.SCRIPT_SUFFIXES and entry.is_file():
                counts, name, output = _script_counts(entry, findings, label)
                if counts or output or name:
                    scripts.append((entry, counts, name, output))
        cache[folder] = scripts
    scripts = cache[folder]
    if not scripts:
        return {}, None
    named = [s for s in scripts if s[3] and _output_matches(s[3], log)]
    if len(named) == 1:
        return named[0][1], named[0][2]
    same_stem = [s for s in scripts if s[0].stem == log.stem]
    if len(same_stem) == 1:
        return same_stem[0][1], same_stem[0][2]
    if len(scripts) == 1 and not scripts[0][3]:
        return scripts[0][1], scripts[0][2]
    if len(scripts) == 1 and named == [] and scripts[0][3]:
        return {}, None  # the only script writes other logs
    if len(named) > 1 or len(scripts) > 1:
        findings.append(Finding("info", "ambiguous-script", f"{len(scripts)} job scripts beside the log and none names it (#SBATCH -o): their #SBATCH lines are not used", label))
    return {}, None


@functools.lru_cache(maxsize=4096)
def benchmark_name(name: str | None) -> str | None:
    """A job name without the resource counts it encodes: `spiral_mlp_4gpus_1node` -> `spiral_mlp`,
    so the runs of one study share a series."""
    if not name:
        return None
    for pattern, _kind in fmt.NAME_RULES:
        name = pattern.sub("", name)
    name = re.sub(r"[-_.]{2,}", "_", name).strip("-_. ")
    return name or None


@functools.lru_cache(maxsize=4096)
def _name_matches(part: str) -> tuple[tuple[str, str, str], ...]:
    """(kind, number, matched text) of every `NAME_RULES` rule found in one name, in rule order
    (a study's folder names repeat from file to file: each is searched once)."""
    found = []
    for pattern, kind in fmt.NAME_RULES:
        m = pattern.search(part)
        if m:
            found.append((kind, m.group(1), m.group(0)))
    return tuple(found)


def _name_counts(parts: Sequence[str]) -> Counts:
    counts: Counts = {}
    for part in parts:  # the file name first, then its folders inwards-out
        for kind, number, text in _name_matches(part):
            if kind not in counts:
                what = "file name" if part == parts[0] else "folder name"
                _put(counts, kind, number, f"{what} {part!r} ({text})")
    return counts


def compile_resources_pattern(text: str) -> re.Pattern[str]:
    """`--resources` pattern -> regex: `{gpus}`, `{nodes}`, `{threads}`, `{processes}` capture digits,
    `*` any text inside one folder, `**` any text; searched in the path (a plain regex with named
    groups of those names works too)."""
    if re.search(r"\(\?P<(gpus|nodes|threads|processes)>", text):
        return re.compile(text)
    out = []
    for token in re.split(r"(\{\w+\}|\*\*|\*)", text):
        if token == "**":
            out.append(".*")
        elif token == "*":
            out.append("[^/]*")
        elif token.startswith("{") and token.endswith("}"):
            name = token[1:-1]
            if name not in fmt.RESOURCE_FIELDS:
                raise ValueError(f"--resources: unknown field {token}; use {{threads}}, {{processes}}, {{gpus}} or {{nodes}}")
            out.append(f"(?P<{name}>\\d+)")
        else:
            out.append(re.escape(token))
    if not any(f"(?P<{f}>" in "".join(out) for f in fmt.RESOURCE_FIELDS):
        raise ValueError("--resources needs at least one of {threads}, {processes}, {gpus}, {nodes}")
    return re.compile("".join(out))


def _resolve(layers: list[Counts]) -> dict[str, tuple[int, str] | None]:
    """Final nodes / gpus / processes / threads from layers in priority order."""
    def first(kind: str) -> tuple[int, str] | None:
        return next((layer[kind] for layer in layers if kind in layer), None)

    nodes = first("nodes")
    out: dict[str, tuple[int, str] | None] = {"nodes": nodes, "threads": first("threads")}
    out["processes"] = None
    for layer in layers:
        if "processes" in layer:
            out["processes"] = layer["processes"]
            break
        if "tasks_per_node" in layer:
            n, where = layer["tasks_per_node"]
            out["processes"] = (n * nodes[0], f"{where} x {nodes[0]} nodes") if nodes else (n, f"{where} (one node assumed)")
            break
    out["gpus"] = None
    for layer in layers:
        if "gpus" in layer:
            out["gpus"] = layer["gpus"]
            break
        if "gpus_per_node" in layer:
            n, where = layer["gpus_per_node"]
            out["gpus"] = (n * nodes[0], f"{where} x {nodes[0]} nodes") if nodes and nodes[0] > 1 else (n, where)
            break
        if "gpus_per_task" in layer and out["processes"]:
            n, where = layer["gpus_per_task"]
            out["gpus"] = (n * out["processes"][0], f"{where} x {out['processes'][0]} tasks")
            break
    return out


# ====================================================================== files
def _files(paths: Sequence[str | os.PathLike[str]], findings: list[Finding]) -> list[tuple[Path, str, tuple[str, ...], bool]]:
    """(file, label, name parts for the name rule, given explicitly) for every candidate file."""
    found: list[tuple[Path, str, tuple[str, ...], bool]] = []
    seen: set[str] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            base = path.parent
            for folder, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                # once per folder: its real path, its parts below `path`, the labels' prefix
                here = Path(folder)
                real = os.path.realpath(here)
                inner = tuple(reversed(here.relative_to(path).parts))
                prefix = str(here.relative_to(base)) if str(base) not in ("", ".") else str(here)
                for name in sorted(files):
                    if name.startswith("."):
                        continue
                    file = here / name
                    # a file's real path is its folder's plus its name, unless it is a link itself
                    key = os.path.realpath(file) if os.path.islink(file) else os.path.join(real, name)
                    if key in seen:
                        continue
                    seen.add(key)
                    dot = name.rfind(".")
                    stem = name[:dot] if 0 < dot < len(name) - 1 else name  # Path.stem
                    label = name if prefix == "." else os.path.join(prefix, name)  # str(Path(prefix) / name)
                    found.append((file, label, (stem, *inner, path.name), False))
        elif path.exists():
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            found.append((path, str(given), (path.stem, path.parent.name), True))
        else:
            findings.append(Finding("error", "missing", "no such file or folder", str(given)))
    return found


def _sniff(text: str, path: Path) -> str:
    """Which run-log reader takes a file: the registry's rules (parsers/rules), in its order."""
    name = path.name
    if rules.match_mlperf(name, text):  # anywhere in the file
        return "mlperf"
    head = text[:65536]
    if rules.match_reframe(name, head):
        return "reframe"
    if rules.match_sacct(name, head):
        return "sacct"
    if rules.match_csv(name, head) or path.suffix.lower() == ".json" or head.lstrip()[:1] in "[{":
        return "table"  # any text that starts like JSON is tried as a (resources, time) table too
    return "seed"


def _read_file(path: Path, label: str, explicit: bool, findings: list[Finding]) -> list[_Run] | None:
    """Runs of one file; None when it is not a run log at all."""
    text, problems = read_text(path, label)
    if text is None:
        if explicit:
            findings.extend(problems)
            return []
        if not any(p.kind in ("empty", "binary") for p in problems):
            findings.extend(problems)  # a folder's images and empty files are just not run logs
        return None
    findings.extend(problems)
    kind = _sniff(text, path)
    if kind == "mlperf":
        return _read_mlperf(text, label, path, findings)
    if kind == "reframe":
        return _read_reframe(text, label, findings) or None
    if kind == "sacct":
        return _read_sacct(text, label, findings)
    if kind == "table":
        return _read_table(text, label, findings, explicit)
    runs = _read_seed(text, label, findings)
    for run in runs:
        run.path = path
    return runs or None


# ====================================================================== public
def _empty_runs() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series([], dtype=object) for c in RUN_COLUMNS})
    return _typed(frame)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    for c in ("resources", "nodes", "gpus", "threads", "processes", "epochs"):
        frame[c] = pd.array(frame[c].tolist(), dtype="Int64")
    for c in ("time_s", "quality", "samples", "epoch_time_s"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(float)
    for c in ("converged", "quality_higher_is_better"):
        frame[c] = pd.array([None if v is pd.NA or v is None else bool(v) for v in frame[c].tolist()], dtype="boolean")
    return frame


def read_runs(paths: Sequence[str | os.PathLike[str]], *, resources_pattern: str | None = None) -> RunsResult:
    """Every run in `paths` (files or folders): `runs`, `curves` and the findings (see the module doc)."""
    findings: list[Finding] = []
    pattern = None
    if resources_pattern:
        try:
            pattern = compile_resources_pattern(resources_pattern)
        except (ValueError, re.error) as exc:
            findings.append(Finding("error", "bad-pattern", f"--resources {resources_pattern!r}: {exc}", ""))
    collected: list[tuple[_Run, tuple[str, ...], bool]] = []
    not_logs: list[str] = []
    for path, label, parts, explicit in _files(paths, findings):
        try:
            runs = _read_file(path, label, explicit, findings)
        except Exception as exc:  # noqa: BLE001 - one bad file never hides the others; the tests look for this kind
            findings.append(Finding("error", "reader-bug", f"could not be read ({type(exc).__name__}: {exc}); please report this file", label))
            continue
        if runs is None:
            if explicit:
                findings.append(Finding("warning", "not-a-run-log", "no run found: not a seed, MLPerf, ReFrame, sacct or (resources, time) table file", label))
            elif path.suffix.lower() not in fmt.SCRIPT_SUFFIXES + (".json",):
                not_logs.append(label)
            continue
        if not runs and explicit:
            continue
        for run in runs:
            if run.path is None:
                run.path = path
            collected.append((run, parts, explicit))
    if not_logs:
        shown = ", ".join(not_logs[:5]) + (f" and {len(not_logs) - 5} more" if len(not_logs) > 5 else "")
        findings.append(Finding("info", "not-a-run-log", f"{len(not_logs)} file(s) in the folders hold no run: {shown}", "", None, len(not_logs)))

    # sacct rows are a lookup for logs with the same job id; the rest are runs of their own
    sacct_by_id = {run.job_id: run for run, _p, _e in collected if run.format == "sacct" and run.job_id}
    used_sacct: set[str] = set()
    script_cache: dict[Path, list[tuple[Path, Counts, str | None, str | None]]] = {}
    system_cache: dict[Path, tuple[Any, list[Finding]]] = {}
    rows: list[dict[str, Any]] = []
    curve_runs: list[_Run] = []  # the runs with a curve, in row order
    by_job: dict[tuple[str, str], dict[str, Any]] = {}
    for run, parts, _explicit in collected:
        if run.format == "sacct":
            continue
        layers: list[Counts] = []
        if pattern is not None and run.path is not None:
            m = pattern.search(run.path.as_posix())
            if m:
                user: Counts = {}
                for kind, value in m.groupdict().items():
                    if kind in fmt.RESOURCE_FIELDS and value is not None:
                        _put(user, kind, value, f"--resources {resources_pattern!r} ({m.group(0)})")
                layers.append(user)
            else:
                findings.append(Finding("warning", "no-resources", f"--resources {resources_pattern!r} does not match this path", run.source))
        layers.append(run.counts)
        layers.append(run.echoed)
        if run.format in ("seed002", "seed004") and run.path is not None and ":" not in run.source[len(str(run.path)):]:
            script, script_name = _beside_script(run.path, script_cache, findings, run.source)
            layers.append(script)
            if run.benchmark is None and script_name:
                run.benchmark = benchmark_name(script_name)
        system: Counts = {}
        if run.format == "mlperf":
            system = _system_counts(run.path, findings, run.source, system_cache)
            for key in [k for k in system if k.startswith("set_")]:
                run.settings[key[4:]] = system.pop(key)[1]
        layers.append(system)
        sacct_run = sacct_by_id.get(run.job_id or "")
        if sacct_run is not None:
            used_sacct.add(sacct_run.job_id or "")
            layers.append(sacct_run.counts)
            if run.status == "ok" and sacct_run.status not in ("ok", "no-timing"):
                run.status = sacct_run.status
            if run.benchmark is None:
                run.benchmark = sacct_run.benchmark
        layers.append(_name_counts(parts))
        layers.append(run.fallback_counts)
        rows.append({"run": run, "counts": _resolve(layers)})
    for run, _parts, _e in collected:
        if run.format == "sacct" and run.job_id not in used_sacct:
            rows.append({"run": run, "counts": _resolve([run.counts])})
    for entry in rows:  # a printed 0 (a time rounded away, or Elapsed 00:00:00) is no time to divide by
        run = entry["run"]
        if not (run.time_s > 0):
            if run.time_s == 0:
                findings.append(Finding("warning", "zero-time", f"{run.time_from or 'the time'} is 0: below what the log can resolve, so unknown", run.source))
            run.time_s, run.time_from = math.nan, ""
            if run.status == "ok":
                run.status = "no-timing"

    # a log printed once per rank into separate files: same job id, same format -> one run
    merged: list[dict[str, Any]] = []
    for entry in rows:
        run = entry["run"]
        if run.job_id and run.format in ("seed002", "seed004") and ":" not in run.source:
            key = (run.format, run.job_id)
            if key in by_job:
                kept = by_job[key]
                kept["copies"] += 1
                if math.isfinite(run.time_s) and not (run.time_s <= kept["run"].time_s):
                    kept["run"].time_s, kept["run"].time_from = run.time_s, f"{run.time_from} of {run.source}"
                continue
            entry["copies"] = 1
            by_job[key] = entry
        merged.append(entry)
    for entry in merged:
        if entry.get("copies", 1) > 1:
            findings.append(Finding("info", "ranks", f"job {entry['run'].job_id} was logged by {entry['copies']} files (one per rank): counted once, the slowest time kept", entry["run"].source, None, entry["copies"]))

    # the kind each benchmark scales over
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for entry in merged:
        groups.setdefault((entry["run"].format, entry["run"].benchmark), []).append(entry)
    user_kinds = [k for k in fmt.KIND_PREFERENCE if pattern is not None and f"(?P<{k}>" in pattern.pattern]
    out_rows: list[dict[str, Any]] = []
    for (form, bench), entries in groups.items():
        kind = None
        for candidate in user_kinds + list(fmt.KIND_PREFERENCE):
            values = {e["counts"][candidate][0] for e in entries if e["counts"][candidate]}
            if len(values) > 1:
                kind = candidate
                break
        if kind is None:
            kind = next((k for k in user_kinds + list(fmt.KIND_PREFERENCE) if any(e["counts"][k] for e in entries)), None)
        series = f"{bench or form} ({kind or 'unknown'})"
        for entry in entries:
            run, counts = entry["run"], entry["counts"]
            chosen = counts.get(kind) if kind else None
            if chosen is None:
                findings.append(Finding("warning", "no-resources", f"no {kind or 'resource'} count in the log, a job script beside it, the file name or --resources: the run is kept without one", run.source))
            row = {
                "source": run.source, "format": run.format, "series": series, "benchmark": run.benchmark,
                "resource_kind": kind or "unknown", "resources": chosen[0] if chosen else pd.NA,
                "resources_from": chosen[1] if chosen else "",
                **{k: counts[k][0] if counts[k] else pd.NA for k in fmt.RESOURCE_FIELDS},
                "time_s": run.time_s, "time_from": run.time_from, "status": run.status, "converged": run.converged,
                "quality_name": run.quality_name, "quality": run.quality, "quality_higher_is_better": run.quality_higher_is_better,
                "quality_target": run.quality_target, "epochs": run.epochs if run.epochs is not None else pd.NA, "samples": run.samples,
                "label": run.label, "epoch_time_s": run.epoch_time_s,
            }
            for key, value in run.settings.items():
                row[f"set_{key}"] = value
            out_rows.append(row)
            if run.curve:
                curve_runs.append(run)
            entry["row"] = row
    if not out_rows:
        runs_frame = _empty_runs()
    else:
        runs_frame = _typed(pd.DataFrame(out_rows))
        ordered = list(RUN_COLUMNS) + sorted(c for c in runs_frame.columns if c.startswith("set_"))
        runs_frame = scaling_series.assign(runs_frame[ordered])  # one machine per series
        for row, name in zip(out_rows, runs_frame["series"]):
            row["series"] = name
    source_to_row = {r["source"]: r for r in out_rows}
    curve_records: list[tuple[str, str, Any, int, str, float]] = []
    for run in curve_runs:  # series and resources looked up once per run, not per epoch
        kept = source_to_row.get(run.source)
        if kept is not None:
            curve_records.extend((run.source, kept["series"], kept["resources"], ep, metric, value) for ep, metric, value in run.curve)
    curves = pd.DataFrame(curve_records, columns=list(CURVE_COLUMNS))
    curves["resources"] = pd.array(curves["resources"].tolist(), dtype="Int64")
    curves["epoch"] = curves["epoch"].astype("int64")
    curves["value"] = curves["value"].astype(float)
    findings.extend(_series_findings(runs_frame))
    return RunsResult(runs_frame, curves, findings)


def _series_findings(runs: pd.DataFrame) -> Iterable[Finding]:
    """No usable run, or a configuration with a single run: no speedup, or no spread. (One
    configuration only is the analysis's to say: metrics.scaling's `single-config`.)"""
    if runs.empty:
        return []
    out = []
    for series, group in runs.groupby("series", sort=True):
        usable = group[group["status"].eq("ok") & group["time_s"].notna() & group["resources"].notna()]
        counts = usable.groupby("resources").size()
        kind = group["resource_kind"].iloc[0]
        if len(counts) == 0:
            out.append(Finding("warning", "no-usable-run", f"series {series}: no finished run with a time and a {kind} count", ""))
        singles = [int(r) for r, n in counts.items() if n == 1]
        if singles and len(counts) > 1:
            out.append(Finding("info", "single-run", f"series {series}: one run only at {', '.join(map(str, singles))} {kind}: no spread there", "", None, len(singles)))
    return out
