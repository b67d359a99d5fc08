"""Provides the live commands: `record`, `report`, `collect` (their parsers: `add_parsers`),
`watch` and `replay` (parsers in tui/cli/main.py).

`record` samples with no screen into a recording (collectors/recorder.py) until it is stopped
(SIGTERM, SIGINT / Ctrl+C, SIGHUP), `--duration` passes, or the watched job or process tree
has had no process for `GONE_SAMPLES` samples in a row; it always closes the file, so a clean
stop loses nothing. `report` prints the job report (metrics/job/report.py) of a recording.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import socket
import sys
import threading
import time
from typing import Any

from gpuscope.metrics import export
from gpuscope.tui.cli.output import add_output_options, emit, fail, output_format, run_screen, say, stdout_failed, text_limit, text_width
from gpuscope.tui.cli.checks import finite_float, positive_int

GONE_SAMPLES = 3
"""A job or process tree whose processes were seen and are now gone for this many samples has ended."""
REPORT_TABLES = {"nodes": "Job efficiency per node", "job": "Job", "slurm": "Slurm accounting", "gpus": "GPUs", "energy": "Energy",
                 "activity": "GPU activity", "work": "Energy per unit of work", "slurm-energy": "Slurm beside gpuscope", "advice": "Advice"}
"""`report --table NAME`: each table's name and title."""


def add_scope_options(parser: argparse.ArgumentParser) -> None:
    """--job / --user / --pid (one at most) and --demo: what a watch, record or collect samples."""
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--job", metavar="ID", help="a Slurm job (its processes on this node, its allocation)")
    scope.add_argument("--user", metavar="NAME", help="every process of a user")
    scope.add_argument("--pid", type=int, metavar="PID", help="a process and its descendants")
    parser.add_argument("--demo", nargs="?", const="", metavar="SCENARIO",
                        help="simulated GPUs (labelled as such): a100x8-training (default), h100x4-mig, h100x8-llm, one-gpu-idle, or a scenario .json file")


