"""Provides what every run-log reader shares: a run while it is read (`Run`), the columns of the
runs and curves tables.

A reader module (seed, mlperf, reframe, sacct, tables) turns one file's text into `Run`s;
`assemble` turns the runs of many files into the tables.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.runlogs import formats as fmt

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
class Run:
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


def put(counts: Counts, kind: str, value: object, where: str) -> None:
    """Set `counts[kind]` from `value` (a count >= 1) unless it is already set."""
    n = fmt.to_count(value)
    if n is not None and kind not in counts:
        counts[kind] = (n, where)


def time_value(match: re.Match[str], label: str, line_no: int, findings: list[Finding]) -> float:
    """Seconds of a `value` / `unit` match; a missing unit is seconds (said), an unknown one NaN (said)."""
    value = fmt.to_float(match.group("value"))
    unit = match.group("unit") if "unit" in match.re.groupindex else None
    if unit is None:
        findings.append(Finding("info", "unit-assumed", f"line {line_no} gives a time without a unit: taken as seconds", label, line_no))
        return value
    per = fmt.unit_seconds(unit)
    if per is None:
        findings.append(Finding("warning", "mixed-units", f"line {line_no}: unknown time unit {unit!r}; that time is not used", label, line_no))
        return math.nan
    return value * per


@functools.lru_cache(maxsize=4096)
def benchmark_name(name: str | None) -> str | None:
    """A job name without the resource counts it encodes: `spiral_mlp_4gpus_1node` -> `spiral_mlp`,
    so the runs of one study share a series."""
    if not name:
        return None
    for pattern, _kind in fmt.name_rules():
        name = pattern.sub("", name)
    name = re.sub(r"[-_.]{2,}", "_", name).strip("-_. ")
    return name or None
