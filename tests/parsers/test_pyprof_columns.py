"""The PyProf reader types whole columns: a Parquet profile and the same rows as `prof.py --csv`
text read to the same table (numbers, nulls, findings), whatever the numeric columns hold:
whole numbers, floats, infinities, negatives, zero durations, gaps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.profilers import pyprof

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/profiles/run_0_config_1_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.csv"
NUMBERS = st.one_of(st.integers(-5, 10**9), st.floats(allow_nan=True, allow_infinity=True, width=64), st.none())


def as_csv(frame: pd.DataFrame) -> str:
    """`prof.py --csv` text: every field quoted, a gap as an empty field."""
    def field(v: object) -> str:
        return "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
    lines = [",".join(f'"{c}"' for c in frame.columns)]
    lines += [",".join(f'"{field(v)}"' for v in row) for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def both(tmp_path: Path, frame: pd.DataFrame) -> tuple[pyprof.KernelRead, pyprof.KernelRead]:
    parquet, text = tmp_path / "p.gzip", tmp_path / "p.csv"
    frame.to_parquet(parquet, index=False)
    text.write_text(as_csv(frame))
    return pyprof.read_kernels(parquet), pyprof.read_kernels(text)


def test_real_profile_as_parquet_reads_as_its_csv(tmp_path: Path) -> None:
    frame = pd.read_csv(EXAMPLE, dtype=str, keep_default_na=False)
    for column in ("Sil(ns)", "Device", "Stream"):
        frame[column] = pd.to_numeric(frame[column]).astype("int64")
    for column in ("FLOPs", "Bytes"):
        frame[column] = pd.to_numeric(frame[column]).astype(float)
    from_parquet, from_csv = both(tmp_path, frame)
    assert len(from_parquet.table) == len(frame) > 0
    pd.testing.assert_frame_equal(from_parquet.table.drop(columns="source"), from_csv.table.drop(columns="source"))
    assert from_parquet.table["duration_ns"].sum() == frame["Sil(ns)"].sum()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(NUMBERS, NUMBERS, NUMBERS, NUMBERS), min_size=1, max_size=12))
def test_numeric_columns_read_alike_from_parquet_and_text(tmp_path: Path, rows: list[tuple]) -> None:
    frame = pd.DataFrame(rows, columns=["Sil(ns)", "FLOPs", "Bytes", "Stream"], dtype=float)
    frame.insert(0, "Kernel", "k")
    from_parquet, from_csv = both(tmp_path, frame)
    for column in ("duration_ns", "flops", "bytes", "stream"):
        pd.testing.assert_series_equal(from_parquet.table[column], from_csv.table[column], check_names=False)
    kinds = sorted((f.kind, f.count) for f in from_parquet.findings if f.kind != "extra-columns")
    assert kinds == sorted((f.kind, f.count) for f in from_csv.findings)
    table = from_parquet.table
    assert not np.isinf(table[["duration_ns", "flops", "bytes"]].astype(float).to_numpy()).any()
    assert not (table["flops"].dropna() < 0).any() and not (table["bytes"].dropna() < 0).any()


def test_parquet_read_for_some_columns_holds_those_alike_and_nulls_the_rest(tmp_path: Path) -> None:
    """`gpuscope diff` reads only kernel, duration and op: the same values as a whole read, the
    other canonical columns null, and the findings about the file's columns still said."""
    frame = pd.read_csv(EXAMPLE, dtype=str, keep_default_na=False).drop(columns=["FLOPs"])
    frame["Sil(ns)"] = pd.to_numeric(frame["Sil(ns)"]).astype("int64")
    path = tmp_path / "p.gzip"
    frame.to_parquet(path, index=False)
    whole, some = pyprof.read_kernels(path), pyprof.read_kernels(path, columns=("kernel", "duration_ns", "op"))
    for column in ("kernel", "duration_ns", "op"):
        pd.testing.assert_series_equal(some.table[column], whole.table[column])
    assert some.table[["flops", "bytes", "direction", "stream"]].isna().all().all()
    assert [(f.kind, f.message) for f in some.findings] == [(f.kind, f.message) for f in whole.findings]
    assert any(f.kind == "missing-column" and "'FLOPs'" in f.message for f in some.findings)