def add_parsers(sub: Any) -> None:
    record = sub.add_parser(
        "record",
        help="record this node (scoped to a job, a user or a process tree) to a file, with no screen",
        description="Sample what `gpuscope watch` shows, every --interval seconds, into FILE (an Arrow IPC "
        "stream with zstd, written in batches of 60 samples or 10 s; a kill -9 loses at most the open batch). "
        "Stops on SIGTERM, Ctrl+C, after --duration, or when the job's processes are gone. Never overwrites a file.",
    )
    add_scope_options(record)
    record.add_argument("--interval", type=finite_float, default=1.0, metavar="S", help="seconds between samples (0.5-60, default 1)")
    record.add_argument("--duration", type=finite_float, metavar="S", help="stop after S seconds (default: until stopped or the job ends)")
    record.add_argument("--all-nodes", action="store_true", help="with --job: sample every node of the job through srun, even when it has one "
                        "(the default for a job on several nodes)")
    record.add_argument("-o", "--output", required=True, metavar="FILE", help="the recording to create (e.g. job.gsrec)")

    collect = sub.add_parser(
        "collect",
        help="sample this node: JSON lines for record/watch on every node of a job (run by srun), or Prometheus metrics",
        description="--stream prints what `gpuscope watch --once --format json` prints, one compact line per sample, until "
        "stopped (SIGTERM, Ctrl+C, a closed pipe), --count samples, or the job's processes are gone on this node; "
        "then a last line {\"stream_end\": WHY, \"hostname\": NODE}. "
        "`gpuscope record --job ID` starts it on every node of a job through `srun --overlap`. "
        "--serve and --textfile export the latest sample in Prometheus' format: per GPU, per node and per Slurm job "
        "(gpuscope_* series in base units; a value that cannot be read is left out, never 0).",
    )
    mode = collect.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stream", action="store_true", help="JSON lines on standard output")
    mode.add_argument("--serve", metavar="[ADDR:]PORT", help="serve /metrics for Prometheus on PORT (127.0.0.1 unless ADDR is given, "
                      "e.g. 0.0.0.0:9400; port 0: any free port, said on stderr); a scrape shows the latest sample")
    mode.add_argument("--textfile", metavar="DIR", help="write DIR/gpuscope.prom after each sample for node_exporter's textfile "
                      "collector (replaced atomically: never a half file)")
    collect.add_argument("--per-process", action="store_true", help="with --serve/--textfile: also a few series per process "
                         "(CPU, memory, GPU memory; one series set per pid: mind Prometheus' cardinality)")
    add_scope_options(collect)
    collect.add_argument("--interval", type=finite_float, default=1.0, metavar="S", help="seconds between samples (0.5-60, default 1)")
    collect.add_argument("--count", type=positive_int, metavar="N", help="stop after N samples")

    report = sub.add_parser(
        "report",
        help="a job's efficiency from a recording and/or Slurm's accounting: CPU, memory, GPUs, time limit, with advice",
        description="Print CPU efficiency (mean busy cores against the allocation), memory (the cgroup's peak, the "
        "highest sampled use, or Slurm's RSS peaks: it says which) against the request, each GPU's mean utilisation, "
        "idle share and peak memory (from a recording: Slurm has no GPU use), and the share of the time limit used, "
        "with seff/jobstats-style advice; energy per GPU, node and job (energy counters, else integrated power), per epoch "
        "and sample where the job's log says them, what the SMs, tensor cores and DRAM did, and Slurm's energy beside it. "
        "--job asks sacct (any job, when the cluster keeps accounting), else sstat "
        "and scontrol (a running job). With both, CPU and memory advice comes from Slurm. n/a where unknown.",
    )
    report.add_argument("--recording", metavar="FILE", help="a file written by gpuscope record")
    report.add_argument("--job", metavar="ID", help="a Slurm job: its accounting from sacct, or sstat + scontrol while it runs")
    report.add_argument("--time-limit", type=finite_float, metavar="S", help="the job's time limit in seconds, for the share used")
    report.add_argument("--log", action="append", metavar="FILE", help="a log of the job saying the work done (epochs, samples: seed, MLPerf, "
                        "ReFrame logs), for the energy per unit of work; repeatable (default: the job's output files the recording names)")
    from gpuscope.tui.cli.prometheus import add_prometheus_options

    add_prometheus_options(report)
    add_output_options(report, tables=tuple(REPORT_TABLES))


def every_node(args: argparse.Namespace) -> bool:
    """Whether to sample every node of `--job` through srun: asked (--all-nodes), or the job
    runs on several nodes (scontrol show job)."""
    if args.job is None:
        return False
    from gpuscope.collectors.fanout import job_nodes

    return bool(args.all_nodes) or (job_nodes(args.job) or 1) > 1


def scope_problem(args: argparse.Namespace, longest: float = 60) -> str | None:
    """What is wrong with the options `add_scope_options` adds and --interval (0.5 s to
    `longest`): said before a screen opens, a reading is printed or a file is made."""
    from gpuscope.collectors.simulated import scenario_problem

    if not 0.5 <= args.interval <= longest:
        return f"--interval must be between 0.5 and {longest:g} seconds"
    if (problem := scenario_problem(args.demo)) is not None:
        return problem
    if args.job is not None or args.user is not None or args.pid is not None:
        from gpuscope.collectors.scope import missing

        return missing(job=args.job, user=args.user, pid=args.pid)
    return None


