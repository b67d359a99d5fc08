"""metrics/cells: table cells written for humans read as number, uncertainty and unit."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.cells import Cell, numeric_column, parse_cell

from paths import ROOT

SPECMOE = ROOT.parent / "shared" / "data" / "specmoe"


@pytest.mark.parametrize(
    ("text", "value", "error", "unit"),
    [
        ("143.9 ± 0.0", 143.9, 0.0, ""),
        ("143.9 +/- 0.2", 143.9, 0.2, ""),
        ("143.9+-0.2", 143.9, 0.2, ""),
        ("(1.2 ± 0.1) ms", 1.2, 0.1, "ms"),
        ("1.2(3)", 1.2, 0.3, ""),
        ("143.9 ± 0.2 ms", 143.9, 0.2, "ms"),
        ("143.9 ms ± 0.2 ms", 143.9, 0.2, "ms"),
        ("200 ± 5%", 200.0, 10.0, ""),
        ("15.85×", 15.85, math.nan, "x"),
        ("15.85x", 15.85, math.nan, "x"),
        ("1.2 GB/s", 1.2, math.nan, "GB/s"),
        ("1.2GB/s", 1.2, math.nan, "GB/s"),
        ("45%", 45.0, math.nan, "%"),
        ("45 %", 45.0, math.nan, "%"),
        ("3.2e-4", 3.2e-4, math.nan, ""),
        ("1,234", 1234.0, math.nan, ""),
        ("1,234,567.5", 1234567.5, math.nan, ""),
        ("~4", 4.0, math.nan, ""),
        ("≈ 2,976 tokens/sec", 2976.0, math.nan, "tokens/sec"),
        ("$4.20", 4.2, math.nan, "$"),
        ("−5", -5.0, math.nan, ""),
        ("120 ms", 120.0, math.nan, "ms"),
        ("5 m", 5.0, math.nan, "m"),  # never a scale prefix on a single cell
        ("1.2 µs", 1.2, math.nan, "µs"),
        ("  7  ", 7.0, math.nan, ""),
    ],
)
def test_numbers(text: str, value: float, error: float, unit: str) -> None:
    cell = parse_cell(text)
    assert cell.value == pytest.approx(value)
    assert (math.isnan(cell.error) and math.isnan(error)) or cell.error == pytest.approx(error)
    assert cell.unit == unit
    assert cell.text == text
    assert cell.is_number


@pytest.mark.parametrize(
    "text",
    ["", " ", "n/a", "N/A", "-", "—", "nan", "None", "null", "abc", "8xA100", "4xH100", "Hybrid (4×2)", "4-6", "1,23", "12:30", "n=5", "2 (n=5)", "0xdead", "4x2", "5 ± -1", "x", "%", "±", "2025-01-02", "1" * 200],
)
def test_not_numbers_are_nan_never_zero(text: str) -> None:
    cell = parse_cell(text)
    assert math.isnan(cell.value) and not cell.is_number
    assert cell.text == text


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_any_string_never_raises(text: str) -> None:
    cell = parse_cell(text)
    assert isinstance(cell, Cell) and isinstance(cell.value, float) and isinstance(cell.unit, str)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="0123456789.,eE+-±/ ()%x×~$GBMkms", max_size=24))
def test_number_like_strings_never_raise(text: str) -> None:
    parse_cell(text)


finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


@given(finite)
def test_round_trip_plain(x: float) -> None:
    assert parse_cell(repr(x)).value == x
    assert parse_cell(f"{x:.6g}").value == pytest.approx(float(f"{x:.6g}"))


@given(finite)
def test_round_trip_thousands(x: float) -> None:
    assert parse_cell(f"{x:,.2f}").value == pytest.approx(round(x, 2), abs=0.006)


@given(finite, st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_round_trip_uncertainty(x: float, e: float) -> None:
    for text in (f"{x:.4g} ± {e:.2g}", f"{x:.4g} +/- {e:.2g}"):
        cell = parse_cell(text)
        assert cell.value == pytest.approx(float(f"{x:.4g}"))
        assert cell.error == pytest.approx(float(f"{e:.2g}"))


@given(finite, st.sampled_from(["%", "×", "x", " GB/s", " ms", " tokens/sec"]))
def test_round_trip_units(x: float, unit: str) -> None:
    cell = parse_cell(f"{x:.5g}{unit}")
    assert cell.value == pytest.approx(float(f"{x:.5g}"))
    assert cell.unit == {"×": "x"}.get(unit, unit.strip())


def test_numeric_column_converts_prefixes_and_keeps_index() -> None:
    col = pd.Series(["1.2 GB/s", "900 MB/s", "n/a", "3 GB/s"], index=[10, 11, 12, 13])
    values, errors, unit = numeric_column(col)
    assert unit == "GB/s"
    assert list(values.index) == [10, 11, 12, 13]
    assert values[10] == 1.2 and values[11] == pytest.approx(0.9) and math.isnan(values[12])
    assert errors.isna().all()


def test_numeric_column_other_units_are_nan() -> None:
    values, _, unit = numeric_column(pd.Series(["45%", "30%", "0.5"]))
    assert unit == "%" and list(values[:2]) == [45.0, 30.0] and math.isnan(values[2])


def test_numeric_column_refuses_text_columns() -> None:
    assert numeric_column(pd.Series(["8xA100", "4xH100", "10xA6000"])) is None
    assert numeric_column(pd.Series(["Oracle", "Top-K", "3"])) is None
    assert numeric_column(pd.Series(["n/a", ""])) is None
    assert numeric_column(pd.Series([True, False])) is None


def test_numeric_column_passes_numbers_through() -> None:
    values, errors, unit = numeric_column(pd.Series([1, 2, None]))
    assert unit == "" and values[0] == 1.0 and math.isnan(values[2]) and errors.isna().all()


def test_numeric_column_uncertainty() -> None:
    values, errors, unit = numeric_column(pd.Series(["143.9 ± 0.0", "174.6 ± 8.8", "-"]))
    assert unit == "" and list(values[:2]) == [143.9, 174.6] and list(errors[:2]) == [0.0, 8.8]


@pytest.mark.skipif(not SPECMOE.is_dir(), reason="../shared/data/specmoe is absent")
def test_real_research_paper_table() -> None:
    table = pd.read_csv(SPECMOE / "evalSwitchB8" / "results" / "research_paper_table.csv", dtype=str, keep_default_na=False)
    speedup = numeric_column(table["Speedup"])
    assert speedup is not None and speedup[2] == "x" and speedup[0].notna().all()
    assert speedup[0].iloc[0] == 15.85
    latency = numeric_column(table["Mean Latency (ms)"])
    assert latency is not None and latency[0].iloc[0] == 143.9 and latency[1].iloc[1] == 8.8
    assert numeric_column(table["Strategy"]) is None
