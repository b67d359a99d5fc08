"""MAGMA comparison verdicts only where the evidence holds: rank 1 is "best" only when rank 2 is
beyond noise after a Holm correction over the table's comparisons; small samples get exact
p-values; times under the file's printed resolution are never turned into ratios."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import mannwhitneyu

from gpuscope.metrics.distribution import EXACT_MAX, mann_whitney
from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.parsers.magma import read as magma
from paths import SHARED_MAGMA

STUDY = SHARED_MAGMA / "experiments"


def frame(samples: dict[tuple[str, str], list[float]], metric: str = "gflops", resolution: float = np.nan) -> pd.DataFrame:
    """Rows of one tester and cluster size: (problem size, environment) -> values."""
    records = [{"test": "dgemm", "environment": env, "nodes": 4, "problem_size": size, "impl": "magma",
                "gflops": v if metric == "gflops" else np.nan, "time_ms": v if metric == "time_ms" else np.nan,
                "time_res_ms": resolution, "excluded": ""}
               for (size, env), values in samples.items() for v in values]
    rows = pd.DataFrame.from_records(records)
    rows["nodes"] = rows["nodes"].astype("Int64")
    return rows


def test_holm_matches_the_textbook_step_down() -> None:
    p = np.array([0.01, 0.04, 0.03, np.nan, 0.005])
    # sorted: 0.005*4, 0.01*3, 0.03*2, 0.04*1 -> 0.02, 0.03, 0.06, 0.06 (monotone)
    assert magma_stats.holm(p) == pytest.approx([0.03, 0.06, 0.06, np.nan, 0.02], nan_ok=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_never_lowers_a_p_and_keeps_the_order(raw: list[float]) -> None:
    p = np.array(raw)
    adjusted = magma_stats.holm(p)
    assert (adjusted >= p - 1e-15).all() and (adjusted <= 1).all()
    order = np.argsort(p, kind="stable")
    assert (np.diff(adjusted[order]) >= -1e-15).all()


def test_small_samples_get_the_exact_p_value() -> None:
    a, b = [10.0, 11.0, 12.0, 13.0, 14.0], [20.0, 21.0, 22.0, 23.0, 24.0]
    exact = mannwhitneyu(a, b, method="exact").pvalue
    assert mann_whitney(np.array(a), np.array(b)) == pytest.approx(exact)  # 2/252 = 0.0079
    assert exact != pytest.approx(mannwhitneyu(a, b, method="asymptotic").pvalue)


def test_rank_1_within_noise_of_rank_2_is_tied_not_best() -> None:
    rng = np.random.default_rng(1)
    same = {("64", "a"): list(rng.normal(100, 5, 12)), ("64", "b"): list(rng.normal(100.5, 5, 12))}
    apart = {("128", "a"): list(rng.normal(200, 1, 12)), ("128", "b"): list(rng.normal(150, 1, 12))}
    cmp = magma_stats.compare(frame(same | apart))
    first = cmp[cmp["rank"] == 1].set_index("problem_size")
    assert first.loc["128", "verdict"] == "best"
    tied = first.loc["64", "verdict"]
    second = cmp[(cmp["problem_size"] == "64") & (cmp["rank"] == 2)].iloc[0]
    assert tied.startswith("tied with #2 (p = ") and second["verdict"] == "within noise"
    assert f"{second['p_value']:.2g}" in tied  # the p shown is rank 2's corrected p
    table = magma_stats.comparison_table(cmp)
    assert "Holm-corrected over the 2 comparisons" in table.notes[0] and "exact" in table.notes[0]


def test_holm_turns_a_lone_weak_win_into_a_tie_in_a_big_table() -> None:
    """p = 0.03 alone is beyond noise; among 20 comparisons it is not."""
    rng = np.random.default_rng(7)
    a = [100.0 + i for i in range(30)]
    b = [v - 5.5 for v in a]  # raw p = 0.027
    alone = magma_stats.compare(frame({("1", "a"): a, ("1", "b"): b}))
    raw = float(alone.loc[alone["rank"] == 2, "p_raw"].iloc[0])
    assert raw < 0.05 and alone.loc[alone["rank"] == 1, "verdict"].iloc[0] == "best"
    many = {("1", "a"): a, ("1", "b"): b}
    for size in range(2, 21):
        many[(str(size), "a")] = list(rng.normal(100, 1, 30))  # no difference: Holm multiplies the smallest p by 20
        many[(str(size), "b")] = list(rng.normal(100, 1, 30))
    big = magma_stats.compare(frame(many))
    first = big[(big["problem_size"] == "1") & (big["rank"] == 1)].iloc[0]
    assert first["verdict"].startswith("tied with #2") and magma_stats.comparisons(big) == 20


def test_times_under_the_resolution_give_no_ratio_and_say_so() -> None:
    rows = frame({("10", "a"): [0.0] * 6, ("10", "b"): [0.0] * 5 + [10.0], ("900", "a"): [140.0] * 6, ("900", "b"): [150.0] * 6},
                 metric="time_ms", resolution=5.0)
    cmp = magma_stats.compare(rows, metric="time_ms")
    small = cmp[cmp["problem_size"] == "10"]
    assert small["ratio_to_best"].isna().all()
    big = cmp[cmp["problem_size"] == "900"]
    assert big["ratio_to_best"].max() == pytest.approx(150 / 140)
    table = magma_stats.comparison_table(cmp, "time_ms")
    shown = [table.cell_text(r, table.keys.index("median")) for r in range(len(table.rows))]
    assert shown[:2] == ["< 5", "< 5"] and "140.00" in shown
    assert any("resolution" in note for note in table.notes)


@pytest.mark.skipif(not STUDY.is_dir(), reason=f"{STUDY} is absent")
def test_study_best_verdicts_hold_after_the_correction() -> None:
    result = magma.read_tree([STUDY])
    for metric in ("gflops", "time_ms"):
        cmp = magma_stats.compare(result.rows, metric=metric)
        for _, group in cmp.groupby(["test", "nodes", "problem_size"]):
            first = group[group["rank"] == 1]
            second = group[group["rank"] == 2]
            if first.empty or second.empty:
                continue
            verdict = first["verdict"].iloc[0]
            assert (verdict == "best") == (second["p_value"].iloc[0] < magma_stats.ALPHA), verdict
            assert verdict == "best" or verdict.startswith("tied with #2")


def test_screen_compact_verdict_drops_only_the_repeated_p_and_caption_names_the_correction() -> None:
    """The screen's narrow table: 'tied with #2' without '(p = ...)' (rank 2's row shows it),
    every other verdict as it is; its caption names the test and the correction, with the family size."""
    from types import SimpleNamespace

    from gpuscope.tui.model.magma import Selection, build_model

    rng = np.random.default_rng(3)
    samples = {("64", "a"): list(100 + rng.normal(0, 1, 12)), ("64", "b"): list(100 + rng.normal(0, 1, 12)),
               ("96", "a"): list(200 + rng.normal(0, 1, 12)), ("96", "b"): list(150 + rng.normal(0, 1, 12))}
    rows = frame(samples)
    rows["test"] = rows["test"].astype("category")
    model = build_model(SimpleNamespace(rows=rows, findings=[]))  # type: ignore[arg-type]
    sel = Selection(test="dgemm", nodes="4")
    full = {r["problem_size"] + str(r["rank"]): r["verdict"] for r in model.comparison_table(sel).records()}
    compact = {r["problem_size"] + str(r["rank"]): r["verdict"] for r in model.comparison_table(sel, compact=True).records()}
    assert full["641"].startswith("tied with #2 (p = ") and compact["641"] == "tied with #2"
    assert full["961"] == compact["961"] == "best" and full["962"] == compact["962"] == "beyond noise"
    assert model.comparison_caption(sel) == f"p: Mann-Whitney U vs #1 (exact if n ≤ {EXACT_MAX}), Holm-corrected over 2 comparisons"