class _Stop:
    """SIGTERM, SIGINT and SIGHUP set the event (and say which) while the block runs."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.why = "stopped"
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "_Stop":
        def on_signal(signum: int, _frame: object) -> None:
            self.why = f"stopped by {signal.Signals(signum).name}"
            self.event.set()

        self._previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)


def _samples(args: argparse.Namespace, stop: _Stop, count: int | None = None, duration: float | None = None):
    """Snapshots of this node every --interval until stopped, `count` or `duration` reached, or
    the job's / process tree's processes gone for GONE_SAMPLES samples (zombies have ended)."""
    from gpuscope.collectors.snapshot import SnapshotSource
    from gpuscope.metrics.snapshot_tables import scope_processes

    source = SnapshotSource(job=args.job, user=args.user, pid=args.pid, demo=args.demo)
    start = next_at = time.monotonic()
    seen, gone, n = False, 0, 0
    try:
        while not stop.event.is_set():
            snapshot = source.poll()
            n += 1
            yield snapshot
            if snapshot.scope.kind in ("job", "pid"):
                rows = scope_processes(snapshot)
                alive = any(p.state != "Z" for p in rows)
                seen = seen or bool(rows)  # a zombie was there too: a tree already ended when first seen has ended
                gone = 0 if alive else gone + 1
                if seen and gone >= GONE_SAMPLES:
                    stop.why = f"the {snapshot.scope.kind}'s processes are gone: it has ended"
                    return
            if count is not None and n >= count:
                stop.why = f"{n} samples taken"
                return
            next_at += args.interval
            if duration is not None and next_at > start + duration:
                stop.why = "--duration reached"
                return
            stop.event.wait(max(0.0, next_at - time.monotonic()))
    finally:
        source.close()


def run_collect(args: argparse.Namespace) -> int:
    import json

    from gpuscope.metrics.snapshot_tables import snapshot_dict

    if (problem := scope_problem(args)) is not None:
        say(problem)
        return 2
    if args.serve is not None or args.textfile is not None:
        from gpuscope.tui.cli import serve

        return serve.run(args, _samples, _Stop)
    if args.per_process:
        say("--per-process goes with --serve or --textfile")
        return 2
    from gpuscope.collectors.fanout import end_line

    hostname = None
    with _Stop() as stop:
        try:
            for snapshot in _samples(args, stop, count=args.count):
                hostname = snapshot.host.hostname
                sys.stdout.write(json.dumps(snapshot_dict(snapshot), separators=(",", ":"), allow_nan=False) + "\n")
                sys.stdout.flush()
            # the last line says why this node's stream ends, so a multi-node watch can say it
            sys.stdout.write(end_line(stop.why, hostname or socket.gethostname()) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the reader went away (srun stopped, `| head`)
            sys.stderr.close()
        except OSError as exc:  # a full disk: said, unlike a reader that stopped reading
            return stdout_failed(exc)
    return 0


def run_record(args: argparse.Namespace) -> int:
    from gpuscope.collectors.recorder import Recorder, RecordingError

    if args.duration is not None and args.duration <= 0:
        say("--duration must be more than 0 seconds")
        return 2
    if args.all_nodes and args.job is None:
        say("--all-nodes needs --job")
        return 2
    if (problem := scope_problem(args)) is not None:
        say(problem)
        return 2
    fan_out = every_node(args)
    try:
        recorder = Recorder(args.output)
    except RecordingError as exc:
        say(str(exc))
        return 2
    code = 0
    until = f"for {args.duration:g} s" if args.duration is not None else "until stopped (Ctrl+C, SIGTERM) or the processes are gone"
    say(f"recording to {args.output} every {args.interval:g} s {until}" + (", every node of the job through srun" if fan_out else ""))
    with _Stop() as stop:
        try:
            if fan_out:
                code = _record_nodes(args, recorder, stop)
            else:
                for snapshot in _samples(args, stop, duration=args.duration):
                    recorder.add(snapshot)
        except RecordingError as exc:
            say(str(exc))
            code = 1
        finally:
            try:
                recorder.close()
            except RecordingError as exc:
                say(str(exc))
                code = 1
    size = os.path.getsize(args.output) if os.path.exists(args.output) else 0
    batches = recorder.batches_written
    say(f"{stop.why}: {recorder.samples_written} samples in {batches} batch{'es' if batches != 1 else ''} written to {args.output} ({size / 1024:.0f} KiB)")
    return code


def _record_nodes(args: argparse.Namespace, recorder: Any, stop: _Stop) -> int:
    """Every node of the job through srun: each node's samples go into the one recording (a
    row's host name says which node); a node that falls silent is said, not fatal."""
    from gpuscope.collectors.fanout import NodeStreams, srun_command

    streams = NodeStreams(srun_command(args.job, args.interval), interval=args.interval).start()
    deadline = time.monotonic() + args.duration if args.duration is not None else None
    said: dict[str, str] = {}
    try:
        while not stop.event.is_set():
            for snapshot in streams.drain():
                recorder.add(snapshot)
            for state in streams.states():
                if state.status != said.get(state.node, "ok"):
                    say(f"node {state.node}: {state.status}")
                said[state.node] = state.status
            if streams.ended:
                for snapshot in streams.drain():
                    recorder.add(snapshot)
                stop.why = f"the node streams ended ({streams.error})" if streams.error else "the job's node streams ended"
                break
            if deadline is not None and time.monotonic() >= deadline:
                stop.why = "--duration reached"
                break
            stop.event.wait(min(0.2, args.interval))
    finally:
        streams.close()
        for snapshot in streams.drain():
            recorder.add(snapshot)
    if streams.bad_lines:
        say(f"{streams.bad_lines} lines from the nodes were not snapshots: skipped")
    return 1 if streams.error and not recorder.samples_written + recorder.pending else 0


