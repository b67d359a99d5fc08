"""Provides the tables and plots `gpuscope magma --format ...` prints, from a MagmaResult.

The screen and the printed report select rows the same way (`select`), so what a user sees
in the TUI is what the export contains.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.metrics.table import ResultTable
from gpuscope.parsers.magma.read import MagmaResult


FINDINGS_SHOWN = 40
"""Above this many findings the text and markdown reports group them by kind."""


@dataclass(frozen=True)
class MagmaOptions:
    """What the printed report shows: the command line builds it from its flags."""

    metric: str = "gflops"
    test: str | None = None
    nodes: int | None = None
    impl: str = "magma"
    pool_nodes: bool = False
    keep_warmup: bool = False
    keep_impossible: bool = False
    keep_untrusted: bool = False
    table: str | None = None
    """One table only (`--table`); None: every table (the summary alone for CSV)."""
    width: int | None = None
    """`--width`: the box plots' width (at most 160; default 100)."""


def metric_key(metric: str) -> str:
    return "time_ms" if metric in ("ms", "time_ms") else "gflops"


def unknown_choice(rows: pd.DataFrame, args: MagmaOptions) -> str | None:
    """A message when --test, --nodes or --impl names nothing in the rows (with what exists)."""
    if rows.empty:
        return None
    checks = (("--test", args.test, [str(t) for t in rows["test"].cat.categories]),
              ("--nodes", None if args.nodes is None else str(args.nodes), [str(n) for n in sorted(rows["nodes"].dropna().unique())]),
              ("--impl", args.impl, magma_stats.impls(rows)))
    for flag, value, present in checks:
        if value is not None and value not in present:
            return f"{flag} {value!r} matches nothing; present: {', '.join(present) or 'none'}"
    return None


def select(rows: pd.DataFrame, *, test: str | None = None, nodes: int | None = None) -> pd.DataFrame:
    """Rows of one tester and/or one cluster size (all of them, not copied, when neither is asked)."""
    if not test and nodes is None:
        return rows
    keep = pd.Series(True, index=rows.index)
    if test:
        keep &= rows["test"].astype(str) == test
    if nodes is not None:
        keep &= rows["nodes"] == nodes
    return rows[keep]


TEXT_LAYOUT = {"summary": (("test", "problem_size", "environment", "nodes"), ("_whisker_lo", "_whisker_hi")),
               "comparison": (("test", "problem_size", "rank", "nodes", "environment"), ("metric", "p_raw"))}
"""Per table, the columns that name a row, most telling first (a text table too wide for its
width repeats those that fit in each part), and the endings of the keys of the columns left
out first to fit it: the whiskers (the box plots draw them), the metric (the title says it),
the uncorrected p."""


def _laid_out(name: str, table: ResultTable) -> ResultTable:
    keys, low = TEXT_LAYOUT.get(name, (None, ()))
    return table.laid_out(row_keys=keys, low_value=[c.key for c in table.columns if c.key.endswith(low)])


def report(result: MagmaResult, args: MagmaOptions, fmt: str) -> tuple[list[ResultTable], list[str]]:
    """Tables (and, for text/markdown, box plots) for the chosen format."""
    metric = metric_key(args.metric)
    rows = select(result.rows, test=args.test, nodes=args.nodes)
    if metric == "gflops" and len(rows) and not rows["gflops"].notna().any():  # time-only testers: ms is all there is
        metric = "time_ms"
    options = dict(impl=args.impl, pool_nodes=args.pool_nodes, keep_warmup=args.keep_warmup, keep_impossible=args.keep_impossible,
                   keep_untrusted=args.keep_untrusted)
    summary = magma_stats.summarize(rows, **options)
    full = fmt in ("csv", "json")
    tables = {
        "summary": magma_stats.summary_table(summary, metric, full=full, impl=args.impl),
        "comparison": magma_stats.comparison_table(magma_stats.compare(rows, metric=metric, **options), metric, impl=args.impl),
        "findings": magma_stats.findings_table(result.findings, limit=None if args.table == "findings" or fmt in ("csv", "json") else FINDINGS_SHOWN),
        "runs": magma_stats.runs_table(result.runs),
    }
    tables = {name: _laid_out(name, table) for name, table in tables.items()}
    if args.table == "rows":
        tables = {"rows": ResultTable.from_frame(rows, "MAGMA rows")}
    chosen = args.table or ("summary" if fmt == "csv" else None)
    if chosen:
        return [tables[chosen]], []
    if fmt in ("text", "markdown"):
        from gpuscope.tui.render.boxplot import boxplots_text

        plots = boxplots_text(summary, metric, width=min(args.width or 100, 160))
        return list(tables.values()), [plots] if plots else []
    return list(tables.values()), []
