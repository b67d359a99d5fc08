"""Provides the `gpuscope record` and `gpuscope report` commands (parsers added by tui/cli.py).

`record` samples with no screen into a recording (collectors/recorder.py) until it is stopped
(SIGTERM, SIGINT / Ctrl+C, SIGHUP), `--duration` passes, or the watched job or process tree
has had no process for `GONE_SAMPLES` samples in a row; it always closes the file, so a clean
stop loses nothing. `report` prints the job report (metrics/job_report.py) of a recording.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
import time
from typing import Any

from gpuscope.metrics import export

GONE_SAMPLES = 3
"""A job or process tree whose processes were seen and are now gone for this many samples has ended."""


def add_parsers(sub: Any) -> None:
    record = sub.add_parser(
        "record",
        help="record this node (scoped to a job, a user or a process tree) to a file, with no screen",
        description="Sample what `gpuscope watch` shows, every --interval seconds, into FILE (an Arrow IPC "
        "stream with zstd, written in batches of 60 samples or 10 s; a kill -9 loses at most the open batch). "
        "Stops on SIGTERM, Ctrl+C, after --duration, or when the job's processes are gone. Never overwrites a file.",
    )
    scope = record.add_mutually_exclusive_group()
    scope.add_argument("--job", metavar="ID", help="a Slurm job (its processes on this node, its allocation)")
    scope.add_argument("--user", metavar="NAME", help="every process of a user")
    scope.add_argument("--pid", type=int, metavar="PID", help="a process and its descendants")
    record.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between samples (0.5-60, default 1)")
    record.add_argument("--duration", type=float, metavar="S", help="stop after S seconds (default: until stopped or the job ends)")
    record.add_argument("--demo", nargs="?", const="", metavar="SCENARIO", help="simulated GPUs (labelled as such in the recording)")
    record.add_argument("-o", "--output", required=True, metavar="FILE", help="the recording to create (e.g. job.gsrec)")

    report = sub.add_parser(
        "report",
        help="a job's efficiency from a recording: CPU, memory, GPUs, time limit, with advice",
        description="Read a recording and print CPU efficiency (mean busy cores against the allocation), memory "
        "(the cgroup's peak, or the highest sampled use: it says which) against the request, each GPU's mean "
        "utilisation, idle share and peak memory, per node, with seff/jobstats-style advice. n/a where unknown.",
    )
    report.add_argument("--recording", required=True, metavar="FILE", help="a file written by gpuscope record")
    report.add_argument("--time-limit", type=float, metavar="S", help="the job's time limit in seconds, for the share used")
    report.add_argument("--format", choices=("text", "markdown", "json"), help="output format (default: from -o's extension, else text)")
    report.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    report.add_argument("--width", type=int, metavar="COLS", help="text width (default: terminal width or 120)")


def _say(message: str) -> None:
    from gpuscope.metrics.safe_text import clean

    print(f"gpuscope: {clean(message)}", file=sys.stderr)


def run_record(args: argparse.Namespace) -> int:
    from gpuscope.collectors.recorder import Recorder, RecordingError
    from gpuscope.collectors.snapshot import SnapshotSource
    from gpuscope.metrics.snapshot_tables import scope_processes

    if not 0.5 <= args.interval <= 60:
        _say("--interval must be between 0.5 and 60 seconds")
        return 2
    if args.duration is not None and args.duration <= 0:
        _say("--duration must be more than 0 seconds")
        return 2
    if args.job is not None or args.user is not None or args.pid is not None:
        from gpuscope.collectors.scope import missing

        if (problem := missing(job=args.job, user=args.user, pid=args.pid)) is not None:
            _say(problem)
            return 2
    try:
        recorder = Recorder(args.output)
    except RecordingError as exc:
        _say(str(exc))
        return 2
    stop = threading.Event()
    why = ["stopped"]

    def on_signal(signum: int, _frame: object) -> None:
        why[0] = f"stopped by {signal.Signals(signum).name}"
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    source = SnapshotSource(job=args.job, user=args.user, pid=args.pid, demo=args.demo)
    start = time.monotonic()
    deadline = start + args.duration if args.duration is not None else None
    seen, gone, code = False, 0, 0
    try:
        next_at = start
        while not stop.is_set():
            snapshot = source.poll()
            recorder.add(snapshot)
            if snapshot.scope.kind in ("job", "pid"):
                alive = any(p.state != "Z" for p in scope_processes(snapshot))  # a zombie has finished
                seen = seen or alive
                gone = 0 if alive else gone + 1
                if seen and gone >= GONE_SAMPLES:
                    why[0] = f"the {snapshot.scope.kind}'s processes are gone: it has ended"
                    break
            next_at += args.interval
            if deadline is not None and next_at > deadline:
                why[0] = "--duration reached"
                break
            stop.wait(max(0.0, next_at - time.monotonic()))
    except RecordingError as exc:
        _say(str(exc))
        code = 1
    finally:
        source.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
        try:
            recorder.close()
        except RecordingError as exc:
            _say(str(exc))
            code = 1
    size = os.path.getsize(args.output) if os.path.exists(args.output) else 0
    _say(f"{why[0]}: {recorder.samples_written} samples in {recorder.batches_written} batches written to {args.output} ({size / 1024:.0f} KiB)")
    return code


def run_report(args: argparse.Namespace) -> int:
    from gpuscope.metrics.job_report import report, usage_from_snapshots
    from gpuscope.parsers import recording

    rec = recording.read(args.recording)
    for finding in rec.findings:
        _say(f"{args.recording}: {finding.message}")
    if rec.samples == 0:
        if not rec.findings:
            _say(f"{args.recording}: no samples")
        return 1
    snapshots = [rec.snapshot(i) for i in range(rec.samples)]
    result = report([usage_from_snapshots(snapshots)], time_limit_s=args.time_limit)
    from gpuscope.metrics.table import Column, ResultTable

    fmt = args.format or (export.format_for_path(args.output) if args.output else "text")
    if fmt not in ("text", "markdown", "json"):
        _say("report prints text, markdown or json")
        return 2
    advice = result.advice or ["no advice: the job used what it asked for, as far as the samples show"]
    tables = [*result.tables, ResultTable("Advice", (Column("advice", "advice"),), tuple((line,) for line in advice))]
    width = args.width or (shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 120)
    text = export.render(tables, fmt, width)
    text += "" if text.endswith("\n") else "\n"
    if args.output:
        export.write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