def slurm_use(job_id: str, runner: Any = None) -> tuple[Any, list[str]]:
    """Slurm's accounting of a job (metrics.job.report.SlurmUse or None, its energy and GPU use
    in `energy`) and what to say: sacct when the cluster keeps accounting, else sstat +
    scontrol while the job runs."""
    from gpuscope.collectors import slurm
    from gpuscope.parsers import slurm_accounting as acct

    if not slurm.JOB_ID.fullmatch(job_id):
        return None, [f"{job_id!r} is not a Slurm job id (expected digits, e.g. 12345 or 12345_7)"]
    runner = runner or slurm.SubprocessRunner()
    said: list[str] = []
    result, problem = slurm.run(runner, ["sacct", "-j", job_id, "-P", "--format=" + acct.SACCT_FORMAT])
    if result is not None and not problem:
        use, findings = acct.from_sacct(result.stdout, job_id)
        if use is not None:
            return dataclasses.replace(use, energy=acct.energy_from_sacct(result.stdout, job_id)), [f.message for f in findings]
        said += [f.message for f in findings]
    elif problem:
        said.append(problem)
    info, problem = slurm.show_job(runner, job_id)
    if info is None:
        return None, said + ([problem] if problem else [])
    result, problem = slurm.run(runner, ["sstat", "-j", job_id, "-a", "-P", "--format=" + acct.SSTAT_FORMAT])
    if result is None or problem:
        return None, said + [f"{problem} (sstat needs a running step and JobAcctGatherType other than none)"]
    use, findings = acct.from_sstat(result.stdout, job_id, info.fields)
    if use is not None:
        use = dataclasses.replace(use, energy=acct.energy_from_sstat(result.stdout, job_id))
    return use, said + [f.message for f in findings]


