"""Provides the `gpuscope` command line: subcommands open screens, `--format` prints instead.

The print path imports no Textual, so `gpuscope magma DIR --format text` starts fast and runs
without a terminal (CI logs, cron, e-mail).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from gpuscope.metrics import export
from gpuscope.tui.cli.checks import command_inputs, finite_float, overwritten_input, positive_int
from gpuscope.tui.cli.output import emit, fail, print_findings, say, stdout_failed, text_width

MAGMA_TABLES = ("summary", "comparison", "findings", "runs", "rows")
WATCH_TABLES = ("scope", "verdicts", "gpus", "host", "top")
"""`watch --table`: the snapshot's tables, named by the start of their titles."""
KERNEL_TABLES = ("summary", "kernels", "transfers", "metrics", "runs", "grouped", "findings")
SCALING_TABLES = ("speedup", "overview", "runs", "diff", "accuracy", "findings")
"""`scaling --table`: the same names as `tui.model.scaling_report.TABLES` (not imported: the
parser is built before any data module is loaded)."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # ~35 ms: only for --version

    try:
        return version("gpuscope")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose --help lets a write error through (argparse drops it, and the
    text with it): `gpuscope --help > /dev/full` then says so, as every other output does."""

    def print_help(self, file: object = None) -> None:
        out = file or sys.stdout
        out.write(self.format_help())  # type: ignore[attr-defined]
        out.flush()  # type: ignore[attr-defined]


