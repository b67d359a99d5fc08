"""Smoke test of the kernel-efficiency benchmark (bench/kernels_bench.py) on 200k rows built from
the real PyProf files: every variant (the seed's pandas code, gpuscope, and the candidate engines)
gives the same efficiencies and ranking, so the bench's timings compare like with like."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_PYPROF = REPO_ROOT.parent / "shared" / "data" / "pyprof" / "data" / "pcm" / "pyprof_kernels"

pytestmark = pytest.mark.skipif(not any(SHARED_PYPROF.glob("*.gzip")) if SHARED_PYPROF.is_dir() else True,
                                reason=f"real PyProf files not at {SHARED_PYPROF}")


def load_bench():
    """bench/ is scripts, not a package: load the module by path."""
    spec = importlib.util.spec_from_file_location("bench_kernels_bench", REPO_ROOT / "bench" / "kernels_bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return load_bench()


@pytest.fixture(scope="module")
def table(bench):
    return bench.build_table(200_000, seed=0)


def test_table_is_built_from_real_rows(bench, table):
    assert table.num_rows == 200_000
    assert table.column_names == bench.SEED_COLUMNS
    real_kernels = set()
    for f in SHARED_PYPROF.glob("*.gzip"):
        real_kernels |= set(pq.read_table(f, columns=["Kernel"])["Kernel"].unique().to_pylist())
    assert set(table["Kernel"].unique().to_pylist()) <= real_kernels  # names kept
    assert pc.min(table["Sil(ns)"]).as_py() >= 1
    assert bench.build_table(1000, seed=0).equals(bench.build_table(1000, seed=0))  # fixed seed


def test_canonical_frame_matches_the_reader(bench):
    """(b) is timed on the table gpuscope.parsers.profilers.pyprof.read would return (same dtypes)."""
    from gpuscope.parsers.profilers import pyprof

    path = sorted(SHARED_PYPROF.glob("*.gzip"))[0]
    read = pyprof.read_kernels(path).table
    ours = bench.canonical_frame(pq.read_table(path, columns=bench.SEED_COLUMNS))
    for column in ("kernel", "duration_ns", "flops", "bytes"):
        assert ours[column].dtype == read[column].dtype, column
        assert ours[column].equals(read[column]), column


def test_variants_agree(bench, table, tmp_path):
    path = tmp_path / "kernels.parquet"
    pq.write_table(table, path)
    vs = bench.variants(table, str(path), bench.duckdb_available() is None)
    results = {name: fn(arg) for name, (fn, arg) in vs.items()}
    assert {"seed", "gpuscope", "pyarrow", "numpy"} <= set(results)
    assert bench.disagreements(results) == []
    seed = results["seed"]
    assert 0 < seed["compute_efficiency_pct"] < 100
    assert 0 < seed["flops_efficiency_pct"] < 100
    assert seed["order"][0] > 0
    # the engines' launch counts add up to the table
    assert sum(results["numpy"]["launches"].values()) == table.num_rows
    assert results["numpy"]["launches"] == results["pyarrow"]["launches"]


def test_timing_and_memory_plumbing(bench, table, tmp_path):
    path = tmp_path / "kernels.parquet"
    pq.write_table(table.slice(0, 20_000), path)
    small = table.slice(0, 20_000)
    times = bench.time_alternating({"pyarrow": (bench.run_pyarrow, small), "numpy": (bench.run_numpy, small)}, 2)
    assert all(len(ts) == 2 and min(ts) > 0 for ts in times.values())
    m = bench.measure("numpy", str(path))
    assert "error" not in m, m
    assert m["growth_bytes"] >= 0 and m["seconds"] > 0


def test_skips_without_shared(bench, monkeypatch, capsys):
    monkeypatch.setattr(bench, "DATA", Path("/nonexistent/pyprof_kernels"))
    assert bench.main(["--rows", "10"]) == 0
    assert "SKIP" in capsys.readouterr().out