def run_report(args: argparse.Namespace) -> int:
    from gpuscope.metrics.table import Column, ResultTable

    fmt = output_format(args)
    if args.recording is None and args.job is None and args.prometheus is None:
        say("report needs --recording FILE, --job ID, or both; or --prometheus URL with --job ID (or --start and --end)")
        return 2
    if args.recording is not None and args.prometheus is not None:
        say("--recording and --prometheus are two sources of the same samples: give one")
        return 2
    from gpuscope.tui.cli.prometheus import prometheus_problem

    if (problem := prometheus_problem(args)) is not None:
        say(problem)
        return 2
    if args.time_limit is not None and not args.time_limit > 0:
        say("--time-limit must be a positive number of seconds")
        return 2
    if missing := [path for path in args.log or () if not os.path.isfile(path)]:
        say(f"--log {missing[0]}: no such file")
        return 2
    usages, use, readings, cpu, work, why_no_work = [], None, [], None, None, "no recording given: the work is read with the samples"
    if args.recording is not None or args.prometheus is not None:
        if args.prometheus is not None:  # asked before the readers' modules (numpy, pyarrow) load: they load while Prometheus answers
            from gpuscope.tui.cli import prometheus

            rec, code = prometheus.load(args)  # says what it found and what it did not
            if rec is None:
                return code
        from gpuscope.parsers.recording import read as recording
        from gpuscope.parsers.recording.gpu_readings import GpuReadingsReduce
        from gpuscope.parsers.recording.usage import usage_per_node
        from gpuscope.tui.model.job_report import work_done

        reduce = GpuReadingsReduce()
        if args.prometheus is not None:
            usages = usage_per_node(reduce.tap(rec.table.to_batches()))
        else:
            stream = recording.Stream(args.recording)  # batch by batch: a day of samples is never held
            usages = usage_per_node(reduce.tap(stream.batches()))
            for finding in stream.findings:
                say(f"{args.recording}: {finding.message}")
            if stream.samples == 0:
                if not stream.findings:
                    say(f"{args.recording}: no samples")
                return 1  # as replay: nothing to report from this file
        readings, cpu = reduce.gpus(), reduce.cpu()
        work, why_no_work = work_done(reduce.scopes, args.log or ())
    if args.job is not None:
        use, said = slurm_use(args.job)
        for line in said:
            say(line)
        if use is None and not usages:
            return 1
    from gpuscope.metrics.job.report import report

    result = report(usages, time_limit_s=args.time_limit, slurm=use, gpu_readings=readings, cpu=cpu, work=work, why_no_work=why_no_work)
    nodes_only = usages and use is None and all(u.scope_kind == "node" for u in usages)
    advice = result.advice or ["no advice: nothing stood out in the samples (a node view: there is no request to compare with)" if nodes_only else
                               "no advice: the job used what it asked for, as far as the samples show"]
    tables = [result.job, *result.tables, ResultTable("Advice", (Column("advice", "advice"),), tuple((line,) for line in advice))]
    if args.table or fmt == "csv":  # csv holds one table: the efficiency per node (Slurm's without a recording) unless --table names another
        name = args.table or ("nodes" if usages else "slurm")
        present = [n for n, title in REPORT_TABLES.items() if any(t.title == title for t in tables if t is not None)]
        if name not in present:
            say(f"this report has no {name} table (it has: {', '.join(present)}; --table NAME picks one)")
            return 1
        tables = [t for t in tables if t is not None and t.title == REPORT_TABLES[name]]
    text = export.render(tables, fmt, text_width(args), limit=text_limit(args))
    text += "" if text.endswith("\n") else "\n"
    return emit(args, fmt, text)  # a write that fails is one message and exit 1, as for the other commands


def _watch_source(args: argparse.Namespace, fan_out: bool = False):  # -> SnapshotSource | NodesSource
    """This node's collectors; with `fan_out`, every node of the job through srun (`collect --stream` on each)."""
    if fan_out:
        from gpuscope.collectors.fanout import NodesSource

        return NodesSource.for_job(args.job, args.interval)
    from gpuscope.collectors.snapshot import SnapshotSource

    return SnapshotSource(job=args.job, user=args.user, pid=args.pid, demo=args.demo)


