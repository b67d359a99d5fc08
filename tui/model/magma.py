"""Provides the MAGMA screen's data bundle and selection: what is computed once, what is picked.

The thread worker builds a `MagmaModel` (summaries pooled and per cluster size, comparisons
for both metrics) so key presses only filter ready frames on the main thread. `Selection` is
the user's view state: one test, one cluster size (or all pooled) and one metric.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import re

import pandas as pd

from gpuscope.metrics.distribution import EXACT_MAX
from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.metrics.table import ResultTable

if TYPE_CHECKING:
    from gpuscope.parsers.magma.read import MagmaResult

METRICS = ("gflops", "time_ms")
METRIC_LABELS = {"gflops": "Gflop/s", "time_ms": "ms"}
POOLED = "all"
TIED_P = re.compile(r" \(p = [^)]*\)$")
"""The p that "tied with #2 (p = 0.67)" repeats from rank 2's own p cell."""


@dataclass(frozen=True)
class Selection:
    """What the screen shows: one test, one cluster size (`'all'` = pooled), one metric."""

    test: str
    nodes: str = POOLED
    metric: str = "gflops"
    impl: str = magma_stats.DEFAULT_IMPL
    """Whose numbers: MAGMA's own, or a reference the tester also timed (cublas, cpu, ...)."""

    @property
    def pooled(self) -> bool:
        return self.nodes == POOLED

    @property
    def nodes_label(self) -> str:
        return "all sizes pooled" if self.pooled else f"{self.nodes} nodes"


