"""Provides `read_runs`: one row per run, with its resources, time and quality, from the logs jobs wrote.

    from gpuscope.parsers.runlogs.read import read_runs
    result = read_runs(["results/"], resources_pattern=None)
    result.runs      # one row per run: resources (and where that number came from), time_s, status, quality, set_*
    result.curves    # per-epoch values: loss, val_loss, accuracy, eval_accuracy, epoch_time_s
    result.findings  # every file skipped or partly read, and why

Formats (line patterns in `formats`, one reader module per kind): the seeds' own lines (seed 002 `Total training
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

import contextlib
import gc
import os
from pathlib import Path
from typing import Sequence

from gpuscope.metrics.findings import Finding
from gpuscope.parsers import csv_table
from gpuscope.parsers.runlogs import mlperf, reframe, sacct, seed, tables
from gpuscope.parsers.runlogs.assemble import Parse, assemble, collect, pattern_of
from gpuscope.parsers.runlogs.discover import candidates
from gpuscope.parsers.runlogs.resources import compile_resources_pattern
from gpuscope.parsers.runlogs.run import CURVE_COLUMNS, RUN_COLUMNS, STATUSES, RunsResult, benchmark_name

__all__ = ["CURVE_COLUMNS", "RUN_COLUMNS", "STATUSES", "RunsResult", "benchmark_name", "compile_resources_pattern", "read_runs", "parser_for"]


def parser_for(text: str, path: Path) -> Parse:
    """Which run-log reader takes a file: the kinds' own rules, in the registry's order; MLPerf
    lines count anywhere in the file, the others in its first 64 KB."""
    name = path.name
    if mlperf.match(name, text):
        return mlperf.parse
    head = text[:65536]
    if reframe.match(name, head):
        return reframe.parse
    if sacct.match(name, head):
        return sacct.parse
    if csv_table.match(name, head) or path.suffix.lower() == ".json" or head.lstrip()[:1] in "[{":
        return tables.parse  # any text that starts like JSON is tried as a (resources, time) table too
    return seed.parse


@contextlib.contextmanager
def _collector_paused():
    """The cycle collector off while a study is read: reading keeps every run, finding and curve
    point alive until the tables are built, so each automatic collection walks all of them again
    (an eighth of the time on 10,000 logs), and nothing read forms a cycle to free."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def read_runs(paths: Sequence[str | os.PathLike[str]], *, resources_pattern: str | None = None) -> RunsResult:
    """Every run in `paths` (files or folders): `runs`, `curves` and the findings (see the module doc)."""
    findings: list[Finding] = []
    pattern = pattern_of(resources_pattern, findings)
    with _collector_paused():
        collected = collect(candidates(paths, findings), parser_for, findings)
        result = assemble(collected, findings, pattern=pattern, resources_pattern=resources_pattern)
        # the runs read, freed while the collector is still off: turned on with them alive, its
        # next pass would walk every one of them once more (a tenth of a second on 10,000 logs)
        del collected
    return result
