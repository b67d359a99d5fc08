"""Provides the study commands: `magma`, `kernels`, `scaling`, `check` and `browse` (their
parsers are in tui/cli/main.py).

Each opens its screen, or with `--format` / `-o` (or when stdout is not a terminal) prints the
same tables. The print path imports no Textual: a screen's modules are imported only where it
opens. The report functions take typed options (`MagmaOptions`, `KernelsOptions`) built here
from the flags, so nothing below the command line sees argparse.
"""

from __future__ import annotations

import argparse
import os

from gpuscope.metrics import export
from gpuscope.tui.cli.output import emit, fail, missing_path, on_screen, output_format, print_findings, run_screen, text_limit, text_width

PLOT_WIDTH = 100
"""The box plots' width without --width: narrower on a narrower terminal, never wider."""


def run_magma(args: argparse.Namespace) -> int:
    from gpuscope.parsers.magma import read as magma

    if (code := on_screen(args, _open_magma_screen)) is not None:
        return code
    try:
        result = magma.read_tree(args.paths, path_pattern=args.path_pattern, exclude=args.exclude, peak_override=args.peak_gflops)
    except ValueError as exc:  # a bad --path-pattern
        return fail(str(exc), 2)
    from gpuscope.tui.model.magma_report import MagmaOptions, report, unknown_choice

    options = MagmaOptions(metric=args.metric, test=args.test, nodes=args.nodes, impl=args.impl, pool_nodes=args.pool_nodes,
                           keep_warmup=args.keep_warmup, keep_impossible=args.keep_impossible, keep_untrusted=args.keep_untrusted,
                           table=args.table, width=args.width or min(text_limit(args) or PLOT_WIDTH, PLOT_WIDTH))
    problem = unknown_choice(result.rows, options)
    if problem:
        return fail(problem, 2)
    fmt = output_format(args)
    tables, extra = report(result, options, fmt)
    if emit(args, fmt, export.render(tables, fmt, text_width(args), extra, limit=text_limit(args))):
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

    if (code := missing_path(args.paths)) is not None:
        return code

    def first_screen() -> MagmaScreen:
        return MagmaScreen(args.paths, path_pattern=args.path_pattern, exclude=tuple(args.exclude), keep_warmup=args.keep_warmup,
                           keep_impossible=args.keep_impossible, keep_untrusted=args.keep_untrusted, impl=args.impl,
                           test=args.test, nodes=None if args.pool_nodes else args.nodes, metric=args.metric,
                           peak_gflops=args.peak_gflops, tab=args.table)

    return run_screen(first_screen, "use --format text (or -o FILE) to print instead")


def run_kernels(args: argparse.Namespace) -> int:
    """Open the kernels screen, or with --format/-o print (or write) the same tables."""
    from gpuscope.parsers.patterns import NamePattern

    try:  # a malformed pattern is a usage error, before any file is read
        NamePattern.compile(args.name_pattern) if args.name_pattern else None
    except ValueError as exc:
        return fail(str(exc), 2)
    if (code := on_screen(args, _open_kernels_screen)) is not None:
        return code
    from gpuscope.tui.model.kernels_report import KernelsOptions, report, split_fields

    options = KernelsOptions(paths=tuple(args.paths), gpu=args.gpu, peak_tflops=args.peak_tflops, peak_gbs=args.peak_gbs,
                             precision=args.precision, name_pattern=args.name_pattern, group_by=split_fields(args.group_by),
                             markers=tuple(args.markers), sort=args.sort, rank_by=args.rank_by, top=args.top, table=args.table)
    fmt = output_format(args)
    try:
        result = report(options, fmt, text_width(args))
    except ValueError as exc:  # an unknown --gpu, a bad peak value, an unknown --group-by field
        return fail(str(exc), 2)
    if emit(args, fmt, export.render(result.tables, fmt, text_width(args), result.extra, limit=text_limit(args))):
        return 1
    if result.empty:
        errors = [f for f in result.findings if f.severity == "error"]
        print_findings(errors or result.findings[:5])
        return 1
    return 0


def _open_kernels_screen(args: argparse.Namespace) -> int | None:
    from gpuscope.metrics.kernels.peak_choice import choose_peak
    from gpuscope.tui.model.kernels_report import split_fields

    if (code := missing_path([*args.paths, *args.markers])) is not None:
        return code
    try:  # bad flags fail here, with the usage exit code, not inside the screen
        choose_peak(gpu=args.gpu, peak_tflops=args.peak_tflops, peak_gbs=args.peak_gbs, precision=args.precision)
    except ValueError as exc:
        return fail(str(exc), 2)
    from gpuscope.tui.model.kernels import KernelView
    from gpuscope.tui.screens.studies.kernels import KernelsScreen

    options = dict(gpu=args.gpu, peak_tflops=args.peak_tflops, peak_gbs=args.peak_gbs, precision=args.precision,
                   name_pattern=args.name_pattern, group_by=split_fields(args.group_by), markers=tuple(args.markers))
    view = KernelView(sort=args.sort, group=args.rank_by, top=args.top)
    return run_screen(lambda: KernelsScreen(args.paths, view=view, tab=args.table, **options),
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
    if (code := on_screen(args, _open_scaling_screen)) is not None:
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
    fmt = output_format(args)
    printed = report(model, fmt, text_width(args), args.table)
    if emit(args, fmt, export.render(printed.tables, fmt, text_width(args), printed.extra, limit=text_limit(args))):
        return 1
    # warnings and errors, and that there is nothing to scale over; the rest are in the findings table
    print_findings([f for f in model.findings if f.severity != "info" or f.kind == "single-config"])
    if not (model.summary["runs"] > 0).any():  # runs read, none usable: the tables say why, the command fails
        return fail("no run has a usable time: no speedup could be computed")
    return 0


def _open_scaling_screen(args: argparse.Namespace) -> int | None:
    from gpuscope.tui.screens.studies.scaling import ScalingScreen

    if (code := missing_path(args.paths)) is not None:
        return code
    return run_screen(lambda: ScalingScreen(args.paths, baseline=args.baseline, resources=args.resources, series=args.series, tab=args.table, series_by=args.series_by),
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
    fmt = output_format(args)
    table = results_table(report.results).laid_out(row_keys=("name",))  # a text table split in parts names the check in each
    if emit(args, fmt, export.render([table], fmt, text_width(args), limit=text_limit(args))):
        return 2
    if not report.expected_ok:
        return 2  # a check was left out: passing the rest must not look like a pass
    return 0 if all_passed(report.results) else 1


def run_browse(args: argparse.Namespace) -> int:
    """Open the browser, or with --format/-o print (or write) the listing of every file."""
    if not os.path.lexists(args.folder):
        return fail(f"no such file or folder: {args.folder}", 2)
    if (code := on_screen(args, _open_browse_screen)) is not None:
        return code
    from gpuscope.tui.model.browse_listing import listing

    fmt = output_format(args)
    return emit(args, fmt, export.render([listing(args.folder)], fmt, text_width(args), limit=text_limit(args)))


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
        return run_screen(lambda: BrowseScreen(folder, select=select, freeze_gc=True), "use --format text (or -o FILE) to print the listing instead",
                           mode="browse", watch=watch_screen)
    finally:
        for source in sources:
            source.close()
