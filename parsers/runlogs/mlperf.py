"""Provides the MLPerf logs' reader: `:::MLLOG` JSON lines (mlcommons/logging): the time to train
from `run_start` / `run_stop`, whether it converged, the quality per epoch, the settings, and
the nodes and GPUs of `systems/NAME.json` beside the results folder.

    from gpuscope.parsers.runlogs import mlperf
    got = mlperf.read(Path("results/eos/resnet/result_0.txt"))   # FileRead: runs table, findings, meta["curves"]
"""

from __future__ import annotations

import json
import math
import re
from itertools import repeat
from operator import add
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import head_text, line_of

if TYPE_CHECKING:
    from gpuscope.parsers.runlogs.run import Run

KIND = "mlperf-log"
TITLE = "MLPerf log"
VIEW = "scaling"
BOUNDED = False
MLLOG_TAG = ":::MLLOG "
"""What starts an MLPerf log line (mlcommons/logging); here, not in `formats`, so recognising a
file does not import the run-log reader (every command imports the kinds through the registry)."""


def match(name: str, head: Head) -> str | None:
    text = head_text(head)
    at = text.find(MLLOG_TAG)
    return None if at < 0 else f"`:::MLLOG` JSON lines (first on line {line_of(text, at)}): MLPerf log"


def describe(head: Head, size: int) -> str:
    found = re.search(r'"key": *"submission_benchmark", *"value": *"([^"]{1,40})"', head_text(head))
    return f"MLPerf {clean(found.group(1))}" if found else "MLPerf log"


def read(path: Path) -> FileRead:
    """The run of one MLPerf log, with its nodes and GPUs (systems/NAME.json, the path, the log)."""
    from gpuscope.parsers.runlogs import assemble  # the run-log reader: only when a log is read

    return assemble.read_one(path, parse)


_MLPERF_EVENTS = frozenset({"run_start", "run_stop", "submission_benchmark", "epoch_start", "epoch_stop", "train_samples", "submission_platform"})
"""The MLLOG keys `parse` uses besides `formats`' quality and settings keys."""
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


def parse(text: str, label: str, path: Path | None, findings: list[Finding]) -> list[Run] | None:
    from gpuscope.parsers.runlogs import formats as fmt
    from gpuscope.parsers.runlogs.run import Run, put

    used = _MLPERF_EVENTS.union(fmt.MLPERF_QUALITY_KEYS, fmt.MLPERF_SETTINGS)
    """Every MLLOG key read."""
    run = Run(label, "mlperf", path)
    starts: list[tuple[int, int]] = []
    stops: list[tuple[int, int, str | None]] = []
    epoch_start: dict[int, int] = {}
    epoch_stop: dict[int, int] = {}
    quality: list[tuple[int, int, str, float]] = []
    bad = 0
    first_bad = None
    train_samples = math.nan
    tag, skip = MLLOG_TAG, len(MLLOG_TAG)
    lines = text.splitlines()
    # the lines to decode, found by C-level maps over all lines (not a Python step per line):
    # those with the tag whose first written key is used, or that write no key that way
    ats = list(map(str.find, lines, repeat(tag)))
    written = map(_MLLOG_KEY.search, lines, map(add, ats, repeat(skip)))
    chosen = [i for i, at, w in zip(range(len(ats)), ats, written) if at >= 0 and (w is None or w[1] in used)]
    for i in chosen:
        line, at = lines[i], ats[i]
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
        if key not in used:  # most events (weights_initialization, tracked_stats ...) are not used
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
                put(run.fallback_counts, "nodes", m.group(1), f"submission_platform {value!r}")
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
