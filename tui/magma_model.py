"""Provides the MAGMA screen's data bundle and selection: what is computed once, what is picked.

The thread worker builds a `MagmaModel` (summaries pooled and per cluster size, comparisons
for both metrics) so key presses only filter ready frames on the main thread. `Selection` is
the user's view state: one test, one cluster size (or all pooled) and one metric.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from gpuscope.metrics import magma_stats
from gpuscope.metrics.table import ResultTable

if TYPE_CHECKING:
    from gpuscope.parsers.magma import MagmaResult

METRICS = ("gflops", "time_ms")
METRIC_LABELS = {"gflops": "Gflop/s", "time_ms": "ms"}
POOLED = "all"


@dataclass(frozen=True)
class Selection:
    """What the screen shows: one test, one cluster size (`'all'` = pooled), one metric."""

    test: str
    nodes: str = POOLED
    metric: str = "gflops"

    @property
    def pooled(self) -> bool:
        return self.nodes == POOLED

    @property
    def nodes_label(self) -> str:
        return "all sizes pooled" if self.pooled else f"{self.nodes} nodes"


@dataclass(frozen=True)
class MagmaModel:
    """A loaded result and every table derived from it, computed once off the main thread."""

    result: MagmaResult
    summary_per_size: pd.DataFrame
    summary_pooled: pd.DataFrame
    comparisons: dict[tuple[bool, str], pd.DataFrame]
    """Keyed by (pooled, metric)."""
    tests: tuple[str, ...]
    node_counts: tuple[str, ...]
    """Cluster sizes present, numerically sorted, as strings (`'4'`, `'8'`, ...)."""

    @property
    def empty(self) -> bool:
        return self.result.rows.empty or not self.tests

    @property
    def cluster_choices(self) -> tuple[str, ...]:
        return (POOLED, *self.node_counts)

    def first_selection(self) -> Selection:
        return Selection(test=self.tests[0] if self.tests else "")

    def summary(self, sel: Selection) -> pd.DataFrame:
        """Summary rows of the selected test and cluster size."""
        return _selected(self.summary_pooled if sel.pooled else self.summary_per_size, sel)

    def comparison(self, sel: Selection) -> pd.DataFrame:
        return _selected(self.comparisons.get((sel.pooled, sel.metric), pd.DataFrame()), sel)

    def summary_table(self, sel: Selection, full: bool = False) -> ResultTable:
        """`full`: every statistic of both metrics, as `gpuscope magma --format csv` writes."""
        return magma_stats.summary_table(self.summary(sel), sel.metric, full=full)

    def comparison_table(self, sel: Selection) -> ResultTable:
        return magma_stats.comparison_table(self.comparison(sel), sel.metric)

    def cycle_cluster(self, sel: Selection, step: int = 1) -> Selection:
        choices = self.cluster_choices
        index = choices.index(sel.nodes) if sel.nodes in choices else 0
        return replace(sel, nodes=choices[(index + step) % len(choices)])

    def cycle_test(self, sel: Selection) -> Selection:
        if not self.tests:
            return sel
        index = self.tests.index(sel.test) if sel.test in self.tests else -1
        return replace(sel, test=self.tests[(index + 1) % len(self.tests)])


def toggle_metric(sel: Selection) -> Selection:
    return replace(sel, metric="time_ms" if sel.metric == "gflops" else "gflops")


def problem_sizes(summary: pd.DataFrame) -> list[str]:
    """Problem sizes in the summary's own order (summarize sorts them numerically)."""
    if summary.empty:
        return []
    return list(dict.fromkeys(summary["problem_size"].astype(str)))


def build_model(result: MagmaResult, *, keep_warmup: bool = False, keep_impossible: bool = False) -> MagmaModel:
    """Everything the screen needs; slow parts (statistics) run here, in the worker thread."""
    rows = result.rows
    if rows.empty:  # nothing to summarise; the screen shows why (findings) instead
        return MagmaModel(result, pd.DataFrame(), pd.DataFrame(), {}, (), ())
    keep: dict[str, Any] = {"keep_warmup": keep_warmup, "keep_impossible": keep_impossible}
    per_size = magma_stats.summarize(rows, pool_nodes=False, **keep)
    pooled = magma_stats.summarize(rows, pool_nodes=True, **keep)
    comparisons = {
        (pool, metric): magma_stats.compare(rows, pool_nodes=pool, metric=metric, **keep)
        for pool in (False, True)
        for metric in METRICS
    }
    tests = tuple(dict.fromkeys(per_size["test"].astype(str)))
    nodes = sorted(set(per_size["nodes"].astype(str)) - {POOLED}, key=_numeric)
    return MagmaModel(result, per_size, pooled, comparisons, tests, tuple(nodes))


def _numeric(text: str) -> tuple[int, str]:
    return (int(text), text) if text.isdigit() else (1 << 30, text)


def _selected(frame: pd.DataFrame, sel: Selection) -> pd.DataFrame:
    """Rows of `frame` (summary or comparison) for the selected test and cluster size."""
    if frame.empty:
        return frame
    keep = frame["test"] == sel.test
    if not sel.pooled:
        keep &= frame["nodes"].astype(str) == sel.nodes
    return frame[keep].reset_index(drop=True)
