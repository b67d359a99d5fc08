"""The baseline: what a user does with grep to get a speedup table from the logs of a scaling study.

Seeds 002 and 004 tell users to `grep "Total training time"` (or `Total Training Time`) in each
log and read the resources off the job. This is that, as a plain Python loop: walk the tree,
read each file's text once, `re.search` the timing line (for MLPerf, the `run_start` and
`run_stop` events) and one resource line (the log's own `Total GPUs` / `Number of GPUs` x
`Number of nodes`, the `SLURM_CPUS_PER_TASK` it echoes, else `#SBATCH -c` in the job script
beside it; for MLPerf `number_of_nodes` x `accelerators_per_node` of `systems/NAME.json`),
then the median time per (kind, resources) and the speedup against the smallest configuration.
It takes the first match of each line (as `grep -m1` would): no per-rank copies, units,
status or findings.
"""

from __future__ import annotations

import os
import re
import statistics
from pathlib import Path

TOTAL = re.compile(r"^\s*Total [Tt]raining [Tt]ime:\s*([\d.eE+-]+)", re.MULTILINE)
RUN_START = re.compile(r'"time_ms": (\d+), "event_type": "INTERVAL_START", "key": "run_start"')
RUN_STOP = re.compile(r'"time_ms": (\d+), "event_type": "INTERVAL_END", "key": "run_stop"')
TOTAL_GPUS = re.compile(r"^Total GPUs: (\d+)", re.MULTILINE)
GPUS = re.compile(r"^Number of GPUs: (\d+)", re.MULTILINE)
NODES = re.compile(r"^Number of nodes: (\d+)", re.MULTILINE)
CPUS = re.compile(r"^SLURM_CPUS_PER_TASK=(\d+)", re.MULTILINE)
SBATCH_C = re.compile(r"^#SBATCH -c (\d+)", re.MULTILINE)
SYSTEM_NODES = re.compile(r'"number_of_nodes": "(\d+)"')
SYSTEM_GPUS = re.compile(r'"accelerators_per_node": "(\d+)"')
SCRIPTS = (".sh", ".json")


def _script_threads(folder: str, cache: dict[str, int | None]) -> int | None:
    if folder not in cache:
        cache[folder] = None
        for name in sorted(os.listdir(folder)):
            if name.endswith(".sh"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                    m = SBATCH_C.search(handle.read())
                if m:
                    cache[folder] = int(m.group(1))
                    break
    return cache[folder]


def _system_gpus(path: str, cache: dict[str, int | None]) -> int | None:
    """`.../results/SYSTEM/BENCHMARK/result_N.txt` -> nodes x GPUs of `.../systems/SYSTEM.json`."""
    parts = path.split(os.sep)
    where = len(parts) - 1 - parts[::-1].index("results")
    system = os.sep.join(parts[:where] + ["systems", parts[where + 1] + ".json"])
    if system not in cache:
        with open(system, encoding="utf-8") as handle:
            text = handle.read()
        nodes, per_node = SYSTEM_NODES.search(text), SYSTEM_GPUS.search(text)
        cache[system] = int(nodes.group(1)) * int(per_node.group(1)) if nodes and per_node else None
    return cache[system]


def read(root: Path | str) -> list[tuple[str, str, int | None, float]]:
    """(path, kind, resources, seconds) for every log with a timing line."""
    rows = []
    scripts: dict[str, int | None] = {}
    systems: dict[str, int | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SCRIPTS):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            start = RUN_START.search(text)
            if start:
                stop = RUN_STOP.search(text)
                if stop:
                    rows.append((path, "gpus", _system_gpus(path, systems), (int(stop.group(1)) - int(start.group(1))) / 1000))
                continue
            total = TOTAL.search(text)
            if not total:
                continue
            seconds = float(total.group(1))
            gpus = TOTAL_GPUS.search(text) or GPUS.search(text)
            if gpus:
                nodes = NODES.search(text)
                count = int(gpus.group(1)) * (int(nodes.group(1)) if nodes and gpus.re is not TOTAL_GPUS else 1)
                rows.append((path, "gpus", count, seconds))
                continue
            cpus = CPUS.search(text)
            rows.append((path, "threads", int(cpus.group(1)) if cpus else _script_threads(folder, scripts), seconds))
    return rows


def summarize(rows: list[tuple[str, str, int | None, float]]) -> dict[tuple[str, int], tuple[float, float]]:
    """(kind, resources) -> (median seconds, speedup against the smallest resources of that kind)."""
    times: dict[tuple[str, int], list[float]] = {}
    for _path, kind, count, seconds in rows:
        if count is not None:
            times.setdefault((kind, count), []).append(seconds)
    medians = {key: statistics.median(values) for key, values in times.items()}
    out = {}
    for (kind, count), median in medians.items():
        base = min(c for k, c in medians if k == kind)
        out[(kind, count)] = (median, medians[(kind, base)] / median)
    return out


def run(root: Path | str) -> tuple[list[tuple[str, str, int | None, float]], dict[tuple[str, int], tuple[float, float]]]:
    rows = read(root)
    return rows, summarize(rows)
