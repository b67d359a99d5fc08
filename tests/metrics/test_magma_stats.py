"""Summary statistics and the environment comparison, checked against numpy/scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import mannwhitneyu

from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.metrics.distribution import box_stats, mann_whitney
from gpuscope.parsers.magma import read as magma
from paths import EXAMPLES


@pytest.fixture(scope="module")
def result() -> magma.MagmaResult:
    return magma.read_tree([EXAMPLES], exclude=["attempt-1", "final"])


def test_box_stats_match_numpy() -> None:
    values = np.array([1.0, 2.0, 2.5, 3.0, 4.0, 100.0])
    frame = pd.DataFrame({"g": ["a"] * 6, "v": values})
    out = box_stats(frame, ["g"], "v").iloc[0]
    assert out["count"] == 6
    assert out["v_median"] == np.median(values)
    assert out["v_q1"] == np.quantile(values, 0.25) and out["v_q3"] == np.quantile(values, 0.75)
    assert out["v_whisker_hi"] == 4.0  # 100 is beyond q3 + 1.5 IQR: an outlier, not the whisker
    assert out["v_whisker_lo"] == 1.0 and out["v_max"] == 100.0
    assert out["v_cv"] == pytest.approx(values.std(ddof=1) / values.mean())


@pytest.mark.parametrize("seed", range(6))
def test_mann_whitney_matches_scipy(seed: int) -> None:
    """Samples with ties: the normal approximation, as scipy's default gives it."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1, rng.integers(3, 60)).round(1)
    b = rng.normal(0.4, 1, rng.integers(3, 60)).round(1)
    assert mann_whitney(a, b) == pytest.approx(mannwhitneyu(a, b).pvalue, rel=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=9), st.lists(st.integers(-50, 50), min_size=1, max_size=40),
       st.booleans())
def test_mann_whitney_small_samples_match_scipy_exactly(small: list[int], other: list[int], swap: bool) -> None:
    """A sample of 8 or fewer: scipy's default gives the exact p without ties, the approximation
    with them; the Gaussian-binomial counts agree to rounding."""
    a, b = np.array(small, float), np.array(other, float)
    if swap:
        a, b = b, a
    assert mann_whitney(a, b) == pytest.approx(mannwhitneyu(a, b).pvalue, rel=1e-12, abs=1e-300)


