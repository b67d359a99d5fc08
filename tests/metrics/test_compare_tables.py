"""The per-item comparisons under `gpuscope diff`: kernel sums with missing times (n/a, never 0),
table rows matched on guessed keys, a MAGMA pair whose cluster sizes differ."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gpuscope.metrics.compare import kernels, magma, tables
from gpuscope.metrics.compare.noise import GONE, NEW, SINGLE


def launches(rows: list[tuple[str, str, float | None]]) -> pd.DataFrame:
    return pd.DataFrame({"kernel": pd.Categorical([r[0] for r in rows]), "file": [r[1] for r in rows],
                         "duration_ns": pd.array([r[2] for r in rows], dtype="Float64")})


def test_kernel_without_times_is_na_not_zero() -> None:
    base = kernels.per_run(launches([("gemm", "a", 100.0), ("gemm", "a", 300.0), ("copy", "a", None)]))
    new = kernels.per_run(launches([("gemm", "b", 260.0), ("copy", "b", None), ("relu", "b", 5.0)]))
    frame = kernels.compare_kernels(base, new).set_index("kernel")
    assert frame.loc["gemm", "base_calls"] == 2 and frame.loc["gemm", "base_mean_us"] == 0.2
    assert math.isclose(frame.loc["gemm", "slowdown"], 0.3)
    assert math.isnan(frame.loc["copy", "base_mean_us"]) and math.isnan(frame.loc["copy", "slowdown"])
    assert frame.loc["gemm", "verdict"] == SINGLE
    assert frame.loc["relu", "verdict"] == NEW
    assert kernels.compare_kernels(new, base).set_index("kernel").loc["relu", "verdict"] == GONE


def test_table_keys_guessed_with_whole_number_columns() -> None:
    base = pd.DataFrame({"strategy": ["A", "A", "B"], "batch_size": [1, 2, 1], "latency_ms": [10.0, 20.0, 5.0]})
    new = pd.DataFrame({"strategy": ["B", "A", "A"], "batch_size": [1, 2, 4], "latency_ms": [6.0, 20.0, 40.0]})
    keys = tables.guess_keys(base, new)
    assert keys == ["strategy", "batch_size"]
    frame, values = tables.compare_tables(base, new, keys)
    assert values == ["latency_ms"]
    got = {(r["strategy"], r["batch_size"]): (r["match"], r["latency_ms change"]) for _, r in frame.iterrows()}
    assert math.isclose(got[("B", "1")][1], 0.2)
    assert got[("A", "4")][0] == "new" and got[("A", "1")][0] == "vanished"
    assert tables.largest_change(frame, values, keys) == (got[("B", "1")][1], "latency_ms at B 1")


def test_magma_sizes_with_no_shared_cluster_size_are_pooled() -> None:
    def rows(nodes: str, gflops: list[float]) -> pd.DataFrame:
        return pd.DataFrame({"test": "dgemm", "impl": "magma", "environment": "gpu", "nodes": nodes, "problem_size": "1024",
                             "gflops": gflops, "time_ms": np.nan, "excluded": ""})
    frame, pooled = magma.compare_magma(rows("4", [100.0, 101, 99, 100, 102, 98]), rows("8", [80.0, 81, 79, 80, 82, 78]))
    assert pooled == ["nodes"]
    row = frame.iloc[0]
    assert row["nodes"] == "all" and row["verdict"] == "slower beyond noise"
    assert math.isclose(row["slowdown"], 100 / 80 - 1)
