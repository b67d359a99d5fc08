"""Provides the `gpuscope` command line: the parser and the dispatch to the commands
(tui/cli/studies.py, tui/cli/live.py). Subcommands open screens, `--format` prints instead.

The print path imports no Textual, so `gpuscope magma DIR --format text` starts fast and runs
without a terminal (CI logs, cron, e-mail).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from gpuscope.tui.cli.checks import command_inputs, finite_float, overwritten_input
from gpuscope.tui.cli.output import add_output_options, fail, stdout_failed, unknown_extension

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
    text with it): `gpuscope --help > /dev/full` then says so, as every other output does; and
    whose "invalid choice" names the closest choice, as Python 3.14's `suggest_on_error` does.

    A description or epilog is printed as written (argparse formats only those holding
    `%(prog)`), a help= text through `%`: a literal percent sign is `%` in the first, `%%` in
    the second."""

    def _check_value(self, action: argparse.Action, value: object) -> None:
        choices = action.choices
        if choices is None or value in choices or not isinstance(value, str):
            super()._check_value(action, value)
            return
        import difflib

        close = difflib.get_close_matches(value, [str(c) for c in choices], n=1)
        hint = f", did you mean {close[0]!r}?" if close else ""
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint} (choose from {', '.join(map(repr, choices))})")

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
    add_output_options(magma, tables=MAGMA_TABLES, screen=True)

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
    add_output_options(kernels, tables=KERNEL_TABLES, screen=True)

    scaling = sub.add_parser(
        "scaling",
        help="speedup and efficiency from the logs jobs already wrote (seed lines, MLPerf, ReFrame, sacct, CSV/JSON)",
        description="Read job logs (files or folders; the format is recognised from the content) and show the "
        "speedup curve against the ideal line and the Amdahl fit, efficiency bars against a 75 % line, the "
        "speedup analysis per configuration, the runs and where each resource count came from, the settings "
        "that changed besides the resources, whether accuracy held, and a compare view of chosen runs. "
        "--format or -o prints the same tables and the plots as text instead.",
    )
    scaling.add_argument("paths", nargs="+", metavar="PATH", help="job logs or folders of them")
    scaling.add_argument("--baseline", type=int, metavar="N", help="the configuration speedups are relative to (default: the smallest measured one)")
    scaling.add_argument("--resources", metavar="PATTERN", help="how paths give the resource count, e.g. 'run-{gpus}gpu' or '{nodes}n/{threads}t' (default: the logs, job scripts, file and folder names)")
    scaling.add_argument("--series", metavar="NAME", help="only this series, e.g. 'resnet (gpus)' (default: every series, kept apart)")
    scaling.add_argument("--series-by", metavar="KEYS", help="what splits runs into series, a comma list of benchmark, accelerator, framework, org (default: benchmark,accelerator,framework: one machine per series)")
    add_output_options(scaling, tables=SCALING_TABLES, screen=True)

    check = sub.add_parser(
        "check",
        help="check a result folder against its expected ranges (expected.toml); exit 1 when one fails",
        description="Read the expected ranges of a result folder (DIR/expected.toml, or --expected FILE: "
        "[[check]] tables with a file glob, an optional row selector, a column and a range) and check every "
        "selected cell of the matching CSV / TSV / Parquet / JSON files (cells such as '15.85×', '45%' or "
        "'143.9 ± 0.2' read as their numbers). Prints one row per check and file: pass, FAIL or n/a and why. "
        "Exit status: 0 when every check passes, 1 when one fails or cannot be checked (n/a), "
        "2 when the expected file is missing or has errors.",
    )
    check.add_argument("folder", metavar="DIR", help="the result folder")
    check.add_argument("--expected", metavar="FILE", help="the expected-ranges file (default: DIR/expected.toml)")
    add_output_options(check)

    browse = sub.add_parser(
        "browse",
        help="browse a result folder: every file with its kind and a one-line summary",
        description="A folder tree beside a preview: every file below DIR is recognised from its name and "
        "first few KB (MAGMA, profiler exports, run logs, CSV / Parquet / JSON, Markdown, images, PDFs, "
        "logs), and Enter opens it in its screen. --format or -o prints the listing instead: path, kind, "
        "why it is that kind, a summary and any problem, one row per file.",
    )
    browse.add_argument("folder", nargs="?", default=".", metavar="DIR|FILE",
                        help="the folder (default: the current one), or a file to open in its view, as less FILE would")
    add_output_options(browse, format_help="print the listing (or write it with -o) instead of opening the browser",
                       output_help="write the listing to FILE (format from --format or the extension)")

    from gpuscope.tui.cli import live as cli_record

    cli_record.add_parsers(sub)

    from gpuscope.tui.cli import diff as cli_diff

    cli_diff.add_parser(sub)

    replay = sub.add_parser(
        "replay",
        help="replay a recording (gpuscope record, watch --record) in the watch screen, with a time cursor",
        description="Open the watch screen over a recording: the panes show the sample under a time cursor, the "
        "history plots the whole recording. Step (, and .), jump to a time (g), play at 1x to 600x (space, + and -), "
        "and jump from event to event (n, N): GPU memory peaks, GPUs going idle, throttling, processes starting "
        "and ending. For the job's efficiency in text, use gpuscope report --recording FILE. With --prometheus URL --job ID, "
        "a past job read back from a site's Prometheus (its nodes, start and end from sacct, or --nodes, --start, --end).",
    )
    replay.add_argument("file", nargs="?", metavar="FILE", help="a recording (or none, with --prometheus)")
    from gpuscope.tui.cli.prometheus import add_prometheus_options

    add_prometheus_options(replay, job=True)

    watch = sub.add_parser(
        "watch",
        help="watch this node live, scoped to a Slurm job, a user or a process tree (the default command)",
        description="Live view of this node: GPUs and their processes, CPU cores, memory, the process "
        "table, history plots, and for a job: what it asked for against what it uses. Inside a Slurm "
        "allocation the job is picked up from SLURM_JOB_ID. Works without a GPU.",
    )
    cli_record.add_scope_options(watch)
    watch.add_argument("--interval", type=finite_float, default=None, metavar="S",
                       help="seconds between refreshes (0.5 to 10; default: the one saved with F2, else 1)")
    watch.add_argument("--readonly", action="store_true", help="never send signals (disables k)")
    watch.add_argument("--once", action="store_true", help="print one snapshot and exit (default format text)")
    watch.add_argument("--record", metavar="FILE", help="also record every refresh to FILE (as gpuscope record does; never overwrites)")
    watch.add_argument("--all-nodes", action="store_true", help="with --job: watch every node of the job through srun, even when it has one "
                       "(the default for a job on several nodes; n/N switch nodes)")
    add_output_options(watch, tables=WATCH_TABLES, screen=True)
    return parser


STUDIES = ("magma", "kernels", "scaling", "check", "browse")
"""Commands whose `run_NAME` is in tui/cli/studies.py; `diff`'s is in tui/cli/diff.py, the others'
(watch, replay, record, report, collect) in tui/cli/live.py. Only the command's module is imported."""


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
        if hasattr(args, "formats") and (problem := unknown_extension(args)) is not None:
            return fail(problem, 2)
        if args.command == "magma" and args.path_pattern:
            from gpuscope.parsers.patterns import PathPattern

            try:
                PathPattern.compile(args.path_pattern)
            except ValueError as exc:
                parser.error(str(exc))
        if args.command == "diff":
            from gpuscope.tui.cli import diff as commands
        elif args.command in STUDIES:
            from gpuscope.tui.cli import studies as commands
        else:
            from gpuscope.tui.cli import live as commands
        return getattr(commands, f"run_{args.command}")(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError as exc:  # `gpuscope ... | head`, from a write that is not emit's
        return stdout_failed(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