def run_watch(args: argparse.Namespace) -> int:
    if args.interval is None:
        from gpuscope.tui.model import settings

        args.interval = settings.load()[0].interval or 1.0
    if (problem := scope_problem(args, longest=10)) is not None:
        return fail(problem, 2)  # before the screen opens or a reading is printed
    if args.record and (args.once or args.format or args.output):
        return fail("--record goes with the screen; to record without one use: gpuscope record -o FILE", 2)
    if args.all_nodes and (args.job is None or args.once or args.format or args.output):
        return fail("--all-nodes goes with --job and the screen; to record every node use: gpuscope record --job ID -o FILE", 2)
    if not (args.once or args.format or args.output):
        from gpuscope.tui.screens.watch.screen import WatchScreen

        source = _watch_source(args, fan_out=every_node(args))
        if args.record:
            from gpuscope.collectors.recorder import Recorder, RecordingError, RecordingSource

            try:
                source = RecordingSource(source, Recorder(args.record))
            except RecordingError as exc:
                source.close()
                return fail(str(exc), 2)
        try:
            code = run_screen(lambda: WatchScreen(source, interval=args.interval, readonly=args.readonly, freeze_gc=True),
                               "use --once (one snapshot) or --format to print instead", mode="watch")
        finally:
            source.close()
        if code is not None:
            return code
        # stdout is not a terminal (`gpuscope watch > file`): one snapshot as text, like --once
    import json

    from gpuscope.collectors.snapshot import snapshot_once
    from gpuscope.metrics.snapshot_tables import snapshot_dict, snapshot_tables

    source = _watch_source(args)
    try:
        # half a second between the two polls: the OS counts CPU time in 10 ms ticks, so a
        # process's CPU % is still true to about 2 points of a core (1 s halves that, 0.1 s is 10)
        snapshot = snapshot_once(source, settle_s=min(args.interval, 0.5))
    finally:
        source.close()
    fmt = output_format(args)
    if fmt == "json":
        text = json.dumps(snapshot_dict(snapshot, kernel_threads=False), indent=2, allow_nan=False) + "\n"
    else:
        tables = snapshot_tables(snapshot, width=text_limit(args) if fmt == "text" else None, fmt=fmt)
        if args.table:
            tables = [t for t in tables if t.title.lower().startswith(args.table)]
        text = export.render(tables, fmt, text_width(args), limit=text_limit(args))
    if emit(args, fmt, text):
        return 1
    for problem in snapshot.scope.problems:
        say(problem)
    return 0


def run_replay(args: argparse.Namespace) -> int:
    """The replay screen over a recording, or over a job read back from --prometheus. A missing
    path or a folder is a usage error (2); a file with nothing to replay (damaged, crafted,
    foreign, empty) exits 1, as other commands do for a file they cannot read."""
    if args.prometheus is not None or args.file is None:
        return _replay_prometheus(args)
    if args.job is not None:
        return fail("--job goes with --prometheus URL (a recording already holds its job)", 2)
    from gpuscope.tui.cli.prometheus import prometheus_problem

    if (problem := prometheus_problem(args)) is not None:
        return fail(problem, 2)
    if not os.path.lexists(args.file):
        return fail(f"no such file: {args.file}", 2)
    if os.path.isdir(args.file):
        return fail(f"{args.file} is a folder; replay opens a recording (gpuscope browse shows a folder's recordings)", 2)
    from gpuscope.tui.model.replay import open_replay

    replay = open_replay(args.file)
    if replay.problem is not None:
        replay.close()
        return fail(f"{args.file}: {replay.problem}", 1)
    from gpuscope.tui.screens.replay import ReplayScreen

    try:
        code = run_screen(lambda: ReplayScreen(args.file, replay), "replay is a screen; gpuscope report --recording FILE prints the job's report")
    finally:
        replay.close()
    if code is None:
        return fail("replay is a screen and stdout is not a terminal; gpuscope report --recording FILE prints the job's report", 2)
    return code


def _replay_prometheus(args: argparse.Namespace) -> int:
    """`replay --prometheus URL --job ID`: the job read back into memory, then the same screen."""
    if args.prometheus is None:
        return fail("replay needs a recording FILE, or --prometheus URL with --job ID (or --start and --end)", 2)
    if args.file is not None:
        return fail(f"a recording FILE ({args.file}) and --prometheus are two sources of the same samples: give one", 2)
    from gpuscope.tui.cli import prometheus

    rec, code = prometheus.load(args)
    if rec is None:
        return code
    from gpuscope.tui.model.replay import replay_of
    from gpuscope.tui.screens.replay import ReplayScreen

    replay = replay_of(rec)
    report = "gpuscope report --prometheus URL --job ID prints the job's report"
    code = run_screen(lambda: ReplayScreen(rec.path, replay), f"replay is a screen; {report}")
    return fail(f"replay is a screen and stdout is not a terminal; {report}", 2) if code is None else code
