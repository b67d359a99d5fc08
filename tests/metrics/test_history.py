"""Ring-buffer history: order, wrap-around, gaps, peaks, memory bound, downsampling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.history import HOUR_AT_1HZ, History


def test_order_and_wrap_around() -> None:
    h = History(capacity=3)
    for t in range(5):
        h.append(float(t), {"gpu0.util": t * 10.0})
    assert len(h) == 3
    assert h.times().tolist() == [2.0, 3.0, 4.0]
    assert h.series("gpu0.util").tolist() == [20.0, 30.0, 40.0]
    assert h.last("gpu0.util") == 40.0


def test_gaps_are_nan_and_peaks_survive_the_ring() -> None:
    h = History(capacity=2)
    h.append(0.0, {"rss": 900.0, "util": 1.0})
    h.append(1.0, {"util": 2.0})
    h.append(2.0, {"rss": 100.0, "util": None})
    assert math.isnan(h.series("rss")[0]) and h.series("rss")[1] == 100.0
    assert math.isnan(h.series("util")[-1])
    assert h.peak("rss") == 900.0  # the 900 left the ring, the peak did not
    assert h.series("never").size == 2 and np.isnan(h.series("never")).all()


def test_an_hour_of_host_and_eight_gpus_fits_in_a_few_megabytes() -> None:
    h = History(capacity=HOUR_AT_1HZ)
    names = [f"cpu{i}" for i in range(128)] + [f"gpu{g}.{m}" for g in range(8) for m in ("util", "mem", "power", "temp")]
    names += ["mem.used", "swap.used", "scope.rss", "scope.cpu"]
    for t in range(HOUR_AT_1HZ + 10):
        h.append(float(t), dict.fromkeys(names, 1.0))
    assert len(h) == HOUR_AT_1HZ
    assert h.nbytes < 4 * 1024 * 1024


def test_window_mean_and_downsample_keep_spikes() -> None:
    h = History(capacity=100)
    for t in range(100):
        h.append(float(t), {"u": 100.0 if t == 50 else 1.0})
    assert h.window_mean("u", 9) == pytest.approx(1.0)
    points = h.downsample("u", 10)
    assert len(points) == 10 and max(points) == 100.0


def test_series_limit_bounds_memory() -> None:
    h = History(capacity=4, max_series=2)
    h.append(0.0, {"a": 1.0, "b": 2.0, "c": 3.0})
    assert h.names == ["a", "b"]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 20), st.lists(st.floats(-1e6, 1e6), max_size=60))
def test_matches_a_plain_list(capacity: int, values: list[float]) -> None:
    h = History(capacity=capacity)
    for i, v in enumerate(values):
        h.append(float(i), {"x": v})
    kept = values[-capacity:]
    assert np.allclose(h.series("x"), np.array(kept, dtype=np.float32).astype(float))
    if values:
        assert h.peak("x") == pytest.approx(float(np.float64(max(values))))


def test_binned_join_draws_between_samples_one_period_apart_but_not_across_a_gap() -> None:
    h = History()
    for t in (1.0, 2.0, 3.0, 7.0, 8.0):  # samples every second, none from 3 to 7 s
        h.append(t, {"x": 10.0 * t})
    plain = h.binned("x", 0.0, 8.0, 16)
    joined = h.binned("x", 0.0, 8.0, 16, join=True)
    assert sum(v == v for v in plain) == 5  # two slices a second: a sample in every other one
    assert joined[2] == 10.0 and joined[3] == 15.0 and joined[4] == 20.0  # 1 s -> 2 s joined
    assert joined[6] == 30.0 and all(v != v for v in joined[7:14])  # 3 s -> 7 s: readings missing, left empty
    assert [v for v in joined if v == v][-1] == 80.0
