"""Provides `gpuscope diff BASE NEW`: what got slower from a baseline to a candidate, beyond noise.

The verdict line comes first, then the per-item comparison (`tui.model.diff`). Exit status: 0,
1 when --fail-if-slower PCT is given and something is slower beyond noise and by more than PCT
(or when nothing could be read to compare), 2 for a usage error (a missing path, two sides of
different kinds). No Textual is imported.
"""

from __future__ import annotations

import argparse
import math

from gpuscope.tui.cli.checks import finite_float
from gpuscope.tui.cli.output import add_output_options

DIFF_FORMATS = ("text", "markdown", "csv", "json")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    diff = sub.add_parser(
        "diff",
        help="compare two runs (profiles, MAGMA outputs, job logs, recordings or tables): what got slower, beyond noise",
        description="Compare a baseline BASE with a candidate NEW (files or folders, both of one kind, recognised as "
        "the browser recognises them): per kernel for profiles (calls, total and mean time, share; kernels matched by "
        "name, template arguments that changed included), per tester, implementation and size for MAGMA outputs, per "
        "configuration for job logs (time, speedup, efficiency), per job for recordings (CPU, memory, GPU activity, "
        "energy), per row for tables (rows matched on key columns). The verdict line comes first. 'Beyond noise' is "
        "said only where a two-sided Mann-Whitney test over several runs on each side holds (Holm-corrected, p < 0.05); "
        "with one run a side there is no noise estimate and the verdict says so. Exit status: 0; 1 with "
        "--fail-if-slower when something is slower beyond noise and by more than PCT, or when nothing could be "
        "compared; 2 for a usage error (a missing path, sides of different kinds).",
    )
    diff.add_argument("base", metavar="BASE", help="the baseline: a file or folder")
    diff.add_argument("new", metavar="NEW", help="the candidate: a file or folder of the same kind")
    diff.add_argument("--fail-if-slower", type=finite_float, metavar="PCT",
                      help="exit 1 when anything is slower beyond noise and by more than PCT percent (for CI)")
    diff.add_argument("--key", action="append", default=[], metavar="COLUMN",
                      help="tables: a column that names a row, matched between the sides (repeatable; default: guessed "
                      "from the columns that are not numbers)")
    add_output_options(diff, formats=DIFF_FORMATS, format_help="output format (default: from -o's extension, else text; "
                       "markdown suits a pull-request comment)")


def run_diff(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpuscope.tui.cli.output import emit, fail, missing_path, output_format, print_findings, say, text_limit, text_width
    from gpuscope.tui.model.diff import DiffOptions, diff_paths, render

    if (code := missing_path([args.base, args.new])) is not None:
        return code
    if args.fail_if_slower is not None and (args.fail_if_slower < 0 or not math.isfinite(args.fail_if_slower)):
        return fail("--fail-if-slower takes a percentage of 0 or more", 2)
    options = DiffOptions(keys=tuple(k.strip() for k in args.key if k.strip()), fail_if_slower=args.fail_if_slower)
    report = diff_paths(Path(args.base), Path(args.new), options)
    if report.mismatch:
        print_findings(report.findings)
        return fail(report.verdict, 2)
    fmt = output_format(args)
    if emit(args, fmt, render(report, fmt, text_width(args), text_limit(args))):
        return 1
    print_findings([f for f in report.findings if f.severity == "error"])
    if not report.compared:
        return fail(report.verdict)
    if args.fail_if_slower is not None and not report.judged:
        say(f"--fail-if-slower {args.fail_if_slower:g}: nothing could be judged against noise (it needs two runs or more on "
            "each side, and a time to compare), so this exit status says nothing about speed")
    if args.fail_if_slower is not None and report.slower_beyond:
        shown = ", ".join(report.slower_beyond[:5]) + (f" and {len(report.slower_beyond) - 5} more" if len(report.slower_beyond) > 5 else "")
        return fail(f"slower beyond noise and by more than {args.fail_if_slower:g} %: {shown}")
    return 0
