"""Provides the `gpuscope` command line: subcommands open screens, `--format` prints instead.

The print path imports no Textual, so `gpuscope magma DIR --format text` starts fast and runs
without a terminal (CI logs, cron, e-mail).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Sequence

from gpuscope.metrics import export

TABLES = ("summary", "comparison", "findings", "runs", "rows")


def _version() -> str:
    try:
        return version("gpuscope")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpuscope",
        description="Watch GPU/HPC jobs and browse their results in the terminal.",
        epilog="Run 'gpuscope COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"gpuscope {_version()}")
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
    magma.add_argument("--peak-gflops", type=float, metavar="X", help="peak Gflop/s to check values against, instead of the GPU table")
    magma.add_argument("--pool-nodes", action="store_true", help="pool all cluster sizes into one distribution per environment")
    magma.add_argument("--nodes", type=int, metavar="N", help="only this cluster size")
    magma.add_argument("--test", metavar="NAME", help="only this tester, e.g. dgemm_vbatched")
    magma.add_argument("--metric", choices=("gflops", "ms"), default="gflops", help="metric for plots and comparison (default gflops)")
    add_output_options(magma)
    return parser


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=export.FORMATS, help="print (or write with -o) instead of opening the screen")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from --format or the extension)")
    parser.add_argument("--table", choices=TABLES, help="which table for csv/json (default: summary for csv, all for json)")
    parser.add_argument("--width", type=int, metavar="COLS", help="text width (default: terminal width or 120)")


def _fail(message: str, code: int = 1) -> int:
    print(f"gpuscope: {message}", file=sys.stderr)
    return code


def run_magma(args: argparse.Namespace) -> int:
    from gpuscope.parsers import magma

    if args.format is None and args.output is None:
        return _open_magma_screen(args)
    try:
        result = magma.read_tree(args.paths, path_pattern=args.path_pattern, exclude=args.exclude, peak_override=args.peak_gflops)
    except ValueError as exc:  # a bad --path-pattern
        return _fail(str(exc), 2)
    from gpuscope.tui.magma_report import report

    fmt = args.format or export.format_for_path(args.output)
    width = args.width or (shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 120)
    tables, extra = report(result, args, fmt)
    if args.output:
        try:
            export.write(args.output, fmt, tables, width, extra)
        except OSError as exc:
            return _fail(f"cannot write {args.output}: {exc.strerror or exc}")
        print(f"wrote {args.output} ({fmt})", file=sys.stderr)
    else:
        sys.stdout.write(export.render(tables, fmt, width, extra))
    if result.files_read == 0:
        for finding in result.findings:
            print(f"gpuscope: {finding.where() + ': ' if finding.where() else ''}{finding.message}", file=sys.stderr)
        return 1
    return 0


def _open_magma_screen(args: argparse.Namespace) -> int:
    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.magma import MagmaScreen

    for path in args.paths:
        if not os.path.exists(path):
            return _fail(f"no such file or folder: {path}", 2)

    def first_screen() -> MagmaScreen:
        return MagmaScreen(args.paths, path_pattern=args.path_pattern, exclude=tuple(args.exclude),
                           keep_warmup=args.keep_warmup, keep_impossible=args.keep_impossible)

    GpuscopeApp(first_screen=first_screen).run()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "magma":
            if args.path_pattern:
                from gpuscope.parsers.path_context import PathPattern

                try:
                    PathPattern.compile(args.path_pattern)
                except ValueError as exc:
                    parser.error(str(exc))
            return run_magma(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gpuscope ... | head`
        sys.stderr.close()
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