class _VersionAction(argparse.Action):
    """argparse's `version` action, with the version looked up only when it is asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str = "show program's version number and exit") -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, option_string: str | None = None) -> None:
        print(f"gpuscope {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpuscope",
        description="Watch GPU/HPC jobs and browse their results in the terminal.",
        epilog="Run 'gpuscope COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    magma = sub.add_parser(
        "magma",
        help="MAGMA tester outputs: distributions per problem size and environment",
        description="Read MAGMA testing_* outputs (files or folders, searched recursively) and show "
        "Gflop/s and ms distributions per problem size, one box per environment, with what "
        "cannot be trusted (failed checks, warm-up rows, values above the GPU's peak, cut runs).",
    )
    magma.add_argument("paths", nargs="+", metavar="PATH", help="MAGMA output files or folders")
    magma.add_argument("--path-pattern", metavar="PATTERN", help="how paths encode context, e.g. '{environment}/gpu/size{nodes}/**' (default: folders before a 'size16'/'16n'/'nodes-16' folder are the environment)")
    magma.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip files or folders matching GLOB (repeatable), e.g. --exclude attempt-1")
    magma.add_argument("--keep-warmup", action="store_true", help="count each process's first (warm-up) row in the statistics")
    magma.add_argument("--keep-impossible", action="store_true", help="count values above the GPU's peak in the statistics")
    magma.add_argument("--keep-untrusted", action="store_true", help="count runs marked untrusted (implausible as a whole) in the statistics and comparison")
    magma.add_argument("--impl", default="magma", metavar="NAME", help="implementation whose numbers are summarised: magma (default), cublas, cpu, atomics, ...")
    magma.add_argument("--peak-gflops", type=finite_float, metavar="X", help="peak Gflop/s to check values against, instead of the GPU table")
    magma.add_argument("--pool-nodes", action="store_true", help="pool all cluster sizes into one distribution per environment")
    magma.add_argument("--nodes", type=int, metavar="N", help="only this cluster size")
    magma.add_argument("--test", metavar="NAME", help="only this tester, e.g. dgemm_vbatched")
    magma.add_argument("--metric", choices=("gflops", "ms"), default="gflops", help="metric for plots and comparison (default gflops)")
    add_output_options(magma, tables=MAGMA_TABLES)

    kernels = sub.add_parser(
        "kernels",
        help="kernel efficiency rankings from profiler exports (PyProf, nsys, ncu, nvprof, PyTorch traces)",
        description="Read profiler exports (files or folders; the format is recognised from the content) and "
        "open the kernels screen: the seed notebook's three efficiencies, GPU busy versus summed kernel "
        "time, the per-kernel ranking with FLOP/s, bandwidth, arithmetic intensity and a roofline verdict, "
        "time-share bars and a roofline plot. With several profiles: one row per run with configuration "
        "fields from the file names, grouped means, and scaled efficiencies from marker CSVs. "
        "--format or -o prints the same tables instead. The peak used and its precision are always shown.",
    )
    kernels.add_argument("paths", nargs="+", metavar="PATH", help="profiler exports or folders (markers_*.csv among them are marker files)")
    kernels.add_argument("--gpu", metavar="NAME", help="take peaks from the GPU table, e.g. K40m, V100, A100, H100")
    kernels.add_argument("--peak-tflops", type=finite_float, metavar="X", help="peak TFLOPS (overrides --gpu)")
    kernels.add_argument("--peak-gbs", type=finite_float, metavar="Y", help="peak memory bandwidth in GB/s (overrides --gpu)")
    kernels.add_argument("--precision", choices=("fp64", "fp32", "fp16"), default="fp32", help="which peak to compare FLOP/s with (default fp32)")
    kernels.add_argument("--sort", choices=tuple(("time", "flops", "bandwidth")), default="flops", help="rank kernels by total time, FLOPS efficiency or bandwidth efficiency (default flops)")
    kernels.add_argument("--top", type=int, default=0, metavar="N", help="only the first N kernels")
    kernels.add_argument("--rank-by", choices=("kernel", "direction", "op"), default="kernel", help="one ranking row per kernel name (default), per direction (fprop/bprop) or per op, where the profile has them")
    kernels.add_argument("--name-pattern", metavar="PATTERN", help="how file names encode the configuration, e.g. 'exp_{nodes}n_bs{batch_size}*' (default: the seed's run_{run}_config_{nodes}_{gpus}_{network}_..._ret_{ret}_{ret_index})")
    kernels.add_argument("--group-by", metavar="FIELD[,FIELD]", help="mean efficiencies per group of runs, e.g. batch_size,nodes (fields from the file names)")
    kernels.add_argument("--markers", action="append", default=[], metavar="PATH", help="marker CSVs (name_str,timestamp) or folders of them, for scaled efficiencies (default: markers_<profile name>.csv next to the profiles or in a folder beside theirs); repeatable")
    add_output_options(kernels, tables=KERNEL_TABLES)

    scaling = sub.add_parser(
        "scaling",
        help="speedup and efficiency from the logs jobs already wrote (seed lines, MLPerf, ReFrame, sacct, CSV/JSON)",
        description="Read job logs (files or folders; the format is recognised from the content) and show the "
        "speedup curve against the ideal line and the Amdahl fit, efficiency bars against a 75 %% line, the "
        "speedup analysis per configuration, the runs and where each resource count came from, the settings "
        "that changed besides the resources, whether accuracy held, and a compare view of chosen runs. "
        "--format or -o prints the same tables and the plots as text instead.",
    )
    scaling.add_argument("paths", nargs="+", metavar="PATH", help="job logs or folders of them")
    scaling.add_argument("--baseline", type=int, metavar="N", help="the configuration speedups are relative to (default: the smallest measured one)")
    scaling.add_argument("--resources", metavar="PATTERN", help="how paths give the resource count, e.g. 'run-{gpus}gpu' or '{nodes}n/{threads}t' (default: the logs, job scripts, file and folder names)")
    scaling.add_argument("--series", metavar="NAME", help="only this series, e.g. 'resnet (gpus)' (default: every series, kept apart)")
    scaling.add_argument("--series-by", metavar="KEYS", help="what splits runs into series, a comma list of benchmark, accelerator, framework, org (default: benchmark,accelerator,framework: one machine per series)")
    add_output_options(scaling, tables=SCALING_TABLES)

    check = sub.add_parser(
        "check",
        help="check a result folder against its expected ranges (expected.toml); exit 1 when one fails",
        description="Read the expected ranges of a result folder (DIR/expected.toml, or --expected FILE: "
        "[[check]] tables with a file glob, an optional row selector, a column and a range) and check every "
        "selected cell of the matching CSV / TSV / Parquet / JSON files (cells such as '15.85×', '45%%' or "
        "'143.9 ± 0.2' read as their numbers). Prints one row per check and file: pass, FAIL or n/a and why. "
        "Exit status: 0 when every check passes, 1 when one fails or cannot be checked (n/a), "
        "2 when the expected file is missing or has errors.",
    )
    check.add_argument("folder", metavar="DIR", help="the result folder")
    check.add_argument("--expected", metavar="FILE", help="the expected-ranges file (default: DIR/expected.toml)")
    check.add_argument("--format", choices=export.FORMATS, help="output format (default: from -o's extension, else text)")
    check.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    check.add_argument("--width", type=positive_int, metavar="COLS", help="text width (default: terminal width or 120)")

    browse = sub.add_parser(
        "browse",
        help="browse a result folder: every file with its kind and a one-line summary",
        description="A folder tree beside a preview: every file below DIR is recognised from its name and "
        "first few KB (MAGMA, profiler exports, run logs, CSV / Parquet / JSON, Markdown, images, PDFs, "
        "logs), and Enter opens it in its screen. --format or -o prints the listing instead: path, kind, "
        "why it is that kind, a summary and any problem, one row per file.",
    )
    browse.add_argument("folder", nargs="?", default=".", metavar="DIR", help="the folder (default: the current one)")
    browse.add_argument("--format", choices=export.FORMATS, help="print the listing (or write it with -o) instead of opening the browser")
    browse.add_argument("-o", "--output", metavar="FILE", help="write the listing to FILE (format from --format or the extension)")
    browse.add_argument("--width", type=positive_int, metavar="COLS", help="text width (default: terminal width or 120)")

    from gpuscope.tui.cli import live as cli_record

    cli_record.add_parsers(sub)

    replay = sub.add_parser(
        "replay",
        help="replay a recording (gpuscope record, watch --record) in the watch screen, with a time cursor",
        description="Open the watch screen over a recording: the panes show the sample under a time cursor, the "
        "history plots the whole recording. Step (, and .), jump to a time (g), play at 1x to 600x (space, + and -), "
        "and jump from event to event (n, N): GPU memory peaks, GPUs going idle, throttling, processes starting "
        "and ending. For the job's efficiency in text, use gpuscope report --recording FILE.",
    )
    replay.add_argument("file", metavar="FILE", help="a recording")

    watch = sub.add_parser(
        "watch",
        help="watch this node live, scoped to a Slurm job, a user or a process tree (the default command)",
        description="Live view of this node: GPUs and their processes, CPU cores, memory, the process "
        "table, history plots, and for a job: what it asked for against what it uses. Inside a Slurm "
        "allocation the job is picked up from SLURM_JOB_ID. Works without a GPU.",
    )
    cli_record.add_scope_options(watch)
    watch.add_argument("--interval", type=finite_float, default=1.0, metavar="S", help="seconds between refreshes (0.5 to 10, default 1)")
    watch.add_argument("--readonly", action="store_true", help="never send signals (disables k)")
    watch.add_argument("--once", action="store_true", help="print one snapshot and exit (default format text)")
    watch.add_argument("--record", metavar="FILE", help="also record every refresh to FILE (as gpuscope record does; never overwrites)")
    watch.add_argument("--all-nodes", action="store_true", help="with --job: watch every node of the job through srun, even when it has one "
                       "(the default for a job on several nodes; n/N switch nodes)")
    add_output_options(watch, tables=WATCH_TABLES)
    return parser


def add_output_options(parser: argparse.ArgumentParser, tables: Sequence[str]) -> None:
    """--format, -o, --table (only `tables`, the subcommand's own) and --width."""
    parser.add_argument("--format", choices=export.FORMATS, help="print (or write with -o) instead of opening the screen (the default when stdout is not a terminal: text)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from --format or the extension)")
    default = "kernels" if "kernels" in tables else tables[0]
    parser.add_argument("--table", choices=tables, help=f"which table to print (default: {default} for csv, all for the other formats)")
    parser.add_argument("--width", type=positive_int, metavar="COLS", help="text width (default: terminal width or 120)")


def _run_screen(first_screen, hint: str, mode: str | None = None, watch=None) -> int | None:  # first_screen, watch: () -> Screen
    """Open the screen; its exit status, or None when stdout is not a terminal (the caller
    prints text instead). No terminal on stdin is a usage error (exit 2, with `hint`).
    `mode`: 'watch' or 'browse' for the app of both modes; `watch` makes the watch screen
    when the browser asks for it."""
    from gpuscope.tui.app import GpuscopeApp, NoTerminal
    from gpuscope.tui.screens.views.image import use_protocol

    use_protocol()  # how pictures are drawn: before Textual starts, which owns the terminal's replies after
    app = GpuscopeApp(first_screen=first_screen, mode=mode, watch=watch)
    try:
        app.run()
    except NoTerminal as exc:
        if exc.stream == "stdout":
            return None
        return fail(f"{exc}; {hint}", 2)
    if app.terminal_lost:
        try:
            fail("the terminal went away: screen closed")
        except OSError:  # stderr was that terminal
            pass
        return 1
    return 0


def run_magma(args: argparse.Namespace) -> int:
    from gpuscope.parsers.magma import read as magma

    if args.format is None and args.output is None:
        code = _open_magma_screen(args)
        if code is not None:
            return code
    try:
        result = magma.read_tree(args.paths, path_pattern=args.path_pattern, exclude=args.exclude, peak_override=args.peak_gflops)
    except ValueError as exc:  # a bad --path-pattern
        return fail(str(exc), 2)
    from gpuscope.tui.model.magma_report import report, unknown_choice

    problem = unknown_choice(result.rows, args)
    if problem:
        return fail(problem, 2)
    fmt = args.format or (export.format_for_path(args.output) if args.output else "text")
    tables, extra = report(result, args, fmt)
    if emit(args, fmt, export.render(tables, fmt, text_width(args), extra, limit=args.width)):
        return 1
    if result.files_read == 0 or result.rows.empty:  # nothing to summarise: say why, and fail
        print_findings([f for f in result.findings if f.severity != "info"] or result.findings)
        return 1
    print_findings([f for f in result.findings if f.kind in NO_ROWS])  # files that gave nothing: never silently
    return 0


NO_ROWS = ("no-data", "assert-only", "missing")
"""Findings about a file that gave no rows at all: printed on stderr even when others did."""


def _open_magma_screen(args: argparse.Namespace) -> int | None:
    from gpuscope.tui.screens.studies.magma import MagmaScreen

    for path in args.paths:
        if not os.path.exists(path):
            return fail(f"no such file or folder: {path}", 2)

    def first_screen() -> MagmaScreen:
        return MagmaScreen(args.paths, path_pattern=args.path_pattern, exclude=tuple(args.exclude), keep_warmup=args.keep_warmup,
                           keep_impossible=args.keep_impossible, keep_untrusted=args.keep_untrusted, impl=args.impl,
                           test=args.test, nodes=None if args.pool_nodes else args.nodes, metric=args.metric,
                           peak_gflops=args.peak_gflops, tab=args.table)

    return _run_screen(first_screen, "use --format text (or -o FILE) to print instead")


def _watch_source(args: argparse.Namespace, fan_out: bool = False):  # -> SnapshotSource | NodesSource
    """This node's collectors; with `fan_out`, every node of the job through srun (`collect --stream` on each)."""
    if fan_out:
        from gpuscope.collectors.fanout import NodesSource

        return NodesSource.for_job(args.job, args.interval)
    from gpuscope.collectors.snapshot import SnapshotSource

    return SnapshotSource(job=args.job, user=args.user, pid=args.pid, demo=args.demo)


def run_watch(args: argparse.Namespace) -> int:
    from gpuscope.tui.cli.live import scope_problem

    if (problem := scope_problem(args, longest=10)) is not None:
        return fail(problem, 2)  # before the screen opens or a reading is printed
    if args.record and (args.once or args.format or args.output):
        return fail("--record goes with the screen; to record without one use: gpuscope record -o FILE", 2)
    if args.all_nodes and (args.job is None or args.once or args.format or args.output):
        return fail("--all-nodes goes with --job and the screen; to record every node use: gpuscope record --job ID -o FILE", 2)
    if not (args.once or args.format or args.output):
        from gpuscope.tui.cli.live import every_node
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
            code = _run_screen(lambda: WatchScreen(source, interval=args.interval, readonly=args.readonly, freeze_gc=True),
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
        snapshot = snapshot_once(source, settle_s=min(args.interval, 1.0))
    finally:
        source.close()
    fmt = args.format or (export.format_for_path(args.output) if args.output else "text")
    if fmt == "json":
        text = json.dumps(snapshot_dict(snapshot), indent=2, allow_nan=False) + "\n"
    else:
        tables = snapshot_tables(snapshot, width=args.width)
        if args.table:
            tables = [t for t in tables if t.title.lower().startswith(args.table)]
        text = export.render(tables, fmt, text_width(args), limit=args.width)
    if emit(args, fmt, text):
        return 1
    for problem in snapshot.scope.problems:
        say(problem)
    return 0


def run_kernels(args: argparse.Namespace) -> int:
    """Open the kernels screen, or with --format/-o print (or write) the same tables."""
    from gpuscope.parsers.run_names import NamePattern

    try:  # a malformed pattern is a usage error, before any file is read
        NamePattern.compile(args.name_pattern) if args.name_pattern else None
    except ValueError as exc:
        return fail(str(exc), 2)
    if args.format is None and args.output is None:
        code = _open_kernels_screen(args)
        if code is not None:
            return code
    from gpuscope.tui.model.kernels_report import report

    fmt = args.format or (export.format_for_path(args.output) if args.output else "text")
    try:
        result = report(args, fmt, text_width(args))
    except ValueError as exc:  # an unknown --gpu, a bad peak value, an unknown --group-by field
        return fail(str(exc), 2)
    if emit(args, fmt, export.render(result.tables, fmt, text_width(args), result.extra, limit=args.width)):
        return 1
    if result.empty:
        errors = [f for f in result.findings if f.severity == "error"]
        print_findings(errors or result.findings[:5])
        return 1
    return 0


def _open_kernels_screen(args: argparse.Namespace) -> int | None:
    from gpuscope.metrics.kernels.peak_choice import choose_peak
    from gpuscope.tui.model.kernels_report import split_fields

    for path in [*args.paths, *args.markers]:
        if not os.path.exists(path):
            return fail(f"no such file or folder: {path}", 2)
    try:  # bad flags fail here, with the usage exit code, not inside the screen
        choose_peak(gpu=args.gpu, peak_tflops=args.peak_tflops, peak_gbs=args.peak_gbs, precision=args.precision)
    except ValueError as exc:
        return fail(str(exc), 2)
    from gpuscope.tui.model.kernels import KernelView
    from gpuscope.tui.screens.studies.kernels import KernelsScreen

    options = dict(gpu=args.gpu, peak_tflops=args.peak_tflops, peak_gbs=args.peak_gbs, precision=args.precision,
                   name_pattern=args.name_pattern, group_by=split_fields(args.group_by), markers=tuple(args.markers))
    view = KernelView(sort=args.sort, group=args.rank_by, top=args.top)
    return _run_screen(lambda: KernelsScreen(args.paths, view=view, tab=args.table, **options),
                       "use --format text (or -o FILE) to print instead")


def run_scaling(args: argparse.Namespace) -> int:
    """Open the scaling screen, or with --format/-o print (or write) its tables and plots."""
    import re

    from gpuscope.parsers.runlogs.read import compile_resources_pattern

    if args.baseline is not None and args.baseline < 1:
        return fail("--baseline must be a resource count of 1 or more", 2)
    try:  # a malformed pattern is a usage error, before any file is read
        compile_resources_pattern(args.resources) if args.resources else None
    except (ValueError, re.error) as exc:  # the parser's messages name the option already
        return fail(str(exc) if str(exc).startswith("--resources") else f"--resources {args.resources!r}: {exc}", 2)
    from gpuscope.metrics.scaling.series import parse_keys

    try:
        args.series_by = parse_keys(args.series_by)
    except ValueError as exc:
        return fail(str(exc), 2)
    if args.format is None and args.output is None:
        code = _open_scaling_screen(args)
        if code is not None:
            return code
    from gpuscope.parsers.runlogs.read import read_runs
    from gpuscope.tui.model.scaling import build_model, series_names
    from gpuscope.tui.model.scaling_report import report

    result = read_runs(args.paths, resources_pattern=args.resources)
    present = series_names(result.runs, args.series_by)
    if args.series is not None and present and args.series not in present:
        return fail(f"--series {args.series!r} matches nothing; present: {', '.join(present)}", 2)
    model = build_model(result, args.baseline, args.series, args.series_by)
    if model.empty:  # never an empty table that looks like a result
        fail(f"no runs found in {', '.join(args.paths)}: no seed, MLPerf, ReFrame, sacct or (resources, time) table log")
        print_findings([f for f in model.findings if f.severity != "info"] or model.findings[:5])
        return 1
    if (problem := model.unknown_baseline()) is not None:
        return fail(problem, 2)
    fmt = args.format or (export.format_for_path(args.output) if args.output else "text")
    printed = report(model, fmt, text_width(args), args.table)
    if emit(args, fmt, export.render(printed.tables, fmt, text_width(args), printed.extra, limit=args.width)):
        return 1
    # warnings and errors, and that there is nothing to scale over; the rest are in the findings table
    print_findings([f for f in model.findings if f.severity != "info" or f.kind == "single-config"])
    if not (model.summary["runs"] > 0).any():  # runs read, none usable: the tables say why, the command fails
        return fail("no run has a usable time: no speedup could be computed")
    return 0


def _open_scaling_screen(args: argparse.Namespace) -> int | None:
    from gpuscope.tui.screens.studies.scaling import ScalingScreen

    for path in args.paths:
        if not os.path.exists(path):
            return fail(f"no such file or folder: {path}", 2)
    return _run_screen(lambda: ScalingScreen(args.paths, baseline=args.baseline, resources=args.resources, series=args.series, tab=args.table, series_by=args.series_by),
                       "use --format text (or -o FILE) to print instead")


def run_check(args: argparse.Namespace) -> int:
    """Print the expected-range checks of a folder; 0 all pass, 1 one does not, 2 usage."""
    from gpuscope.metrics.expected import all_passed, results_table
    from gpuscope.tui.model.check_report import check_folder

    if not os.path.isdir(args.folder):
        return fail(f"no such folder: {args.folder}", 2)
    report = check_folder(args.folder, args.expected)
    print_findings(report.findings)
    if not report.checks:
        return fail(f"no checks to run from {report.expected_file} (see 'gpuscope check --help' for its format)", 2)
    fmt = args.format or (export.format_for_path(args.output) if args.output else "text")
    if emit(args, fmt, export.render([results_table(report.results)], fmt, text_width(args), limit=args.width)):
        return 2
    if not report.expected_ok:
        return 2  # a check was left out: passing the rest must not look like a pass
    return 0 if all_passed(report.results) else 1


def run_browse(args: argparse.Namespace) -> int:
    """Open the browser, or with --format/-o print (or write) the listing of every file."""
    if not os.path.lexists(args.folder):
        return fail(f"no such file or folder: {args.folder}", 2)
    if args.format is None and args.output is None:
        code = _open_browse_screen(args)
        if code is not None:
            return code
    from gpuscope.tui.model.browse_listing import listing

    fmt = args.format or (export.format_for_path(args.output) if args.output else "text")
    return emit(args, fmt, export.render([listing(args.folder)], fmt, text_width(args), limit=args.width))


def _open_browse_screen(args: argparse.Namespace) -> int | None:
    """The browser screen's exit status; None when stdout is not a terminal (the listing is
    printed instead). `w` opens the watch of this node (or of the job gpuscope runs in),
    made when first asked for; its source is closed when the app ends."""
    from gpuscope.collectors.snapshot import SnapshotSource
    from gpuscope.tui.screens.browse.screen import BrowseScreen
    from gpuscope.tui.screens.watch.screen import WatchScreen

    sources: list[SnapshotSource] = []

    def watch_screen() -> WatchScreen:
        sources.append(SnapshotSource())
        return WatchScreen(sources[-1])

    folder = args.folder if os.path.isdir(args.folder) else os.path.dirname(args.folder) or "."
    select = None if os.path.isdir(args.folder) else args.folder  # a file: its folder, the file selected
    try:
        return _run_screen(lambda: BrowseScreen(folder, select=select), "use --format text (or -o FILE) to print the listing instead",
                           mode="browse", watch=watch_screen)
    finally:
        for source in sources:
            source.close()


def run_replay(args: argparse.Namespace) -> int:
    """The replay screen over a recording. A missing path or a folder is a usage error (2); a file
    with nothing to replay (damaged, crafted, foreign, empty) exits 1, as other commands do for a
    file they cannot read."""
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
        code = _run_screen(lambda: ReplayScreen(args.file, replay), "replay is a screen; gpuscope report --recording FILE prints the job's report")
    finally:
        replay.close()
    if code is None:
        return fail("replay is a screen and stdout is not a terminal; gpuscope report --recording FILE prints the job's report", 2)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["watch", *argv]  # `gpuscope` alone (or with watch options) is `gpuscope watch`
    try:
        args = parser.parse_args(argv)
    except SystemExit:  # --version or a usage error: its text must reach stdout, or say so
        try:
            sys.stdout.flush()
        except OSError as exc:
            return stdout_failed(exc)
        raise
    except OSError as exc:  # --help could not be written
        return stdout_failed(exc)
    try:
        output = getattr(args, "output", None)  # `record -o` too: its --demo scenario is an input
        if output and (problem := overwritten_input(output, command_inputs(args))) is not None:
            return fail(problem, 2)
        if args.command == "magma":
            if args.path_pattern:
                from gpuscope.parsers.patterns import PathPattern

                try:
                    PathPattern.compile(args.path_pattern)
                except ValueError as exc:
                    parser.error(str(exc))
            return run_magma(args)
        if args.command == "watch":
            return run_watch(args)
        if args.command == "kernels":
            return run_kernels(args)
        if args.command == "scaling":
            return run_scaling(args)
        if args.command == "check":
            return run_check(args)
        if args.command == "browse":
            return run_browse(args)
        if args.command == "replay":
            return run_replay(args)
        if args.command in ("record", "report", "collect"):
            from gpuscope.tui.cli import live as cli_record

            return {"record": cli_record.run_record, "report": cli_record.run_report, "collect": cli_record.run_collect}[args.command](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError as exc:  # `gpuscope ... | head`, from a write that is not _emit's
        return stdout_failed(exc)
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
