"""Timeline arithmetic: union of kernel intervals, stream overlap and idle gaps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.kernels.timeline import SUMMARY_COLUMNS, idle_gaps, merge_intervals, summarize, union_length

EPOCH = 1_700_000_000_000_000_000  # ns; float64 alone would round starts to 256 ns here


def table(intervals, device="0"):
    return pd.DataFrame({
        "device": pd.Series([device] * len(intervals), dtype="string"),
        "start_ns": pd.array([None if s is None else EPOCH + s for s, _ in intervals], dtype="Int64"),
        "duration_ns": pd.array([d for _, d in intervals], dtype="Float64"),
        "op": pd.Series(["k"] * len(intervals), dtype="string"),
    })


def test_overlap_busy_and_gaps_exact_at_epoch_scale():
    t = table([(0, 10), (5, 10), (30, 1), (31, 0), (40, 3)])
    row = summarize(t, gap_threshold_ns=5).iloc[0]
    assert row["busy_ns"] == 19 and row["summed_ns"] == 24 and row["overlap_ns"] == 5
    assert row["span_ns"] == 43 and row["idle_ns"] == 24
    assert row["gaps"] == 2 and row["long_gaps"] == 2 and row["longest_gap_ns"] == 15
    gaps = idle_gaps(t)
    assert gaps["start_ns"].tolist() == [EPOCH + 15, EPOCH + 31]
    assert gaps["gap_ns"].tolist() == [15, 9]
    assert idle_gaps(t, min_gap_ns=10)["gap_ns"].tolist() == [15]


def test_null_negative_and_zero_intervals_never_give_nan_or_inf():
    t = table([(None, 5), (0, None), (0, -1), (10, 0), (10, float("nan")), (12, 0)])
    row = summarize(t).iloc[0]
    assert row["skipped"] == 4 and row["intervals"] == 2
    assert row["busy_ns"] == 0 and row["span_ns"] == 2 and row["idle_ns"] == 2
    assert row["busy_fraction"] == 0
    only_zero = summarize(table([(3, 0)])).iloc[0]
    assert only_zero["span_ns"] == 0 and pd.isna(only_zero["busy_fraction"])
    for value in summarize(t).select_dtypes("number").to_numpy(dtype=float, na_value=0).ravel():
        assert math.isfinite(value)


def test_empty_and_missing_columns():
    assert summarize(pd.DataFrame()).empty
    assert list(summarize(pd.DataFrame()).columns) == list(SUMMARY_COLUMNS)
    assert idle_gaps(pd.DataFrame()).empty
    assert union_length([], []) == 0.0
    out = summarize(pd.DataFrame({"start_ns": [1, 2], "duration_ns": [1, 1]}))
    assert out["device"].tolist() == ["?"] and out.loc[0, "busy_ns"] == 2


def test_per_device_and_copies_filter():
    t = pd.concat([table([(0, 10)], "0"), table([(0, 4), (2, 4)], "1")], ignore_index=True)
    t.loc[0, "op"] = "memcpy"
    out = summarize(t).set_index("device")
    assert out.loc["0", "busy_ns"] == 10 and out.loc["1", "overlap_ns"] == 2
    assert summarize(t, include_copies=False)["device"].tolist() == ["1"]


intervals = st.lists(
    st.tuples(st.integers(0, 10**6), st.one_of(st.integers(0, 10**5), st.just(0))),
    min_size=0, max_size=60,
)


@settings(max_examples=100, deadline=None)
@given(intervals)
def test_union_properties(ivs):
    starts = np.array([s for s, _ in ivs], dtype=float)
    durs = np.array([d for _, d in ivs], dtype=float)
    union = union_length(starts, durs)
    assert 0 <= union <= durs.sum() + 1e-6
    bs, be = merge_intervals(starts, durs)
    assert np.all(be >= bs) and np.all(bs[1:] > be[:-1])
    if ivs:
        row = summarize(table(ivs)).iloc[0]
        assert row["busy_ns"] == pytest.approx(union)
        assert row["busy_ns"] + row["idle_ns"] == pytest.approx(row["span_ns"])
        assert row["span_ns"] == pytest.approx(max(s + d for s, d in ivs) - min(s for s, _ in ivs))
        assert row["overlap_ns"] == pytest.approx(durs.sum() - union)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**4), st.integers(0, 10**4)), max_size=40))
def test_union_equals_sum_when_disjoint(pairs):
    # build disjoint intervals: each starts after the previous one ends plus a gap
    starts, durs, t = [], [], 0
    for gap, dur in pairs:
        t += gap + 1
        starts.append(t)
        durs.append(dur)
        t += dur
    assert union_length(starts, durs) == pytest.approx(sum(durs))
    if pairs:
        row = summarize(table(list(zip(starts, durs)))).iloc[0]
        assert row["overlap_ns"] == 0
        assert row["busy_ns"] + row["idle_ns"] == pytest.approx(row["span_ns"])