@dataclass(frozen=True)
class MagmaModel:
    """A loaded result and every table derived from it, computed off the main thread when loading
    (`build_model`); the screen's keys only pick among them."""

    result: MagmaResult
    tests: tuple[str, ...]
    node_counts: tuple[str, ...]
    """Cluster sizes present, numerically sorted, as strings (`'4'`, `'8'`, ...)."""
    impls: tuple[str, ...] = ()
    impls_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per test, the implementations it timed (MAGMA's own first)."""
    keep: dict[str, bool] = field(default_factory=dict)
    """keep_warmup, keep_impossible, keep_untrusted: as the command line asked."""
    time_only: frozenset[str] = frozenset()
    """Tests that print times and no Gflop/s (eigen and singular value solvers): shown in ms."""
    _cache: dict[tuple, pd.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def empty(self) -> bool:
        return self.result.rows.empty or not self.tests

    @property
    def cluster_choices(self) -> tuple[str, ...]:
        return (POOLED, *self.node_counts)

    def first_selection(self, test: str | None = None, nodes: int | str | None = None, metric: str = "gflops",
                        impl: str | None = None) -> Selection:
        """The selection the screen opens on: the command line's --test, --nodes, --metric and
        --impl where the results have them (see `unknown_choices`), else the first of each."""
        test = self._opening_test(test, impl)
        impls = self.impls_of.get(test, self.impls)
        chosen = impl if impl in impls else (impls[0] if impls else magma_stats.DEFAULT_IMPL)
        cluster = str(nodes) if nodes is not None and str(nodes) in self.node_counts else POOLED
        return self.fit_metric(Selection(test=test, nodes=cluster, metric="time_ms" if metric in ("ms", "time_ms") else "gflops", impl=chosen))

    def fit_metric(self, sel: Selection) -> Selection:
        """The selection in ms when its test printed no Gflop/s."""
        return replace(sel, metric="time_ms") if sel.test in self.time_only else sel

    def _opening_test(self, test: str | None, impl: str | None) -> str:
        """`test` if present; else the first test that timed `impl`; else the first test."""
        if test in self.tests:
            return str(test)
        timed = [t for t in self.tests if impl in self.impls_of.get(t, ())]
        return timed[0] if timed else (self.tests[0] if self.tests else "")

    def unknown_choices(self, test: str | None = None, nodes: int | str | None = None, impl: str | None = None) -> list[str]:
        """What the command line asked for that the results do not have, with what they do have."""
        problems = []
        if test is not None and test not in self.tests:
            problems.append(f"--test {test!r} matches nothing; present: {', '.join(self.tests)}")
        if nodes is not None and str(nodes) not in self.node_counts:
            problems.append(f"--nodes {nodes} matches nothing; present: {', '.join(self.node_counts) or 'none'}")
        shown_test = self._opening_test(test, impl)
        if impl is not None and impl not in self.impls_of.get(shown_test, self.impls):
            present = ", ".join(self.impls_of.get(shown_test, self.impls))
            problems.append(f"--impl {impl!r}: {shown_test} timed {present} only")
        return problems

    def _summary(self, impl: str, pooled: bool) -> pd.DataFrame:
        key = ("summary", impl, pooled)
        if key not in self._cache:
            self._cache[key] = magma_stats.summarize(self.result.rows, impl=impl, pool_nodes=pooled, **self.keep)
        return self._cache[key]

    def _comparison(self, impl: str, pooled: bool, metric: str) -> pd.DataFrame:
        key = ("comparison", impl, pooled, metric)
        if key not in self._cache:
            self._cache[key] = magma_stats.compare(self.result.rows, impl=impl, pool_nodes=pooled, metric=metric, **self.keep)
        return self._cache[key]

    def summary(self, sel: Selection) -> pd.DataFrame:
        """Summary rows of the selected implementation, test and cluster size."""
        return _selected(self._summary(sel.impl, sel.pooled), sel)

    def comparison(self, sel: Selection) -> pd.DataFrame:
        """The comparison of the selection, its verdicts corrected over the comparisons shown."""
        return magma_stats.judge(_selected(self._comparison(sel.impl, sel.pooled, sel.metric), sel))

    def summary_table(self, sel: Selection, full: bool = False) -> ResultTable:
        """`full`: every statistic of both metrics, as `gpuscope magma --format csv` writes."""
        return magma_stats.summary_table(self.summary(sel), sel.metric, full=full, impl=sel.impl)

    def comparison_table(self, sel: Selection, compact: bool = False) -> ResultTable:
        """`compact`: for a narrow screen, "tied with #2" without its "(p = ...)", which rank 2's
        row (the next one) shows in its p column; the export keeps the full verdict."""
        frame = self.comparison(sel)
        if compact and not frame.empty:
            frame = frame.assign(verdict=[TIED_P.sub("", v) if isinstance(v, str) else v for v in frame["verdict"]])
        return magma_stats.comparison_table(frame, sel.metric, impl=sel.impl)

    def comparison_caption(self, sel: Selection) -> str:
        """One line on how p was computed and corrected, for the screen (the export has the full note)."""
        n = magma_stats.comparisons(self.comparison(sel))
        return (f"p: Mann-Whitney U vs #1 (exact if n ≤ {EXACT_MAX}), Holm-corrected over "
                f"{n} comparison{'s' if n != 1 else ''}")

    def cycle_cluster(self, sel: Selection, step: int = 1) -> Selection:
        choices = self.cluster_choices
        index = choices.index(sel.nodes) if sel.nodes in choices else 0
        return replace(sel, nodes=choices[(index + step) % len(choices)])

    def cycle_test(self, sel: Selection) -> Selection:
        """The next test, with the implementation kept where that test timed it."""
        if not self.tests:
            return sel
        index = self.tests.index(sel.test) if sel.test in self.tests else -1
        test = self.tests[(index + 1) % len(self.tests)]
        impls = self.impls_of.get(test, self.impls)
        return self.fit_metric(replace(sel, test=test, impl=sel.impl if sel.impl in impls or not impls else impls[0]))

    def test_impls(self, sel: Selection) -> tuple[str, ...]:
        """The implementations the selected test timed."""
        return self.impls_of.get(sel.test, self.impls)

    def cycle_impl(self, sel: Selection) -> Selection:
        impls = self.test_impls(sel)
        if not impls:
            return sel
        index = impls.index(sel.impl) if sel.impl in impls else -1
        return replace(sel, impl=impls[(index + 1) % len(impls)])


def toggle_metric(sel: Selection) -> Selection:
    return replace(sel, metric="time_ms" if sel.metric == "gflops" else "gflops")


def problem_sizes(summary: pd.DataFrame) -> list[str]:
    """Problem sizes in the summary's own order (summarize sorts them numerically)."""
    if summary.empty:
        return []
    return list(dict.fromkeys(summary["problem_size"].astype(str)))


def build_model(result: MagmaResult, *, keep_warmup: bool = False, keep_impossible: bool = False, keep_untrusted: bool = False,
                impl: str | None = None) -> MagmaModel:
    """Everything the screen needs, every implementation's statistics included, computed here, in
    the worker thread. `impl`: the implementation shown first (default MAGMA's own)."""
    rows = result.rows
    if rows.empty:  # nothing to summarise; the screen shows why (findings) instead
        return MagmaModel(result, (), ())
    keep: dict[str, Any] = {"keep_warmup": keep_warmup, "keep_impossible": keep_impossible, "keep_untrusted": keep_untrusted}
    impls = magma_stats.impls(rows)
    if impl in impls:
        impls.remove(impl)
        impls.insert(0, impl)
    tests = tuple(str(t) for t in dict.fromkeys(rows["test"].astype(str)))
    nodes = sorted({str(int(n)) for n in rows["nodes"].dropna().unique()} | ({"?"} if rows["nodes"].isna().any() else set()), key=_numeric)
    pairs = rows[["test", "impl"]].drop_duplicates()
    impls_of = {test: tuple(i for i in impls if i in set(pairs.loc[pairs["test"] == test, "impl"].astype(str))) for test in tests}
    timed = rows.groupby("test", observed=True)["gflops"].count()  # finite Gflop/s per test
    time_only = frozenset(str(t) for t in tests if timed.get(t, 0) == 0)
    model = MagmaModel(result, tests, tuple(nodes), tuple(impls), impls_of, keep, time_only)
    for impl in impls:  # every table here, in the worker: a key press only picks one
        for pooled in (False, True):
            model._summary(impl, pooled)
            for metric in METRICS:
                model._comparison(impl, pooled, metric)
    return model


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
