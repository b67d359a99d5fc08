"""Provides the tables `gpuscope kernels PATH... --format ...` prints: the same model the kernels
screen shows (`kernels_model.build_model`), as tables plus, for text and markdown, the
time-share bars and the roofline as plain text.

Tables, in order: the summary (peak used, the seed notebook's three efficiencies, GPU busy
versus summed kernel time, transfers), the ranking (`--sort`, `--top`, `--rank-by`), the
transfers (memcpy/memset, when the profiles have them), the profiler's own metrics (nvprof
`--metrics` files), the runs (when several profiles, markers or `--group-by`), the runs
grouped (`--group-by`), the findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.kernels.names import short_name
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.model.kernels import KernelsModel, KernelView, build_model


@dataclass(frozen=True)
class KernelsOptions:
    """What to read and how to rank it: the command line builds it from its flags."""

    paths: tuple[str, ...]
    gpu: str | None = None
    peak_tflops: float | None = None
    peak_gbs: float | None = None
    precision: str = "fp32"
    name_pattern: str | None = None
    group_by: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()
    sort: str = "flops"
    rank_by: str = "kernel"
    top: int = 0
    table: str | None = None
    """One table only (`--table`); None: every table (the ranking alone for CSV)."""


class Report(NamedTuple):
    tables: list[ResultTable]
    findings: list[Finding]
    extra: list[str]
    """Plots as plain text (text and markdown only)."""
    empty: bool
    """No kernel launch was read: the command fails (exit 1) after printing."""


def load(args: KernelsOptions) -> KernelsModel:
    """The model for the command line's options. Raises ValueError for a bad flag."""
    return build_model(
        list(args.paths), gpu=args.gpu, peak_tflops=args.peak_tflops, peak_gbs=args.peak_gbs, precision=args.precision,
        name_pattern=args.name_pattern, group_by=args.group_by, markers=args.markers, ranked=(args.rank_by,),
    )


def split_fields(text: str | None) -> tuple[str, ...]:
    """'batch_size, nodes' -> ('batch_size', 'nodes')."""
    return tuple(f.strip() for f in (text or "").split(",") if f.strip())


def ranking(model: KernelsModel, view: KernelView) -> ResultTable:
    """The kernel ranking, whose names a text table too narrow for them folds (their template
    and argument lists become `…`, the function name stays) instead of wrapping a thousand
    characters of C++ types."""
    return model.ranking_table(view).laid_out(shorten=short_name, shortened=["kernel", "name"])


def tables_for(model: KernelsModel, view: KernelView, fmt: str) -> dict[str, ResultTable]:
    """Every table the report can hold, keyed as `--table` names them."""
    tables = {"summary": model.summary, "kernels": ranking(model, view)}
    if model.transfers is not None:
        tables["transfers"] = model.transfers
    if model.profiler_metrics is not None:
        tables["metrics"] = model.profiler_metrics
    if model.show_runs:
        tables["runs"] = model.runs_table(compact=fmt in ("text", "markdown"))
    if model.grouped is not None:
        tables["grouped"] = model.grouped
    tables["findings"] = model.findings_table(limit=40 if fmt in ("text", "markdown") else None)
    return tables


def plots_text(model: KernelsModel, view: KernelView, width: int) -> list[str]:
    """The time-share bars and the roofline of the ranking shown, as plain text blocks."""
    from gpuscope.tui.render.kernel_plots import roofline_text, share_bars_text

    rows = model.rows(KernelView(sort="time", group=view.group, filter=view.filter))
    bars = share_bars_text(rows, width, label=view.group)
    return [f"Time share of the longest {view.group}s\n\n{bars}\n", roofline_text(rows, model.peak, width, 24)]


def report(args: KernelsOptions, fmt: str = "text", width: int = 100) -> Report:
    """Tables, findings and plots as text for the chosen format. Raises ValueError for a bad
    flag (unknown --gpu, bad peak value, malformed --name-pattern, unknown --group-by field)."""
    model = load(args)
    view = KernelView(sort=args.sort, group=args.rank_by, top=args.top)
    if view.group not in model.groups:
        raise ValueError(f"cannot rank by {view.group}: these profiles have no {view.group} values (choose from {', '.join(model.groups)})")
    tables = tables_for(model, view, fmt)
    chosen = args.table or ("kernels" if fmt == "csv" else None)
    if chosen:
        if chosen == "runs" and "runs" not in tables:  # asked for: show it even for one profile
            tables["runs"] = model.runs_table(compact=fmt in ("text", "markdown"))
        if chosen == "grouped" and chosen not in tables:
            raise ValueError("no grouped table without --group-by FIELD[,FIELD]")
        if chosen not in tables:
            raise ValueError(f"no {chosen} table: " + ("these profiles have no memcpy or memset rows" if chosen == "transfers" else "no nvprof --metrics file was read"))
        return Report([tables[chosen]], list(model.findings), [], model.empty)
    shown = [t for key, t in tables.items() if key != "findings" or model.findings]
    extra = plots_text(model, view, min(width, 160)) if fmt in ("text", "markdown") and not model.empty else []
    return Report(shown, list(model.findings), extra, model.empty)


def tab_tables(model: KernelsModel, view: KernelView, tab: str, fmt: str) -> tuple[list[ResultTable], list[str]]:
    """What the screen's export writes for the tab shown (CSV: that table alone), plus, for the
    kernel ranking in text or markdown, the bars and the roofline as text."""
    if tab == "tab-findings":
        return [model.findings_table(limit=None)], []
    if tab == "tab-transfers" and model.transfers is not None:
        return [model.transfers], []
    if tab == "tab-metrics" and model.profiler_metrics is not None:
        return [model.profiler_metrics], []
    if tab == "tab-runs":
        runs = [model.runs_table(compact=fmt in ("text", "markdown"))]
        return (runs if fmt == "csv" or model.grouped is None else [*runs, model.grouped]), []
    ranked = ranking(model, view)
    if fmt == "csv":
        return [ranked], []
    return [model.summary, ranked], plots_text(model, view, 100) if fmt in ("text", "markdown") else []
