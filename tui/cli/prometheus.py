"""Provides `--prometheus URL` for `replay` and `report`: a past job read back from a site's
Prometheus (collectors/prometheus/to_recording.py) into the in-memory recording they read.

The job's nodes, start and end come from `sacct` (what `report --job` already runs), and
`--nodes`, `--start`, `--end` give or override them (times as ISO 8601 or epoch seconds).
What was found, and each family that was not ("n/a: QUERY found nothing"), is said on stderr.
"""

from __future__ import annotations

import argparse
import math
import time
from datetime import datetime
from typing import Any

from gpuscope.tui.cli.checks import finite_float
from gpuscope.tui.cli.output import say

SACCT_WINDOW = "Start,End,NodeList"
MAX_NODES = 4096
"""Most nodes one import asks for (each is a few series of every family)."""


def add_prometheus_options(parser: argparse.ArgumentParser, job: bool = False) -> None:
    """--prometheus and what goes with it; `job`: also --job (replay has none of its own)."""
    parser.add_argument("--prometheus", metavar="URL", help="read the job's samples from this Prometheus (http://HOST:9090; user:password@ for "
                        "basic auth, or a token in $GPUSCOPE_PROMETHEUS_TOKEN) instead of a recording")
    if job:
        parser.add_argument("--job", metavar="ID", help="with --prometheus: the Slurm job (its nodes, start and end from sacct)")
    parser.add_argument("--nodes", metavar="LIST", help="with --prometheus: the job's nodes, a Slurm host list (n[01-16]) or commas "
                        "(default: from sacct; without a job, every node Prometheus has)")
    parser.add_argument("--start", metavar="TIME", help="with --prometheus: the job's start, ISO 8601 (2026-11-21T14:05, local time unless "
                        "it has an offset) or epoch seconds (default: from sacct)")
    parser.add_argument("--end", metavar="TIME", help="with --prometheus: the job's end, as --start (default: from sacct; now for a running job)")
    parser.add_argument("--metric-map", action="append", metavar="FILE", help="with --prometheus: a TOML metric map (or a built-in one: "
                        "gpuscope, dcgm, jobstats, node_exporter); repeatable, tried in order (default: the built-in maps, in that order)")
    parser.add_argument("--step", type=finite_float, metavar="S", help="with --prometheus: seconds between samples (default: the targets' "
                        "scrape interval, coarser when a series would pass 11,000 points)")
    parser.add_argument("--timeout", type=finite_float, default=5.0, metavar="S",
                        help="with --prometheus: seconds for all of Prometheus' replies together (default 5)")


def prometheus_problem(args: argparse.Namespace) -> str | None:
    """A Prometheus option without --prometheus, or a value out of range: said before asking."""
    if getattr(args, "prometheus", None) is None:
        given = [f"--{name.replace('_', '-')}" for name in ("nodes", "start", "end", "metric_map", "step") if getattr(args, name, None) is not None]
        return f"{given[0]} goes with --prometheus URL" if given else None
    if not 0 < args.timeout <= 600:
        return "--timeout must be between 0 and 600 seconds"
    if args.step is not None and not 1 <= args.step <= 86400:
        return "--step must be between 1 and 86400 seconds"
    for name in ("start", "end"):
        if getattr(args, name) is not None and parse_time(getattr(args, name)) is None:
            return f"--{name} {getattr(args, name)!r}: expected ISO 8601 (2026-11-21T14:05:00, +01:00 or Z for an offset) or epoch seconds"
    return None


