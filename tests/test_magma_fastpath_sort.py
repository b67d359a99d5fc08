"""sort_by_group's per-group sort gives np.lexsort's order, bit for bit, whatever the input."""

import numpy as np
import pytest

from gpuscope.metrics import distribution
from gpuscope.metrics.distribution import sort_by_group


def _reference(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((values, codes))
    return values[order], codes[order]


@pytest.mark.parametrize("seed", range(40))
def test_matches_lexsort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3000))
    values = np.round(rng.normal(size=n) * 10, int(rng.integers(0, 3)))  # many ties
    for special, every in ((np.inf, 3), (-np.inf, 4), (0.0, 2)):
        if n and seed % every == 0:
            values[rng.integers(0, n, 3)] = special
    codes = rng.integers(0, int(rng.integers(1, 40)), n) * (1 if seed % 5 else 5000)  # some codes past 16 bits
    got_values, got_codes = sort_by_group(values, codes)
    want_values, want_codes = _reference(values, codes)
    assert got_values.tobytes() == want_values.tobytes()
    assert np.array_equal(got_codes, want_codes)


def test_negative_zero_and_nan_take_the_general_path() -> None:
    values = np.array([0.0, -0.0, 1.0, np.nan, 0.0, -0.0] * 30)
    codes = np.tile([0, 1], 90)
    got_values, got_codes = sort_by_group(values, codes)
    stable = np.argsort(values, kind="stable")
    regroup = np.argsort(codes[stable], kind="stable")
    assert got_values.tobytes() == values[stable[regroup]].tobytes()
    assert np.array_equal(got_codes, codes[stable[regroup]])


def test_many_small_groups_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    values, codes = rng.normal(size=500), rng.integers(0, 200, 500)
    calls = []
    original = distribution._sort_within_groups
    monkeypatch.setattr(distribution, "_sort_within_groups", lambda v, c: calls.append(1) or original(v, c))
    got_values, got_codes = sort_by_group(values, codes)
    want_values, want_codes = _reference(values, codes)
    assert calls and got_values.tobytes() == want_values.tobytes() and np.array_equal(got_codes, want_codes)


@pytest.mark.parametrize("seed", range(10))
def test_shared_group_order_matches_lexsort(seed: int) -> None:
    """Two value columns of the same rows sorted with one `group_order`: each as lexsort orders it."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    codes = rng.integers(0, int(rng.integers(1, 30)), n)
    grouped = distribution.group_order(codes.astype(np.int16))
    for values in (np.round(rng.normal(size=n) * 10, 1), rng.exponential(size=n)):
        got_values, got_codes = sort_by_group(values, codes, grouped)
        want_values, want_codes = _reference(values, codes)
        assert got_values.tobytes() == want_values.tobytes()
        assert np.array_equal(got_codes, want_codes)