def test_mann_whitney_exact_with_a_large_other_sample() -> None:
    """8 values against 3,000: exact. The expected p is what scipy's own exact method gives,
    `mannwhitneyu(a, b, method="exact").pvalue` (scipy 1.17), written here because it takes
    seconds of CPU to compute; the samples' sum checks that numpy still draws the same ones."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.5, 1, 8), rng.normal(0, 1, 3000)
    assert a.sum() + b.sum() == pytest.approx(64.475044759425, rel=1e-12)
    assert mann_whitney(a, b) == pytest.approx(0.9485001047565363, rel=1e-12)


def test_summary_on_real_rows_matches_a_direct_computation(result: magma.MagmaResult) -> None:
    summary = magma_stats.summarize(result.rows)
    row = summary[(summary["environment"] == "aws/eks/gpu") & (summary["nodes"] == "4") & (summary["problem_size"] == "512x512x511") & (summary["test"] == "dgemm_vbatched")].iloc[0]
    raw = result.rows
    values = raw[(raw["environment"] == "aws/eks/gpu") & (raw["nodes"] == 4) & (raw["problem_size"] == "512x512x511") & (raw["test"] == "dgemm_vbatched")]["gflops"]
    assert row["count"] == 8 and row["gflops_median"] == np.median(values)
    assert row["gflops_q1"] == np.quantile(values, 0.25)
    assert row["time_ms_median"] == pytest.approx(2.98)


def test_exclusions_are_counted_per_group(result: magma.MagmaResult) -> None:
    summary = magma_stats.summarize(result.rows)
    warm = summary[(summary["problem_size"] == "32x32x31") & (summary["environment"] == "azure/aks/gpu")].iloc[0]
    assert warm["count"] == 0 and warm["warmup"] == 32  # the group stays, with its reason
    kept = magma_stats.summarize(result.rows, keep_warmup=True)
    assert kept[(kept["problem_size"] == "32x32x31") & (kept["environment"] == "azure/aks/gpu")].iloc[0]["count"] == 32
    failed = summary[(summary["test"] == "dgemm") & (summary["environment"] == "azure/aks/gpu")]
    assert failed["count"].sum() == 0 and failed["failed"].sum() == 320
    impossible = summary[summary["environment"] == "azure/cyclecloud/gpu"]["impossible"].sum()
    assert impossible == 207
    with_them = magma_stats.summarize(result.rows, keep_impossible=True)
    assert with_them[with_them["environment"] == "azure/cyclecloud/gpu"]["gflops_max"].max() > 7800


def test_pooled_nodes_and_sort_order(result: magma.MagmaResult) -> None:
    pooled = magma_stats.summarize(result.rows, pool_nodes=True)
    assert set(pooled["nodes"]) == {"all"}
    eks = pooled[(pooled["environment"] == "aws/eks/gpu") & (pooled["problem_size"] == "64x64x63")].iloc[0]
    assert eks["count"] == 16  # size 4 and size 16 files together
    sizes = pooled[pooled["test"] == "dgemm_vbatched"]["problem_size"].drop_duplicates().tolist()
    assert sizes[:3] == ["32x32x31", "64x64x63", "96x96x95"] and sizes[-1] == "512x512x511"


def test_comparison_ranks_and_noise(result: magma.MagmaResult) -> None:
    cmp = magma_stats.compare(result.rows, pool_nodes=True)
    size = cmp[(cmp["problem_size"] == "256x256x255") & (cmp["test"] == "dgemm_vbatched")].set_index("environment")
    assert size["rank"].min() == 1 and size.loc[size["rank"] == 1, "verdict"].iloc[0] == "best"
    best = size[size["rank"] == 1].index[0]
    assert size["ratio_to_best"].max() == 1.0 and (size["ratio_to_best"] <= 1.0).all()
    google = size.loc["google/gke/gpu"]
    assert google["verdict"] == "beyond noise" and google["p_value"] < 0.05
    rows = result.rows
    keep = magma_stats.included(rows)
    sub = rows[keep & (rows["problem_size"] == "256x256x255") & (rows["test"] == "dgemm_vbatched")]
    a = sub[sub["environment"] == "google/gke/gpu"]["gflops"]
    b = sub[sub["environment"] == best]["gflops"]
    assert google["p_raw"] == pytest.approx(mannwhitneyu(a, b, method="asymptotic").pvalue)  # large samples: the normal approximation
    assert google["p_value"] >= google["p_raw"]  # Holm-corrected over the table's comparisons
    by_time = magma_stats.compare(result.rows, pool_nodes=True, metric="time_ms")
    fastest = by_time[(by_time["problem_size"] == "256x256x255") & (by_time["rank"] == 1)]["environment"].iloc[0]
    assert size.loc[fastest, "rank"] <= 2  # lowest ms and highest Gflop/s agree (or nearly)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2), st.floats(-1e6, 1e6) | st.just(float("nan"))), min_size=1, max_size=300))
def test_box_stats_equal_pandas_groupby(data: list[tuple[int, int, float]]) -> None:
    frame = pd.DataFrame(data, columns=["g", "h", "v"])
    out = box_stats(frame, ["g", "h"], "v")
    ref = frame.dropna().groupby(["g", "h"])["v"]
    if ref.ngroups == 0:
        assert out.empty
        return
    assert (out["count"] == ref.size()).all()
    for mine, theirs in (("v_median", ref.median()), ("v_q1", ref.quantile(0.25)), ("v_q3", ref.quantile(0.75)), ("v_min", ref.min()), ("v_max", ref.max())):
        assert np.allclose(out[mine], theirs, rtol=1e-9, atol=1e-6)
    assert (out["v_whisker_lo"] >= out["v_min"]).all() and (out["v_whisker_hi"] <= out["v_max"]).all()
