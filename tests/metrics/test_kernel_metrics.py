"""Per-kernel roofline table: every column checked by hand, zero/null durations, verdicts, grouping."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gpuscope.metrics.kernels.table import KERNEL_METRIC_COLUMNS, grouped, kernel_table, to_result_table
from gpuscope.metrics.kernels.peak_choice import choose_peak
from gpuscope.parsers.profilers.kernel_table import canonical

NA = pd.NA
# Peak 1 TFLOPS = 1e12 FLOP/s and 100 GB/s = 1e11 B/s: ridge = 10 FLOP/byte.
PEAK = choose_peak(peak_tflops=1, peak_gbs=100)


def _table() -> pd.DataFrame:
    rows = [
        # kernel, duration_ns, flops, bytes
        ("gemm", 1000, 1e6, 4e3),
        ("gemm", 3000, 1e6, 4e3),
        ("copy", 1000, 1e3, 1e5),
        ("relu", 2000, 5e4, 1e4),
        ("noflops", 1000, NA, 1e3),
        ("zero", 0, 1e3, 1e3),
        ("nulldur", NA, 1e3, 1e3),
    ]
    frame = pd.DataFrame(rows, columns=["kernel", "duration_ns", "flops", "bytes"])
    return canonical(frame, "test")


def _row(frame: pd.DataFrame, kernel: str) -> dict:
    return frame.set_index("kernel").loc[kernel].to_dict()


def test_every_column_by_hand() -> None:
    frame = kernel_table(_table(), PEAK)
    assert tuple(frame.columns) == KERNEL_METRIC_COLUMNS
    assert list(frame["kernel"]) == ["gemm", "relu", "copy", "noflops"]  # longest first, ties by name
    assert frame.attrs["excluded_rows"] == 2
    total = 4000 + 1000 + 2000 + 1000
    gemm = _row(frame, "gemm")
    # 2e6 FLOP in 4000 ns = 5e11 FLOP/s = 50 % of 1e12; 8e3 B in 4000 ns = 2 GB/s = 2 % of 100;
    # intensity 2e6 / 8e3 = 250 >= 10: compute-bound, roof 1e12, 50 % below it.
    assert gemm["calls"] == 2 and gemm["total_ns"] == 4000 and gemm["share_pct"] == pytest.approx(4000 / total * 100)
    assert gemm["flops"] == 2e6 and gemm["flop_per_s"] == pytest.approx(5e11) and gemm["flops_eff_pct"] == pytest.approx(50)
    assert gemm["bytes"] == 8e3 and gemm["gbs"] == pytest.approx(2) and gemm["bw_eff_pct"] == pytest.approx(2)
    assert gemm["intensity"] == pytest.approx(250) and gemm["ridge"] == pytest.approx(10)
    assert gemm["verdict"] == "compute-bound" and gemm["roof_flop_per_s"] == pytest.approx(1e12)
    assert gemm["below_roof_pct"] == pytest.approx(50)
    copy = _row(frame, "copy")
    # 1e3 FLOP / 1000 ns = 1e9 FLOP/s (0.1 %); 1e5 B / 1000 ns = 100 GB/s (100 %); intensity 0.01:
    # memory-bound, roof 0.01 * 1e11 = 1e9, achieved = roof: 0 % below.
    assert copy["share_pct"] == pytest.approx(12.5) and copy["flop_per_s"] == pytest.approx(1e9)
    assert copy["flops_eff_pct"] == pytest.approx(0.1) and copy["gbs"] == pytest.approx(100) and copy["bw_eff_pct"] == pytest.approx(100)
    assert copy["intensity"] == pytest.approx(0.01) and copy["verdict"] == "memory-bound"
    assert copy["roof_flop_per_s"] == pytest.approx(1e9) and copy["below_roof_pct"] == pytest.approx(0, abs=1e-9)
    relu = _row(frame, "relu")
    # 5e4 / 2000 ns = 2.5e10 FLOP/s (2.5 %); 1e4 / 2000 = 5 GB/s (5 %); intensity 5 < 10: memory-bound,
    # roof 5 * 1e11 = 5e11; 1 - 2.5e10 / 5e11 = 95 % below.
    assert relu["share_pct"] == pytest.approx(25) and relu["flops_eff_pct"] == pytest.approx(2.5)
    assert relu["bw_eff_pct"] == pytest.approx(5) and relu["intensity"] == pytest.approx(5)
    assert relu["verdict"] == "memory-bound" and relu["below_roof_pct"] == pytest.approx(95)


def test_null_flops_means_no_verdict() -> None:
    row = _row(kernel_table(_table(), PEAK), "noflops")
    assert pd.isna(row["flops"]) and pd.isna(row["flop_per_s"]) and pd.isna(row["intensity"])
    assert row["gbs"] == pytest.approx(1) and pd.isna(row["verdict"]) and pd.isna(row["below_roof_pct"])


def test_null_bytes_and_zero_bytes_mean_no_verdict() -> None:
    table = canonical(pd.DataFrame({"kernel": ["a", "b"], "duration_ns": [10, 10], "flops": [5, 5], "bytes": [NA, 0]}), "t")
    frame = kernel_table(table, PEAK)
    assert frame["verdict"].isna().all()
    assert frame["intensity"].isna().all()


def test_ridge_is_compute_bound_and_just_below_is_memory_bound() -> None:
    table = canonical(pd.DataFrame({"kernel": ["at", "below"], "duration_ns": [1000, 1000],
                                    "flops": [1e4, 9.99e3], "bytes": [1e3, 1e3]}), "t")
    frame = kernel_table(table, PEAK).set_index("kernel")
    assert frame.loc["at", "verdict"] == "compute-bound"
    assert frame.loc["below", "verdict"] == "memory-bound"


def test_zero_and_null_durations_never_give_inf_or_nan() -> None:
    table = canonical(pd.DataFrame({"kernel": ["z", "z", "n", "neg", "ok"], "duration_ns": [0, 0, NA, -5, 10],
                                    "flops": [1, 0, 1, 1, 0], "bytes": [1, 1, 1, 1, 0]}), "t")
    frame = kernel_table(table, PEAK)
    assert list(frame["kernel"]) == ["ok"] and frame.attrs["excluded_rows"] == 4
    numeric = frame.drop(columns=["kernel", "verdict"]).astype("float64")
    assert not np.isinf(numeric.to_numpy()).any()
    # Every missing value is <NA>, not NaN: NaN would show in the nullable arrays as a value.
    for column in frame.columns:
        for value in frame[column]:
            assert value is NA or not (isinstance(value, float) and not math.isfinite(value))


def test_only_zero_durations_gives_an_empty_typed_table() -> None:
    table = canonical(pd.DataFrame({"kernel": ["z"], "duration_ns": [0], "flops": [1], "bytes": [1]}), "t")
    frame = kernel_table(table, PEAK)
    assert frame.empty and tuple(frame.columns) == KERNEL_METRIC_COLUMNS and frame.attrs["excluded_rows"] == 1


def test_without_a_peak_efficiencies_and_verdicts_are_unknown() -> None:
    frame = kernel_table(_table(), choose_peak())
    assert frame["flops_eff_pct"].isna().all() and frame["bw_eff_pct"].isna().all()
    assert frame["verdict"].isna().all()
    assert _row(frame, "gemm")["flop_per_s"] == pytest.approx(5e11)


def test_result_table_names_the_peak_and_keeps_numbers() -> None:
    frame = kernel_table(_table(), PEAK)
    result = to_result_table(frame, PEAK)
    records = result.records()
    assert records[0]["kernel"] == "gemm" and records[0]["total_ms"] == pytest.approx(0.004)
    assert records[0]["verdict"] == "compute-bound" and records[-1]["flop_per_s"] is None
    assert any("1 TFLOPS" in note and "FP32" in note for note in result.notes)
    assert any("Ridge point: 10" in note for note in result.notes)
    assert result.cell_text(0, result.keys.index("share_pct")) == "50.0"


def test_grouped_means_like_the_seed() -> None:
    # Seed 001 In [8]: efficiency_df.groupby(['batch_size', 'nodes']).mean()
    eff = pd.DataFrame({
        "nodes": [1, 1, 8, 8, 1], "batch_size": [32, 32, 32, 64, 64], "data_loader": ["a", "b", "a", "a", "b"],
        "compute_efficiency (%)": [60.0, 70.0, 80.0, 90.0, 50.0], "FLOPS_efficiency (%)": [8.0, 10.0, np.inf, 9.0, 7.0],
    })
    out = grouped(eff, ["batch_size", "nodes"])
    assert list(out.columns) == ["batch_size", "nodes", "runs", "compute_efficiency (%)", "FLOPS_efficiency (%)"]
    assert [tuple(r) for r in out[["batch_size", "nodes", "runs"]].itertuples(index=False)] == [(32, 1, 2), (32, 8, 1), (64, 1, 1), (64, 8, 1)]
    assert list(out["compute_efficiency (%)"]) == [65.0, 80.0, 50.0, 90.0]
    assert out["FLOPS_efficiency (%)"].iloc[0] == 9.0 and out["FLOPS_efficiency (%)"].iloc[1] is NA  # inf is not a number to average


def test_grouped_unknown_field_lists_the_fields() -> None:
    with pytest.raises(ValueError, match="nodes"):
        grouped(pd.DataFrame({"nodes": [1], "x": [1.0]}), ["gpus"])