def parse_time(text: str) -> float | None:
    """ISO 8601 (local time without an offset) or epoch seconds, as epoch seconds; None when neither."""
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        return value if math.isfinite(value) and value >= 0 else None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T", 1)).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def sacct_window(job: str, runner: Any = None) -> tuple[dict[str, Any], str | None]:
    """The job's start, end (now while it runs) and nodes from sacct's allocation line, or why not."""
    from gpuscope.collectors import slurm

    if not slurm.JOB_ID.fullmatch(job):
        return {}, f"{job!r} is not a Slurm job id (expected digits, e.g. 12345 or 12345_7)"
    result, problem = slurm.run(runner or slurm.SubprocessRunner(), ["sacct", "-j", job, "-X", "-P", "-n", f"--format={SACCT_WINDOW}"])
    if result is None or problem:
        return {}, f"sacct: {problem}" if problem else "sacct gave nothing"
    lines = [line.split("|") for line in result.stdout.splitlines() if line.count("|") == 2]
    if not lines:
        return {}, f"sacct knows no job {job} (accounting off, or purged?): give --nodes, --start and --end"
    start, end, nodes = lines[0]
    out: dict[str, Any] = {"nodes": nodes if nodes and nodes not in ("None assigned", "(null)") else None}
    out["start"] = parse_time(start) if start not in ("Unknown", "None", "") else None
    out["end"] = time.time() if end in ("Unknown", "None", "") else parse_time(end)
    return out, None


def window_of(args: argparse.Namespace) -> tuple[Any, str | None]:
    """The Window to read (collectors/prometheus/window.py), or why there is none."""
    from gpuscope.collectors import slurm
    from gpuscope.collectors.prometheus.window import Window

    found: dict[str, Any] = {}
    if args.job is not None and (args.nodes is None or args.start is None or args.end is None):
        found, problem = sacct_window(args.job)
        if problem:
            say(problem)
    nodes_text = args.nodes if args.nodes is not None else found.get("nodes")
    nodes = slurm.expand_hostlist((nodes_text or "").replace(" ", ""), limit=MAX_NODES)  # n[01-03,07],login1
    start = parse_time(args.start) if args.start is not None else found.get("start")
    end = parse_time(args.end) if args.end is not None else found.get("end", time.time() if args.start is not None else None)
    if start is None or end is None:
        return None, "the job's start and end are not known: give --job ID (sacct) or --start and --end"
    if not end > start:
        return None, f"the end ({datetime.fromtimestamp(end):%Y-%m-%d %H:%M:%S}) is not after the start ({datetime.fromtimestamp(start):%Y-%m-%d %H:%M:%S})"
    return Window(args.job, tuple(dict.fromkeys(nodes)), float(start), float(end)), None


def load(args: argparse.Namespace) -> tuple[Any, int]:
    """The job read back from --prometheus as a Recording (parsers/recording/read.py) and 0, or
    None and the exit status (2: a usage error, 1: nothing could be read). Says what it found."""
    from gpuscope.collectors.prometheus.maps import MapError, builtin_maps, load_map
    from gpuscope.collectors.prometheus.query import Client, PrometheusError
    from gpuscope.collectors.prometheus.to_recording import import_job  # the recording's modules below: numpy and pyarrow load while Prometheus answers

    if (problem := prometheus_problem(args)) is not None:
        say(problem)
        return None, 2
    try:
        maps = [load_map(m) for m in args.metric_map] if args.metric_map else builtin_maps()
    except MapError as exc:
        say(str(exc))
        return None, 2
    window, problem = window_of(args)
    if window is None:
        say(problem or "no job to read")
        return None, 2
    try:
        client = Client(args.prometheus, timeout=args.timeout)
    except PrometheusError as exc:
        say(str(exc))
        return None, 2
    imported = import_job(client, window, maps, step=args.step)
    from gpuscope.metrics.findings import Finding
    from gpuscope.parsers.recording import read as recording
    from gpuscope.parsers.recording import schema as recording_schema

    for line in imported.said:
        say(line)
    if imported.problem:
        say(imported.problem + ("; what loaded before is shown" if imported.table is not None else ""))
    if imported.table is None:
        return None, 1
    name = f"job {window.job} from Prometheus" if window.job else "Prometheus"
    findings = [Finding("info", "prometheus", line, name) for line in imported.said]
    if imported.problem:
        findings.append(Finding("warning", "cut", imported.problem, name))
    return recording.Recording(name, imported.table, recording_schema.VERSION, findings, complete=imported.problem is None), 0
